"""Sans-I/O core of mcp_nb: envelope, versions and eras, lifecycle, negotiation, findings,
and the stateless era's per-request rules (:mod:`mcp_nb.protocol.stateless`).

Nothing here does I/O or imports anyio, subprocess or httpx; every function is
pure and every object a plain state holder, so the rules of MCP can be tested
(and taught) without a server.
"""

from .envelope import (
    DEFAULT_MAX_MESSAGE_BYTES,
    ErrorObject,
    ErrorResponse,
    IdAllocator,
    Message,
    Notification,
    Request,
    Response,
    encode,
    parse,
)
from .errors import (
    CapabilityError,
    EnvelopeError,
    LifecycleError,
    McpError,
    UnsupportedProtocolVersionError,
    UnsupportedVersionError,
)
from .findings import RULES, Finding, Rule
from .lifecycle import TRANSITIONS, Event, Lifecycle, State, Transition, TransitionRecord
from .negotiation import Capabilities, VersionOutcome, negotiate_version
from .versions import (
    LATEST_STATELESS_VERSION,
    LATEST_VERSION,
    STATELESS_VERSIONS,
    SUPPORTED_VERSIONS,
    VERSIONS,
    Era,
    ProtocolVersion,
)

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "LATEST_STATELESS_VERSION",
    "LATEST_VERSION",
    "RULES",
    "STATELESS_VERSIONS",
    "SUPPORTED_VERSIONS",
    "TRANSITIONS",
    "VERSIONS",
    "Capabilities",
    "CapabilityError",
    "EnvelopeError",
    "Era",
    "ErrorObject",
    "ErrorResponse",
    "Event",
    "Finding",
    "IdAllocator",
    "Lifecycle",
    "LifecycleError",
    "McpError",
    "Message",
    "Notification",
    "ProtocolVersion",
    "Request",
    "Response",
    "Rule",
    "State",
    "Transition",
    "TransitionRecord",
    "UnsupportedProtocolVersionError",
    "UnsupportedVersionError",
    "VersionOutcome",
    "encode",
    "negotiate_version",
    "parse",
]
