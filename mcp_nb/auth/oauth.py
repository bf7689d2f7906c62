"""``OAuth``: the authorization flow plugged into httpx as an :class:`httpx.Auth`.

Give it to an HTTP transport (``http_transport(url, auth=OAuth(...))``): a held token
rides on every request to the server's origin (and nowhere else); a ``401`` or a
``403 insufficient_scope`` runs the flow (:class:`~mcp_nb.auth.flow.Flow`) and retries
the request once per fresh token, a bounded number of times.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Generator
from dataclasses import replace
from typing import Any

import anyio
import httpx

from ..i18n import _
from .callbacks import Callback, choose_callback
from .challenge import Challenge, bearer_challenge
from .discovery import MAX_METADATA_BYTES, canonical_resource, origin
from .dpop import DpopSetting
from .errors import AuthorizationFailed
from .flow import (
    AuthState,
    BrowserNeed,
    ClientSettings,
    EnterpriseIdentity,
    Flow,
    Grant,
    HttpNeed,
    Need,
)
from .steps import Step
from .tokens import MemoryStore, Token, TokenStore, redact

#: Fresh tokens tried for one request before giving up (401 loops, endless step-up).
MAX_AUTHORIZATIONS_PER_REQUEST = 3
#: One OAuth exchange (metadata, registration, token) may take this long.
OAUTH_HTTP_TIMEOUT = 30.0


class OAuth(httpx.Auth):
    """OAuth 2.1 for an MCP server, as the MCP authorization spec describes it.

    Example::

        from mcp_nb.auth import OAuth
        from mcp_nb.transports import http_transport

        auth = OAuth(client_id="my-app", scopes=["mcp:tools"])      # a browser flow
        transport = http_transport("https://mcp.example.com/mcp", auth=auth)

        machine = OAuth(grant="client_credentials", client_id="svc", client_secret="…")
        workload = OAuth(grant="jwt_bearer", client_id="svc", assertion=workload_jwt)
        bearer_only = OAuth(dpop=False)     # never DPoP, whatever the servers say

    ``callback`` picks how the code comes back ("auto", "loopback", "paste",
    "auto-approved", a :class:`~mcp_nb.auth.callbacks.Callback`, or a callable that
    gets the authorization URL and returns the redirect URL). ``store`` keeps tokens
    (in memory unless you pass a :class:`~mcp_nb.auth.tokens.FileStore`).
    ``on_step`` is told of each :class:`~mcp_nb.auth.steps.Step` as it happens.
    ``dpop``: bind tokens to a key of this client's own (RFC 9449) when the protected
    resource asks for it and its authorization server supports it (``"auto"``, the
    default), always (``True``: refused if the authorization server cannot), or never
    (``False``); see :func:`~mcp_nb.auth.dpop.decide_dpop`.
    ``http`` makes the client for the OAuth exchanges (tests inject transports).
    """

    requires_request_body = True

    def __init__(self, *, client_id: str | None = None, client_secret: str | None = None,
                 scopes: list[str] | tuple[str, ...] | None = None,
                 grant: Grant = "authorization_code", private_key: str | None = None,
                 signing_algorithm: str = "RS256", token_endpoint_auth_method: str | None = None,
                 client_metadata_url: str | None = None, client_name: str = "mcp_nb",
                 callback: str | Callback | Callable[[str], Any] = "auto",
                 store: TokenStore | None = None, offline_access: bool = True,
                 allow_without_s256: bool = False, assertion: str | None = None,
                 enterprise: EnterpriseIdentity | None = None,
                 on_step: Callable[[Step], object] | None = None,
                 http: Callable[[], httpx.AsyncClient] | None = None,
                 max_authorizations: int = MAX_AUTHORIZATIONS_PER_REQUEST,
                 dpop: DpopSetting = "auto") -> None:
        if dpop != "auto" and not isinstance(dpop, bool):
            raise ValueError(f"dpop={dpop!r}: choose 'auto' (DPoP when the resource asks for "
                             "it), True (always) or False (never)")
        self.settings = ClientSettings(
            client_id=client_id, client_secret=client_secret,
            auth_method=token_endpoint_auth_method, private_key=private_key,
            signing_algorithm=signing_algorithm, client_metadata_url=client_metadata_url,
            client_name=client_name, scopes=tuple(scopes) if scopes is not None else None,
            grant=grant, offline_access=offline_access, allow_without_s256=allow_without_s256,
            assertion=assertion, enterprise=enterprise, dpop=dpop)
        self._callback_choice = callback
        self.callback: Callback | None = None
        self.store = store if store is not None else MemoryStore()
        self.state = AuthState()
        self._http = http or (lambda: httpx.AsyncClient(timeout=OAUTH_HTTP_TIMEOUT))
        self.max_authorizations = max_authorizations
        #: Told of each step of every flow as it happens (what was sent, the rule, …).
        self.on_step = on_step
        #: The steps of the last flow (what was sent, what came back, the rule, the outcome).
        self.steps: list[Step] = []
        self._lock: anyio.Lock | None = None
        self._origin: str | None = None
        #: The resource server's latest DPoP nonce (RFC 9449 §9), sent in each proof.
        self._resource_nonce: str | None = None

    # -- what a notebook shows ---------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """The state worth showing: resource, issuer, client, scopes, expiry — never a token.

        ``dpop`` is the setting and, once a flow ran, whether it used DPoP and why:

        >>> OAuth().describe()["dpop"]
        'auto'
        """
        token = self.state.token
        registration = self.state.registrations.get(self.state.issuer or "")
        decision = self.state.dpop_decision
        dpop = str(self.settings.dpop) + (f": {decision.reason}" if decision else "")
        return {
            "resource": self.state.resource, "issuer": self.state.issuer,
            "client_id": registration.client_id if registration else self.settings.client_id,
            "client_registration": registration.how if registration else None,
            "grant": self.settings.grant,
            "callback": self.callback.name if self.callback else _callback_name(
                self._callback_choice),
            "dpop": dpop,
            "scope": token.scope if token else None,
            "expires_at": token.expires_at if token else None,
            "access_token": redact(token.access_token if token else None),
            "refresh_token": redact(token.refresh_token if token else None),
        }

    def __repr__(self) -> str:
        state = self.describe()
        return (f"OAuth(resource={state['resource']!r}, issuer={state['issuer']!r}, "
                f"client_id={state['client_id']!r}, scope={state['scope']!r}, "
                f"token={state['access_token']})")

    def logout(self) -> None:
        """Forget the token and the client registrations (the next request starts over)."""
        if self.state.resource:
            self.store.forget(self.state.resource)
        self.state = AuthState()
        self._origin = None

    # -- httpx.Auth ---------------------------------------------------------------------------

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request,
                                                                    httpx.Response, None]:
        raise RuntimeError("mcp_nb's OAuth runs on httpx.AsyncClient (the MCP transports)")
        yield request  # pragma: no cover  (makes this a generator, as httpx expects)

    async def async_auth_flow(self, request: httpx.Request
                              ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        held = self.state.token
        if held is not None and held.expired() and self._goes_to(request, held):
            # Renew before sending (a refresh token, else the whole flow) rather than
            # spend a request on a 401 that is sure to come.
            await self._obtain(str(request.url), None, held, step_up=False)
        sent_with = self._attach(request)
        response = yield request
        for _attempt in range(self.max_authorizations):
            if self._dpop_nonce_wanted(response) and sent_with is not None:
                # RFC 9449 §9: the resource wants its nonce in the proof; same token.
                self._attach(request)
                response = yield request
                continue
            challenge = bearer_challenge(response)
            if challenge is None:
                return
            step_up = response.status_code == 403
            await response.aread()
            await self._obtain(str(request.url), challenge, sent_with, step_up=step_up)
            sent_with = self._attach(request)
            response = yield request
        if bearer_challenge(response) is not None:
            bound = sent_with is not None and sent_with.token_type.lower() == "dpop"
            raise AuthorizationFailed(
                (_("the server still answers {status} after {count} fresh tokens (DPoP-bound, "
                   "sent as Authorization: DPoP)") if bound else
                 _("the server still answers {status} after {count} fresh tokens")).format(
                    status=response.status_code, count=self.max_authorizations),
                rule="a bounded number of authorizations per request (no 401 loop, no "
                "endless step-up)",
                fix=_("the server may not accept DPoP-bound tokens (RFC 9449): try "
                      "OAuth(dpop=False) (%mcp connect … --dpop off); else check its audience "
                      "(resource) and scope configuration") if bound else
                    _("the server rejects the tokens its authorization server issues: check "
                      "its audience (resource) and scope configuration"))

    def _attach(self, request: httpx.Request) -> Token | None:
        """Put the held token on ``request`` if it goes to the token's origin (else nothing)."""
        token = self.state.token
        if token is None or not self._goes_to(request, token):
            return None
        dpop = self.state.dpop
        if dpop is not None and token.token_type.lower() == "dpop":
            request.headers["Authorization"] = f"DPoP {token.access_token}"
            request.headers["DPoP"] = dpop.proof(request.method, request.url,
                                                 access_token=token.access_token,
                                                 nonce=self._resource_nonce)
        else:
            request.headers["Authorization"] = f"Bearer {token.access_token}"
        return token

    def _dpop_nonce_wanted(self, response: httpx.Response) -> bool:
        """Keep the resource's latest DPoP nonce; whether it refused for lack of it."""
        nonce = response.headers.get("dpop-nonce")
        if nonce is None or self.state.dpop is None:
            return False
        self._resource_nonce = nonce
        challenge = bearer_challenge(response)
        return response.status_code == 401 and challenge is not None and (
            challenge.error == "use_dpop_nonce")

    def _goes_to(self, request: httpx.Request, token: Token) -> bool:
        """Whether ``request`` goes to the origin ``token`` was issued for."""
        if self._origin is None:
            self._origin = origin(token.resource)
        return origin(request.url) == self._origin

    async def _obtain(self, url: str, challenge: Challenge | None, sent_with: Token | None, *,
                      step_up: bool) -> None:
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            if self.state.token is not None and self.state.token is not sent_with:
                return  # another request got a fresh token while this one waited
            if self.state.token is None and not step_up:
                stored = self.store.load(canonical_resource(url))
                if stored is not None and stored is not sent_with and not stored.expired():
                    self.state.token = stored
                    return
            flow = await self.begin(url, challenge, step_up=step_up)
            await self.run(flow)

    # -- the flow, whole or step by step ---------------------------------------------------

    async def begin(self, url: str, challenge: Challenge | None = None, *,
                    step_up: bool = False, ask_server: bool = False) -> Flow:
        """A new flow for the server at ``url`` (the callback is made ready first).

        ``ask_server``: the flow's first step asks the server for its challenge (for a
        flow started by hand rather than by a 401).
        """
        if self.callback is None:
            self.callback = choose_callback(self._callback_choice)
        redirect_uri = (await self.callback.prepare()
                        if self.settings.grant == "authorization_code" else "")
        flow = Flow(self.settings, self.state, url, challenge, redirect_uri, step_up=step_up,
                    ask_server=ask_server, on_step=self.on_step)
        self.steps = flow.steps
        return flow

    async def run(self, flow: Flow) -> Token:
        """Drive ``flow`` to its token (every need answered), then hold the token."""
        try:
            async with self._http() as http:
                need = flow.start()
                while need is not None:
                    need = flow.advance(await self.answer(need, http))
        finally:
            if self.callback is not None:
                await self.callback.close()  # a loopback listener lives for one flow
        assert flow.token is not None
        self.hold(flow.token)
        return flow.token

    async def answer(self, need: Need, http: httpx.AsyncClient) -> Any:
        """Do what one need asks: an HTTP exchange (read, bounded) or the browser step."""
        if isinstance(need, BrowserNeed):
            assert self.callback is not None
            try:
                return await self.callback.receive(need.authorization_url)
            except AuthorizationFailed:
                raise
            except Exception as exc:
                # Your callback's failure fails this request, not the transport (which
                # would report the MCP server as gone).
                raise AuthorizationFailed(
                    _("the {name} callback failed: {error}").format(
                        name=self.callback.name, error=f"{type(exc).__name__}: {exc}"),
                    rule="the browser step must bring back the redirect URL",
                    fix=_("fix the callback, or authorize another way (callback='paste')")) from exc
        assert isinstance(need, HttpNeed)
        try:
            async with http.stream(need.request.method, need.request.url,
                                   headers=need.request.headers, content=need.request.content,
                                   follow_redirects=False) as response:
                body = b""
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_METADATA_BYTES:
                        break
        except httpx.TransportError as exc:
            # Not the MCP server's failure: the session must not end because of it.
            raise AuthorizationFailed(
                _("{step}: {method} {url} failed: {error}").format(
                    step=need.step, method=need.request.method, url=need.request.url,
                    error=f"{type(exc).__name__}: {exc}"),
                rule="the OAuth exchange could not be made",
                fix=_("check that the authorization server is reachable")) from exc
        return httpx.Response(response.status_code, headers=response.headers, content=body,
                              request=need.request)

    async def exchange(self, need: HttpNeed) -> httpx.Response:
        """Answer one HTTP need on a client of its own (a flow driven one need at a time)."""
        async with self._http() as http:
            response: httpx.Response = await self.answer(need, http)
            return response

    def hold(self, token: Token) -> None:
        """Use ``token`` from now on (a flow walked by hand ends here)."""
        self.state.token = token
        self._origin = origin(token.resource)
        self.store.save(token)

    def held(self) -> Token | None:
        """The token held now (its repr is redacted), or ``None``."""
        return self.state.token

    def with_settings(self, **changes: Any) -> OAuth:
        """A copy with other client settings and a fresh state (e.g. another client id)."""
        copy = OAuth(callback=self._callback_choice, store=self.store, http=self._http,
                     max_authorizations=self.max_authorizations)
        copy.settings = replace(self.settings, **changes)
        return copy


def _callback_name(choice: object) -> str:
    """A callback choice as ``describe()`` shows it before the flow made it: a mode's name,
    or what a callable becomes (:class:`~mcp_nb.auth.callbacks.Headless`)."""
    if isinstance(choice, str):
        return choice
    name = getattr(choice, "name", None)
    return name if isinstance(name, str) else "headless"
