"""The session's lifetime: its task group, opening the transport, and the end of it.

A session ends one of two ways: the client shuts it down
(:meth:`Lifetime.shutdown`: cancel what is in flight, close the transport), or
the transport closes under it (:meth:`Lifetime.transport_closed`: the server
exited, the connection broke).  Either way every waiting caller is released
and the lifecycle reaches Terminated.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from ..protocol.lifecycle import Event, State
from ..transports.base import TransportClosed
from .errors import SessionClosed

if TYPE_CHECKING:
    from .parts import SessionParts
    from .session import ClientSession


class Lifetime:
    """Opens one session and ends it."""

    def __init__(self, session: ClientSession, parts: SessionParts) -> None:
        self._session = session
        # Built first (every part may start tasks), so it reaches the inbound side,
        # the request table and the outbound side through the parts when it runs.
        self._parts = parts
        self._task_group: TaskGroup | None = None
        self._terminated: anyio.Event | None = None

    async def open(self) -> None:
        session = self._session
        if self._task_group is not None:
            raise SessionClosed("this session was already opened; a new lifecycle needs a new "
                                "ClientSession")
        self._terminated = anyio.Event()
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        session.lifecycle.restart_clock()  # times are relative to opening the session
        parts = self._parts
        inbound = parts.inbound
        try:
            await session.transport.start(self._task_group, inbound.on_transport_event)
        except BaseException:
            self._task_group.cancel_scope.cancel()
            await self._task_group.__aexit__(None, None, None)
            raise
        loop = _running_asyncio_loop()
        send_nowait = None
        if loop is not None:  # the fast paths are written for asyncio's loop
            parts.table.use_loop(loop)
            send_nowait = session.transport.send_nowait
            session.transport.take_frames_inline(inbound.take_inline)
        parts.outbound.open(send_nowait)
        self._task_group.start_soon(inbound.read_loop)
        self._task_group.start_soon(parts.table.watch_deadlines)

    def start_soon(self, function: Callable[..., Any], *args: Any) -> None:
        """Run ``function`` in a task of the session's own group."""
        assert self._task_group is not None, "open the session first"
        self._task_group.start_soon(function, *args)

    async def close(self) -> None:
        """Shut down, then stop the session's tasks and leave its task group."""
        try:
            await self.shutdown()
        finally:
            assert self._task_group is not None
            self._task_group.cancel_scope.cancel()
            # The body's own exception propagates as itself (not wrapped in an
            # ExceptionGroup), so `except ServerError` around the block works.
            await self._task_group.__aexit__(None, None, None)

    async def shutdown(self, reason: str = "client shutdown") -> None:
        session = self._session
        outbound = self._parts.outbound
        if self._terminated is None:
            return  # never opened
        if outbound.closed:
            await self._terminated.wait()
            return
        outbound.closing = True
        with anyio.CancelScope(shield=True):
            session.lifecycle.fire(Event.SHUTDOWN, reason)
            await self._parts.table.abandon_all()
            await session.transport.close()
            # The reader may have seen the server exit first and finished the lifecycle.
            if session.state is not State.TERMINATED:
                session.lifecycle.fire(Event.TRANSPORT_CLOSED, "transport closed by the client")
            self._terminated.set()

    async def transport_closed(self, exc: TransportClosed) -> None:
        """The reader found the transport closed: fail what waits, end the lifecycle."""
        session = self._session
        outbound = self._parts.outbound
        if outbound.closing:
            return  # shutdown() is closing the transport and will finish the lifecycle
        try:
            await session.transport.close()
            outbound.exit_error = session.transport.describe_exit()
        finally:
            # Whatever closing the transport did, nobody may go on waiting.
            outbound.exit_error = outbound.exit_error or exc
            self._parts.table.fail_all(outbound.closed_error())
            if session.state is not State.TERMINATED:
                session.lifecycle.fire(Event.TRANSPORT_CLOSED, str(outbound.exit_error))
            assert self._terminated is not None
            self._terminated.set()

    async def wait_closed(self) -> None:
        assert self._terminated is not None, "open the session first"
        await self._terminated.wait()


def _running_asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """The asyncio loop running this task, or None on another backend (trio)."""
    try:
        return asyncio.get_running_loop() if asyncio.current_task() is not None else None
    except RuntimeError:  # no asyncio event loop in this thread
        return None
