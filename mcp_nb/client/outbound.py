"""Outbound: what the client may send now (lifecycle, era, capabilities), and frames onto the wire.

Every message the client sends passes :meth:`Outbound.guard` (unless it is
hand-written, see :mod:`mcp_nb.client.raw`) and :meth:`Outbound.send`, which
records it in the transcript and hands it to the transport: at once when the
transport can take it without waiting (stdio on asyncio), otherwise one sender
at a time under a lock, so frames never interleave.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from ..i18n import _
from ..protocol import stateless
from ..protocol.envelope import encode
from ..protocol.errors import CapabilityError, LifecycleError, refusal
from ..protocol.lifecycle import Event, State
from ..protocol.versions import Era
from ..transports.base import TransportClosed
from .errors import ServerExited, SessionClosed

if TYPE_CHECKING:
    from .parts import SessionParts
    from .session import ClientSession


class Outbound:
    """The sending side of one session."""

    def __init__(self, session: ClientSession, parts: SessionParts) -> None:
        self._session = session
        self._record = parts.record
        self._lifecycle = session.lifecycle
        self._transcript = session.transcript
        self._elapsed = session.lifecycle.elapsed
        self._lock: anyio.Lock | None = None
        # The transport's optional send_nowait (the sending fast path), on asyncio.
        self._send_nowait: Callable[[bytes], bool] | None = None
        #: Set once shutdown() began: nothing but notifications/cancelled leaves after that.
        self.closing = False
        #: Why the transport closed under the session (None while it is open).
        self.exit_error: TransportClosed | None = None

    def open(self, send_nowait: Callable[[bytes], bool] | None) -> None:
        """Called when the session opens, with the transport's fast path if it has one."""
        self._lock = anyio.Lock()
        self._send_nowait = send_nowait

    @property
    def closed(self) -> bool:
        """Shutting down or over: no new requests."""
        return self.closing or self._lifecycle.state is State.TERMINATED

    def guard(self, method: str, *, is_request: bool, force: bool) -> None:
        """Refuse what the lifecycle, era or capabilities forbid; ``force`` records a finding."""
        session = self._session
        if method != "notifications/cancelled" and (
                self.closing or self._lifecycle.state is State.TERMINATED):
            if self.exit_error is not None:
                raise self.closed_error()
            raise SessionClosed(_(
                "cannot send {method}: the session is {state}; open a new session").format(
                method=repr(method), state=session.state.value), rule="message-after-shutdown")
        if session.era is Era.STATELESS and method in stateless.REMOVED_METHODS:
            text = _("{method} does not exist in the stateless era ({version}): {why}").format(
                method=repr(method), version=session.stateless_version,
                why=_(stateless.REMOVED_METHODS[method]))
            if not force:
                raise refusal(LifecycleError, "removed-in-stateless-era", text)
            self._record.finding("removed-in-stateless-era", "client",
                                    _("sent anyway: {reason}").format(reason=text), method)
            return
        refused = self._lifecycle.client_refusal(method, is_request=is_request)
        if refused is not None:
            rule_id, text = refused
            if not force:
                raise refusal(LifecycleError, rule_id, text)
            self._record.finding(rule_id, "client",
                                    _("sent anyway: {reason}").format(reason=text), method)
        if is_request and self._lifecycle.state is State.OPERATING:
            try:
                session.capabilities.check_request(method)
            except CapabilityError as exc:
                if not force:
                    raise
                self._record.finding("capability-not-negotiated", "client",
                                        _("sent anyway: {reason}").format(reason=exc),
                                        method)

    async def send(self, message: dict[str, Any], kind: str, method: str | None,
                   request_id: int | str | None) -> None:
        """Encode, record and transmit one message."""
        data = encode(message)
        self._transcript.add(
            self._elapsed(), "send", kind, self._lifecycle.state.value, size=len(data),
            method=method, id=request_id, message=message,
        )
        send_nowait = self._send_nowait
        if send_nowait is not None and not self._lock.locked():  # type: ignore[union-attr]
            # Nobody is waiting to send before us, so the frame may go ahead at once.
            try:
                if send_nowait(data):
                    return
            except TransportClosed as exc:
                raise await self.settled_closed_error(exc) from None
        await self.transmit(data)

    async def transmit(self, frame: bytes) -> None:
        """Hand one frame to the transport, one sender at a time.

        A free lock is taken without a checkpoint: ``async with anyio.Lock()``
        always yields to the event loop first, which cost an extra loop
        iteration on every request (benchmarks/RESULTS.md, "Profiling").
        """
        lock = self._lock
        assert lock is not None, "open the session first (async with ClientSession…)"
        try:
            lock.acquire_nowait()
        except anyio.WouldBlock:
            await lock.acquire()
        try:
            await self._session.transport.send(frame)
        except TransportClosed as exc:
            raise await self.settled_closed_error(exc) from None
        finally:
            lock.release()

    async def settled_closed_error(self, exc: TransportClosed) -> SessionClosed:
        """:meth:`closed_error`, once the reader has said how the server ended.

        A server that exits at once races the first send: the pipe may refuse the frame
        ("stdin is closed") while the reader is still collecting the exit code. Waiting up
        to a second for the reader's account (an error path only) lets the person read
        "exit code 3" rather than the symptom."""
        if exc.exit_code is not None or self.closing:
            return self.closed_error(exc)
        with anyio.move_on_after(1.0):
            while self.exit_error is None:
                await anyio.sleep(0.01)
        return self.closed_error(self.exit_error or exc)

    def closed_error(self, exc: TransportClosed | None = None) -> SessionClosed:
        """The error for "cannot send": :class:`ServerExited` when the server went away."""
        exc = exc or self.exit_error
        if exc is None:
            return SessionClosed(_("the session is {state}; open a new session").format(
                state=self._lifecycle.state.value))
        return ServerExited(str(exc), exit_code=exc.exit_code, stderr_tail=exc.stderr_tail,
                            transport_error=exc)

    def before_sending(self, method: str, params: dict[str, Any] | None) -> None:
        """Lifecycle effects of a message about to leave (initialize starts initializing)."""
        if method == "initialize" and self._lifecycle.state is State.UNINITIALIZED:
            self._session.offered_version = str((params or {}).get("protocolVersion"))
            self._lifecycle.fire(Event.SEND_INITIALIZE, "client sent initialize")

    def after_sending(self, method: str) -> None:
        """Lifecycle effects of a message that left (initialized starts operating)."""
        if method == "notifications/initialized" and self._lifecycle.state is State.INITIALIZED:
            self._lifecycle.fire(Event.SEND_INITIALIZED,
                                 "client sent notifications/initialized")

    async def notify(self, method: str, params: dict[str, Any] | None, *, force: bool) -> None:
        self.guard(method, is_request=False, force=force)
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message, "notification", method, None)
        self.after_sending(method)

    async def send_cancelled(self, request_id: int, reason: str) -> None:
        message = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request_id, "reason": reason},
        }
        await self.send(message, "notification", "notifications/cancelled", None)

    async def respond(self, request_id: str | int, method: str, *,
                      result: dict[str, Any] | None = None,
                      error: tuple[int, str] | None = None) -> None:
        """Answer a server→client request (silently dropped if the server is gone)."""
        if error is not None:
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id,
                                       "error": {"code": error[0], "message": error[1]}}
            kind = "error"
        else:
            message = {"jsonrpc": "2.0", "id": request_id, "result": result}
            kind = "response"
        # If the server is gone, nobody is waiting for this answer.
        with contextlib.suppress(SessionClosed):
            await self.send(message, kind, method, request_id)
