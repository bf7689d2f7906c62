"""The OAuth client against the lab authorization server: the flow, each fault, each callback."""

from __future__ import annotations

import threading
import time

import anyio
import httpx
import pytest
from auth_support import run_lab, use
from http_support import lab_server

from mcp_nb.auth import AutoApproved, Headless, Loopback, OAuth, PasteBack
from mcp_nb.client import ClientSession, RequestFailed
from mcp_nb.client.errors import EraProbeFailed
from mcp_nb.transports import http_transport


def test_dynamic_registration_and_the_steps_seen() -> None:
    auth = OAuth(callback="auto-approved")
    assert "add" in run_lab((), auth)
    names = [step.name for step in auth.steps]
    assert names == ["challenge", "resource metadata", "server metadata", "register",
                     "authorize", "callback", "token"]
    assert all(step.outcome == "ok" for step in auth.steps)
    shown = repr(auth) + "".join(step.line() for step in auth.steps) + str(auth.describe())
    token = auth.held()
    assert token is not None and token.access_token not in shown
    assert auth.describe()["client_registration"] == "dynamic registration"


def test_pre_registered_confidential_client_and_client_credentials() -> None:
    confidential = OAuth(client_id="lab-confidential", client_secret="lab-secret",
                         callback="auto-approved")
    assert "add" in run_lab((), confidential)
    assert confidential.describe()["client_registration"] == "pre-registered"
    machine = OAuth(grant="client_credentials", client_id="lab-confidential",
                    client_secret="lab-secret")
    assert "add" in run_lab((), machine)
    assert [step.name for step in machine.steps][-1] == "token"


def test_both_eras_are_authorized() -> None:
    assert "add" in run_lab((), OAuth(callback="auto-approved"), era="stateless")
    assert "add" in run_lab((), OAuth(callback="auto-approved"), era="auto")


def test_step_up_asks_for_more_scope_and_keeps_the_old() -> None:
    auth = OAuth(callback="auto-approved")
    run_lab(("--auth-fault", "step-up"), auth)
    token = auth.held()
    assert token is not None and {"mcp", "mcp:call"} <= set(token.scopes)
    challenge = auth.steps[0]  # the step-up's own flow began with the 403
    assert "error=insufficient_scope" in challenge.received and "mcp:call" in challenge.received


def _wait_until_the_lab_rejects(url: str, access_token: str) -> None:
    """Until the lab itself answers 401 to the token (it expired there, not just here)."""
    deadline = time.monotonic() + 120
    while httpx.post(url, json={}, headers={"Authorization": f"Bearer {access_token}"}
                     ).status_code != 401:
        assert time.monotonic() < deadline, "the lab never let the token expire"
        time.sleep(0.5)


def test_expired_tokens_are_refreshed_and_a_refused_refresh_authorizes_again() -> None:
    """Both labs' tokens expire for real (8 s); one refreshes, the other refuses to."""
    refreshing, refused = OAuth(callback="auto-approved"), OAuth(callback="auto-approved")
    with lab_server("--auth", "--auth-fault", "expired-token") as lab, \
            lab_server("--auth", "--auth-fault", "expired-token",
                       "--auth-fault", "refresh-refused") as strict:
        firsts = []
        for server, auth in ((lab, refreshing), (strict, refused)):
            anyio.run(use, server.ready_text, auth)
            first = auth.held()
            assert first is not None and first.refresh_token
            firsts.append(first)
        for server, first in zip((lab, strict), firsts, strict=True):
            _wait_until_the_lab_rejects(server.ready_text, first.access_token)
        for server, auth in ((lab, refreshing), (strict, refused)):
            anyio.run(use, server.ready_text, auth)
    assert refreshing.held() is not firsts[0]
    names = [step.name for step in refreshing.steps]
    assert names[-1] == "refresh" and refreshing.steps[-1].outcome == "ok"
    assert "authorize" not in names  # refreshed: nobody was asked again
    assert refused.held() is not firsts[1]
    refresh = [(step.outcome, step.detail, step.rule) for step in refused.steps
               if step.name == "refresh"]
    assert refresh[0][:2] == ("refused", "invalid_grant")
    assert refresh[1][0] == "fallback" and "OAuth 2.1 §4.3" in refresh[1][2]
    assert [step.name for step in refused.steps][-3:] == ["authorize", "callback", "token"]


