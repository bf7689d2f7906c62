"""Errors raised by the async session. Each message says what happened and what to do."""

from __future__ import annotations

from typing import Any

from ..i18n import _
from ..protocol.errors import REQUEST_TIMEOUT, McpError


class ServerError(McpError):
    """The server answered a request with a JSON-RPC error."""

    def __init__(self, method: str, code: int, message: str, data: Any = None) -> None:
        self.method = method
        self.code = code
        self.message = message
        self.data = data
        detail = _(" (data: {data})").format(data=repr(data)) if data is not None else ""
        super().__init__(_("{method}: the server answered error {code} {message}{detail}").format(
            method=method, code=code, message=repr(message), detail=detail))


class RequestTimeout(McpError):
    """No response within the request's timeout; ``notifications/cancelled`` was sent."""

    code = REQUEST_TIMEOUT

    def __init__(self, method: str, request_id: int, timeout: float, *, cancelled: bool) -> None:
        self.method = method
        self.request_id = request_id
        self.timeout = timeout
        how = (
            _("sent notifications/cancelled and stopped waiting")
            if cancelled
            else _("stopped waiting (initialize is never cancelled)")
        )
        super().__init__(_(
            "{method} (id {id}) timed out after {seconds}s: {how}; a late response will be "
            "ignored. Raise the timeout or check the server.").format(
            method=method, id=request_id, seconds=f"{timeout:g}", how=how))


class RequestCancelled(McpError):
    """The request was cancelled (explicitly, by shutdown, or because the caller was)."""

    def __init__(self, method: str, request_id: int, reason: str) -> None:
        self.method = method
        self.request_id = request_id
        self.reason = reason
        super().__init__(_("{method} (id {id}) was cancelled: {reason}").format(
            method=method, id=request_id, reason=reason))


class SessionClosed(McpError):
    """The session is shutting down or over; no new requests can be sent."""


class ServerExited(SessionClosed):
    """The server went away; carries its exit code, last stderr lines, and the transport's reason.

    ``transport_error`` is what the transport reported, e.g. an HTTP
    ``SessionExpired`` — so ``isinstance(exc.transport_error, SessionExpired)``
    tells an expired session from a crashed server.
    """

    def __init__(self, message: str, *, exit_code: int | None, stderr_tail: list[str],
                 transport_error: Exception | None = None) -> None:
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail
        self.transport_error = transport_error
        super().__init__(message)


class RequestRefused(ServerError):
    """An HTTP server refused a stateless-era request without a JSON-RPC answer.

    ``code`` is the JSON-RPC code of an error body without an id, or ``None``
    when the body was not JSON-RPC at all (a handshake-era server's plain 400,
    say); ``status`` is the HTTP status.
    """

    def __init__(self, method: str, status: int, code: int | None, message: str,
                 data: Any = None) -> None:
        self.status = status
        super().__init__(method, code if code is not None else 0, message, data)
        self.code = code  # type: ignore[assignment]
        self.args = (_("{method}: HTTP {status} without a JSON-RPC answer: {message}").format(
            method=method, status=status, message=message),)


class InvalidResult(McpError):
    """A stateless-era result the client cannot use (unknown ``resultType``, say)."""


class InputRequestFailed(McpError):
    """An ``input_required`` result asked for input this client could not give."""


class EraProbeFailed(McpError):
    """``server/discover`` could not settle which era to speak, and falling back is wrong.

    Raised for a stateless-era server that shares no version with this client,
    or that rejected the probe itself; the message says which.
    """


class RequestFailed(McpError):
    """One request failed before any usable answer came, and the session goes on.

    ``cause`` is a short slug (``too-large``, ``invalid-utf8``, ``malformed``,
    ``http-error``, ``client-error``); ``status`` the HTTP status, ``size`` and
    ``limit`` the bytes seen and allowed, ``option`` the setting that raises
    the limit — each None when it does not apply.
    """

    def __init__(self, method: str, request_id: int | str, cause: str, detail: str, *,
                 status: int | None = None, size: int | None = None,
                 limit: int | None = None, option: str | None = None) -> None:
        self.method = method
        self.request_id = request_id
        self.cause = cause
        self.status = status
        self.size = size
        self.limit = limit
        self.option = option
        hint = (_(" (raise it with {option}=…)").format(option=option)
                if option and limit is not None else "")
        super().__init__(_("{method} (id {id}) failed: {detail}{hint}").format(
            method=method, id=request_id, detail=detail, hint=hint))


class ResponseRejected(RequestFailed):
    """The answer to the request arrived but was discarded (too large, not UTF-8, malformed)."""


class HttpRequestFailed(RequestFailed):
    """The HTTP exchange that carried the request failed (an error status, say); the session
    is still open."""
