"""OAuth against servers no one here wrote: oidc-provider in front of an SDK resource server.

The authorization server is ``oidc-provider`` (npm; panva's OpenID Certified server) in
two configurations: its defaults (DPoP on) and a strict one (PKCE for every client,
refresh tokens rotated on each use, access tokens that live a few seconds). The
resource servers are protected MCP servers on the official Python SDK, verifying JWT
access tokens against the provider's keys, Bearer only. The person at the browser is
:class:`oidc_support.Browser`: it fills in oidc-provider's own login and consent forms.

The official SDK's OAuth client runs against the same peers first: it proves the
harness right independently of mcp_nb. mcp_nb's client then runs on its public API's
defaults (``OAuth()`` with only the callback given, ``http_transport(url)``).

docs/interop.md says what runs, against which versions, and what was found.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest
from joserfc.jwk import ECKey
from oidc_support import (
    STRICT_TOKEN_SECONDS,
    Browser,
    HttpsDocuments,
    Provider,
    ResourceServers,
    dead_origin,
    machine_clients,
    new_secret,
    oidc_provider,
    protected_servers,
)

from mcp_nb.auth import Headless, OAuth, Step
from mcp_nb.client import ClientSession
from mcp_nb.client.errors import McpError
from mcp_nb.transports import http_transport

pytest.importorskip("mcp.server.mcpserver", reason="the official MCP SDK (mcp>=2) is needed")

pytestmark = [pytest.mark.anyio, pytest.mark.interop, pytest.mark.timeout(90)]


@dataclass
class Peers:
    default: Provider
    strict: Provider
    servers: ResourceServers
    documents: HttpsDocuments
    #: The pre-registered machine clients' credentials.
    secret: str
    private_key_pem: str


@pytest.fixture(scope="module")
def peers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peers]:
    directory = tmp_path_factory.mktemp("oidc")
    key = ECKey.generate_key("P-256", auto_kid=True)
    secret = new_secret()
    clients = machine_clients(secret, key.as_dict(private=False))
    with contextlib.ExitStack() as stack:
        documents = HttpsDocuments(directory / "tls")
        stack.callback(documents.close)
        default, strict = (
            stack.enter_context(oidc_provider(profile, directory, clients,
                                              extra_ca=documents.ca_file))
            for profile in ("default", "strict"))
        servers = stack.enter_context(protected_servers(
            {"name": "default", "issuer": default.issuer},
            {"name": "strict", "issuer": strict.issuer},
            # Misconfigured on purpose, one rule each:
            # its metadata names another resource (RFC 9728 §3.3),
            {"name": "other-resource", "issuer": default.issuer, "resource_path": "/api"},
            # the provider does not know it as a resource (RFC 8707 invalid_target),
            {"name": "unlisted", "issuer": default.issuer},
            # its metadata names the provider by another host name (RFC 8414 §3.3),
            {"name": "issuer-alias", "issuer": default.issuer,
             "advertised_issuer": default.issuer.replace("127.0.0.1", "localhost")},
            # its metadata names an authorization server that is not running.
            {"name": "server-down", "issuer": default.issuer,
             "advertised_issuer": dead_origin()}))
        default.allow_resources(servers["default"], servers["other-resource"],
                                servers["issuer-alias"], servers["server-down"])
        strict.allow_resources(servers["strict"])
        yield Peers(default, strict, servers, documents, secret,
                    key.as_pem(private=True).decode())


def sdk_token_lines(peers: Peers) -> list[str]:
    """The resource servers' verdicts on the tokens they were shown."""
    return [line for line in peers.servers.process.lines if "token " in line]


async def whoami(url: str, auth: OAuth, *, era: str | None = None, calls: int = 1) -> list[str]:
    """Connect with ``auth`` on the public API's defaults and ask ``whoami`` ``calls`` times."""
    async with ClientSession(http_transport(url, auth=auth), timeout=30) as session:
        if era is None:
            await session.connect()
        else:
            await session.connect(era=era)
        return [(await session.call_tool("whoami", {})).text for _ in range(calls)]


def recorded(auth: OAuth) -> list[Step]:
    """Every step of every flow ``auth`` runs from now on (``auth.steps`` is the last flow's)."""
    steps: list[Step] = []
    auth.on_step = steps.append
    return steps


