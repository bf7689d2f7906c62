"""The OAuth client against servers that behave as real ones do.

The lab's authorization server offers DPoP in every mode (as oidc-provider and several hosted
identity providers do by default) in front of a resource that takes Bearer tokens only, accepts
DPoP, or requires it (``--auth-dpop``); like an OpenID provider it grants ``offline_access``
only with ``prompt=consent`` (OpenID Connect Core 1.0 §11); its tokens may live seconds
(``--auth-token-lifetime``). And in a notebook, the browser step given as a Python function.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from auth_support import run_lab, use
from http_support import lab_server

from mcp_nb.auth import Headless, OAuth, Step
from mcp_nb.client import ClientSession, RequestFailed
from mcp_nb.notebook.magics import McpCellError
from mcp_nb.protocol import State
from mcp_nb.transports import http_transport

GRANTS = ("authorization_code", "client_credentials")


def _oauth(grant: str, **settings: Any) -> OAuth:
    """A browser flow the lab approves at once, or the confidential client's credentials."""
    if grant == "client_credentials":
        return OAuth(grant="client_credentials", client_id="lab-confidential",
                     client_secret="lab-secret", **settings)
    return OAuth(callback="auto-approved", **settings)


def _token_step(auth: OAuth) -> Step:
    return next(step for step in reversed(auth.steps) if step.name in ("token", "refresh"))


def _follow(authorization_url: str) -> str:
    """The person's browser: open the link, return where the lab redirects it."""
    return httpx.get(authorization_url, follow_redirects=False).headers["location"]


