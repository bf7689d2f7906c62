"""Protected MCP servers built on the official MCP Python SDK, for the OAuth interop tests.

Each server is the SDK's own Streamable HTTP app (both eras on one endpoint: the
2025-11-25 handshake and the 2026-07-28 stateless requests) with the SDK's own
authorization parts: its bearer middleware answers ``401`` with ``WWW-Authenticate``
and its routes serve Protected Resource Metadata (RFC 9728) naming the authorization
server. Bearer only: the metadata has no DPoP fields, and a token bound to a key
(``cnf``) is refused, since this server cannot check a proof of possession.

What is written here is only what a deployment writes itself: the token verifier. It
checks RFC 9068 JWT access tokens against the authorization server's published keys
(signature, ``typ``, issuer, audience = this server's resource URL, expiry) with joserfc.

``python sdk_protected_server.py SETTINGS_JSON`` where SETTINGS_JSON is a JSON list of
servers, each ``{"name", "issuer"}`` plus, to misconfigure one on purpose,
``"advertised_issuer"`` (the authorization server its metadata names, if not the issuer)
and ``"resource_path"`` (the resource its metadata names, if not its own ``/mcp``). All
listen on 127.0.0.1 on ports the OS picks, one port per server; once every socket is
bound, one stdout line maps names to MCP URLs::

    mcp_nb protected servers: {"default": "http://127.0.0.1:PORT/mcp", …}
"""

from __future__ import annotations

import json
import logging
import socket
import sys
import time
from typing import Any

import anyio
import httpx
import uvicorn
from joserfc import jws, jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer

#: The scope every MCP request needs (the metadata's scopes_supported).
SCOPE = "mcp"

log = logging.getLogger("sdk_protected_server")


class JwtAccessTokenVerifier:
    """The SDK's ``TokenVerifier``: RFC 9068 JWT access tokens from one issuer, for one resource.

    The keys come from the issuer's discovery document's ``jwks_uri``, fetched on first
    use and again when a token names a key not seen yet (the issuer rotated its keys).
    """

    def __init__(self, issuer: str, resource: str) -> None:
        self.issuer = issuer
        self.resource = resource
        self._keys: KeySet | None = None

    async def _fetch_keys(self) -> KeySet:
        async with httpx.AsyncClient(timeout=5) as http:
            discovery = await http.get(f"{self.issuer}/.well-known/openid-configuration")
            discovery.raise_for_status()
            keys = await http.get(discovery.json()["jwks_uri"])
            keys.raise_for_status()
        return KeySet.import_key_set(keys.json())

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            return await self._verify(token)
        except (JoseError, ValueError, KeyError, httpx.HTTPError) as exc:
            # Said on stderr, so a failing test can show why a token was refused.
            log.warning("token refused: %s: %s", type(exc).__name__, exc)
            return None

    async def _verify(self, token: str) -> AccessToken | None:
        if self._keys is None:
            self._keys = await self._fetch_keys()
        kid = jws.extract_compact(token.encode()).protected.get("kid")
        if kid is not None and all(key.kid != kid for key in self._keys.keys):
            self._keys = await self._fetch_keys()
        # Only the algorithm the authorization server signs access tokens with (never "none",
        # never a shared-secret HS*, whatever the token's header says).
        decoded = jwt.decode(token, self._keys, algorithms=["ES256"])
        # RFC 9068 §4: an access token says so in its type (an ID token is not one).
        if str(decoded.header.get("typ", "")).lower() not in ("at+jwt", "application/at+jwt"):
            raise ValueError(f"typ {decoded.header.get('typ')!r} is not at+jwt (RFC 9068 §4)")
        jwt.JWTClaimsRegistry(
            iss={"essential": True, "value": self.issuer},
            aud={"essential": True, "value": self.resource},
            exp={"essential": True},
        ).validate(decoded.claims)
        claims = decoded.claims
        if "cnf" in claims:
            # A sender-constrained token (DPoP, mTLS) presented as Bearer: accepting it
            # would drop the binding its issuer put on it (RFC 9449 §7.2).
            raise ValueError("the token is bound to a key (cnf); this server takes Bearer only")
        log.info("token accepted: client %s, scope %r, %d s left", claims.get("client_id"),
                 claims.get("scope"), int(claims["exp"] - time.time()))
        return AccessToken(token=token, client_id=str(claims.get("client_id", "")),
                           scopes=str(claims.get("scope", "")).split(),
                           expires_at=int(claims["exp"]), resource=self.resource,
                           subject=claims.get("sub"), claims=claims)


def build(settings: dict[str, Any], url: str) -> MCPServer:
    """One protected MCP server at ``url`` (its ``/mcp`` endpoint)."""
    origin = url.removesuffix("/mcp")
    advertised_resource = origin + settings.get("resource_path", "/mcp")
    server = MCPServer(
        f"protected-{settings['name']}", instructions="Interop peer behind oidc-provider.",
        token_verifier=JwtAccessTokenVerifier(settings["issuer"], url),
        auth=AuthSettings(
            issuer_url=settings.get("advertised_issuer", settings["issuer"]),
            resource_server_url=advertised_resource, required_scopes=[SCOPE],
            validate_token_resource=True),
        log_level="WARNING")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def whoami() -> str:
        """Who the token was issued to, and for what: 'client_id subject scope'."""
        token = get_access_token()
        assert token is not None  # the bearer middleware let this request through
        return f"{token.client_id} {token.subject} {' '.join(sorted(token.scopes))}"

    return server


async def serve(all_settings: list[dict[str, Any]]) -> None:
    servers: list[uvicorn.Server] = []
    sockets: list[socket.socket] = []
    urls: dict[str, str] = {}
    for settings in all_settings:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
        app = build(settings, url).streamable_http_app(host="127.0.0.1")
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        servers.append(uvicorn.Server(config))
        sockets.append(sock)
        urls[settings["name"]] = url
    print(f"mcp_nb protected servers: {json.dumps(urls)}", flush=True)
    async with anyio.create_task_group() as group:
        for server, sock in zip(servers, sockets, strict=True):
            group.start_soon(server.serve, [sock])


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(name)s %(levelname)s %(message)s")
    anyio.run(serve, json.loads(sys.argv[1]))
