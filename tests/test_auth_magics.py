"""%mcp connect URL --auth, %mcp auth (state, --logout) and the flow walked one cell per step.

The flow runs from the connecting cell with a live view (AuthFlowView); a person is
played by a thread that opens the view's Authorize link (the lab approves at once).
"""

from __future__ import annotations

import base64
import html
import json
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from http_support import lab_server

from mcp_nb.auth import Step
from mcp_nb.notebook.auth_view import AuthFlowView
from mcp_nb.notebook.diagrams import auth_sequence_svg
from mcp_nb.notebook.magics import McpCellError
from mcp_nb.protocol import State

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _views(bundles: list[dict[str, Any]]) -> list[AuthFlowView]:
    from ipywidgets.widgets.widget import _instances

    found = [_instances.get(b[WIDGET_VIEW]["model_id"]) for b in bundles if WIDGET_VIEW in b]
    return [view for view in found if isinstance(view, AuthFlowView)]


def _person(bundles: list[dict[str, Any]], clicked: list[int]) -> threading.Thread:
    """A person: waits for the Authorize link in the next live view, opens it (and the
    redirect it leads to)."""
    seen = len(_views(bundles))

    def act() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            views = _views(bundles)[seen:]
            found = re.search(r'href="([^"]+)"', views[0].link.value) if views else None
            if found:
                response = httpx.get(html.unescape(found.group(1)), follow_redirects=True)
                clicked.append(response.status_code)
                return
            time.sleep(0.05)

    thread = threading.Thread(target=act, daemon=True)
    thread.start()
    return thread


def test_connect_with_auth_and_show_the_state_never_the_token(mcp, capsys) -> None:
    with lab_server("--auth") as server:
        with pytest.raises(McpCellError, match="401"):
            mcp(f"connect denied {server.ready_text}")
        hosted = mcp(f"connect web {server.ready_text} --auth --auth-callback auto-approved")
        assert hosted.session.state is State.OPERATING
        assert mcp("call add a=2 b=3").text == "5"
        printed = capsys.readouterr().out
        assert "resource metadata ok · server metadata ok" in printed and "token ok" in printed
        state = mcp("auth")
        shown = repr(state) + state._repr_html_()
        assert "callback: auto-approved" in repr(state)
        assert "scope: mcp" in repr(state)
        from mcp_nb.notebook.magics.auth import oauth_of
        token = oauth_of(hosted).held()
        assert token is not None
        everything = shown + printed + json.dumps([e.to_dict() for e in hosted.session.transcript],
                                        default=str)
        assert token.access_token not in everything
        steps = mcp("auth --steps")
        assert [step.name for step in steps][-1] == "token"
        assert token.access_token not in repr(steps) + steps._repr_html_()
        mcp("auth --logout")
        assert oauth_of(hosted).held() is None
        assert mcp("call add a=1 b=1").text == "2"  # authorized again on the next 401


def test_auth_settings_from_an_mcpservers_entry(mcp, tmp_path) -> None:
    with lab_server("--auth") as server:
        config = tmp_path / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"remote": {
            "url": server.ready_text,
            "auth": {"client_id": "lab-public", "callback": "auto-approved"}}}}))
        hosted = mcp(f"connect remote --config {config}")
        assert hosted.session.state is State.OPERATING
        assert "client_id: lab-public" in repr(mcp("auth"))


