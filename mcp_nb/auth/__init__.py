"""OAuth 2.1 for MCP servers over HTTP: discovery, client identity, PKCE, tokens, refresh.

Example::

    from mcp_nb.auth import OAuth
    from mcp_nb.client import ClientSession
    from mcp_nb.transports import http_transport

    transport = http_transport("https://mcp.example.com/mcp", auth=OAuth())
    async with ClientSession(transport) as session:
        await session.connect()

See docs/authorization.md.
"""

from .callbacks import (
    AutoApproved,
    Callback,
    Headless,
    Loopback,
    PasteBack,
    Unattended,
    choose_callback,
)
from .challenge import Challenge, bearer_challenge, parse_challenges
from .errors import AuthorizationFailed
from .flow import AuthState, BrowserNeed, ClientSettings, EnterpriseIdentity, Flow, HttpNeed
from .jupyter import JupyterServerCallback
from .oauth import OAuth
from .steps import Step
from .tokens import FileStore, MemoryStore, Registration, Token, TokenStore

__all__ = [
    "AuthState", "AuthorizationFailed", "AutoApproved", "BrowserNeed", "Callback",
    "Challenge", "ClientSettings", "EnterpriseIdentity", "FileStore", "Flow", "Headless",
    "HttpNeed", "JupyterServerCallback", "Loopback",
    "MemoryStore", "OAuth", "PasteBack", "Registration", "Step", "Token", "TokenStore",
    "Unattended",
    "bearer_challenge", "choose_callback", "parse_challenges",
]