# -- the harness ------------------------------------------------------------------------------


def test_the_peers_are_configured_as_the_tests_say(peers: Peers) -> None:
    default, strict = peers.default.metadata(), peers.strict.metadata()
    for metadata in (default, strict):
        # DPoP is on in both (oidc-provider's default); the resource servers never ask for it.
        assert "ES256" in metadata["dpop_signing_alg_values_supported"]
        assert metadata["authorization_response_iss_parameter_supported"] is True
        assert metadata["client_id_metadata_document_supported"] is True
        assert metadata["code_challenge_methods_supported"] == ["S256"]
        assert metadata["registration_endpoint"].startswith(metadata["issuer"])
        assert {"authorization_code", "refresh_token", "client_credentials"} <= set(
            metadata["grant_types_supported"])
        assert "private_key_jwt" in metadata["token_endpoint_auth_methods_supported"]
    url = peers.servers["default"]
    challenge = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                           headers={"Accept": "application/json, text/event-stream"})
    assert challenge.status_code == 401
    header = challenge.headers["www-authenticate"]
    assert header.startswith("Bearer ") and "resource_metadata=" in header
    resource_metadata = httpx.get(header.split('resource_metadata="')[1].split('"')[0]).json()
    assert resource_metadata == {"resource": url, "authorization_servers": [peers.default.issuer],
                                 "scopes_supported": ["mcp"],
                                 "bearer_methods_supported": ["header"]}


async def _sdk_client_whoami(peers: Peers, url: str, browser: Browser, *, wait: float = 0
                             ) -> list[str]:
    """The official SDK's OAuth client (mcp.client.auth) with the same browser: whoami,
    optionally again after ``wait`` seconds."""
    import httpx2
    from mcp import Client
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

    class Storage:
        def __init__(self) -> None:
            self.tokens: Any = None
            self.client: Any = None

        async def get_tokens(self) -> Any:
            return self.tokens

        async def set_tokens(self, tokens: Any) -> None:
            self.tokens = tokens

        async def get_client_info(self) -> Any:
            return self.client

        async def set_client_info(self, client: Any) -> None:
            self.client = client

    sent_to: list[str] = []

    async def redirect(authorization_url: str) -> None:
        sent_to.append(authorization_url)

    async def callback() -> AuthorizationCodeResult:
        landed = httpx.URL(await browser(sent_to.pop()))
        return AuthorizationCodeResult(code=landed.params["code"],
                                       state=landed.params.get("state"),
                                       iss=landed.params.get("iss"))

    metadata = OAuthClientMetadata(redirect_uris=[browser.redirect_uri],  # type: ignore[list-item]
                                   client_name="sdk", token_endpoint_auth_method="none",
                                   grant_types=["authorization_code", "refresh_token"])
    provider = OAuthClientProvider(url, metadata, Storage(), redirect_handler=redirect,
                                   callback_handler=callback)
    answers = []
    async with httpx2.AsyncClient(auth=provider, timeout=30) as http, Client(
            streamable_http_client(url, http_client=http)) as client:
        answers.append((await client.call_tool("whoami", {})).content[0].text)
        if wait:
            await anyio.sleep(wait)
            answers.append((await client.call_tool("whoami", {})).content[0].text)
    return answers


async def test_the_harness_with_the_sdks_own_oauth_client(peers: Peers) -> None:
    """The SDK's client authorizes at both providers through the headless browser, and
    refreshes the strict one's short-lived token without it: the harness is right."""
    browser = Browser()
    [answer] = await _sdk_client_whoami(peers, peers.servers["default"], browser)
    assert answer.endswith(" ada mcp")
    strict = Browser()
    first, after_expiry = await _sdk_client_whoami(peers, peers.servers["strict"], strict,
                                                   wait=STRICT_TOKEN_SECONDS + 1)
    assert first == after_expiry and first.endswith(" ada mcp")
    assert len(browser.visits) == len(strict.visits) == 1


# -- mcp_nb: the authorization code grant ---------------------------------------------------


