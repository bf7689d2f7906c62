"""Finding the authorization server: the challenge, resource metadata, server metadata."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import httpx

from ..i18n import _
from . import discovery
from .challenge import Challenge, bearer_challenge
from .errors import AuthorizationFailed
from .flow_values import AuthState, Need, ServerMetadata
from .steps import shown_response
from .trail import Trail


@dataclass(frozen=True)
class ProtectedResource:
    """What the protected resource metadata says (or, ``legacy``, what its absence implies)."""

    resource: str
    issuer: str
    scopes: list[str] | None
    legacy: bool = False
    #: Its ``dpop_signing_alg_values_supported`` (RFC 9728 §2): it takes DPoP proofs signed so.
    dpop_algs: tuple[str, ...] | None = None
    #: Its ``dpop_bound_access_tokens_required`` (RFC 9728 §2): it takes DPoP-bound tokens only.
    dpop_required: bool = False


class MetadataDiscovery:
    """Walks from the MCP server at ``server_url`` to its authorization server's metadata."""

    def __init__(self, trail: Trail, state: AuthState, server_url: str) -> None:
        self.trail = trail
        self.state = state
        self.server_url = server_url

    def challenge(self, given: Challenge | None, *, ask_server: bool
                  ) -> Generator[Need, Any, Challenge | None]:
        """The challenge that started the flow, or (``ask_server``) the one the server sends.

        A POST of an MCP request without a token: a protected server answers with its
        challenge.
        """
        sent, received = "", ""
        if given is None and ask_server:
            probe = {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {}}
            request = httpx.Request("POST", self.server_url, json=probe,
                                    headers={"Accept": "application/json, text/event-stream"})
            response = yield from self.trail.exchange("challenge", request)
            given = bearer_challenge(response)
            if given is None:
                raise AuthorizationFailed(
                    _("the server answered {status_code} without asking for authorization").format(
                        status_code=response.status_code),
                    rule="MCP authorization: a 401 with WWW-Authenticate "
                         "starts the flow",
                    fix=_("connect without --auth"))
            sent, received = self.trail.last_sent, shown_response(response) + ", "
        elif given is not None:
            received = f"WWW-Authenticate: {given.scheme} "
        if given is not None:
            self.trail.note("challenge", sent, received + ", ".join(
                f"{k}={v}" for k, v in given.params.items()),
                "MCP authorization: a 401 (or 403 insufficient_scope) starts the flow", "ok")
        return given

    def resource(self, challenge: Challenge | None
                 ) -> Generator[Need, Any, ProtectedResource]:
        """The protected resource metadata (RFC 9728); the 2025-03-26 layout without it."""
        hinted = (challenge.resource_metadata if challenge else None
                  ) or self.state.resource_metadata_url
        trail = self.trail
        for url in discovery.prm_urls(self.server_url, hinted):
            response, document = yield from trail.get_json("resource metadata", url,
                                                           "protected resource metadata")
            if document is None:
                trail.note("resource metadata", trail.last_sent, shown_response(response),
                           "RFC 9728 §3.1: try the next well-known location", "not found")
                continue
            resource = discovery.check_resource(document, self.server_url, url)
            servers = document.get("authorization_servers")
            if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
                raise AuthorizationFailed(
                    _("the protected resource metadata at {url} names no authorization "
                      "server").format(url=url),
                    rule="MCP authorization: authorization_servers MUST list at least one")
            scopes = document.get("scopes_supported")
            self.state.resource_metadata_url = url
            trail.note("resource metadata", trail.last_sent, shown_response(response),
                       "RFC 9728 §3.3: resource matches the server URL", "ok",
                       f"resource {resource}, authorization server {servers[0]}")
            algs = document.get("dpop_signing_alg_values_supported")
            return ProtectedResource(
                resource, servers[0], scopes if isinstance(scopes, list) else None,
                dpop_algs=tuple(str(a) for a in algs) if isinstance(algs, list) else None,
                dpop_required=document.get("dpop_bound_access_tokens_required") is True)
        trail.note("resource metadata", "", "", "MCP 2025-03-26: no protected resource "
                   "metadata, so the server's origin is the authorization server", "fallback")
        return ProtectedResource(discovery.canonical_resource(self.server_url),
                                 discovery.origin(self.server_url), None, legacy=True)

    def server(self, issuer: str, *, legacy: bool) -> Generator[Need, Any, ServerMetadata]:
        """RFC 8414 / OpenID metadata of ``issuer``; the 2025-03-26 defaults for ``legacy``.

        Without protected resource metadata (the 2025-03-26 layout) the metadata is
        looked up at the server's origin, which is no issuer identifier; there its
        issuer need only be on that origin.
        """
        discovery.require_secure(issuer, "authorization server")
        trail = self.trail
        for url in discovery.authorization_server_metadata_urls(issuer):
            response, document = yield from trail.get_json("server metadata", url,
                                                           "authorization server metadata")
            if document is None:
                trail.note("server metadata", trail.last_sent, shown_response(response),
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
            trail.note("server metadata", trail.last_sent, shown_response(response), rule,
                       "ok", f"issuer {document['issuer']}")
            return ServerMetadata(issuer, document)
        if legacy:
            trail.note("server metadata", "", "", "MCP 2025-03-26: default endpoints "
                       "/authorize, /token, /register at the server's origin", "fallback")
            return ServerMetadata(issuer, discovery.legacy_metadata(self.server_url),
                                  legacy=True)
        raise AuthorizationFailed(
            _("no metadata found for the authorization server {issuer}").format(issuer=issuer),
            rule="RFC 8414 §3 / OpenID Connect Discovery 1.0 §4",
            fix=_("check that the resource names the right issuer"))
