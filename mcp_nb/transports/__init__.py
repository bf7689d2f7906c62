"""Transports: byte movers that frame messages and report connection events.

Each name is imported from its module on first use (PEP 562), so a stdio session never
pays for the HTTP transports' imports (httpx, the authorization layer).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .auto import AutoHttpTransport, http_transport
    from .base import Transport, TransportClosed, TransportEvent
    from .http_base import HttpStatusError
    from .sse import SseTransport
    from .stdio import DEFAULT_INHERITED_ENV, StdioTransport
    from .streamable_http import SessionExpired, StreamableHttpTransport

#: Each public name and the module it lives in.
_HOMES = {"AutoHttpTransport": "auto", "http_transport": "auto", "Transport": "base",
          "TransportClosed": "base", "TransportEvent": "base", "HttpStatusError": "http_base",
          "SseTransport": "sse", "DEFAULT_INHERITED_ENV": "stdio", "StdioTransport": "stdio",
          "SessionExpired": "streamable_http", "StreamableHttpTransport": "streamable_http"}

__all__ = ["DEFAULT_INHERITED_ENV", "AutoHttpTransport", "HttpStatusError", "SessionExpired",
           "SseTransport", "StdioTransport", "StreamableHttpTransport", "Transport",
           "TransportClosed", "TransportEvent", "http_transport"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