@pytest.mark.parametrize(("profile", "era"), [
    pytest.param("default", None, id="default-handshake"),  # connect()'s own default
    pytest.param("default", "stateless", id="default-stateless"),
    pytest.param("default", "auto", id="default-auto"),  # %mcp connect's default
    pytest.param("strict", None, id="strict-handshake"),
    pytest.param("strict", "stateless", id="strict-stateless"),
])
async def test_authorization_code_with_registration_pkce_and_resource(
        peers: Peers, profile: str, era: str | None) -> None:
    """DCR + PKCE S256 + RFC 8707 resource, one browser step, a Bearer token the SDK server
    takes. With the default profile oidc-provider offers DPoP; the resource doesn't ask for
    it (its metadata has no DPoP fields), so the token must be Bearer."""
    url = peers.servers[profile]
    browser = Browser()
    auth = OAuth(callback=Headless(browser))
    steps = recorded(auth)
    answers = await whoami(url, auth, era=era, calls=3)
    state = auth.describe()
    assert answers == [f"{state['client_id']} ada mcp"] * 3
    assert state["client_registration"] == "dynamic registration"
    [visit] = browser.visits  # three calls, one person: the token outlived them
    sent = httpx.URL(visit).params
    assert sent["code_challenge_method"] == "S256" and sent["resource"] == url
    # RFC 9207: the provider names itself on the redirect (and the client checked it).
    provider = peers.default if profile == "default" else peers.strict
    assert httpx.URL(browser.landed[0]).params["iss"] == provider.issuer
    token = auth.held()
    assert token is not None and token.token_type.lower() == "bearer"
    # One token for the three calls: even the strict profile's few seconds outlive them
    # (a token is not renewed while it is good, neither by the browser nor by a refresh).
    names = [step.name for step in steps]
    assert names.count("token") == 1 and "refresh" not in names, names
    # The SDK server accepted every request's token (none refused: no cnf, right audience).
    refused = [line for line in sdk_token_lines(peers) if "token refused" in line]
    assert refused == []


async def test_a_refresh_needs_no_browser_and_rotates_the_refresh_token(peers: Peers) -> None:
    """Strict profile: the access token runs out; the next request refreshes it (no person),
    and the provider rotated the refresh token — the consumed one is refused."""
    browser = Browser()
    auth = OAuth(callback=Headless(browser))
    async with ClientSession(http_transport(peers.servers["strict"], auth=auth),
                             timeout=30) as session:
        await session.connect()
        before = (await session.call_tool("whoami", {})).text
        first = auth.held()
        assert first is not None and first.refresh_token, (
            "no refresh token: OpenID providers keep offline_access only with prompt=consent "
            "(OpenID Connect Core §11)")
        steps = recorded(auth)
        await anyio.sleep(STRICT_TOKEN_SECONDS + 1)
        after = (await session.call_tool("whoami", {})).text
    second = auth.held()
    assert before == after and len(browser.visits) == 1
    # Renewed by the refresh token alone: no registration, no browser, no new code.
    names = [step.name for step in steps]
    assert names.count("refresh") == 1, names
    assert not {"register", "authorize", "callback", "token"} & set(names), names
    assert second is not None and second.access_token != first.access_token
    assert second.refresh_token and second.refresh_token != first.refresh_token
    # Rotation is the provider's, not the client's: the consumed refresh token is refused.
    reused = httpx.post(f"{peers.strict.issuer}/token", data={
        "grant_type": "refresh_token", "refresh_token": first.refresh_token,
        "client_id": auth.describe()["client_id"]})
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"