def test_migration_registers_again_and_shows_the_new_server_nothing_old() -> None:
    auth = OAuth(callback="auto-approved")
    run_lab(("--auth-fault", "migration"), auth, calls=2)
    assert str(auth.describe()["issuer"]).endswith("/as2")
    assert "authorization server http://127.0.0.1:" in auth.steps[1].detail
    assert auth.steps[1].detail.endswith("/as2")
    assert len(auth.state.registrations) == 2
    old, new = auth.state.registrations.values()
    assert old.client_id != new.client_id


@pytest.mark.parametrize(("fault", "rule"), [
    ("wrong-issuer", "RFC 8414 §3.3"),
    ("resource-mismatch", "RFC 9728 §3.3"),
    ("missing-iss", "RFC 9207"),
    ("wrong-iss", "RFC 9207"),
    ("unexpected-iss", "RFC 9207"),
    ("no-s256", "PKCE S256"),
    ("cross-origin-redirect", "another origin"),
    ("html-metadata", "not JSON"),
    ("huge-metadata", "262,144 bytes"),
    ("reject-tokens", "after 3 fresh tokens"),
    ("endless-step-up", "after 3 fresh tokens"),
])
def test_each_broken_rule_is_refused_by_name(fault: str, rule: str) -> None:
    auth = OAuth(callback="auto-approved")
    with pytest.raises(RequestFailed) as failed:
        run_lab(("--auth-fault", fault), auth)
    assert rule in str(failed.value)
    token = auth.held()
    assert token is None or token.access_token not in str(failed.value)


def test_a_401_while_probing_the_era_never_falls_back() -> None:
    with pytest.raises(EraProbeFailed, match="401 Unauthorized"):
        run_lab((), None, era="stateless")
    with pytest.raises(EraProbeFailed, match="authorization"):
        run_lab((), None, era="auto")


def test_no_token_goes_to_another_origin() -> None:
    seen: list[httpx.Request] = []

    def elsewhere(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200)

    auth = OAuth(callback="auto-approved")
    run_lab((), auth)

    async def other_origin() -> None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(elsewhere),
                                     auth=auth) as client:
            await client.get("http://other.example/mcp")

    anyio.run(other_origin)
    assert "authorization" not in seen[0].headers


@pytest.mark.parametrize(("fault", "metadata"), [
    ("legacy-layout", "ok"),         # metadata at the MCP server's origin
    ("legacy-defaults", "fallback"),  # not even that: /authorize, /token, /register
])
def test_the_2025_03_26_layout_is_found_on_the_servers_origin(fault: str, metadata: str) -> None:
    auth = OAuth(callback="auto-approved")
    with lab_server("--auth", "--auth-fault", fault) as lab:
        origin = lab.ready_text.removesuffix("/mcp")
        challenge = httpx.post(lab.ready_text, json={}).headers["www-authenticate"]
        assert "resource_metadata" not in challenge
        for well_known in ("/.well-known/oauth-protected-resource/mcp",
                           "/.well-known/oauth-protected-resource"):
            assert httpx.get(origin + well_known).status_code == 404
        assert "add" in anyio.run(lambda: use(lab.ready_text, auth))
    outcomes = {step.name: step.outcome for step in auth.steps}
    assert outcomes["resource metadata"] == "fallback"
    assert outcomes["server metadata"] == metadata
    assert all(outcomes[name] == "ok" for name in ("register", "authorize", "token"))
    assert auth.describe()["issuer"] == origin
    for name, path in (("register", "/register"), ("authorize", "/authorize"),
                       ("token", "/token")):
        step = next(step for step in auth.steps if step.name == name)
        assert f"{origin}{path}" in step.sent


