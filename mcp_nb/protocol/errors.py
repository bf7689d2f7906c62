"""Error codes and the exception family of the protocol core.

Every exception raised for a protocol rule says, in one line, which rule was
involved and what to do about it.  They all derive from :class:`McpError` so a
notebook can catch "anything MCP" in one ``except``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..i18n import N_, _

# JSON-RPC 2.0 codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# MCP's own codes.
REQUEST_TIMEOUT = -32001
RESOURCE_NOT_FOUND = -32002
# Codes the stateless 2026-07-28 revision defines (its reserved range -32020…-32099).
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022

ERROR_NAMES: dict[int, str] = {
    PARSE_ERROR: "Parse error",
    INVALID_REQUEST: "Invalid Request",
    METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid params",
    INTERNAL_ERROR: "Internal error",
    REQUEST_TIMEOUT: "Request timeout",
    RESOURCE_NOT_FOUND: "Resource not found",
    HEADER_MISMATCH: "Header mismatch",
    MISSING_REQUIRED_CLIENT_CAPABILITY: "Missing required client capability",
    UNSUPPORTED_PROTOCOL_VERSION: "Unsupported protocol version",
}

#: Errors only a stateless-era (2026-07-28) server sends: receiving one proves the
#: server is modern, so a dual-era client must not fall back to ``initialize``.
MODERN_ERROR_CODES = frozenset({
    HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION,
})


#: How a refusal says it can be overridden, in the Python API's spelling.  A refusal
#: carries its override as data (:attr:`McpError.override`); each surface tells it in its
#: own words (the magics: ``--force``) through :meth:`McpError.worded`.
FORCE_HINT = N_("pass force=True to send it anyway")

#: How a refusal's message tells its override: ``(clause, aside)`` → the message.  The
#: clause goes inside a sentence ("pass force=True to send it anyway"), the aside after
#: one (" (pass force=True to send it anyway)"); a message uses the one its grammar needs.
Wording = Callable[[str, str], str]


class McpError(Exception):
    """Base of every error mcp_nb raises for protocol reasons.

    Code can act on what went wrong without reading the message: :attr:`rule`
    says which rule was involved, :attr:`override` whether (and how) a refused
    message can be sent anyway.
    """

    #: JSON-RPC error code the situation corresponds to, when there is one.
    code: int | None = None
    #: The rule involved, as a stable id (a refusal's: the rule it enforces, whose
    #: finding a forced send records; see :data:`mcp_nb.protocol.findings.RULES`).
    rule: str | None = None
    #: What sends a refused message anyway: ``"force"`` (``force=True`` in the Python
    #: API, ``--force`` in the magics), or None when nothing does.
    override: str | None = None
    # The message as a function of how the override is told (see refusal()).
    _wording: Wording | None = None

    def __init__(self, *args: Any, rule: str | None = None) -> None:
        super().__init__(*args)
        if rule is not None:
            self.rule = rule

    def worded(self, *, clause: str, aside: str) -> str:
        """The message, its override told in another spelling than the Python API's.

        ``clause`` and ``aside`` are that spelling inside and after a sentence
        (the magics: ``"add --force to send it anyway"`` and ``" (add --force to
        send it anyway)"``).  An error without an override is its message as is.
        """
        if self._wording is None:
            return str(self)
        return self._wording(clause, aside)


Refused = TypeVar("Refused", bound=McpError)


def refusal(error_type: type[Refused], rule: str, text: str | Wording) -> Refused:
    """A refusal ``force`` overrides, its message telling so in the Python API's words.

    ``text`` explains the refusal, the hint follows it in brackets; or, for a
    message with the hint inside a sentence, ``text`` words the whole message
    from ``(clause, aside)``.
    """
    wording = _told_after(text) if isinstance(text, str) else text
    hint = _(FORCE_HINT)
    error = error_type(wording(hint, f" ({hint})"), rule=rule)
    error.override = "force"
    error._wording = wording
    return error


def _told_after(explanation: str) -> Wording:
    return lambda _clause, aside: explanation + aside


class EnvelopeError(McpError):
    """A message that is not valid JSON-RPC 2.0 (or breaks MCP's framing rules).

    ``code`` is -32700 for bytes that are not JSON and -32600 for JSON that is
    not a valid message; ``id`` is the message id when it could be recovered;
    ``rule`` names the broken rule in :data:`mcp_nb.protocol.findings.RULES`.
    """

    def __init__(self, code: int, message: str, *, id: str | int | None = None,
                 rule: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.id = id
        self.rule = rule or ("invalid-json" if code == PARSE_ERROR else "invalid-message")


class LifecycleError(McpError):
    """A message the lifecycle state machine does not allow in the current state."""

    code = INVALID_REQUEST


class CapabilityError(McpError):
    """A request for a capability the other side did not declare during initialization."""

    code = METHOD_NOT_FOUND


class UnsupportedVersionError(McpError):
    """Version negotiation failed: the client cannot speak the version the server chose."""

    code = INVALID_PARAMS

    def __init__(
        self,
        *,
        offered: str,
        answered: str | None,
        supported: tuple[str, ...],
        server_supported: list[Any] | None = None,
    ) -> None:
        self.offered = offered
        self.answered = answered
        self.supported = supported
        self.server_supported = server_supported
        if answered is None:
            server_side = (
                _("; the server supports {versions}").format(
                    versions=", ".join(map(str, server_supported)))
                if server_supported
                else ""
            )
            text = _(
                "the server rejected protocol version {offered} (-32602 Unsupported protocol "
                "version){server_side}; this client supports {supported}: offer one of those "
                "both sides speak").format(offered=repr(offered), server_side=server_side,
                                           supported=", ".join(supported))
        else:
            text = _(
                "version negotiation failed: offered {offered}, the server answered {answered}, "
                "which this client does not support (supported: {supported}); the client "
                "disconnected as the spec requires").format(
                offered=repr(offered), answered=repr(answered), supported=", ".join(supported))
        super().__init__(text)


class UnsupportedProtocolVersionError(McpError):
    """A stateless-era server rejected the request's protocol version (-32022).

    ``requested`` is the version the request carried, ``server_supported`` what
    the server listed in ``data.supported``, ``supported`` what this client
    speaks.  The message says which era to connect with instead.
    """

    code = UNSUPPORTED_PROTOCOL_VERSION

    def __init__(self, *, requested: str, server_supported: list[str],
                 supported: tuple[str, ...], hint: str = "") -> None:
        self.requested = requested
        self.server_supported = server_supported
        self.supported = supported
        listed = ", ".join(map(str, server_supported)) or _("nothing")
        if requested in server_supported:
            # A server that refuses what it lists: say exactly that, never "none in common".
            text = _("the server refused protocol version {requested} (-32022 Unsupported "
                     "protocol version) although it lists it among the versions it supports "
                     "({listed}); the client retried once with it and was refused again").format(
                requested=repr(requested), listed=listed)
        else:
            text = _("the server does not support protocol version {requested} (-32022 "
                     "Unsupported protocol version); it supports {listed}; this client speaks "
                     "{supported}").format(requested=repr(requested), listed=listed,
                                           supported=", ".join(supported))
        super().__init__(text + (f"; {hint}" if hint else ""))
