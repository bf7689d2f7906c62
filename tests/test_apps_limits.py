"""The host's limits on an untrusted App, without a browser (the browser's side is
``tests/test_apps_hostile.py``): origins withheld from the CSP, the App lane's own bound
in the transcript, the page's refusals and CSP violations in the cell and transcript,
permissions only after the person agrees.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from mcp_nb.apps.csp import sandbox_policy, withheld_reason
from mcp_nb.apps.host import Show
from mcp_nb.client.transcript import APP_LANE, Transcript
from mcp_nb.notebook.app_origins import notebook_origins, remember_page_origin
from mcp_nb.notebook.apps import AppView


@pytest.mark.parametrize(("declared", "why"), [
    ("http://127.0.0.1:*", "a port wildcard reaches every service on 127.0.0.1"),
    ("wss://*.example.org:*", "a port wildcard"),
    ("https://*.com", "a wildcard over the whole .com domain"),
    ("https://*.co.uk", "a wildcard over the whole .co.uk domain"),
    ("http://localhost:8888", "it reaches this notebook's own server http://127.0.0.1:8888"),
    ("ws://127.0.0.1:8888", "it reaches this notebook's own server"),
    ("https://*.hub.example.org", "it reaches this notebook's own server"),
])
def test_origins_a_host_must_question_are_withheld(declared: str, why: str) -> None:
    host = ("http://127.0.0.1:8888", "https://jupyter.hub.example.org:443")
    policy = sandbox_policy({"connectDomains": [declared, "https://api.example.com"]},
                            host_origins=host)
    assert dict(policy.directives())["connect-src"] == "https://api.example.com"
    ((value, reason),) = policy.withheld
    assert value == f"connectDomains: {declared!r}" and why in reason
    assert policy.refused == ()  # an origin all the same: the checkup does not warn of it


@pytest.mark.parametrize("kept", ["https://*.example.com", "https://cdn.example.co.uk",
                                  "http://127.0.0.1:9000", "https://hub.example.org:8443"])
def test_ordinary_origins_are_kept(kept: str) -> None:
    assert withheld_reason(kept, ("http://127.0.0.1:8888", "https://hub.example.org:443")) \
        is None


def test_the_kernel_finds_the_jupyter_servers_and_the_pages_origins(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path))
    (tmp_path / "jpserver-1.json").write_text('{"url": "http://localhost:8899/lab"}')
    (tmp_path / "jpserver-2.json").write_text("{half written")
    remember_page_origin("https://hub.example.org")
    assert {"http://localhost:8899", "https://hub.example.org:443"} <= set(notebook_origins())


def test_the_app_lane_cannot_evict_the_wire() -> None:
    transcript = Transcript(limit=100, app_limit=50)
    transcript.add(0, "send", "request", "Initializing", method="initialize", id=1)
    for n in range(1000):
        transcript.add(n, "app→host", "notification", "Operating", size=10,
                       method="ui/notifications/size-changed")
    assert transcript.filter(method="initialize")
    assert sum(e.direction in APP_LANE for e in transcript) <= 50 + 50 // 8
    assert transcript.wire_dropped == 0 and transcript.app_dropped >= 1000 - 57
    # since() still finds entries by number across the gaps the App lane left.
    assert transcript.since(0)[0].method == "initialize"
    last = transcript[-1].seq
    assert [e.seq for e in transcript.since(last)] == [last]


def test_the_app_lane_is_bounded_in_bytes_too() -> None:
    transcript = Transcript(app_bytes=10_000)
    for n in range(100):
        transcript.add(n, "app→host", "request", "Operating", size=1_000, method="tools/call")
    assert sum(e.size for e in transcript) <= 10_000


def _until(condition: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _frame(view: AppView, message: Any) -> None:
    view._on_frame_message(view.frame, {"kind": "frame", "message": message}, [])


@pytest.fixture
def app(mcp: Any) -> AppView:
    mcp("connect clock --lab=--apps")
    view = mcp("call clock label=Paris")
    assert isinstance(view, AppView)
    assert view.frame is not None
    view.frame.send = lambda content, buffers=None: None  # no browser here
    view._on_frame_message(view.frame, {"kind": "created", "theme": "light"}, [])
    _frame(view, {"jsonrpc": "2.0", "method": "ui/notifications/sandbox-proxy-ready"})
    _frame(view, {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize",
                  "params": {"appCapabilities": {}}})
    _frame(view, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
    return view


def test_25000_app_messages_leave_the_sessions_wire_history(app: AppView) -> None:
    session = app.hosted.session
    for n in range(25_000):
        _frame(app, {"jsonrpc": "2.0", "method": "ui/notifications/size-changed",
                     "params": {"width": 400, "height": 100 + n % 400}})
    transcript = session.transcript

    def lane_total() -> int:  # App-lane entries ever added (kept and dropped)
        return sum(e.direction in APP_LANE for e in transcript) + transcript.app_dropped

    _until(lambda: lane_total() >= 25_000)
    assert transcript.app_dropped > 0
    sent = [e.method for e in session.transcript.filter(direction="send")]
    for method in ("initialize", "tools/list", "tools/call", "resources/read"):
        assert method in sent, sent
    assert session.transcript.wire_dropped == 0


def test_the_pages_refusals_and_csp_violations_reach_the_cell_and_transcript(
        app: AppView) -> None:
    _frame(app, {"jsonrpc": "2.0", "method": "ui/notifications/sandbox-message-refused",
                 "params": {"reason": "size", "size": 10_485_855, "limit": 1_048_576,
                            "method": "tools/call", "id": 7, "answered": True}})
    _frame(app, {"jsonrpc": "2.0", "method": "ui/notifications/sandbox-csp-violation",
                 "params": {"directive": "connect-src", "blocked": "https://x.example/a"}})
    notes = app.notes.value
    assert "a 10,485,855-byte App message (tools/call #7)" in notes
    assert "CSP blocked https://x.example/a (connect-src)" in notes
    transcript = app.hosted.session.transcript
    _until(lambda: transcript.filter(method="ui/notifications/sandbox-csp-violation"))
    (refusal,) = transcript.filter(method="ui/notifications/sandbox-message-refused")
    assert "never forwarded" in (refusal.note or "")


def test_a_page_that_finds_its_own_origin_in_the_csp_removes_the_frame_and_says_why(
        mcp: Any) -> None:
    """Behind a proxy the kernel could not know of, the page refuses the App itself: it says
    so after ``created`` (the frame exists, empty), so the App is past its resource."""
    mcp("connect clock --lab=--apps")
    view = mcp("call clock")
    assert isinstance(view, AppView) and view.frame is not None
    view.frame.send = lambda content, buffers=None: None  # no browser here
    page = "https://proxied.school.example"
    view._on_frame_message(view.frame, {"kind": "created", "origin": page}, [])
    view._on_frame_message(view.frame, {"kind": "page-origin-refused", "origin": page}, [])
    assert view.lifecycle.state.name == "REFUSED"
    assert view.frame.removed and view.frame not in view.children
    assert f"own origin {page} (its REST API and kernels): not loaded" in view.header.value
    assert "not rendered, for the reason above" in view.verdict_line.value
    assert f"{page}:443" in notebook_origins()  # the next App's policy withholds it


def test_fullscreen_and_permissions_wait_for_the_person(app: AppView) -> None:
    host = app.host
    assert host is not None
    sent: list[dict[str, Any]] = []
    app.frame.send = lambda content, buffers=None: sent.append(content["message"])  # type: ignore[union-attr]
    _frame(app, {"jsonrpc": "2.0", "id": 5, "method": "ui/request-display-mode",
                 "params": {"mode": "fullscreen"}})
    assert sent[-1]["result"] == {"mode": "inline"}
    (button,) = app.consent.children
    assert "fullscreen" in button.description
    button.click()
    assert app.frame.display_mode == "fullscreen"  # type: ignore[union-attr]
    assert sent[-1]["params"] == {"displayMode": "fullscreen"}
    assert app.consent.children == ()
    # Permissions: nothing declared by the lab's App, so nothing to ask and nothing given.
    assert app.frame.allow == "" and host.host_capabilities()["sandbox"]["permissions"] == {}  # type: ignore[union-attr]
    assert Show("ask-fullscreen", {}) not in host.receive(
        {"jsonrpc": "2.0", "id": 6, "method": "ui/request-display-mode",
         "params": {"mode": "fullscreen"}})
