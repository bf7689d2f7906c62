"""Transports: byte movers that frame messages and report connection events."""

from .base import Transport, TransportClosed, TransportEvent
from .stdio import DEFAULT_INHERITED_ENV, StdioTransport

__all__ = ["DEFAULT_INHERITED_ENV", "StdioTransport", "Transport", "TransportClosed",
           "TransportEvent"]
