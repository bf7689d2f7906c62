"""The lab authorization server: metadata, registration, approval, tokens — and its faults.

It runs on its own port beside the lab's MCP server, in a thread of its own, and
also serves the MCP server's Protected Resource Metadata (the MCP server's
``WWW-Authenticate`` header points there, which RFC 9728 allows). With the
2025-03-26 layout faults it serves on the MCP server's origin instead, through the
MCP server's guard: :meth:`LabAuthorizationServer.answer` turns a request into an
:class:`Answer` whichever listener took it. Tokens are opaque random strings it
keeps in memory; :meth:`verify` is how the MCP server's guard checks one. Clients
are pre-registered, registered (RFC 7591), or described by a Client ID Metadata
Document (:mod:`.cimd`). Everything a client sends is escaped before it is put in
a page.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import secrets
import threading
import time
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote_plus, urlencode, urlsplit

import anyio
from anyio.abc import ByteStream, SocketAttribute

from mcp_nb.lab.http.wire import Connection, Headers, HttpRequest
from mcp_nb.lab.rpc import diag

from . import cimd
from .cimd import Client, ClientRefused
from .dpop import PROOF_ALGORITHMS, ProofRefused, check_proof
from .faults import TOKEN_LIFETIME

#: Scopes the lab resource knows: "mcp" for everything, "mcp:call" for tools/call with step-up.
SCOPES = ("mcp", "mcp:call", "offline_access")
#: Clients registered in advance (``--auth`` prints them): a public and a confidential one.
PRE_REGISTERED = {"lab-public": None, "lab-confidential": "lab-secret"}
SHORT_TOKEN_LIFETIME = 8
SECOND_ISSUER_PATH = "/as2"
AS_METADATA_PATH = "/.well-known/oauth-authorization-server"
#: The faults that put the authorization server on the MCP server's origin (2025-03-26).
LEGACY_FAULTS = frozenset({"legacy-layout", "legacy-defaults"})
#: What the MCP server's origin serves for the authorization server in that layout.
LEGACY_PATHS = frozenset({AS_METADATA_PATH, "/authorize", "/approve", "/token", "/register"})


@dataclass
class Grant:
    """What a token (or a code, or a refresh token) stands for."""

    client_id: str
    scopes: tuple[str, ...]
    resource: str
    issuer: str
    expires_at: float = 0.0
    redirect_uri: str = ""
    challenge: str = ""
    #: The thumbprint of the key a DPoP-bound token (and its refresh token) is bound to.
    jkt: str | None = None


@dataclass(frozen=True)
class Answer:
    """One HTTP response, before it is written to whichever connection asked."""

    status: int
    body: bytes = b""
    headers: Headers = ()
    content_type: str = "application/json"


def _json(status: int, document: object) -> Answer:
    return Answer(status, json.dumps(document).encode())


def _refused(refusal: ClientRefused, *, at_token_endpoint: bool) -> Answer:
    """RFC 6749 §5.2: ``invalid_client`` at the token endpoint is a 401, the rest 400."""
    status = 401 if at_token_endpoint and refusal.error == "invalid_client" else 400
    diag(f"authorization: {refusal.error}: {refusal.description}")
    return _json(status, {"error": refusal.error, "error_description": refusal.description})


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class LabAuthorizationServer:
    """One authorization server (two issuers, for the migration fault) on 127.0.0.1.

    ``approval`` is ``"auto"`` (redirect at once: tests, the conformance suite's way)
    or ``"page"`` (a small page with an Approve button, for people). ``dpop`` is what the
    MCP server takes (:data:`~.faults.DPOP_MODES`); ``token_lifetime`` the tokens'
    ``expires_in`` in seconds. ``prm_discovery`` is how a client finds the resource's metadata
    (:data:`~.faults.PRM_DISCOVERY`).
    """

    def __init__(self, faults: frozenset[str] = frozenset(), approval: str = "auto", *,
                 dpop: str = "bearer", token_lifetime: int = TOKEN_LIFETIME,
                 prm_discovery: str = "header") -> None:
        self.faults = faults
        self.approval = approval
        self.dpop = dpop
        self.prm_discovery = prm_discovery
        self.token_lifetime = token_lifetime
        #: The jti of every DPoP proof the token endpoint accepted (a replay is refused).
        self.token_proofs: set[str] = set()
        self.base = ""
        self.resource = ""
        self.clients: dict[str, Client] = {}
        #: Clients from documents, as last fetched for an authorization request.
        self.documents: dict[str, Client] = {}
        self.used_assertions: set[str] = set()
        self.codes: dict[str, Grant] = {}
        self.tokens: dict[str, Grant] = {}
        self.refresh_tokens: dict[str, Grant] = {}
        self.migrated = False
        self._lock = threading.Lock()

    # -- what the MCP server's guard asks ------------------------------------------------------

    @property
    def legacy(self) -> bool:
        """The 2025-03-26 layout: no resource metadata; this server on the MCP origin."""
        return bool(LEGACY_FAULTS & self.faults)

    @property
    def issuer(self) -> str:
        """The issuer the resource trusts now (the second one once migrated)."""
        if self.legacy:
            return origin_of(self.resource)
        return self.base + (SECOND_ISSUER_PATH if self.migrated else "")

    @property
    def resource_metadata_url(self) -> str:
        return f"{self.base}/.well-known/oauth-protected-resource/mcp"

    @property
    def challenge_names_metadata(self) -> bool:
        """Whether the resource's challenges carry ``resource_metadata`` (RFC 9728 §5.1)."""
        return self.prm_discovery == "header" and not self.legacy

    @property
    def metadata_path_on_resource(self) -> str | None:
        """The well-known path where the MCP server itself serves its resource metadata, when
        the challenge does not point at it (RFC 9728 §3.1; the MCP spec's second mechanism)."""
        return {"well-known": "/.well-known/oauth-protected-resource/mcp",
                "well-known-root": "/.well-known/oauth-protected-resource"}.get(
                    self.prm_discovery) if not self.legacy else None

    def protected_resource_metadata(self) -> Answer:
        """The resource's metadata document (RFC 9728 §2), wherever it is served."""
        return self._protected_resource()

    def note_resource(self, url: str) -> None:
        """The MCP server's URL as its clients reach it (the PRM names it)."""
        self.resource = self.resource or url

    def verify(self, token: str | None) -> Grant | None:
        """The grant behind a valid token for this resource from the current issuer."""
        with self._lock:
            grant = self.tokens.get(token or "")
        if grant is None or grant.expires_at < time.time() or grant.issuer != self.issuer:
            return None
        if grant.resource.rstrip("/") != self.resource.rstrip("/"):
            return None  # a token for another audience is no token for this one
        if "migration" in self.faults and not self.migrated:
            self.migrated = True  # this token works once; the next request finds the new AS
            diag("authorization: the resource moved to the second issuer")
        return grant

    # -- serving ---------------------------------------------------------------------------------

    def start_in_thread(self, host: str = "127.0.0.1") -> str:
        """Serve in a daemon thread; returns the base URL once listening."""
        ready = threading.Event()

        async def serve() -> None:
            listener = await anyio.create_tcp_listener(local_host=host, local_port=0)
            self.base = f"http://{host}:{listener.extra(SocketAttribute.local_port)}"
            ready.set()
            async with listener:
                await listener.serve(self.serve_connection)

        threading.Thread(target=anyio.run, args=(serve,), name="lab-authorization-server",
                         daemon=True).start()
        if not ready.wait(30):
            raise RuntimeError("the lab authorization server did not start")
        return self.base

    async def serve_connection(self, stream: ByteStream) -> None:
        async with stream:
            connection = Connection(stream)
            try:
                while (request := await connection.next_request()) is not None:
                    answer = await self.answer(request, self.base)
                    await connection.respond(answer.status, answer.body, headers=answer.headers,
                                             content_type=answer.content_type)
                    if not connection.start_next_cycle():
                        return
            except Exception as exc:  # one bad exchange must not take the server down
                diag(f"authorization server: {type(exc).__name__}: {exc}")

    async def answer(self, request: HttpRequest, base: str) -> Answer:
        """The answer to ``request``, which came to the origin ``base``."""
        path = request.path
        issuer_path = SECOND_ISSUER_PATH if path.startswith(SECOND_ISSUER_PATH + "/") or \
            path.endswith(SECOND_ISSUER_PATH) else ""
        local = path.removeprefix(issuer_path) if issuer_path and not path.startswith(
            "/.well-known") else path
        issuer = base + issuer_path
        if path.startswith("/.well-known/oauth-protected-resource") and not self.legacy:
            return self._protected_resource()
        if path in (AS_METADATA_PATH, AS_METADATA_PATH + SECOND_ISSUER_PATH) and \
                "legacy-defaults" not in self.faults:
            return self._metadata(issuer)
        if path == "/elsewhere/metadata":
            return _json(200, self._metadata_document(issuer))
        if local == "/authorize" and request.method == "GET":
            return await self._authorize(request.query, issuer)
        if local == "/approve" and request.method == "POST":
            return await self._authorize(_form(request.body), issuer, approved=True)
        if local == "/token" and request.method == "POST":
            return await self._token(request, issuer, base + path)
        if local == "/register" and request.method == "POST":
            return self._register(request, issuer)
        return _json(404, {"error": "not_found"})

    # -- metadata ----------------------------------------------------------------------------

    def _protected_resource(self) -> Answer:
        resource = ("http://127.0.0.1:1/somewhere-else" if "resource-mismatch" in self.faults
                    else self.resource)
        document: dict[str, object] = {
            "resource": resource, "authorization_servers": [self.issuer],
            "scopes_supported": ["mcp", "mcp:call"], "bearer_methods_supported": ["header"]}
        if self.dpop != "bearer":
            document["dpop_signing_alg_values_supported"] = list(PROOF_ALGORITHMS)
        if self.dpop == "required":
            document["dpop_bound_access_tokens_required"] = True
        return _json(200, document)

    def _metadata_document(self, issuer: str) -> dict[str, object]:
        offers_identity = "pre-registered-only" not in self.faults
        return {
            "issuer": "https://issuer.invalid" if "wrong-issuer" in self.faults else issuer,
            "authorization_endpoint": f"{issuer}/authorize",
            "token_endpoint": f"{issuer}/token",
            **({"registration_endpoint": f"{issuer}/register"} if offers_identity else {}),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token",
                                      "client_credentials"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic",
                                                      "client_secret_post", "private_key_jwt"],
            "token_endpoint_auth_signing_alg_values_supported": list(cimd.ASSERTION_ALGORITHMS),
            "scopes_supported": list(SCOPES),
            "code_challenge_methods_supported": [] if "no-s256" in self.faults else ["S256"],
            "authorization_response_iss_parameter_supported":
                "unexpected-iss" not in self.faults,
            "client_id_metadata_document_supported": offers_identity,
            **({} if "no-dpop" in self.faults else {
                "dpop_signing_alg_values_supported": list(PROOF_ALGORITHMS)}),
        }

    def _metadata(self, issuer: str) -> Answer:
        if "html-metadata" in self.faults:
            return Answer(200, b"<html><body>Please log in</body></html>",
                          content_type="text/html")
        if "huge-metadata" in self.faults:
            return Answer(200, b'{"issuer": "' + b"x" * (1 << 20) + b'"}')
        if "cross-origin-redirect" in self.faults:
            elsewhere = self.base.replace("127.0.0.1", "localhost") + "/elsewhere/metadata"
            return Answer(302, headers=[("location", elsewhere)])
        return _json(200, self._metadata_document(issuer))

    # -- who the client is -----------------------------------------------------------------------

    async def _client(self, client_id: str, issuer: str, *, fetch: bool) -> Client:
        """The client behind ``client_id``; a document is fetched when ``fetch`` or unseen."""
        if client_id in PRE_REGISTERED:
            return Client(client_id, PRE_REGISTERED[client_id])
        if cimd.is_document_client_id(client_id):
            known = self.documents.get(client_id)
            if fetch or known is None:
                self.documents.pop(client_id, None)  # a failed fetch leaves nothing cached
                known = self.documents[client_id] = await cimd.fetch_client(client_id)
                diag(f"authorization: fetched the client metadata document {client_id}")
            return known
        client = self.clients.get(client_id)
        if client is None or client.issuer != issuer:
            raise ClientRefused("invalid_client", f"unknown client id {client_id!r} at "
                                f"{issuer} (register first: RFC 7591)")
        return client

    def _register(self, request: HttpRequest, issuer: str) -> Answer:
        try:
            asked = json.loads(request.body)
            redirect_uris = [str(uri) for uri in asked.get("redirect_uris") or []]
        except (ValueError, AttributeError):
            return _json(400, {"error": "invalid_client_metadata"})
        method = asked.get("token_endpoint_auth_method") or "client_secret_basic"
        if method == "private_key_jwt":
            return _json(400, {"error": "invalid_client_metadata", "error_description":
                               "the lab takes private_key_jwt keys from client metadata "
                               "documents only"})
        client = Client("lab-" + secrets.token_hex(8),
                        None if method == "none" else secrets.token_urlsafe(16),
                        redirect_uris, issuer, method, str(asked.get("client_name") or ""))
        self.clients[client.client_id] = client
        answer = {"client_id": client.client_id, "redirect_uris": redirect_uris,
                  "token_endpoint_auth_method": method, "client_name": client.name}
        if client.secret:
            answer["client_secret"] = client.secret
        return _json(201, answer)

    # -- authorization ---------------------------------------------------------------------------

    async def _authorize(self, query: dict[str, str], issuer: str, *,
                         approved: bool = False) -> Answer:
        redirect_uri = query.get("redirect_uri", "")
        try:
            # The approval page's POST reuses the document fetched for its GET.
            client = await self._client(query.get("client_id", ""), issuer, fetch=not approved)
            cimd.check_redirect_uri(client, redirect_uri)
        except ClientRefused as refusal:
            # RFC 6749 §4.1.2.1: a bad client or redirect URI is never redirected to.
            return _refused(refusal, at_token_endpoint=False)
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            return self._redirect(redirect_uri, {
                "error": "invalid_request", "error_description": "PKCE S256 is required",
                "state": query.get("state", "")}, issuer)
        if self.approval == "page" and not approved:
            return Answer(200, _approval_page(query, issuer, client).encode(),
                          content_type="text/html; charset=utf-8")
        scopes = tuple(s for s in query.get("scope", "mcp").split() if s in SCOPES)
        if "consent" not in query.get("prompt", "").split():
            # As OpenID providers do (OpenID Connect Core 1.0 §11): offline_access, and so a
            # refresh token, only when the person was asked to consent.
            scopes = tuple(s for s in scopes if s != "offline_access")
        code = secrets.token_urlsafe(24)
        self.codes[code] = Grant(client.client_id, scopes, query.get("resource", ""), issuer,
                                 time.time() + 300, redirect_uri, query["code_challenge"])
        return self._redirect(redirect_uri, {"code": code, "state": query.get("state", "")},
                              issuer)

    def _redirect(self, redirect_uri: str, params: dict[str, str], issuer: str) -> Answer:
        if "wrong-iss" in self.faults or "unexpected-iss" in self.faults:
            params["iss"] = "https://issuer.invalid"
        elif "missing-iss" not in self.faults:
            params["iss"] = issuer
        joiner = "&" if urlsplit(redirect_uri).query else "?"
        return Answer(302, headers=[("location", redirect_uri + joiner + urlencode(params))])

    # -- tokens ----------------------------------------------------------------------------------

    async def _authenticate(self, request: HttpRequest, form: dict[str, str], issuer: str
                            ) -> Client:
        """The client a token request comes from: basic, post, private_key_jwt, or none."""
        assertion = form.get("client_assertion")
        if assertion is not None:
            if form.get("client_assertion_type") != cimd.JWT_BEARER_ASSERTION:
                raise ClientRefused("invalid_client", "client_assertion_type must be "
                                    f"{cimd.JWT_BEARER_ASSERTION} (RFC 7523 §2.2)")
            client = await self._client(form.get("client_id") or cimd.assertion_subject(
                assertion), issuer, fetch=False)
            if client.auth_method != "private_key_jwt":
                raise ClientRefused("invalid_client", f"{client.client_id} did not register "
                                    "private_key_jwt, so it cannot authenticate with an "
                                    "assertion")
            cimd.verify_assertion(client, assertion, (issuer, f"{issuer}/token"),
                                  self.used_assertions)
            return client
        client_id, secret = form.get("client_id", ""), form.get("client_secret")
        header = request.headers.get("authorization", "")
        if header.lower().startswith("basic "):
            try:
                decoded = base64.b64decode(header[6:]).decode()
            except ValueError:
                raise ClientRefused("invalid_client", "the Basic credentials are not "
                                    "base64 (RFC 6749 §2.3.1)") from None
            client_id, _, secret = decoded.partition(":")
            client_id, secret = unquote_plus(client_id), unquote_plus(secret)
        client = await self._client(client_id, issuer, fetch=False)
        if client.auth_method == "private_key_jwt":
            raise ClientRefused("invalid_client", f"{client_id} registered private_key_jwt; "
                                "its token requests must carry a signed client_assertion "
                                "(RFC 7523 §2.2)")
        if client.secret is not None and not secrets.compare_digest(client.secret,
                                                                      secret or ""):
            raise ClientRefused("invalid_client", f"wrong client secret for {client_id}")
        return client

    async def _token(self, request: HttpRequest, issuer: str, url: str) -> Answer:
        form = _form(request.body)
        try:
            client = await self._authenticate(request, form, issuer)
        except ClientRefused as refusal:
            return _refused(refusal, at_token_endpoint=True)
        jkt = None
        proof = request.headers.get("dpop")
        if proof is not None and "no-dpop" not in self.faults:  # without DPoP: ignored
            try:
                jkt = check_proof(proof, "POST", url, seen=self.token_proofs)
            except ProofRefused as refusal:
                return _json(400, {"error": "invalid_dpop_proof",
                                   "error_description": str(refusal)})
        grant_type = form.get("grant_type")
        if grant_type == "authorization_code":
            grant = self.codes.pop(form.get("code", ""), None)
            if (grant is None or grant.client_id != client.client_id
                    or grant.redirect_uri != form.get("redirect_uri")
                    or grant.expires_at < time.time()
                    or _s256(form.get("code_verifier", "")) != grant.challenge):
                return _json(400, {"error": "invalid_grant"})
        elif grant_type == "refresh_token":
            grant = self.refresh_tokens.pop(form.get("refresh_token", ""), None)
            if "refresh-refused" in self.faults or grant is None or grant.issuer != issuer:
                return _json(400, {"error": "invalid_grant"})
            if grant.jkt is not None and grant.jkt != jkt:
                # RFC 9449 §5: a bound refresh token is used with a proof from its key.
                return _json(400, {"error": "invalid_grant", "error_description": "the "
                                   "refresh token is DPoP-bound: prove its key"})
        elif grant_type == "client_credentials" and client.confidential:
            scopes = tuple(s for s in form.get("scope", "mcp").split() if s in SCOPES)
            grant = Grant(client.client_id, scopes, form.get("resource", ""), issuer)
        else:
            return _json(400, {"error": "unsupported_grant_type"})
        return _json(200, self._issue(grant, form.get("resource"), jkt))

    def _issue(self, grant: Grant, resource: str | None, jkt: str | None) -> dict[str, object]:
        lifetime = (SHORT_TOKEN_LIFETIME if "expired-token" in self.faults
                    else self.token_lifetime)
        token = secrets.token_urlsafe(24)
        issued = Grant(grant.client_id, grant.scopes, resource or grant.resource, grant.issuer,
                       time.time() + lifetime, jkt=jkt)
        with self._lock:
            self.tokens[token] = issued
        answer: dict[str, object] = {"access_token": token,
                                     "token_type": "DPoP" if jkt else "Bearer",
                                     "expires_in": lifetime, "scope": " ".join(grant.scopes)}
        if "offline_access" in grant.scopes:
            refresh = secrets.token_urlsafe(24)
            self.refresh_tokens[refresh] = issued
            answer["refresh_token"] = refresh
        return answer


def _form(body: bytes) -> dict[str, str]:
    return dict(parse_qsl(body.decode("utf-8", "replace")))


def _approval_page(query: dict[str, str], issuer: str, client: Client) -> str:
    """A page with what the client asks for and one button; every value escaped.

    A document's client shows its name and, so a person can tell who it really is,
    the host its client id lives on (the CIMD draft's advice against phishing).
    """
    hidden = "".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
                     for k, v in query.items())
    who = html.escape(client.name or client.client_id)
    if cimd.is_document_client_id(client.client_id):
        who += f" (from {html.escape(urlsplit(client.client_id).netloc)})"
    return (f"<!doctype html><title>Lab authorization server</title>"
            f"<h1>Authorize {who}?</h1>"
            f"<p>It asks for scope <b>{html.escape(query.get('scope', '(none)'))}</b> on "
            f"<b>{html.escape(query.get('resource', '?'))}</b>.</p>"
            f'<form method="post" action="{html.escape(issuer)}/approve">{hidden}'
            f'<button type="submit">Approve</button></form>')
