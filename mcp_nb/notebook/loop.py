"""One event loop for every notebook session, run by a background thread between calls.

Why a loop of its own and not the kernel's: a cell is synchronous code running
*inside* the kernel's loop, so it cannot wait on that loop without re-entering
it (the trick nest_asyncio played, which is archived and breaks anyio on newer
Pythons).  A second loop needs no patching, keeps running between cells — so
notifications, progress and server exits keep arriving — and a cell simply
waits for its call.

Who runs the loop (the *driver*) changes hands; it is never run by two threads
at once:

* Between calls the background thread runs it (``run_forever``).
* A call that finds it there is handed over: the background thread runs the
  call's task and releases a lock the cell sleeps on.  That costs two thread
  wake-ups (cell → loop thread → cell), each tens of microseconds on a small
  VM (benchmarks/RESULTS.md, "Where the hop's time goes"), more than the rest
  of a round trip.  So, as the call ends, the background thread also *parks*
  the loop: it stops at the end of that iteration and lets go of it.
* A call that finds the loop parked (the next line of the cell, the next turn
  of a loop) takes it and runs it on the cell's own thread until the call's
  task is done: the server's answer wakes the very thread that waits for it,
  as in a plain blocking client, and nobody else is woken.
* After a call the loop stays parked for :data:`HANDBACK_SECONDS`; then the
  background thread takes it back, so notifications and timers wait at most
  that long between calls.

Running an asyncio loop from another thread is allowed, one thread at a time
(``run_forever`` records the running thread as it starts).  The one thing a
cell's thread must do first is step out of the kernel's loop: asyncio refuses
to run a loop in a thread where another is running, so the kernel's loop is
set aside (``asyncio._set_running_loop``) for the length of the call and put
back after it.  The kernel's loop is not touched: the cell blocks it anyway.

Interrupts: Jupyter's interrupt is SIGINT to the kernel's main thread.  While
that thread runs the loop, a KeyboardInterrupt raised in the middle of the
loop's own work could lose a frame half read, so a handler of ours is
installed for the call: the first interrupt cancels the call's task (the
session then sends ``notifications/cancelled``), the loop runs until that
cleanup is done, and :class:`Interrupted` is raised, as before; a second
interrupt stops waiting for a cleanup that hangs.  A handed-over call (or one
made while another thread runs the loop) waits on a lock, which an interrupt
breaks; its task is then cancelled on the loop in the same way.
"""

from __future__ import annotations

import _thread
import asyncio
import concurrent.futures
import contextlib
import math
import os
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from types import FrameType
from typing import Any, TypeVar

from ..i18n import _

T = TypeVar("T")

try:  # the C functions under the signal module: its wrappers cost 9 µs a call, these 0.2
    from _signal import getsignal as _get_handler
    from _signal import signal as _set_handler
except ImportError:  # not CPython
    from signal import getsignal as _get_handler  # type: ignore[assignment]
    from signal import signal as _set_handler  # type: ignore[assignment]

# A lock wait is interrupted by a signal on POSIX, so a waiting cell sleeps until the
# result is there; on Windows it is not, and the wait is cut into slices this long so
# that KeyboardInterrupt gets in.
_WAIT_SLICE_SECONDS = None if os.name == "posix" else 0.1
# After an interrupt, how long to wait for the cancelled task's cleanup (sending
# notifications/cancelled is one write to a pipe or one POST).
_CANCEL_CLEANUP_SECONDS = 5.0
#: How long the loop stays parked after a cell's call before the background thread takes
#: it back.  Notifications and timers wait at most this long between calls; a call in that
#: time takes the loop without waking anyone.
HANDBACK_SECONDS = 0.02


class Interrupted(KeyboardInterrupt):
    """A waiting cell was interrupted; the work on the loop was cancelled cleanly."""


