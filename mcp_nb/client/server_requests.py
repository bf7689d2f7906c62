"""Server→client requests: the handlers that answer them and the capability each one needs.

The handshake era's server sends ``ping``, ``roots/list``,
``sampling/createMessage`` or ``elicitation/create`` as requests, answered
here, each in a task of its own (a handler may await a person), cancelled if
the server sends ``notifications/cancelled`` for it.  The stateless era asks
for the same input inside results; :mod:`mcp_nb.client.stateless_era` answers
those with the same handlers (:meth:`ServerRequests.handler_for`).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from ..i18n import _
from ..protocol.envelope import Request
from ..protocol.errors import INTERNAL_ERROR, METHOD_NOT_FOUND, McpError

if TYPE_CHECKING:
    from .parts import SessionParts
    from .session import ClientSession

#: Handler for a server→client request: receives ``params``, returns the ``result``.
RequestHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]] | dict[str, Any]]

#: Server→client requests and the client capability each one needs.
CAPABILITY_OF_HANDLER = {
    "roots/list": "roots",
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
}


class ServerRequests:
    """The handler table of one session, and the server's requests being answered."""

    def __init__(self, session: ClientSession, parts: SessionParts,
                 handlers: dict[str, RequestHandler]) -> None:
        self._session = session
        self._record = parts.record
        self._respond = parts.outbound.respond
        self._start_soon = parts.lifetime.start_soon
        self.handlers = handlers
        self._seen_ids: set[str | int] = set()
        self._scopes: dict[str | int, anyio.CancelScope] = {}

    def set_handler(self, method: str, handler: RequestHandler | None) -> None:
        if method not in CAPABILITY_OF_HANDLER:
            raise ValueError(
                f"no server→client request {method!r}; choose one of "
                f"{', '.join(CAPABILITY_OF_HANDLER)}"
            )
        if handler is None:
            self.handlers.pop(method, None)
        else:
            self.handlers[method] = handler

    def handler_for(self, method: str) -> RequestHandler | None:
        return self.handlers.get(method)

    def cancel(self, request_id: Any) -> None:
        """The server cancelled one of its requests: stop its handler (and never answer)."""
        scope = self._scopes.get(request_id)
        if scope is not None:
            scope.cancel()

    async def serve(self, message: Request, raw: dict[str, Any], size: int) -> None:
        """Take one server request: answer ``ping`` and refusals at once, start a handler."""
        session = self._session
        record = self._record
        respond = self._respond
        method = message.method
        session.transcript.add(session.lifecycle.elapsed(), "recv", "request",
                               session.state.value, size=size, method=method, id=message.id,
                               message=raw)
        if message.id in self._seen_ids:
            record.finding(
                "request-id-reused",
                "server",
                _("request id {id} was already used by the server").format(id=repr(message.id)),
                raw)
        self._seen_ids.add(message.id)
        violation = session.lifecycle.server_violation(method, is_request=True)
        if violation:
            record.finding("server-request-before-initialized", "server", violation, raw)
        if method == "ping":
            await respond(message.id, method, result={})
            return
        capability = CAPABILITY_OF_HANDLER.get(method)
        if capability is None:
            await respond(message.id, method, error=(
                METHOD_NOT_FOUND, f"Method not found: {method}"))
            return
        if not session.capabilities.client_supports(method):
            record.finding(
                "capability-not-negotiated",
                "server",
                _("{method} sent, but the client did not declare {capability}").format(
                    method=method, capability=repr(capability)),
                raw)
            await respond(message.id, method, error=(
                METHOD_NOT_FOUND,
                f"Method not found: {method} (this client did not declare the "
                f"{capability!r} capability)"))
            return
        handler = self.handlers.get(method)
        if handler is None:
            await respond(message.id, method, error=(
                INTERNAL_ERROR,
                f"the client declared {capability!r} but no handler is installed for {method}"))
            return
        self._start_soon(self._run_handler, message, handler)

    async def _run_handler(self, message: Request, handler: RequestHandler) -> None:
        respond = self._respond
        with anyio.CancelScope() as scope:
            self._scopes[message.id] = scope
            try:
                result = handler(message.params or {})
                if inspect.isawaitable(result):
                    result = await result
            except McpError as exc:  # a handler that chose its error code (e.g. user rejected)
                await respond(message.id, message.method,
                              error=(exc.code or INTERNAL_ERROR, str(exc)))
                return
            except Exception as exc:  # a user handler failing must not kill the session
                await respond(message.id, message.method,
                              error=(INTERNAL_ERROR, f"{type(exc).__name__}: {exc}"))
                return
            finally:
                self._scopes.pop(message.id, None)
            await respond(message.id, message.method, result=result)
        if scope.cancelled_caught:
            # The server cancelled its own request: the spec says don't respond.
            self._record.note(
                "handler cancelled",
                _("server cancelled its request {id}").format(id=repr(message.id)))