def test_a_token_that_expires_between_two_cells_is_refreshed_silently(
        peers: Peers, mcp, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a notebook: authorize in one cell, call in the next after the token ran out; the
    refresh happens between the cells' requests without a person (zero browser steps)."""
    browser = Browser()
    monkeypatch.setitem(mcp.shell.user_ns, "oidc_browser", browser)
    url = peers.servers["strict"]
    mcp(f"connect strict {url} --auth --auth-callback {{oidc_browser}}")
    first = mcp("call whoami").text
    assert len(browser.visits) == 1
    time.sleep(STRICT_TOKEN_SECONDS + 1)
    assert mcp("call whoami").text == first
    assert len(browser.visits) == 1


# -- mcp_nb: other client identities and grants ----------------------------------------------


@pytest.mark.parametrize("authentication", ["client_secret", "private_key_jwt"])
async def test_client_credentials(peers: Peers, authentication: str) -> None:
    """Pre-registered machine clients at the default profile (DPoP on): Bearer tokens."""
    if authentication == "client_secret":
        client_id = "machine-with-secret"
        auth = OAuth(grant="client_credentials", client_id=client_id,
                     client_secret=peers.secret)
    else:
        client_id = "machine-with-key"
        auth = OAuth(grant="client_credentials", client_id=client_id,
                     private_key=peers.private_key_pem, signing_algorithm="ES256")
    [answer] = await whoami(peers.servers["default"], auth)
    assert answer.split()[0] == client_id and answer.endswith(" mcp")
    token = auth.held()
    assert token is not None and token.token_type.lower() == "bearer"


async def test_a_client_id_metadata_document(peers: Peers) -> None:
    """oidc-provider 9 implements CIMD (draft 02, experimental): the document's https URL is
    the client id; the provider fetches it (here from loopback, over https)."""
    browser = Browser()
    document_url = peers.documents.origin + "/mcp_nb/client.json"
    peers.documents.publish("/mcp_nb/client.json", {
        "client_id": document_url, "client_name": "mcp_nb interop",
        "redirect_uris": [browser.redirect_uri], "application_type": "native",
        "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
        "token_endpoint_auth_method": "none"})
    auth = OAuth(client_metadata_url=document_url, callback=Headless(browser))
    [answer] = await whoami(peers.servers["default"], auth)
    assert answer == f"{document_url} ada mcp"
    assert auth.describe()["client_registration"] == "client id metadata document"
    assert len(browser.visits) == 1


# -- mcp_nb: the refusals ----------------------------------------------------------------------


#: Each refusal on connect()'s default era and on %mcp connect's, which meets the 401 while
#: probing with server/discover rather than in initialize.
refusal_eras = pytest.mark.parametrize("era", [pytest.param(None, id="handshake"), "auto"])


async def _refused(url: str, era: str | None) -> tuple[str, Browser]:
    browser = Browser()
    with pytest.raises(McpError) as refused:
        await whoami(url, OAuth(callback=Headless(browser)), era=era)
    # Said as a refusal of authorization in either era, not as an HTTP exchange that broke.
    assert "authorization failed: " in str(refused.value)
    assert "broke" not in str(refused.value)
    return str(refused.value), browser


@refusal_eras
async def test_a_resource_that_names_another_resource_is_refused(peers: Peers,
                                                                 era: str | None) -> None:
    """Its metadata names /api, not /mcp: a token for it would be for another server."""
    message, browser = await _refused(peers.servers["other-resource"], era)
    assert "RFC 9728" in message and peers.servers["other-resource"].replace(
        "/mcp", "/api") in message
    assert browser.visits == []


@refusal_eras
async def test_a_resource_the_provider_does_not_know_is_refused_by_the_provider(
        peers: Peers, era: str | None) -> None:
    """The provider refuses (invalid_target) on the redirect; the client passes its words on."""
    message, browser = await _refused(peers.servers["unlisted"], era)
    assert "invalid_target" in message and "is not a resource of this server" in message
    assert len(browser.visits) == 1  # the provider says so on the redirect


@refusal_eras
async def test_an_issuer_that_is_not_the_one_asked_for_is_refused(peers: Peers,
                                                                  era: str | None) -> None:
    """localhost:PORT's metadata says its issuer is 127.0.0.1:PORT: another issuer, even if
    the same server (issuers are compared as strings)."""
    message, browser = await _refused(peers.servers["issuer-alias"], era)
    alias = peers.default.issuer.replace("127.0.0.1", "localhost")
    assert "RFC 8414" in message and alias in message and peers.default.issuer in message
    assert browser.visits == []


@refusal_eras
async def test_an_authorization_server_that_is_down_is_named(peers: Peers,
                                                             era: str | None) -> None:
    """The error says which server could not be reached (not that the MCP server failed)."""
    url = peers.servers["server-down"]
    metadata = httpx.get(url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")).json()
    [down] = metadata["authorization_servers"]
    message, browser = await _refused(url, era)
    assert down.rstrip("/") in message and "reachable" in message
    assert browser.visits == []
