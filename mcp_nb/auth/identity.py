"""Who the client is at an authorization server: pre-registered, CIMD or registered (RFC 7591)."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import replace
from typing import Any

import httpx

from ..i18n import _
from . import discovery
from .errors import AuthorizationFailed
from .flow_values import AuthState, ClientSettings, Need, ServerMetadata
from .steps import shown_response
from .tokens import Registration
from .trail import Trail

#: Token endpoint authentication methods in the order a confidential client prefers them.
SECRET_METHODS = ("client_secret_basic", "client_secret_post")


class ClientIdentity:
    """The client's registration at each authorization server, and how it authenticates."""

    def __init__(self, trail: Trail, settings: ClientSettings, state: AuthState,
                 redirect_uri: str) -> None:
        self.trail = trail
        self.settings = settings
        self.state = state
        self.redirect_uri = redirect_uri

    def identify(self, server: ServerMetadata) -> Generator[Need, Any, Registration]:
        """Pre-registered → Client ID Metadata Document → Dynamic Client Registration."""
        settings = self.settings
        known = self.state.registrations.get(server.issuer)
        if known is not None and known.redirect_uri in (None, self.redirect_uri):
            return known
        if settings.client_id is not None:
            registration = Registration(server.issuer, settings.client_id,
                                        settings.client_secret,
                                        self.auth_method(server, settings.client_secret),
                                        "pre-registered")
            self.trail.note("register", "", "", "MCP authorization: a pre-registered client id "
                            "comes first", "skipped", f"client id {settings.client_id}")
        elif settings.client_metadata_url and server.get(
                "client_id_metadata_document_supported") is True:
            # The document says how the client authenticates: with a private key given,
            # private_key_jwt (the document publishes its public half), else none.
            registration = Registration(server.issuer, settings.client_metadata_url, None,
                                        self.auth_method(server, None),
                                        "client id metadata document")
            self.trail.note("register", "", "", "MCP authorization: the server supports Client "
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
                _("the authorization server {issuer} offers no registration endpoint and this "
                  "client has no client id").format(issuer=server.issuer),
                rule="MCP authorization: client "
                     "registration (pre-registration, CIMD or RFC 7591)",
                fix=_("register a client with the server's operator and pass client_id=…"))
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
        response = yield from self.trail.exchange("register", request)
        if response.status_code not in (200, 201):
            raise AuthorizationFailed(
                _("dynamic client registration at {endpoint} answered {status_code}: "
                  "{text}").format(endpoint=endpoint, status_code=response.status_code,
                                   text=response.text[:200]),
                rule="RFC 7591 §3.2",
                fix=_("pre-register a client and pass client_id=…"))
        answer = discovery.json_document(response.content, response.headers.get(
            "content-type", ""), "registration response", endpoint)
        client_id = answer.get("client_id")
        if not isinstance(client_id, str):
            raise AuthorizationFailed(
                _("the registration response has no client_id"),
                rule="RFC 7591 §3.2.1")
        secret = answer.get("client_secret")
        method = answer.get("token_endpoint_auth_method") or (
            self.auth_method(server, secret) if secret else "none")
        self.trail.note("register", f"POST {endpoint} ({', '.join(asked)})",
                        shown_response(response), "RFC 7591: dynamic client registration", "ok",
                        f"client id {client_id}, token endpoint auth {method}")
        return Registration(server.issuer, client_id, secret, method, "dynamic registration")

    def auth_method(self, server: ServerMetadata, secret: str | None) -> str:
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
