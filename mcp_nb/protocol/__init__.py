"""Sans-I/O core of mcp_nb: envelope, versions, lifecycle, negotiation, findings.

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
    UnsupportedVersionError,
)
from .findings import RULES, Finding, Rule
from .lifecycle import TRANSITIONS, Event, Lifecycle, State, Transition, TransitionRecord
from .negotiation import Capabilities, VersionOutcome, negotiate_version
from .versions import LATEST_VERSION, SUPPORTED_VERSIONS, VERSIONS, ProtocolVersion

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES", "LATEST_VERSION", "RULES", "SUPPORTED_VERSIONS", "TRANSITIONS",
    "VERSIONS", "Capabilities", "CapabilityError", "EnvelopeError", "ErrorObject",
    "ErrorResponse", "Event", "Finding", "IdAllocator", "Lifecycle", "LifecycleError",
    "McpError", "Message", "Notification", "ProtocolVersion", "Request", "Response", "Rule",
    "State", "Transition", "TransitionRecord", "UnsupportedVersionError", "VersionOutcome",
    "encode", "negotiate_version", "parse",
]