class BackgroundLoop:
    """An asyncio loop kept running by a daemon thread, and by each cell while it waits.

    ``handback_seconds`` is how long the loop stays parked after a call before
    the background thread takes it back (:data:`HANDBACK_SECONDS` unless given).

    Example::

        loop = BackgroundLoop()
        assert loop.run(asyncio.sleep(0, result=42)) == 42
        loop.stop()
    """

    def __init__(self, name: str = "mcp_nb-loop", *,
                 handback_seconds: float = HANDBACK_SECONDS) -> None:
        self._loop = asyncio.new_event_loop()
        self._handback_seconds = handback_seconds
        self._ready = threading.Event()
        # Guards the driver fields below; a cell waiting for the loop, and the
        # background thread waiting to take it back, wait on it.
        self._baton = threading.Condition(threading.Lock())
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        #: The thread running the loop now (its ident), or None while the loop is parked.
        self._driver: int | None = None
        self._parked_at = 0.0
        # The background thread is about to park the loop (a handed-over call asked it to).
        self._park_pending = False
        self._closing = False
        self._thread.start()
        self._ready.wait()

    def _main(self) -> None:
        asyncio.set_event_loop(self._loop)
        with self._baton:
            self._driver = threading.get_ident()
        self._loop.call_soon(self._ready.set)
        try:
            while True:
                self._loop.run_forever()
                if not self._park_until_idle():
                    break
        finally:
            self._loop.close()

    def _park_until_idle(self) -> bool:
        """Park the loop for the cells, and take it back once it sat parked long enough.

        Runs on the background thread after its ``run_forever`` stopped.
        Returns False when the loop is closing (and was run one last time).
        """
        me = threading.get_ident()
        with self._baton:
            if self._closing:
                return False
            self._driver = None
            self._parked_at = time.monotonic()
            self._park_pending = False
            self._baton.notify_all()  # a cell waiting for the park
            while True:
                if self._driver is None and self._closing:
                    # Run what is pending, then stop for good.
                    self._loop.call_soon(self._loop.stop)
                    break
                if self._driver is None:
                    left = self._parked_at + self._handback_seconds - time.monotonic()
                    if left <= 0:
                        break
                    self._baton.wait(left)
                else:
                    # A cell runs the loop.  Look again later rather than be told when
                    # it parks: calls in a row park and take it back within
                    # microseconds, and a wake-up per call would cost them a context
                    # switch each.
                    self._baton.wait(self._handback_seconds)
            self._driver = me
            return True

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and not self._loop.is_closed()

    def in_loop_thread(self) -> bool:
        """True in code the loop is running right now (on whichever thread runs it)."""
        return asyncio._get_running_loop() is self._loop

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop without waiting (for long-lived tasks)."""
        if not self.running:
            _close_unstarted(coro)
            raise RuntimeError("the mcp_nb background loop has stopped; reload the extension")
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def call_soon(self, callback: Callable[..., Any], *args: Any) -> None:
        """Run a plain callback on the loop."""
        self._loop.call_soon_threadsafe(callback, *args)

    def run(self, coro: Coroutine[Any, Any, T] | Awaitable[T],
            timeout: float | None = None) -> T:
        """Run ``coro`` on the loop and wait for its result in the calling thread.

        On KeyboardInterrupt the task is cancelled and its cleanup awaited before
        :class:`Interrupted` is raised, so an interrupted request really is
        cancelled on the wire.  The task runs in the calling thread's context.
        """
        if self.in_loop_thread():
            raise RuntimeError("BackgroundLoop.run() called from code running on the loop; "
                               "await the coroutine instead")
        me = threading.get_ident()
        driven: _DrivenCall | None = None
        try:
            driver = self._take_the_loop(me)
            if driver is None:
                driven = _DrivenCall(self._loop, coro)
                return driven.drive(timeout, self._park)
        except Interrupted:  # the call's own outcome
            raise
        except BaseException as exc:
            if driven is None or driven.task is None:  # the call never started
                _close_unstarted(coro)
            if isinstance(exc, KeyboardInterrupt):  # before the call's own handler was in place
                raise Interrupted(_("interrupted before the request was sent")) from None
            raise
        finally:
            if self._driver == me:  # the drive ended before it could park the loop itself
                self._park(hand_back=True)
        # Another thread runs the loop right now: it runs this call too.
        return self._run_by_the_driver(coro, timeout, park_after=driver == self._thread.ident)

    def _take_the_loop(self, me: int) -> int | None:
        """Become the loop's driver (None), or say which thread drives it now.

        A parked loop is taken at once.  When the background thread is about to
        park it (the call before this one asked it to), this waits the moment that takes.
        """
        with self._baton:
            # Parked (the usual case in a row), or this thread's own: it runs no loop now
            # (run() checked), so it was left as the driver by an interrupt that came
            # between the end of its last call and the parking.
            if self._driver in (None, me) and not self._closing:
                self._driver = me
                return None
            while True:
                if self._closing or not self.running:
                    raise RuntimeError(
                        "the mcp_nb background loop has stopped; reload the extension")
                if self._driver is None:
                    self._driver = me
                    return None
                if not (self._driver == self._thread.ident and self._park_pending):
                    return self._driver
                self._baton.wait(_WAIT_SLICE_SECONDS)

    def _park_the_background(self) -> None:
        """Run on the loop as a handed-over call ends: the background thread parks the loop.

        So the cell's next call (the next line, the next turn of a loop) finds it
        parked and runs it itself; if none comes, the thread takes it back.
        """
        with self._baton:
            if self._driver != self._thread.ident or self._closing:
                return  # a cell runs the loop: it parks it when its own call ends
            self._park_pending = True
        self._loop.stop()

    def _park(self, *, hand_back: bool = False) -> None:
        with self._baton:
            self._driver = None
            self._parked_at = -math.inf if hand_back else time.monotonic()
            if hand_back or self._closing:
                self._baton.notify_all()

    def _run_by_the_driver(self, coro: Coroutine[Any, Any, T] | Awaitable[T],
                           timeout: float | None, *, park_after: bool) -> T:
        """Hand ``coro`` to whichever thread runs the loop, and wait on a lock for it.

        With ``park_after``, the background thread parks the loop as the call ends.
        """
        call = _CellCall(coro, self._park_the_background if park_after else None)
        self._loop.call_soon_threadsafe(call.start, self._loop)
        try:
            call.wait(timeout)
        except (KeyboardInterrupt, TimeoutError) as exc:
            self._loop.call_soon_threadsafe(call.cancel)
            # The task runs its cancellation handlers (notifications/cancelled) on
            # the loop; wait for them so the wire is in order before we return.
            # A second interrupt stops waiting; the loop finishes the cleanup anyway.
            with contextlib.suppress(KeyboardInterrupt):
                call.wait(_CANCEL_CLEANUP_SECONDS, quiet=True)
            if isinstance(exc, KeyboardInterrupt):
                raise Interrupted(_("interrupted: the waiting request was cancelled")) from None
            raise
        return call.outcome()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the loop after pending callbacks; join the thread."""
        if not self.running:
            return
        with self._baton:
            self._closing = True
            if self._driver == self._thread.ident:
                self._loop.call_soon_threadsafe(self._loop.stop)
            self._baton.notify_all()
        self._thread.join(timeout)


