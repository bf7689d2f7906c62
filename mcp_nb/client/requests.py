"""The request table: ids, requests in flight, their deadlines and timeouts, cancellation.

Every request the client sends is a :class:`PendingRequest` here until its
answer, its deadline, a cancel or the end of the session finishes it.  One
task (:meth:`RequestTable.watch_deadlines`) serves every deadline; progress
may push a deadline later (reset-on-progress), never past the request's
maximum.  The caller sleeps on a :class:`Waiter`: on asyncio an
:class:`~mcp_nb.transports.wakeup.InlineWakeup`, which a response handled in
the transport's read callback resumes right there (the inline wake-up).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from ..i18n import _
from ..protocol.envelope import IdAllocator
from ..protocol.errors import LifecycleError
from ..transports.wakeup import InlineWakeup
from .errors import RequestCancelled, RequestTimeout, SessionClosed

if TYPE_CHECKING:
    from .parts import SessionParts
    from .session import ClientSession

#: ``(progress, total, message)``; called on the session's event loop, must not block.
ProgressCallback = Callable[[float, float | None, str | None], Any]

#: "Not given": the session's default applies (``None`` means "no timeout" to callers).
UNSET: Any = object()


class Waiter(Protocol):
    """What a request's caller waits on: set once, by the response or the deadline watcher.

    An :class:`anyio.Event`; on asyncio an :class:`InlineWakeup`, which is
    cheaper and can resume the caller in the read callback that handled its
    response (see :meth:`mcp_nb.client.inbound.Inbound.take_inline`).
    """

    def set(self) -> None: ...

    def wait(self) -> Awaitable[Any]: ...


class PendingRequest:
    """One request in flight."""

    __slots__ = (
        "deadline", "deadline_cap", "done", "error", "id", "method", "on_progress",
        "reset", "result", "timeout", "waiter",
    )

    def __init__(self, request_id: int, method: str, on_progress: ProgressCallback | None,
                 waiter: Waiter) -> None:
        self.id = request_id
        self.method = method
        self.waiter = waiter
        self.result: dict[str, Any] | None = None
        self.error: Exception | None = None
        self.done = False
        self.on_progress = on_progress
        #: When the deadline watcher gives up on it (event-loop clock).
        self.deadline = math.inf
        self.timeout = math.inf
        self.reset = False
        self.deadline_cap = math.inf

    def finish(self, result: dict[str, Any] | None = None, error: Exception | None = None) -> None:
        if self.done:
            return
        self.done = True
        self.result = result
        self.error = error
        # Last: handled in a read callback, this resumes the caller right here.
        self.waiter.set()


class RequestTable:
    """The requests in flight of one session, keyed by id."""

    def __init__(self, session: ClientSession, parts: SessionParts) -> None:
        self._session = session
        self._outbound = parts.outbound
        self.ids = IdAllocator()
        self.pending: dict[int, PendingRequest] = {}
        #: Ids we stopped waiting for (timeout/cancel) → why; a late answer is then expected.
        self.abandoned: dict[int, str] = {}
        # The scope watch_deadlines sleeps in; its deadline is the earliest request's.
        self._deadline_watch: anyio.CancelScope | None = None
        # Chosen per event loop by use_loop(): what callers wait on, and the loop's
        # clock (anyio's current_time() looks the backend up on every call).
        self.new_waiter: Callable[[], Waiter] = anyio.Event
        self.clock: Callable[[], float] = anyio.current_time
        # hold(): how many holds are open, and the time each held request had left.
        self._holds = 0
        self._held: dict[int, tuple[float, float]] = {}

    def use_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """On asyncio: wait on inline wake-ups and read the loop's clock directly."""
        self.new_waiter = functools.partial(InlineWakeup, loop=loop)
        self.clock = loop.time

    @property
    def in_flight(self) -> list[tuple[int, str]]:
        return [(p.id, p.method) for p in self.pending.values()]

    def register(self, request_id: int, method: str, *, timeout: float | None = UNSET,
                 on_progress: ProgressCallback | None = None,
                 reset: bool | None = None) -> PendingRequest:
        """Enter a request about to be sent; its clock starts in :meth:`wait`."""
        session = self._session
        pending = PendingRequest(request_id, method, on_progress, self.new_waiter())
        pending.timeout = session.default_timeout if timeout is UNSET else (timeout or math.inf)
        pending.reset = session.reset_timeout_on_progress if reset is None else reset
        self.pending[request_id] = pending
        return pending

    async def wait(self, pending: PendingRequest, max_timeout: float | None) -> dict[str, Any]:
        """Wait for the answer; :class:`RequestTimeout` (after cancelling) at the deadline."""
        now = self.clock()
        cap = max_timeout if max_timeout is not None else self._session.max_timeout
        pending.deadline_cap = now + cap
        pending.deadline = now + min(pending.timeout, cap)
        watch = self._deadline_watch
        if watch is not None and pending.deadline < watch.deadline:
            watch.deadline = pending.deadline
        try:
            await pending.waiter.wait()  # set by the response, or by the deadline watcher
        except anyio.get_cancelled_exc_class():
            # The caller was cancelled (task cancellation, a kernel interrupt).
            if not pending.done:
                with anyio.CancelScope(shield=True):
                    await self.abandon(pending, "the caller was cancelled")
            raise
        finally:
            self.pending.pop(pending.id, None)
        if not pending.done:
            elapsed = self.clock() - now
            cancel_sent = await self.abandon(pending, f"timed out after {elapsed:.3g}s")
            raise RequestTimeout(pending.method, pending.id, elapsed, cancelled=cancel_sent)
        if pending.error is not None:
            raise pending.error
        assert pending.result is not None
        return pending.result

    async def watch_deadlines(self) -> None:
        """Wake the waiters of requests whose deadline passed, left not ``done`` (a timeout).

        One sleeping task serves every request: a cancel scope with a deadline
        per request cost more than the rest of a round trip's bookkeeping
        (benchmarks/RESULTS.md, "Profiling").  A request only moves this
        task's wake-up earlier; after each wake-up it sleeps until the earliest
        deadline still pending.
        """
        while True:
            earliest = min((p.deadline for p in self.pending.values()), default=math.inf)
            with anyio.CancelScope(deadline=earliest) as self._deadline_watch:
                await anyio.sleep_forever()
            now = self.clock()
            for pending in list(self.pending.values()):
                if pending.deadline <= now:
                    pending.deadline = math.inf  # its waiter owns it now; don't wake for it again
                    pending.waiter.set()

    def hold(self) -> Callable[[], None]:
        """Stop the clocks of the requests in flight until the returned ``release()``.

        For a server→client request a person answers: the request that caused
        it must not time out under them.  On release each held request gets
        back the time it had left (its maximum too); holds may overlap, and the
        clocks restart when the last one is released.
        """
        if self._holds == 0:
            now = self.clock()
            self._held = {pending.id: (pending.deadline - now, pending.deadline_cap - now)
                          for pending in self.pending.values() if pending.deadline < math.inf}
            for pending in self.pending.values():
                if pending.id in self._held:
                    pending.deadline = pending.deadline_cap = math.inf
        self._holds += 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            self._holds -= 1
            if self._holds:
                return
            now = self.clock()
            for request_id, (left, cap_left) in self._held.items():
                pending = self.pending.get(request_id)
                if pending is not None:
                    pending.deadline, pending.deadline_cap = now + left, now + cap_left
            self._held = {}
            watch = self._deadline_watch
            earliest = min((p.deadline for p in self.pending.values()), default=math.inf)
            if watch is not None and earliest < watch.deadline:
                watch.deadline = earliest

        return release

    def progressed(self, token: Any) -> PendingRequest | None:
        """The request in flight that asked for progress with ``token``, if any.

        Its deadline moves on if it asked for reset-on-progress.
        """
        pending = self.pending.get(token)
        if pending is None or pending.on_progress is None:
            return None
        if pending.reset:
            # Only ever later: the watcher wakes at the old deadline and sleeps on.
            pending.deadline = min(self.clock() + pending.timeout, pending.deadline_cap)
        return pending

    async def abandon(self, pending: PendingRequest, reason: str) -> bool:
        """Stop waiting for ``pending``; send notifications/cancelled unless it's initialize."""
        self.pending.pop(pending.id, None)
        self.abandoned[pending.id] = reason
        pending.finish(error=RequestCancelled(pending.method, pending.id, reason))
        if pending.method == "initialize" or (
                pending.method == "server/discover" and self._session.era is None):
            # Never cancelled: initialize by the spec's rule; the era probe because a
            # handshake-era server must not see a notification before initialize.
            return False
        try:
            await self._outbound.send_cancelled(pending.id, reason)
        except SessionClosed:
            return False
        return True

    async def cancel(self, request_id: int | None, reason: str) -> int:
        """Cancel one request in flight (the latest when ``request_id`` is None)."""
        if request_id is None:
            if not self.pending:
                raise ValueError(_("no request is in flight"))
            request_id = max(self.pending)
        pending = self.pending.get(request_id)
        if pending is None:
            if self.ids.was_issued(request_id):
                raise ValueError(_("request {id} is not in flight any more (answered, timed "
                                   "out or cancelled already)").format(id=request_id))
            raise ValueError(_("no request with id {id} was sent in this session").format(
                id=request_id))
        if pending.method == "initialize":
            raise LifecycleError(_(
                "initialize cannot be cancelled: the spec forbids cancelling the initialize "
                "request; shut the session down instead (await session.shutdown())"))
        await self.abandon(pending, reason)
        return request_id

    def fail_all(self, error: Exception) -> None:
        """Finish every request in flight with ``error`` (the transport is gone)."""
        for pending in list(self.pending.values()):
            pending.finish(error=error)
        self.pending.clear()

    async def abandon_all(self) -> None:
        """Shutdown: cancel every request on the wire (never initialize) and stop waiting."""
        outbound = self._outbound
        for pending in list(self.pending.values()):
            if pending.method != "initialize":
                with contextlib.suppress(SessionClosed):
                    await outbound.send_cancelled(pending.id, "the client is shutting down")
            self.abandoned[pending.id] = "shutdown"
            pending.finish(error=SessionClosed(_(
                "{method} (id {id}) was abandoned: the session is shutting down").format(
                method=pending.method, id=pending.id)))
        self.pending.clear()
