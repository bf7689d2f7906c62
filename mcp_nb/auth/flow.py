"""The authorization flow as a generator of needs: sans-I/O, so it runs whole or step by step.

A :class:`Flow` yields :class:`HttpNeed` (send this request, give me the response) and
:class:`BrowserNeed` (have the user authorize at this URL, give me the redirect URL);
whoever drives it does the I/O. :func:`run` drives it to the end; ``Flow.advance``
one need at a time (one notebook cell per step). Every exchange is kept as a
:class:`~mcp_nb.auth.steps.Step`. The OAuth mechanics (PKCE, client authentication,
JWT assertions, the authorization response) come from authlib.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field, replace
from typing import Any, Literal
from urllib.parse import urlencode, urljoin

import httpx
from authlib.common.security import generate_token
from authlib.oauth2.auth import ClientAuth
from authlib.oauth2.rfc7523 import private_key_jwt_sign
from authlib.oauth2.rfc7636 import create_s256_code_challenge

from . import discovery
from .challenge import Challenge, bearer_challenge
from .dpop import DpopKey, supports_dpop
from .errors import AuthorizationFailed
from .steps import Outcome, Step, shown_form, shown_response, shown_url
from .tokens import Registration, Token

Grant = Literal["authorization_code", "client_credentials", "jwt_bearer", "enterprise"]
JWT_BEARER_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
#: RFC 7523 §2.1: a JWT (a workload's identity, SEP-1933) exchanged for an access token.
JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
#: RFC 8693 token exchange, and the token types of enterprise-managed authorization (SEP-990).
TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"


@dataclass(frozen=True)
class EnterpriseIdentity:
    """The enterprise identity provider's side of SEP-990: where to exchange, and what.

    The user's ``id_token`` (from the enterprise's single sign-on) is exchanged at the
    provider's ``token_endpoint`` (RFC 8693) for an identity assertion grant (ID-JAG)
    meant for the MCP server's authorization server, which then issues the access
    token for it (the JWT bearer grant).
    """

    token_endpoint: str
    id_token: str = field(repr=False)
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
#: Same-origin redirects followed while fetching metadata; another origin is refused.
MAX_REDIRECTS = 3
#: Token endpoint authentication methods in the order a confidential client prefers them.
SECRET_METHODS = ("client_secret_basic", "client_secret_post")


@dataclass(frozen=True)
class ClientSettings:
    """Who the client is and what it asks for (the caller's choices, not the server's).

    ``client_id``/``client_secret`` are a pre-registration; ``client_metadata_url`` is a
    Client ID Metadata Document (used when the authorization server supports them);
    otherwise the client registers itself (RFC 7591). ``private_key`` (PEM) signs
    ``private_key_jwt`` assertions. ``scopes`` overrides the scope selection.
    ``allow_without_s256`` lets a lesson go on with a server that does not advertise
    PKCE S256 (never do this for real). ``assertion`` is the JWT the ``jwt_bearer`` grant
    presents (a workload identity token).
    """

    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    auth_method: str | None = None
    private_key: str | None = field(default=None, repr=False)
    signing_algorithm: str = "RS256"
    client_metadata_url: str | None = None
    client_name: str = "mcp_nb"
    scopes: tuple[str, ...] | None = None
    grant: Grant = "authorization_code"
    offline_access: bool = True
    allow_without_s256: bool = False
    assertion: str | None = field(default=None, repr=False)
    enterprise: EnterpriseIdentity | None = None


@dataclass
class AuthState:
    """What one :class:`~mcp_nb.auth.OAuth` remembers between flows."""

    token: Token | None = None
    issuer: str | None = None
    resource: str | None = None
    #: This client's DPoP key, made when an authorization server offers DPoP (RFC 9449).
    dpop: DpopKey | None = None
    #: Where the resource metadata was found last (a refresh without a challenge looks there).
    resource_metadata_url: str | None = None
    registrations: dict[str, Registration] = field(default_factory=dict)


@dataclass(frozen=True)
class HttpNeed:
    """Send ``request`` and reply with its (fully read) response."""

    request: httpx.Request
    step: str


@dataclass(frozen=True)
class BrowserNeed:
    """Have the user authorize at ``authorization_url``; reply with the redirect URL."""

    authorization_url: str
    redirect_uri: str
    step: str = "authorize"


Need = HttpNeed | BrowserNeed


@dataclass(frozen=True)
class ServerMetadata:
    """An authorization server as discovered: its issuer and metadata document."""

    issuer: str
    document: dict[str, Any]
    legacy: bool = False

    def get(self, name: str) -> Any:
        return self.document.get(name)


class Flow:
    """One run of the authorization flow for the MCP server at ``server_url``.

    Example (driven by hand; :func:`run` does this loop)::

        flow = Flow(settings, state, "https://mcp.example/mcp", challenge, redirect_uri)
        need = flow.start()
        while not flow.done:
            need = flow.advance(reply_to(need))
        token = flow.token
    """

    def __init__(self, settings: ClientSettings, state: AuthState, server_url: str,
                 challenge: Challenge | None, redirect_uri: str, *, step_up: bool = False,
                 ask_server: bool = False,
                 on_step: Callable[[Step], object] | None = None) -> None:
        self.settings = settings
        self.state = state
        self.server_url = server_url
        self.challenge = challenge
        self.redirect_uri = redirect_uri
        self.step_up = step_up
        #: Start by asking the server itself for its challenge (a flow walked by hand).
        self.ask_server = ask_server
        #: Told of each step as it is recorded (a notebook shows the flow as it happens).
        self.on_step = on_step
        self.steps: list[Step] = []
        self.token: Token | None = None
        self.done = False
        self._without_prm = False
        self._last_sent = ""
        self._generator = self._flow()

    # -- driving ---------------------------------------------------------------------------

    def start(self) -> Need | None:
        return self.advance(None)

    def advance(self, reply: Any) -> Need | None:
        """Give the reply to the last need; the next need, or ``None`` when done."""
        try:
            return self._generator.send(reply)
        except StopIteration as stop:
            self.token, self.done = stop.value, True
            return None
        except AuthorizationFailed as failed:
            self.done = True
            self._note(self.steps[-1].name if self.steps else "challenge", "", "", failed.rule,
                       "refused", failed.problem)
            raise

    # -- recording ---------------------------------------------------------------------------

    def _note(self, name: str, sent: str, received: str, rule: str, outcome: Outcome,
              detail: str = "") -> None:
        step = Step(name, sent, received, rule, outcome, detail)
        self.steps.append(step)
        if self.on_step is not None:
            self.on_step(step)

    def _exchange(self, name: str, request: httpx.Request, sent: str | None = None
                  ) -> Generator[Need, Any, httpx.Response]:
        response: httpx.Response = yield HttpNeed(request, name)
        self._last_sent = sent or f"{request.method} {shown_url(request.url)}"
        return response

    def _get_json(self, name: str, url: str, what: str
                  ) -> Generator[Need, Any, tuple[httpx.Response, dict[str, Any] | None]]:
        """GET a metadata document (same-origin redirects followed); ``None`` on a 4xx."""
        discovery.require_secure(url, what)
        for _ in range(MAX_REDIRECTS + 1):
            request = httpx.Request("GET", url, headers={"Accept": "application/json"})
            response = yield from self._exchange(name, request)
            if not response.is_redirect:
                break
            target = urljoin(url, response.headers.get("location", ""))
            if discovery.origin(target) != discovery.origin(url):
                raise AuthorizationFailed(
                    f"the {what} at {url} redirects to another origin ({target})",
                    rule="a client follows no redirect to another origin while discovering "
                    "(RFC 9728 §3, RFC 8414 §3)", fix="publish the metadata on its own URL")
            self._note(name, self._last_sent, shown_response(response), "same-origin redirect",
                       "fallback")
            url = target
        else:
            raise AuthorizationFailed(f"the {what} at {url} redirects more than "
                                      f"{MAX_REDIRECTS} times", rule="bounded redirects")
        if response.status_code >= 400 or response.is_redirect:
            return response, None
        return response, discovery.json_document(
            response.content, response.headers.get("content-type", ""), what, url)

    # -- the flow ---------------------------------------------------------------------------

    def _flow(self) -> Generator[Need, Any, Token]:
        if self.challenge is None and self.ask_server:
            yield from self._ask_for_challenge()
        elif self.challenge is not None:
            self._note("challenge", "", f"WWW-Authenticate: {self.challenge.scheme} "
                       + ", ".join(f"{k}={v}" for k, v in self.challenge.params.items()),
                       "MCP authorization: a 401 (or 403 insufficient_scope) starts the flow",
                       "ok")
        resource, issuer, resource_scopes = yield from self._resource_metadata()
        server = yield from self._server_metadata(issuer, legacy=resource_scopes is None
                                                  and self._without_prm)
        if self.state.issuer is not None and self.state.issuer != server.issuer:
            # The resource moved to another authorization server: nothing from the old
            # one (token, client id) may be shown to the new one (SEP-2352).
            self.state.token = None
        self.state.issuer, self.state.resource = server.issuer, resource
        scope = self._scope(server, resource_scopes)
        held = self.state.token
        if (held is not None and held.refresh_token and held.issuer == server.issuer
                and not self.step_up):
            refreshed = yield from self._refresh(server, held, resource)
            if refreshed is not None:
                return refreshed
        if self.settings.grant != "authorization_code":
            return (yield from self._client_credentials(server, resource, scope))
        registration = yield from self._identify(server)
        return (yield from self._authorization_code(server, registration, resource, scope))

    def _ask_for_challenge(self) -> Generator[Need, Any, None]:
        """POST an MCP request without a token: a protected server answers with its challenge."""
        probe = {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {}}
        request = httpx.Request("POST", self.server_url, json=probe,
                                headers={"Accept": "application/json, text/event-stream"})
        response = yield from self._exchange("challenge", request)
        self.challenge = bearer_challenge(response)
        if self.challenge is None:
            raise AuthorizationFailed(
                f"the server answered {response.status_code} without asking for "
                "authorization", rule="MCP authorization: a 401 with WWW-Authenticate starts "
                "the flow", fix="connect without --auth")
        self._note("challenge", self._last_sent, shown_response(response) + ", "
                   + ", ".join(f"{k}={v}" for k, v in self.challenge.params.items()),
                   "MCP authorization: a 401 (or 403 insufficient_scope) starts the flow", "ok")

    def _resource_metadata(self) -> Generator[Need, Any, tuple[str, str, list[str] | None]]:
        """PRM → (resource to ask a token for, issuer, scopes_supported); legacy without it."""
        hinted = (self.challenge.resource_metadata if self.challenge else None
                  ) or self.state.resource_metadata_url
        for url in discovery.prm_urls(self.server_url, hinted):
            response, document = yield from self._get_json("resource metadata", url,
                                                           "protected resource metadata")
            if document is None:
                self._note("resource metadata", self._last_sent, shown_response(response),
                           "RFC 9728 §3.1: try the next well-known location", "not found")
                continue
            resource = discovery.check_resource(document, self.server_url, url)
            servers = document.get("authorization_servers")
            if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
                raise AuthorizationFailed(
                    f"the protected resource metadata at {url} names no authorization server",
                    rule="MCP authorization: authorization_servers MUST list at least one")
            scopes = document.get("scopes_supported")
            self.state.resource_metadata_url = url
            self._note("resource metadata", self._last_sent, shown_response(response),
                       "RFC 9728 §3.3: resource matches the server URL", "ok",
                       f"resource {resource}, authorization server {servers[0]}")
            return resource, servers[0], scopes if isinstance(scopes, list) else None
        self._without_prm = True
        self._note("resource metadata", "", "", "MCP 2025-03-26: no protected resource "
                   "metadata, so the server's origin is the authorization server", "fallback")
        return (discovery.canonical_resource(self.server_url), discovery.origin(self.server_url),
                None)

    def _server_metadata(self, issuer: str, *, legacy: bool
                         ) -> Generator[Need, Any, ServerMetadata]:
        """RFC 8414 / OpenID metadata of ``issuer``; the 2025-03-26 defaults for ``legacy``.

        Without protected resource metadata (the 2025-03-26 layout) the metadata is
        looked up at the server's origin, which is no issuer identifier; there its
        issuer need only be on that origin.
        """
        discovery.require_secure(issuer, "authorization server")
        for url in discovery.authorization_server_metadata_urls(issuer):
            response, document = yield from self._get_json("server metadata", url,
                                                           "authorization server metadata")
            if document is None:
                self._note("server metadata", self._last_sent, shown_response(response),
                           "RFC 8414 §3.1 / OpenID Discovery: try the next location",
                           "not found")
                continue
            if legacy:
                issuer = discovery.check_legacy_issuer(document, self.server_url, url)
                rule = "MCP 2025-03-26: metadata at the server's origin, issuer on that origin"
            else:
                discovery.check_issuer(document, issuer, url)
                rule = "RFC 8414 §3.3: issuer is the one the URL was built from"
            discovery.check_endpoints(document)
            self._note("server metadata", self._last_sent, shown_response(response), rule,
                       "ok", f"issuer {document['issuer']}")
            return ServerMetadata(issuer, document)
        if legacy:
            self._note("server metadata", "", "", "MCP 2025-03-26: default endpoints "
                       "/authorize, /token, /register at the server's origin", "fallback")
            return ServerMetadata(issuer, discovery.legacy_metadata(self.server_url),
                                  legacy=True)
        raise AuthorizationFailed(f"no metadata found for the authorization server {issuer}",
                                  rule="RFC 8414 §3 / OpenID Connect Discovery 1.0 §4",
                                  fix="check that the resource names the right issuer")

    def _scope(self, server: ServerMetadata, resource_scopes: list[str] | None) -> str | None:
        """The MCP spec's scope selection, plus what was granted before and offline_access."""
        if self.settings.scopes is not None:
            chosen = list(self.settings.scopes)
        elif self.challenge is not None and self.challenge.scopes is not None:
            chosen = list(self.challenge.scopes)
        elif resource_scopes is not None:
            chosen = [str(s) for s in resource_scopes]
        else:
            chosen = []
        held = self.state.token
        if self.step_up and held is not None:
            # Re-authorizing for more must not lose what was granted (SEP-2350).
            chosen = list(dict.fromkeys([*held.scopes, *chosen]))
        supported = server.get("scopes_supported")
        if (chosen and self.settings.offline_access and self.settings.grant ==
                "authorization_code" and isinstance(supported, list)
                and "offline_access" in supported and "offline_access" not in chosen):
            chosen.append("offline_access")
        return " ".join(chosen) or None

    # -- client identity ---------------------------------------------------------------------

    def _identify(self, server: ServerMetadata) -> Generator[Need, Any, Registration]:
        """Pre-registered → Client ID Metadata Document → Dynamic Client Registration."""
        settings = self.settings
        known = self.state.registrations.get(server.issuer)
        if known is not None and known.redirect_uri in (None, self.redirect_uri):
            return known
        if settings.client_id is not None:
            registration = Registration(server.issuer, settings.client_id,
                                        settings.client_secret,
                                        self._auth_method(server, settings.client_secret),
                                        "pre-registered")
            self._note("register", "", "", "MCP authorization: a pre-registered client id "
                       "comes first", "skipped", f"client id {settings.client_id}")
        elif settings.client_metadata_url and server.get(
                "client_id_metadata_document_supported") is True:
            registration = Registration(server.issuer, settings.client_metadata_url, None,
                                        "none", "client id metadata document")
            self._note("register", "", "", "MCP authorization: the server supports Client "
                       "ID Metadata Documents, so the document's URL is the client id",
                       "skipped", f"client id {settings.client_metadata_url}")
        else:
            registration = yield from self._register(server)
        self.state.registrations[server.issuer] = replace(registration,
                                                          redirect_uri=self.redirect_uri)
        return registration

    def _register(self, server: ServerMetadata) -> Generator[Need, Any, Registration]:
        endpoint = server.get("registration_endpoint")
        if not isinstance(endpoint, str):
            raise AuthorizationFailed(
                f"the authorization server {server.issuer} offers no registration endpoint "
                "and this client has no client id", rule="MCP authorization: client "
                "registration (pre-registration, CIMD or RFC 7591)",
                fix="register a client with the server's operator and pass client_id=…")
        supported = server.get("token_endpoint_auth_methods_supported") or []
        method = "none" if "none" in supported or not supported else next(
            (m for m in SECRET_METHODS if m in supported), supported[0])
        # SEP-837: a redirect back to this machine is a native app, anything else a web one.
        application_type = "native" if discovery.is_loopback(self.redirect_uri) else "web"
        asked: dict[str, Any] = {
            "client_name": self.settings.client_name, "redirect_uris": [self.redirect_uri],
            "application_type": application_type,
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"], "token_endpoint_auth_method": method}
        request = httpx.Request("POST", endpoint, json=asked,
                                headers={"Accept": "application/json"})
        response = yield from self._exchange("register", request)
        if response.status_code not in (200, 201):
            raise AuthorizationFailed(
                f"dynamic client registration at {endpoint} answered {response.status_code}: "
                f"{response.text[:200]}", rule="RFC 7591 §3.2",
                fix="pre-register a client and pass client_id=…")
        answer = discovery.json_document(response.content, response.headers.get(
            "content-type", ""), "registration response", endpoint)
        client_id = answer.get("client_id")
        if not isinstance(client_id, str):
            raise AuthorizationFailed("the registration response has no client_id",
                                      rule="RFC 7591 §3.2.1")
        secret = answer.get("client_secret")
        method = answer.get("token_endpoint_auth_method") or (
            self._auth_method(server, secret) if secret else "none")
        self._note("register", f"POST {endpoint} ({', '.join(asked)})",
                   shown_response(response), "RFC 7591: dynamic client registration", "ok",
                   f"client id {client_id}, token endpoint auth {method}")
        return Registration(server.issuer, client_id, secret, method, "dynamic registration")

    def _dpop_key(self, server: ServerMetadata) -> DpopKey | None:
        """This client's DPoP key when the server offers DPoP with our algorithm, else None."""
        if not supports_dpop(server.get("dpop_signing_alg_values_supported")):
            return None
        if self.state.dpop is None:
            self.state.dpop = DpopKey()
        return self.state.dpop

    def _auth_method(self, server: ServerMetadata, secret: str | None) -> str:
        """How this client authenticates at the token endpoint."""
        if self.settings.auth_method:
            return self.settings.auth_method
        if self.settings.private_key:
            return "private_key_jwt"
        if not secret:
            return "none"
        supported = server.get("token_endpoint_auth_methods_supported") or [
            "client_secret_basic"]
        return next((m for m in SECRET_METHODS if m in supported), "client_secret_basic")

    # -- grants ---------------------------------------------------------------------------

    def _authorization_code(self, server: ServerMetadata, registration: Registration,
                            resource: str, scope: str | None
                            ) -> Generator[Need, Any, Token]:
        endpoint = server.get("authorization_endpoint")
        if not isinstance(endpoint, str):
            raise AuthorizationFailed(f"{server.issuer} has no authorization_endpoint",
                                      rule="RFC 8414 §2")
        methods = server.get("code_challenge_methods_supported")
        if not (isinstance(methods, list) and "S256" in methods) and not (
                self.settings.allow_without_s256 or server.legacy):
            raise AuthorizationFailed(
                f"the authorization server {server.issuer} does not advertise PKCE S256 "
                f"(code_challenge_methods_supported: {methods!r})", rule="MCP authorization: "
                "clients MUST refuse to proceed without PKCE S256 support",
                fix="refusing; for a lesson only, pass allow_without_s256=True")
        verifier = generate_token(64)
        state = generate_token(32)
        query = {"response_type": "code", "client_id": registration.client_id,
                 "redirect_uri": self.redirect_uri, "state": state,
                 "code_challenge": create_s256_code_challenge(verifier),
                 "code_challenge_method": "S256", "resource": resource}
        if scope:
            query["scope"] = scope
        url = str(httpx.URL(endpoint).copy_merge_params(query))
        redirect: str = yield BrowserNeed(url, self.redirect_uri)
        self._note("authorize", f"GET {shown_url(url)}", f"redirect {shown_url(redirect)}",
                   "OAuth 2.1 §4.1 with PKCE S256 and RFC 8707 resource", "ok")
        code = self._callback(server, redirect, state)
        fields = {"grant_type": "authorization_code", "code": code,
                  "redirect_uri": self.redirect_uri, "code_verifier": verifier,
                  "resource": resource}
        answer = yield from self._token_request(server, registration, fields)
        token = Token.from_response(answer, resource=resource, issuer=server.issuer,
                                    requested_scope=scope)
        return token

    def _callback(self, server: ServerMetadata, redirect: str, state: str) -> str:
        """The code from the redirect, once ``state`` and RFC 9207 ``iss`` are checked."""
        params = httpx.URL(redirect).params
        if params.get("state") != state:
            self._note("callback", shown_url(redirect), "", "OAuth 2.1 §4.1.2: state MUST "
                       "match", "refused")
            raise AuthorizationFailed("the redirect's state does not match the one sent",
                                      rule="OAuth 2.1 §7.2.1 (CSRF protection)",
                                      fix="start the authorization again from this notebook")
        issuer_sent = params.get("iss")
        advertised = server.get("authorization_response_iss_parameter_supported") is True
        if advertised and issuer_sent is None:
            raise AuthorizationFailed(
                "the redirect has no iss although the authorization server advertises it",
                rule="RFC 9207 §2.4: a client MUST reject a response without iss when the "
                "server advertises authorization_response_iss_parameter_supported",
                fix="refusing the code (a mix-up attack looks like this)")
        if issuer_sent is not None and issuer_sent != server.issuer:
            raise AuthorizationFailed(
                f"the redirect says iss {issuer_sent!r} but the request went to "
                f"{server.issuer!r}", rule="RFC 9207 §2.4: iss MUST equal the issuer "
                "(simple string comparison)", fix="refusing the code (a mix-up attack "
                "looks like this)")
        if params.get("error"):
            raise AuthorizationFailed(
                f"the authorization server refused: {params.get('error')} "
                f"{params.get('error_description') or ''}".strip(), rule="OAuth 2.1 §4.1.2.1")
        code = params.get("code")
        if not code:
            raise AuthorizationFailed("the redirect carries no code", rule="OAuth 2.1 §4.1.2")
        self._note("callback", shown_url(redirect), "code received",
                   "state matches; RFC 9207 iss " + ("checked" if issuer_sent else "absent"),
                   "ok")
        return code

    def _client_credentials(self, server: ServerMetadata, resource: str, scope: str | None
                            ) -> Generator[Need, Any, Token]:
        """A grant without a browser: client credentials, or a JWT bearer assertion."""
        settings = self.settings
        if settings.client_id is None:
            raise AuthorizationFailed(f"the {settings.grant} grant needs a client id",
                                      rule="OAuth 2.1 §4.2, RFC 7523 §3", fix="pass client_id=…")
        registration = Registration(server.issuer, settings.client_id, settings.client_secret,
                                    self._auth_method(server, settings.client_secret))
        fields = {"grant_type": "client_credentials", "resource": resource}
        if settings.grant == "enterprise":
            assertion = yield from self._identity_assertion(server, resource, scope)
            fields = {"grant_type": JWT_BEARER_GRANT, "assertion": assertion}
        elif settings.grant == "jwt_bearer":
            if not settings.assertion:
                raise AuthorizationFailed("the JWT bearer grant needs an assertion",
                                          rule="RFC 7523 §2.1", fix="pass assertion=JWT")
            # No retry and no other grant after a refusal: the workload's identity is all
            # this client has (SEP-1933).
            fields = {"grant_type": JWT_BEARER_GRANT, "assertion": settings.assertion,
                      "resource": resource}
        if scope:
            fields["scope"] = scope
        answer = yield from self._token_request(server, registration, fields)
        return Token.from_response(answer, resource=resource, issuer=server.issuer,
                                   requested_scope=scope)

    def _identity_assertion(self, server: ServerMetadata, resource: str, scope: str | None
                            ) -> Generator[Need, Any, str]:
        """SEP-990 step one: the enterprise IdP exchanges the user's id_token for an ID-JAG."""
        identity = self.settings.enterprise
        if identity is None:
            raise AuthorizationFailed("enterprise-managed authorization needs the identity "
                                      "provider's settings", rule="SEP-990",
                                      fix="pass enterprise=EnterpriseIdentity(…)")
        discovery.require_secure(identity.token_endpoint, "identity provider token endpoint")
        fields = {"grant_type": TOKEN_EXCHANGE_GRANT, "requested_token_type": ID_JAG_TYPE,
                  "subject_token": identity.id_token, "subject_token_type": ID_TOKEN_TYPE,
                  "audience": server.issuer, "resource": resource}
        if scope:
            fields["scope"] = scope
        headers = {"Content-Type": "application/x-www-form-urlencoded",
                   "Accept": "application/json"}
        method = "client_secret_basic" if identity.client_secret else "none"
        _, headers, body = ClientAuth(identity.client_id or "", identity.client_secret,
                                      method).prepare("POST", identity.token_endpoint, headers,
                                                      urlencode(fields))
        request = httpx.Request("POST", identity.token_endpoint, headers=headers, content=body)
        shown = f"POST {identity.token_endpoint} {shown_form(fields)}"
        response = yield from self._exchange("token", request, shown)
        answer = discovery.json_document(response.content, response.headers.get(
            "content-type", ""), "token exchange response", identity.token_endpoint
            ) if response.content else {}
        assertion = answer.get("access_token")
        if response.status_code != 200 or not isinstance(assertion, str):
            raise AuthorizationFailed(
                f"the identity provider refused the token exchange: "
                f"{answer.get('error', response.status_code)}", rule="RFC 8693 §2.2 (SEP-990)",
                fix="check the id_token and the identity provider's client settings")
        self._note("token", shown, shown_response(response), "RFC 8693: id_token exchanged "
                   "for an identity assertion grant (SEP-990)", "ok")
        return assertion

    def _refresh(self, server: ServerMetadata, held: Token, resource: str
                 ) -> Generator[Need, Any, Token | None]:
        registration = self.state.registrations.get(server.issuer) or Registration(
            server.issuer, self.settings.client_id or "", self.settings.client_secret,
            self._auth_method(server, self.settings.client_secret))
        fields = {"grant_type": "refresh_token", "refresh_token": held.refresh_token or "",
                  "resource": resource}
        try:
            answer = yield from self._token_request(server, registration, fields,
                                                    step="refresh")
        except AuthorizationFailed:
            self._note("refresh", "", "", "OAuth 2.1 §4.3: a refused refresh token is "
                       "dropped", "fallback", "authorizing again")
            return None
        return held.with_refresh(answer)

    def _token_request(self, server: ServerMetadata, registration: Registration,
                       fields: dict[str, str], step: str = "token"
                       ) -> Generator[Need, Any, dict[str, Any]]:
        endpoint = server.get("token_endpoint")
        if not isinstance(endpoint, str):
            raise AuthorizationFailed(f"{server.issuer} has no token_endpoint",
                                      rule="RFC 8414 §2")
        headers = {"Content-Type": "application/x-www-form-urlencoded",
                   "Accept": "application/json"}
        method = registration.auth_method
        if method == "private_key_jwt":
            if not self.settings.private_key:
                raise AuthorizationFailed("private_key_jwt needs a private key",
                                          rule="RFC 7523 §2.2", fix="pass private_key=PEM")
            # The assertion's audience is the authorization server's issuer (RFC 7523bis).
            assertion = private_key_jwt_sign(self.settings.private_key,
                                             registration.client_id, server.issuer,
                                             alg=self.settings.signing_algorithm)
            fields = {**fields, "client_assertion_type": JWT_BEARER_ASSERTION,
                      "client_assertion": _text(assertion)}
            body = urlencode(fields)
        else:
            _, headers, body = ClientAuth(registration.client_id, registration.client_secret,
                                          method).prepare("POST", endpoint, headers,
                                                          urlencode(fields))
        dpop = self._dpop_key(server)
        sent_fields = dict(httpx.QueryParams(body).multi_items())
        shown = f"POST {endpoint} {shown_form(sent_fields)} (client auth: {method}" + (
            ", DPoP proof)" if dpop else ")")
        nonce: str | None = None
        for _ in range(2):  # a use_dpop_nonce answer is retried once, with the nonce
            if dpop is not None:
                headers = {**headers, "DPoP": dpop.proof("POST", endpoint, nonce=nonce)}
            request = httpx.Request("POST", endpoint, headers=headers, content=body)
            response = yield from self._exchange(step, request, shown)
            answer = discovery.json_document(response.content, response.headers.get(
                "content-type", ""), "token response", endpoint) if response.content else {}
            nonce = response.headers.get("dpop-nonce")
            if not (dpop and answer.get("error") == "use_dpop_nonce" and nonce):
                break
            self._note(step, shown, shown_response(response), "RFC 9449 §8: the server "
                       "wants its nonce in the proof", "fallback", "retrying with the nonce")
        if response.status_code != 200 or "access_token" not in answer:
            error = answer.get("error", f"HTTP {response.status_code}")
            self._note(step, shown, shown_response(response), "OAuth 2.1 §3.2.4", "refused",
                       f"{error} {answer.get('error_description') or ''}".strip())
            raise AuthorizationFailed(
                f"the token endpoint refused: {error} "
                f"{answer.get('error_description') or ''}".strip(), rule="OAuth 2.1 §3.2.4",
                fix="check the client's credentials and the scopes asked for")
        token_type = str(answer.get("token_type", "")).lower()
        if token_type not in (("dpop", "bearer") if dpop else ("bearer",)):
            raise AuthorizationFailed(f"the token endpoint issued a {token_type!r} token",
                                      rule="MCP authorization: Bearer tokens (RFC 6750), or "
                                      "DPoP-bound ones when a DPoP proof was sent (RFC 9449)")
        self._note(step, shown, shown_response(response), "OAuth 2.1 §3.2.3: token issued",
                   "ok", f"scope {answer.get('scope') or fields.get('scope') or '(none)'}, "
                   f"expires in {answer.get('expires_in', '?')} s")
        return answer


def _text(value: str | bytes) -> str:
    return value.decode("ascii") if isinstance(value, bytes) else value