class _DrivenCall:
    """One coroutine run by the calling thread itself, which runs the loop until it is done."""

    def __init__(self, loop: asyncio.AbstractEventLoop,
                 coro: Coroutine[Any, Any, Any] | Awaitable[Any]) -> None:
        self.loop = loop
        self.coro = coro
        self.task: asyncio.Task[None] | None = None
        self.result: Any = None
        self.error: BaseException | None = None
        self.interrupted = False
        self.timed_out = False
        self.gave_up = False  # the cleanup outlasted its bound, or a second interrupt came
        self._timers: list[asyncio.TimerHandle] = []

    async def _run(self) -> None:
        try:
            self.result = await self.coro
        except BaseException as exc:  # raised in the calling thread by outcome()
            self.error = exc
        finally:
            if not self.gave_up:  # else the background thread runs the loop by now
                self.loop.stop()  # ends the drive at the end of this iteration

    def drive(self, timeout: float | None, park: Callable[..., None]) -> Any:
        """Run the loop in this thread until the call is done; its result or its error.

        ``park`` lets go of the loop; it is called before the thread's own SIGINT
        handler is back, so an interrupt cannot come between the two.
        """
        loop = self.loop
        outer = asyncio._get_running_loop()  # the kernel's, when a cell calls
        restore_sigint = self._catch_sigint()  # from here on, an interrupt only schedules
        try:
            asyncio._set_running_loop(None)
            self.task = loop.create_task(self._run())  # in the caller's context
            if timeout is not None:
                self._timers.append(loop.call_later(timeout, self._time_out))
            while not self.task.done() and not self.gave_up:
                loop.run_forever()
        finally:
            for timer in self._timers:
                timer.cancel()
            asyncio._set_running_loop(outer)
            # A call given up (its cleanup outlasted the wait) leaves work on the loop:
            # the background thread takes the loop back at once to finish it.
            park(hand_back=self.task is not None and not self.task.done())
            restore_sigint()
        return self.outcome(timeout)

    def _catch_sigint(self) -> Callable[[], None]:
        """Install the interrupt handler for the call; return what puts the old one back."""
        if threading.current_thread() is not threading.main_thread():
            return _nothing  # signals reach the main thread only
        previous = _get_handler(signal.SIGINT)
        if not callable(previous):  # ignored, default or set outside Python: left alone
            return _nothing
        _set_handler(signal.SIGINT, self._on_sigint)
        return lambda: _set_handler(signal.SIGINT, previous)

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        # A signal handler runs between two bytecodes of whatever the loop was doing;
        # it only schedules, through the loop's thread-safe door.
        if self.interrupted:
            self.gave_up = True
            self.loop.call_soon_threadsafe(self.loop.stop)
            return
        self.interrupted = True
        self.loop.call_soon_threadsafe(self._cancel)

    def _time_out(self) -> None:
        self.timed_out = True
        self._cancel()

    def _cancel(self) -> None:
        assert self.task is not None
        if self.task.done():  # the interrupt came as the call ended
            return
        self.task.cancel()
        self._timers.append(self.loop.call_later(_CANCEL_CLEANUP_SECONDS, self._give_up))

    def _give_up(self) -> None:
        if self.task is not None and not self.task.done():
            self.gave_up = True
            self.loop.stop()

    def outcome(self, timeout: float | None) -> Any:
        if self.interrupted:
            raise Interrupted("interrupted: the waiting request was cancelled")
        if self.timed_out:
            raise TimeoutError(f"no result within {timeout:g}s")
        return _result_or_raise(self.result, self.error)