@pytest.mark.parametrize(("mode", "tries"), [
    ("well-known", ["/.well-known/oauth-protected-resource/mcp"]),
    ("well-known-root", ["/.well-known/oauth-protected-resource/mcp",
                         "/.well-known/oauth-protected-resource"]),
])
def test_without_resource_metadata_in_the_challenge_the_well_known_uris_are_tried_in_order(
        mode: str, tries: list[str]) -> None:
    """MCP servers may offer either discovery mechanism; clients MUST fall back to the
    well-known URIs, path-inserted first, then the root (MCP 2025-11-25, RFC 9728 §3.1)."""
    auth = OAuth(callback="auto-approved")
    with lab_server("--auth", "--auth-prm-discovery", mode) as lab:
        origin = lab.ready_text.removesuffix("/mcp")
        challenge = httpx.post(lab.ready_text, json={}).headers["www-authenticate"]
        assert challenge == 'Bearer scope="mcp"'
        served = [path for path in ("/.well-known/oauth-protected-resource/mcp",
                                    "/.well-known/oauth-protected-resource")
                  if httpx.get(origin + path).status_code == 200]
        assert served == tries[-1:]
        assert "add" in anyio.run(lambda: use(lab.ready_text, auth))
    looked = [step for step in auth.steps if step.name == "resource metadata"]
    assert [step.sent for step in looked] == [f"GET {origin}{path}" for path in tries]
    assert [step.outcome for step in looked] == ["not found"] * (len(tries) - 1) + ["ok"]
    assert auth.describe()["issuer"] != origin  # the authorization server is elsewhere


def _browser(authorization_url: str) -> str:
    """Play the person's browser: open the link, follow the redirect wherever it goes."""
    response = httpx.get(authorization_url, follow_redirects=False)
    return response.headers["location"]


def test_loopback_listener_gets_the_code() -> None:
    pages: list[int] = []

    def browse(url: str) -> None:
        location = _browser(url)
        assert location.startswith("http://127.0.0.1:")
        pages.append(httpx.get(location).status_code)  # the listener's "you may close" page

    def open_in_a_thread(url: str) -> bool:
        threading.Thread(target=browse, args=(url,), daemon=True).start()
        return True

    auth = OAuth(callback=Loopback(browser=open_in_a_thread))
    assert "add" in run_lab((), auth)
    assert pages == [200]
    assert auth.describe()["callback"] == "loopback"


def test_paste_back_and_headless_callbacks() -> None:
    shown: list[str] = []
    paste = PasteBack(show=shown.append, ask=lambda prompt: shown[-1].split()[2].strip()
                      and _browser(shown[-1].split()[2]))
    auth = OAuth(callback=paste)
    assert "add" in run_lab((), auth)
    assert shown and "Authorize here:" in shown[0]
    assert auth.describe()["callback"] == "paste-back"
    headless = OAuth(callback=Headless(_browser))
    assert "add" in run_lab((), headless)
    assert isinstance(OAuth(callback="auto-approved"), OAuth)
    assert AutoApproved().name == "auto-approved"


def test_a_callback_that_breaks_fails_the_request_not_the_session() -> None:
    def broken(authorization_url: str) -> str:
        raise ConnectionRefusedError("the test's browser is not there")

    async def attempt(url: str) -> tuple[str, str]:
        transport = http_transport(url, "streamable-http", auth=OAuth(callback=Headless(broken)))
        async with ClientSession(transport, timeout=30) as session:
            with pytest.raises(RequestFailed) as failed:
                await session.connect()
            return str(failed.value), session.state.value

    with lab_server("--auth") as lab:
        message, state = anyio.run(lambda: attempt(lab.ready_text))
    assert "the headless callback failed: ConnectionRefusedError: the test's browser" in message
    assert "ServerExited" not in message and state != "Terminated"