def _metadata(mcp_url: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The lab resource's metadata (RFC 9728) and its authorization server's (RFC 8414)."""
    challenge = httpx.post(mcp_url, json={}).headers["www-authenticate"]
    resource = httpx.get(challenge.split('resource_metadata="')[1].split('"')[0]).json()
    issuer = resource["authorization_servers"][0]
    server = httpx.get(f"{issuer}/.well-known/oauth-authorization-server").json()
    return resource, server


# -- DPoP only when the resource asks for it -------------------------------------------------


@pytest.mark.parametrize("grant", GRANTS)
def test_dpop_is_not_used_when_only_the_authorization_server_offers_it(grant: str) -> None:
    auth = _oauth(grant)
    with lab_server("--auth") as lab:
        resource, server = _metadata(lab.ready_text)
        assert server["dpop_signing_alg_values_supported"] == ["ES256"]  # offered …
        assert not any(name.startswith("dpop") for name in resource)       # … not asked for
        assert "add" in anyio.run(lambda: use(lab.ready_text, auth, calls=2))
    token = auth.held()
    assert token is not None and token.token_type == "Bearer"
    assert "DPoP proof" not in _token_step(auth).sent
    assert auth.describe()["dpop"] == ("auto: not used: the resource does not ask for it (no "
                                       "DPoP fields in its metadata, no DPoP challenge)")


@pytest.mark.parametrize("grant", GRANTS)
@pytest.mark.parametrize("mode", ["accepted", "required"])
def test_dpop_is_used_when_the_resource_asks_for_it(mode: str, grant: str) -> None:
    auth = _oauth(grant)
    assert "add" in run_lab(("--auth-dpop", mode), auth, calls=2)
    token = auth.held()
    assert token is not None and token.token_type == "DPoP"
    assert "DPoP proof" in _token_step(auth).sent
    reason = str(auth.describe()["dpop"])
    assert reason.startswith("auto: used: ") and "supports ES256" in reason
    assert ("dpop_bound_access_tokens_required" in reason) is (mode == "required")


def test_dpop_false_never_uses_it() -> None:
    auth = _oauth("authorization_code", dpop=False)
    assert "add" in run_lab(("--auth-dpop", "accepted"), auth)
    token = auth.held()
    assert token is not None and token.token_type == "Bearer"
    assert auth.describe()["dpop"] == "False: not used: switched off (dpop=False)"


@pytest.mark.parametrize("grant", GRANTS)
def test_a_401_to_dpop_bound_tokens_names_dpop_as_a_cause(grant: str) -> None:
    """dpop=True in front of a Bearer-only resource: what the issue saw by default."""
    auth = _oauth(grant, dpop=True)
    with pytest.raises(RequestFailed) as failed:
        run_lab((), auth)
    message = str(failed.value)
    assert "after 3 fresh tokens (DPoP-bound, sent as Authorization: DPoP)" in message
    assert "may not accept DPoP-bound tokens" in message and "OAuth(dpop=False)" in message
    assert auth.describe()["dpop"] == "True: used: forced (dpop=True), and the authorization " \
                                      "server supports ES256"


@pytest.mark.parametrize(("flags", "dpop", "said"), [
    (("--auth-dpop", "required", "--auth-fault", "no-dpop"), "auto",
     "the resource requires DPoP-bound tokens (dpop_bound_access_tokens_required) but its "
     "authorization server http://127.0.0.1:"),
    (("--auth-fault", "no-dpop"), True, "forced (dpop=True) but its authorization server"),
    (("--auth-dpop", "required"), False, "and DPoP is switched off (dpop=False)"),
])
def test_what_cannot_work_is_refused_before_any_token(flags: tuple[str, ...], dpop: Any,
                                                       said: str) -> None:
    auth = _oauth("authorization_code", dpop=dpop)
    with pytest.raises(RequestFailed) as failed:
        run_lab(flags, auth)
    message = str(failed.value)
    assert said in message and "RFC 9728 §2" in message
    assert "dpop='auto'" in message or "must enable DPoP" in message  # the fix
    assert not {"authorize", "token"} & {step.name for step in auth.steps}


def test_the_refresh_of_a_dpop_bound_token_is_proven_with_its_key() -> None:
    """The lab refuses a bound refresh token without a proof from the token's key."""
    auth = _oauth("authorization_code")

    async def across_expiry(url: str) -> None:
        transport = http_transport(url, "streamable-http", auth=auth)
        async with ClientSession(transport, timeout=30) as session:
            await session.connect()
            first = auth.held()
            assert first is not None and first.token_type == "DPoP" and first.refresh_token
            assert first.expires_at is not None
            await anyio.sleep(first.expires_at - time.time() + 0.2)  # expired at the lab
            await session.call_tool("add", {"a": 1, "b": 2})
            assert auth.held() is not first

    with lab_server("--auth", "--auth-dpop", "accepted", "--auth-token-lifetime", "2") as lab:
        anyio.run(across_expiry, lab.ready_text)
    refresh = auth.steps[-1]
    assert (refresh.name, refresh.outcome) == ("refresh", "ok")
    assert "grant_type=refresh_token" in refresh.sent and "DPoP proof" in refresh.sent
    held = auth.held()
    assert held is not None and held.token_type == "DPoP"


# -- offline_access comes with prompt=consent --------------------------------------------------


@pytest.mark.parametrize("offline", [True, False])
def test_prompt_consent_is_sent_when_offline_access_is_asked_for(offline: bool) -> None:
    asked: list[str] = []

    def browser(authorization_url: str) -> str:
        asked.append(authorization_url)
        return _follow(authorization_url)

    auth = OAuth(callback=Headless(browser), offline_access=offline)
    run_lab((), auth)
    params = httpx.URL(asked[0]).params
    assert ("offline_access" in params["scope"].split()) is offline
    assert params.get_list("prompt") == (["consent"] if offline else [])
    token = auth.held()
    # The lab, like OpenID providers, drops offline_access without prompt=consent.
    assert token is not None and (token.refresh_token is not None) is offline
    assert ("offline_access" in token.scopes) is offline


# -- short-lived tokens ------------------------------------------------------------------------


def test_a_three_second_token_is_used_not_authorized_again_at_once() -> None:
    """No refresh token (offline_access=False): every renewal would be a browser step."""
    browser_steps: list[str] = []

    def browser(authorization_url: str) -> str:
        browser_steps.append(authorization_url)
        return _follow(authorization_url)

    auth = OAuth(callback=Headless(browser), offline_access=False)

    async def requests(url: str) -> None:
        transport = http_transport(url, "streamable-http", auth=auth)
        async with ClientSession(transport, timeout=30) as session:
            await session.connect()
            await session.list_tools()
            await session.call_tool("add", {"a": 1, "b": 2})
            await session.call_tool("add", {"a": 1, "b": 2})
            assert len(browser_steps) == 1
            token = auth.held()
            assert token is not None and token.lifetime == 3.0
            assert not token.expired()  # the burst took less than 90 % of its life
            await anyio.sleep(3.2)  # now it has expired at the lab too
            await session.call_tool("add", {"a": 1, "b": 2})
            assert len(browser_steps) == 2  # renewed when due, once

    with lab_server("--auth", "--auth-token-lifetime", "3") as lab:
        anyio.run(requests, lab.ready_text)


# -- the browser step as a Python function ----------------------------------------------------


def test_a_plain_function_callback_runs_off_the_event_loop() -> None:
    """So it may block, or drive a browser through an API that refuses a running loop."""
    on_a_loop: list[bool] = []

    def browser(authorization_url: str) -> str:
        try:
            asyncio.get_running_loop()
            on_a_loop.append(True)
        except RuntimeError:
            on_a_loop.append(False)
        return _follow(authorization_url)

    assert "add" in run_lab((), OAuth(callback=Headless(browser)))
    assert on_a_loop == [False]


@pytest.fixture
def approve(mcp) -> Iterator[list[str]]:
    """``approve`` in the notebook's namespace: the person's browser; the URLs it was given."""
    seen: list[str] = []

    def approve(authorization_url: str) -> str:
        seen.append(authorization_url)
        return _follow(authorization_url)

    mcp.shell.user_ns["approve"] = approve
    yield seen
    mcp.shell.user_ns.pop("approve", None)


@pytest.mark.parametrize("written", ["{approve}", "approve"])
def test_auth_callback_takes_a_function_from_the_notebook(mcp, approve, written: str) -> None:
    with lab_server("--auth") as server:
        hosted = mcp(f"connect web {server.ready_text} --auth --auth-callback {written}")
        assert hosted.session.state is State.OPERATING
        assert len(approve) == 1 and approve[0].startswith("http://127.0.0.1:")
        assert mcp("call add a=2 b=3").text == "5"
        state = repr(mcp("auth"))
    assert "callback: headless" in state
    assert "dpop: auto: not used: the resource does not ask for it" in state


def test_a_flow_walked_one_step_per_cell_takes_the_function_too(mcp, approve, capsys
                                                                ) -> None:
    with lab_server("--auth") as server:
        mcp(f"auth --step {server.ready_text} --auth-callback {{approve}} --dpop off")
        for _ in range(20):
            mcp("auth --next")
            if "token held" in capsys.readouterr().out:
                break
        assert len(approve) == 1
        hosted = mcp(f"connect walked {server.ready_text} --auth")
        assert hosted.session.state is State.OPERATING and len(approve) == 1
        assert "dpop: False: not used" in repr(mcp("auth"))


def test_an_mcpservers_dict_takes_a_function_and_the_dpop_setting(mcp, approve) -> None:
    with lab_server("--auth", "--auth-dpop", "accepted") as server:
        mcp.shell.user_ns["servers"] = {"mcpServers": {"remote": {
            "url": server.ready_text, "auth": {"callback": mcp.shell.user_ns["approve"],
                                               "dpop": False}}}}
        try:
            hosted = mcp("connect remote --config {servers}")
        finally:
            mcp.shell.user_ns.pop("servers")
        assert hosted.session.state is State.OPERATING and len(approve) == 1
        state = repr(mcp("auth"))
    assert "callback: headless" in state
    assert "dpop: False: not used: switched off (dpop=False)" in state


def test_dpop_flag_on_names_dpop_when_the_server_refuses(mcp) -> None:
    with lab_server("--auth") as server, pytest.raises(McpCellError) as failed:
        mcp(f"connect web {server.ready_text} --auth --auth-callback auto-approved "
            "--dpop on")
    assert "DPoP-bound, sent as Authorization: DPoP" in str(failed.value)
    assert "--dpop off" in str(failed.value)


@pytest.mark.parametrize(("line", "namespace", "said"), [
    ("--auth --auth-callback {answer}", {"answer": 42},
     "--auth-callback 42 is neither a callback mode"),
    ("--auth --auth-callback nosuch", {}, "--auth-callback 'nosuch' is neither a callback mode"),
    ("--config {servers}", {"servers": {"mcpServers": {"r": {
        "url": "http://127.0.0.1:9/mcp", "auth": {"callback": "browser"}}}}},
     "the entry's \"auth\" \"callback\" 'browser' is neither a callback mode"),
    ("--config {servers}", {"servers": {"mcpServers": {"r": {
        "url": "http://127.0.0.1:9/mcp", "auth": {"dpop": "maybe"}}}}},
     "the entry's \"auth\" \"dpop\" 'maybe': write \"auto\""),
    ("--config {servers}", {"servers": 42}, "--config takes a JSON file's path or a dict"),
])
def test_settings_that_cannot_work_are_refused_by_name(mcp, line: str,
                                                        namespace: dict[str, Any],
                                                        said: str) -> None:
    """Nothing is contacted: the line is refused before the server is."""
    mcp.shell.user_ns.update(namespace)
    try:
        target = "r" if "--config" in line else "http://127.0.0.1:9/mcp"
        with pytest.raises(McpCellError) as failed:
            mcp(f"connect {target} {line}")
    finally:
        for name in namespace:
            mcp.shell.user_ns.pop(name)
    assert said in str(failed.value)
    if "neither" in said:
        assert "--auth-callback {fn}" in str(failed.value)  # the fix

