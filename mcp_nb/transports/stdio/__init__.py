"""The stdio transport: one :class:`StdioTransport`, its pipe backends private strategies."""

from .process import DEFAULT_INHERITED_ENV, default_environment
from .transport import StdioTransport

__all__ = ["DEFAULT_INHERITED_ENV", "StdioTransport", "default_environment"]
