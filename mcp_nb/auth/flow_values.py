"""The values the authorization flow works with: the client's settings, its memory, its needs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from .dpop import DpopDecision, DpopKey, DpopSetting
from .tokens import Registration, Token

Grant = Literal["authorization_code", "client_credentials", "jwt_bearer", "enterprise"]


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


@dataclass(frozen=True)
class ClientSettings:
    """Who the client is and what it asks for (the caller's choices, not the server's).

    ``client_id``/``client_secret`` are a pre-registration; ``client_metadata_url`` is a
    Client ID Metadata Document (used when the authorization server supports them);
    otherwise the client registers itself (RFC 7591). ``private_key`` (PEM) signs
    ``private_key_jwt`` assertions. ``scopes`` overrides the scope selection.
    ``allow_without_s256`` lets a lesson go on with a server that does not advertise
    PKCE S256 (never do this for real). ``assertion`` is the JWT the ``jwt_bearer`` grant
    presents (a workload identity token). ``dpop``: bind tokens to a key of the client's
    own (RFC 9449) when the resource asks (``"auto"``), always (``True``), or never.
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
    dpop: DpopSetting = "auto"


@dataclass
class AuthState:
    """What one :class:`~mcp_nb.auth.OAuth` remembers between flows."""

    token: Token | None = None
    issuer: str | None = None
    resource: str | None = None
    #: This client's DPoP key, made when a flow first binds a token to it (RFC 9449).
    dpop: DpopKey | None = None
    #: Whether the last flow used DPoP, and why (:func:`~mcp_nb.auth.dpop.decide_dpop`).
    dpop_decision: DpopDecision | None = None
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