@pytest.fixture
def client_document() -> Iterator[str]:
    """A Client ID Metadata Document published on loopback (the lab accepts http there);
    its URL is the client id."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from mcp_nb.auth.callbacks import DEFAULT_REDIRECT_URI

    published: dict[str, Any] = {}

    class Document(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps(published).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Document)
    url = f"http://127.0.0.1:{server.server_address[1]}/client.json"
    published.update(client_id=url, client_name="magics test", token_endpoint_auth_method="none",
                     redirect_uris=[DEFAULT_REDIRECT_URI])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield url
    server.shutdown()
    server.server_close()


def test_a_client_id_metadata_document_from_the_line_or_the_entry(
        mcp, tmp_path, client_document, monkeypatch: pytest.MonkeyPatch) -> None:
    # As typed in a notebook: {expr} is expanded on the magic line.
    monkeypatch.setitem(mcp.shell.user_ns, "document", client_document)
    with lab_server("--auth") as server:
        mcp(f"connect line {server.ready_text} --auth --auth-callback auto-approved "
            "--client-metadata-url {document}")
        state = repr(mcp("auth line"))
        assert f"client_id: {client_document}" in state
        assert "client_registration: client id metadata document" in state
        assert not [step for step in mcp("auth --steps line") if "/register" in step.sent]
        config = tmp_path / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"entry": {
            "url": server.ready_text, "auth": {"client_metadata_url": client_document,
                                               "callback": "auto-approved"}}}}))
        mcp(f"connect entry --config {config}")
        assert f"client_id: {client_document}" in repr(mcp("auth entry"))
    with lab_server("--auth") as server:
        mcp(f"auth --step {server.ready_text} --auth-callback auto-approved "
            "--client-metadata-url {document}")
        steps: list[Step] = []
        while not steps or steps[-1].name != "token":  # walked to the end: no walk left over
            steps += mcp("auth --next")
        assert [step.outcome for step in steps if step.name == "register"] == ["skipped"]


def test_auth_is_for_http_only(mcp) -> None:
    with pytest.raises(McpCellError, match="HTTP"):
        mcp("connect --auth")


def test_walk_the_flow_one_cell_per_step_then_connect(mcp, capsys) -> None:
    with lab_server("--auth") as server:
        mcp(f"auth --step {server.ready_text} --auth-callback auto-approved")
        seen: list[str] = []
        for _ in range(20):
            steps = mcp("auth --next")
            seen += [step.name for step in steps]
            if "token held" in capsys.readouterr().out:
                break
        assert seen[-1] == "token" and "register" in seen and "callback" in seen
        with pytest.raises(McpCellError, match="no flow being walked"):
            mcp("auth --next")
        hosted = mcp(f"connect walked {server.ready_text} --auth")
        assert hosted.session.state is State.OPERATING
        # The token from the walk was sent from the first request on: no HTTP exchange of
        # the session was answered 401.  (Read from the HTTP events' text, not the whole
        # transcript, whose timestamps can contain the digits 401.)
        exchanges = [e.text for e in hosted.session.transcript if e.kind == "http"]
        assert any("→ 200" in text for text in exchanges), exchanges
        assert not [text for text in exchanges if "401" in text]


def test_a_refusal_in_a_walk_names_the_rule(mcp) -> None:
    with lab_server("--auth", "--auth-fault", "wrong-issuer") as server:
        mcp(f"auth --step {server.ready_text} --auth-callback auto-approved")
        with pytest.raises(McpCellError, match=r"RFC 8414 §3\.3"):
            for _ in range(10):
                mcp("auth --next")


def test_the_flow_is_shown_live_then_saved_as_a_deterministic_record(mcp, displayed) -> None:
    with lab_server("--auth") as server:
        clicked: list[int] = []
        person = _person(displayed, clicked)
        hosted = mcp(f"connect web {server.ready_text} --auth --auth-callback loopback")
        person.join(5)
        assert clicked == [200]  # the loopback listener answered the browser
        assert hosted.session.state is State.OPERATING
        assert mcp("call add a=2 b=3").text == "5"
        first, *rest = [b for b in displayed if not b["update"]]
        # Saved as first displayed: a label that claims nothing about the outcome.
        assert first["text/plain"].startswith(f"Authorization for {server.ready_text} "
                                              "(callback: loopback)")
        assert WIDGET_VIEW in first and "token" not in first["text/plain"]
        # Then the live view is replaced by that label, and the finished view follows.
        assert next(b for b in displayed if b["update"])["text/plain"] == first["text/plain"]
        record = rest[0]
        assert "authorized: token held" in record["text/plain"]
        assert "token ok" in record["text/plain"] and "callback ok" in record["text/plain"]
        svg = base64.b64decode(record["text/html"].split("base64,", 1)[1].split('"')[0]
                               ).decode()
        assert ">Authorization server<" in svg and "/token" in svg
        assert "127.0.0.1" not in svg  # no host, no port: the image is the same every run
        assert ">POST /token<" in svg and ">GET /authorize<" in svg  # no query, no fields
        assert "offline_access" not in svg and "grant_type" not in svg
        view = _views(displayed)[0]
        assert [step.name for step in view.steps][-1] == "token"
        assert view.link.value == ""  # no link left once authorized
        from mcp_nb.notebook.magics.auth import oauth_of
        token = oauth_of(hosted).held()
        assert token is not None
        shown = json.dumps(displayed, default=str) + "".join(
            child.value for child in view.children) + repr(view)
        assert token.access_token not in shown
        assert token.refresh_token and token.refresh_token not in shown


def test_between_cells_a_new_authorization_fails_at_once_saying_how(mcp, displayed) -> None:
    with lab_server("--auth") as server:
        clicked: list[int] = []
        _person(displayed, clicked)
        mcp(f"connect web {server.ready_text} --auth --auth-callback loopback")
        assert clicked == [200]
        mcp("auth --logout")  # the token is gone; no refresh token to renew it
        with pytest.raises(McpCellError) as refused:  # at once: Unattended waits for nobody
            mcp("call add a=1 b=1")
        assert f"%mcp connect {server.ready_text} --auth" in str(refused.value)
        assert "a person must approve it" in str(refused.value)
        _person(displayed, clicked)
        hosted = mcp(f"connect web {server.ready_text} --auth --auth-callback loopback")
        assert hosted.session.state is State.OPERATING


def test_a_server_that_asks_for_nothing_connects_without_a_flow(mcp, displayed) -> None:
    with lab_server() as server:
        hosted = mcp(f"connect open {server.ready_text} --auth --auth-callback loopback")
        assert hosted.session.state is State.OPERATING
        assert not _views(displayed)


def test_a_refusal_ends_the_cell_and_the_record_marks_it(mcp, displayed) -> None:
    with lab_server("--auth", "--auth-fault", "wrong-issuer") as server:
        with pytest.raises(McpCellError, match=r"authorization refused: .*RFC 8414 §3\.3"):
            mcp(f"connect wrong {server.ready_text} --auth --auth-callback auto-approved")
        record = [b for b in displayed if not b["update"]][-1]
        assert "refused: RFC 8414 §3.3" in record["text/plain"]
        svg = base64.b64decode(record["text/html"].split("base64,", 1)[1].split('"')[0]
                               ).decode()
        assert "✗" in svg and "#b00020" in svg
        assert "wrong" not in repr(mcp("sessions"))  # nothing was opened
        steps = mcp("auth --steps wrong")  # yet the refused flow can be read
        assert steps[-1].outcome == "refused" and "RFC 8414 §3.3" in steps[-1].rule


def test_the_diagram_escapes_what_servers_say_and_shows_no_host() -> None:
    hostile = Step("server metadata", 'GET https://evil.example:8443/<script>x</script>?q=1',
                   '200 OK, text/html, 9 bytes', 'RFC 8414 "<b>"', "refused", "<i>detail</i>")
    note = Step("register", "", "", "a pre-registered client id comes first <img>", "skipped")
    svg = auth_sequence_svg([note, hostile])
    assert "<script>" not in svg and "<img>" not in svg and "<b>" not in svg
    assert "&lt;script&gt;" in svg and "evil.example" not in svg and "8443" not in svg
    assert svg.count("data-step=") == 3  # a note, then a request and its reply
    view = AuthFlowView("https://mcp.example/<x>", "loopback", "http://127.0.0.1:1/cb")
    view.add_step(hostile)
    view.ask('https://as.example/authorize?a=1&b="><script>')
    assert 'href="https://as.example/authorize?a=1&amp;b=&quot;&gt;&lt;script&gt;"' in (
        view.link.value)
    assert 'target="_blank" rel="noopener"' in view.link.value
    assert "<x>" not in view.status.value + view.static_html() + view.table.value


def test_paste_back_in_a_real_kernel_asks_through_the_cells_stdin() -> None:
    """ipykernel: the Authorize link is in the live view, input() goes to the frontend."""
    from jupyter_client.manager import start_new_kernel

    with lab_server("--auth") as server:
        manager, client = start_new_kernel(kernel_name="python3")
        try:
            client.execute_interactive("%load_ext mcp_nb", timeout=60)
            cell = client.execute(f"%mcp connect web {server.ready_text} --auth "
                                  "--auth-callback paste", allow_stdin=True)
            messages: list[dict[str, Any]] = []

            def drain() -> bool:
                """Read iopub until the cell is idle; True once it is."""
                while True:
                    try:
                        message = client.get_iopub_msg(timeout=0.2)
                    except Exception:  # queue.Empty: nothing more for now
                        return False
                    if message["parent_header"].get("msg_id") == cell:
                        messages.append(message)
                        if message["content"].get("execution_state") == "idle":
                            return True

            prompt = client.get_stdin_msg(timeout=60)
            assert prompt["msg_type"] == "input_request"
            assert prompt["parent_header"]["msg_id"] == cell
            link = None
            deadline = time.monotonic() + 30
            while link is None and time.monotonic() < deadline:
                drain()
                found = re.search(r'class=\\?"mcpnb-authorize\\?" href=\\?"([^"\\]+)',
                                  json.dumps(messages, default=str))
                link = html.unescape(found.group(1)) if found else None
            assert link is not None, "the live view showed no Authorize link"
            landed = httpx.get(link, follow_redirects=False).headers["location"]
            assert landed.startswith("http://localhost/mcp_nb/callback?")
            client.input(landed)
            while not drain():
                pass
            kinds = [m["msg_type"] for m in messages]
            assert "error" not in kinds, [m["content"] for m in messages if
                                          m["msg_type"] == "error"]
            texts = [m["content"]["data"]["text/plain"] for m in messages
                     if m["msg_type"] == "display_data"]
            assert any("authorized: token held" in text for text in texts)
            reply = client.execute_interactive("%mcp call add a=2 b=3", timeout=60)
            assert reply["content"]["status"] == "ok"
            secret: list[str] = []
            client.execute_interactive(
                "from mcp_nb.notebook import manager\n"
                "from mcp_nb.notebook.magics.auth import oauth_of\n"
                "print(oauth_of(manager().session('web')).held().access_token)", timeout=60,
                output_hook=lambda m: secret.append(m["content"].get("text", "")))
            token = "".join(secret).strip()
            assert len(token) > 10
            assert token not in json.dumps(messages, default=str)  # widgets, displays, text
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=True)
