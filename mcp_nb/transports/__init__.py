"""Transports: byte movers that frame messages and report connection events."""

from .auto import AutoHttpTransport, http_transport
from .base import Transport, TransportClosed, TransportEvent
from .http_base import HttpStatusError
from .sse import SseTransport
from .stdio import DEFAULT_INHERITED_ENV, StdioTransport
from .streamable_http import SessionExpired, StreamableHttpTransport

__all__ = ["DEFAULT_INHERITED_ENV", "AutoHttpTransport", "HttpStatusError", "SessionExpired",
           "SseTransport", "StdioTransport", "StreamableHttpTransport", "Transport",
           "TransportClosed", "TransportEvent", "http_transport"]
