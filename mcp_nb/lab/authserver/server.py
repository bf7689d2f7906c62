"""The lab authorization server: metadata, registration, approval, tokens — and its faults.

It runs on its own port beside the lab's MCP server, in a thread of its own, and
also serves the MCP server's Protected Resource Metadata (the MCP server's
``WWW-Authenticate`` header points there, which RFC 9728 allows). Tokens are
opaque random strings it keeps in memory; :meth:`verify` is how the MCP server's
guard checks one. Everything a client sends is escaped before it is put in a page.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote_plus, urlencode, urlsplit

import anyio
from anyio.abc import ByteStream, SocketAttribute

from mcp_nb.lab.http.wire import Connection, HttpRequest
from mcp_nb.lab.rpc import diag

#: Scopes the lab resource knows: "mcp" for everything, "mcp:call" for tools/call with step-up.
SCOPES = ("mcp", "mcp:call", "offline_access")
#: Clients registered in advance (``--auth`` prints them): a public and a confidential one.
PRE_REGISTERED = {"lab-public": None, "lab-confidential": "lab-secret"}
TOKEN_LIFETIME = 3600
SHORT_TOKEN_LIFETIME = 8
SECOND_ISSUER_PATH = "/as2"


@dataclass
class Client:
    client_id: str
    secret: str | None
    redirect_uris: list[str] = field(default_factory=list)
    issuer: str = ""


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


def _json(document: object) -> bytes:
    return json.dumps(document).encode()


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


class LabAuthorizationServer:
    """One authorization server (two issuers, for the migration fault) on 127.0.0.1.

    ``approval`` is ``"auto"`` (redirect at once: tests, the conformance suite's way)
    or ``"page"`` (a small page with an Approve button, for people).
    """

    def __init__(self, faults: frozenset[str] = frozenset(), approval: str = "auto") -> None:
        self.faults = faults
        self.approval = approval
        self.base = ""
        self.resource = ""
        self.clients: dict[str, Client] = {}
        self.codes: dict[str, Grant] = {}
        self.tokens: dict[str, Grant] = {}
        self.refresh_tokens: dict[str, Grant] = {}
        self.migrated = False
        self._lock = threading.Lock()

    # -- what the MCP server's guard asks ------------------------------------------------------

    @property
    def issuer(self) -> str:
        """The issuer the resource trusts now (the second one once migrated)."""
        return self.base + (SECOND_ISSUER_PATH if self.migrated else "")

    @property
    def resource_metadata_url(self) -> str:
        return f"{self.base}/.well-known/oauth-protected-resource/mcp"

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
                    await self._route(connection, request)
                    if not connection.start_next_cycle():
                        return
            except Exception as exc:  # one bad exchange must not take the server down
                diag(f"authorization server: {type(exc).__name__}: {exc}")

    async def _route(self, connection: Connection, request: HttpRequest) -> None:
        path = request.path
        issuer_path = SECOND_ISSUER_PATH if path.startswith(SECOND_ISSUER_PATH + "/") or \
            path.endswith(SECOND_ISSUER_PATH) else ""
        local = path.removeprefix(issuer_path) if issuer_path and not path.startswith(
            "/.well-known") else path
        issuer = self.base + issuer_path
        if path.startswith("/.well-known/oauth-protected-resource"):
            await self._protected_resource(connection)
        elif path in ("/.well-known/oauth-authorization-server",
                      "/.well-known/oauth-authorization-server" + SECOND_ISSUER_PATH):
            await self._metadata(connection, issuer)
        elif path == "/elsewhere/metadata":
            await connection.respond(200, _json(self._metadata_document(issuer)))
        elif local == "/authorize" and request.method == "GET":
            await self._authorize(connection, request.query, issuer)
        elif local == "/approve" and request.method == "POST":
            await self._authorize(connection, _form(request.body), issuer, approved=True)
        elif local == "/token" and request.method == "POST":
            await self._token(connection, request, issuer)
        elif local == "/register" and request.method == "POST":
            await self._register(connection, request, issuer)
        else:
            await connection.respond(404, _json({"error": "not_found"}))

    # -- metadata ----------------------------------------------------------------------------

    async def _protected_resource(self, connection: Connection) -> None:
        resource = ("http://127.0.0.1:1/somewhere-else" if "resource-mismatch" in self.faults
                    else self.resource)
        await connection.respond(200, _json({
            "resource": resource, "authorization_servers": [self.issuer],
            "scopes_supported": ["mcp", "mcp:call"], "bearer_methods_supported": ["header"]}))

    def _metadata_document(self, issuer: str) -> dict[str, object]:
        document: dict[str, object] = {
            "issuer": "https://issuer.invalid" if "wrong-issuer" in self.faults else issuer,
            "authorization_endpoint": f"{issuer}/authorize",
            "token_endpoint": f"{issuer}/token", "registration_endpoint": f"{issuer}/register",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token",
                                      "client_credentials"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic",
                                                      "client_secret_post"],
            "scopes_supported": list(SCOPES),
            "code_challenge_methods_supported": [] if "no-s256" in self.faults else ["S256"],
            "authorization_response_iss_parameter_supported":
                "unexpected-iss" not in self.faults,
        }
        return document

    async def _metadata(self, connection: Connection, issuer: str) -> None:
        if "html-metadata" in self.faults:
            await connection.respond(200, b"<html><body>Please log in</body></html>",
                                     content_type="text/html")
        elif "huge-metadata" in self.faults:
            await connection.respond(200, b'{"issuer": "' + b"x" * (1 << 20) + b'"}')
        elif "cross-origin-redirect" in self.faults:
            elsewhere = self.base.replace("127.0.0.1", "localhost") + "/elsewhere/metadata"
            await connection.respond(302, headers=[("location", elsewhere)])
        else:
            await connection.respond(200, _json(self._metadata_document(issuer)))

    # -- registration ----------------------------------------------------------------------------

    def _client(self, client_id: str, issuer: str) -> Client | None:
        if client_id in PRE_REGISTERED:
            return Client(client_id, PRE_REGISTERED[client_id], issuer=issuer)
        client = self.clients.get(client_id)
        return client if client is not None and client.issuer == issuer else None

    async def _register(self, connection: Connection, request: HttpRequest, issuer: str
                        ) -> None:
        try:
            asked = json.loads(request.body)
            redirect_uris = [str(uri) for uri in asked.get("redirect_uris") or []]
        except (ValueError, AttributeError):
            await connection.respond(400, _json({"error": "invalid_client_metadata"}))
            return
        method = asked.get("token_endpoint_auth_method") or "client_secret_basic"
        client = Client("lab-" + secrets.token_hex(8),
                        None if method == "none" else secrets.token_urlsafe(16),
                        redirect_uris, issuer)
        self.clients[client.client_id] = client
        answer = {"client_id": client.client_id, "redirect_uris": redirect_uris,
                  "token_endpoint_auth_method": method,
                  "client_name": str(asked.get("client_name") or "")}
        if client.secret:
            answer["client_secret"] = client.secret
        await connection.respond(201, _json(answer))

    # -- authorization ---------------------------------------------------------------------------

    async def _authorize(self, connection: Connection, query: dict[str, str], issuer: str, *,
                         approved: bool = False) -> None:
        client = self._client(query.get("client_id", ""), issuer)
        redirect_uri = query.get("redirect_uri", "")
        if client is None or (client.redirect_uris and redirect_uri not in client.redirect_uris):
            await connection.respond(400, b"<p>Unknown client or redirect URI.</p>",
                                     content_type="text/html")
            return
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            await self._redirect(connection, redirect_uri, {
                "error": "invalid_request", "error_description": "PKCE S256 is required",
                "state": query.get("state", "")}, issuer)
            return
        if self.approval == "page" and not approved:
            await connection.respond(200, _approval_page(query, issuer).encode(),
                                     content_type="text/html; charset=utf-8")
            return
        scopes = tuple(s for s in query.get("scope", "mcp").split() if s in SCOPES)
        code = secrets.token_urlsafe(24)
        self.codes[code] = Grant(client.client_id, scopes, query.get("resource", ""), issuer,
                                 time.time() + 300, redirect_uri, query["code_challenge"])
        await self._redirect(connection, redirect_uri, {"code": code,
                                                        "state": query.get("state", "")}, issuer)

    async def _redirect(self, connection: Connection, redirect_uri: str,
                        params: dict[str, str], issuer: str) -> None:
        if "wrong-iss" in self.faults or "unexpected-iss" in self.faults:
            params["iss"] = "https://issuer.invalid"
        elif "missing-iss" not in self.faults:
            params["iss"] = issuer
        joiner = "&" if urlsplit(redirect_uri).query else "?"
        await connection.respond(302, headers=[("location",
                                                redirect_uri + joiner + urlencode(params))])

    # -- tokens ----------------------------------------------------------------------------------

    def _authenticate(self, request: HttpRequest, form: dict[str, str], issuer: str
                      ) -> Client | None:
        """The client a token request comes from (basic, post, or none for public clients)."""
        client_id, secret = form.get("client_id", ""), form.get("client_secret")
        header = request.headers.get("authorization", "")
        if header.lower().startswith("basic "):
            try:
                decoded = base64.b64decode(header[6:]).decode()
            except ValueError:
                return None
            client_id, _, secret = decoded.partition(":")
            client_id, secret = unquote_plus(client_id), unquote_plus(secret)
        client = self._client(client_id, issuer)
        if client is None or (client.secret is not None and
                              not secrets.compare_digest(client.secret, secret or "")):
            return None
        return client

    async def _token(self, connection: Connection, request: HttpRequest, issuer: str) -> None:
        form = _form(request.body)
        client = self._authenticate(request, form, issuer)
        if client is None:
            await connection.respond(401, _json({"error": "invalid_client"}))
            return
        grant_type = form.get("grant_type")
        if grant_type == "authorization_code":
            grant = self.codes.pop(form.get("code", ""), None)
            if (grant is None or grant.client_id != client.client_id
                    or grant.redirect_uri != form.get("redirect_uri")
                    or grant.expires_at < time.time()
                    or _s256(form.get("code_verifier", "")) != grant.challenge):
                await connection.respond(400, _json({"error": "invalid_grant"}))
                return
        elif grant_type == "refresh_token":
            grant = self.refresh_tokens.pop(form.get("refresh_token", ""), None)
            if "refresh-refused" in self.faults or grant is None or grant.issuer != issuer:
                await connection.respond(400, _json({"error": "invalid_grant"}))
                return
        elif grant_type == "client_credentials" and client.secret is not None:
            scopes = tuple(s for s in form.get("scope", "mcp").split() if s in SCOPES)
            grant = Grant(client.client_id, scopes, form.get("resource", ""), issuer)
        else:
            await connection.respond(400, _json({"error": "unsupported_grant_type"}))
            return
        await connection.respond(200, _json(self._issue(grant, form.get("resource"))))

    def _issue(self, grant: Grant, resource: str | None) -> dict[str, object]:
        lifetime = SHORT_TOKEN_LIFETIME if "expired-token" in self.faults else TOKEN_LIFETIME
        token = secrets.token_urlsafe(24)
        issued = Grant(grant.client_id, grant.scopes, resource or grant.resource, grant.issuer,
                       time.time() + lifetime)
        with self._lock:
            self.tokens[token] = issued
        answer: dict[str, object] = {"access_token": token, "token_type": "Bearer",
                                     "expires_in": lifetime, "scope": " ".join(grant.scopes)}
        if "offline_access" in grant.scopes:
            refresh = secrets.token_urlsafe(24)
            self.refresh_tokens[refresh] = issued
            answer["refresh_token"] = refresh
        return answer


def _form(body: bytes) -> dict[str, str]:
    return dict(parse_qsl(body.decode("utf-8", "replace")))


def _approval_page(query: dict[str, str], issuer: str) -> str:
    """A page with what the client asks for and one button; every value escaped."""
    hidden = "".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
                     for k, v in query.items())
    return (f"<!doctype html><title>Lab authorization server</title>"
            f"<h1>Authorize {html.escape(query.get('client_id', '?'))}?</h1>"
            f"<p>It asks for scope <b>{html.escape(query.get('scope', '(none)'))}</b> on "
            f"<b>{html.escape(query.get('resource', '?'))}</b>.</p>"
            f'<form method="post" action="{html.escape(issuer)}/approve">{hidden}'
            f'<button type="submit">Approve</button></form>')