def _nothing() -> None:
    pass
class _CellCall:
    """One coroutine a cell waits for: run in a task on the loop, its end signalled by a lock."""

    __slots__ = ("coro", "error", "finished", "on_end", "result", "task")

    def __init__(self, coro: Coroutine[Any, Any, Any] | Awaitable[Any],
                 on_end: Callable[[], None] | None = None) -> None:
        self.coro = coro
        self.on_end = on_end
        self.finished = _thread.allocate_lock()
        self.finished.acquire()
        self.task: asyncio.Task[None] | None = None
        self.result: Any = None
        self.error: BaseException | None = None

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self.task = loop.create_task(self._run())

    async def _run(self) -> None:
        # The lock is released inside the task, in the iteration that finished the
        # coroutine, rather than by a done callback one iteration later.
        try:
            self.result = await self.coro
        except BaseException as exc:  # handed to the waiting thread, which raises it
            self.error = exc
        finally:
            if self.on_end is not None:  # before the release: the waiting cell acts on it
                self.on_end()
            self.finished.release()

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def wait(self, timeout: float | None, *, quiet: bool = False) -> None:
        """Sleep until the coroutine ended, or raise TimeoutError (unless ``quiet``)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            if _WAIT_SLICE_SECONDS is not None:
                left = _WAIT_SLICE_SECONDS if left is None else min(left, _WAIT_SLICE_SECONDS)
            if self.finished.acquire(timeout=-1 if left is None else left):
                return
            if deadline is not None and time.monotonic() >= deadline:
                if quiet:
                    return
                raise TimeoutError(f"no result within {timeout:g}s")

    def outcome(self) -> Any:
        return _result_or_raise(self.result, self.error)


def _result_or_raise(result: Any, error: BaseException | None) -> Any:
    """What a call's coroutine returned, or what it raised (a cancellation as Interrupted)."""
    if isinstance(error, asyncio.CancelledError):
        raise Interrupted("the request was cancelled")
    if error is not None:
        raise error
    return result


def _close_unstarted(coro: Coroutine[Any, Any, Any] | Awaitable[Any]) -> None:
    """Close a coroutine that will never run, so Python does not warn it was never awaited."""
    if isinstance(coro, Coroutine):
        coro.close()
