"""One event loop in a background thread, where every notebook session lives.

Why a thread and not the kernel's own loop: a cell is synchronous code running
*inside* the kernel's loop, so it cannot wait on that loop without re-entering
it (the trick nest_asyncio played, which is archived and breaks anyio on newer
Pythons).  A second loop in its own thread needs no patching, keeps running
between cells — so notifications, progress and server exits keep arriving — and
a cell simply waits on a future.

Interrupts: Jupyter's interrupt raises KeyboardInterrupt in the kernel's main
thread while it waits here; :meth:`BackgroundLoop.run` then cancels the task on
the loop (which makes the session send ``notifications/cancelled``), waits for
that cleanup to finish, and re-raises.
"""

from __future__ import annotations

import _thread
import asyncio
import concurrent.futures
import os
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

# A lock wait is interrupted by a signal on POSIX, so a waiting cell sleeps until the
# result is there; on Windows it is not, and the wait is cut into slices this long so
# that KeyboardInterrupt gets in.
_WAIT_SLICE_SECONDS = None if os.name == "posix" else 0.1
# After an interrupt, how long to wait for the cancelled task's cleanup (sending
# notifications/cancelled is one write to a pipe or one POST).
_CANCEL_CLEANUP_SECONDS = 5.0


class Interrupted(KeyboardInterrupt):
    """A waiting cell was interrupted; the work on the loop was cancelled cleanly."""


class BackgroundLoop:
    """An asyncio loop running forever in a daemon thread.

    Example::

        loop = BackgroundLoop()
        assert loop.run(asyncio.sleep(0, result=42)) == 42
        loop.stop()
    """

    def __init__(self, name: str = "mcp_nb-loop") -> None:
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()
        self._ready.wait()

    def _main(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.call_soon(self._ready.set)
        try:
            self._loop.run_forever()
        finally:
            self._loop.close()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and not self._loop.is_closed()

    def in_loop_thread(self) -> bool:
        return threading.current_thread() is self._thread

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop without waiting (for long-lived tasks)."""
        if not self.running:
            coro.close()
            raise RuntimeError("the mcp_nb background loop has stopped; reload the extension")
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def call_soon(self, callback: Callable[..., Any], *args: Any) -> None:
        """Run a plain callback on the loop thread."""
        self._loop.call_soon_threadsafe(callback, *args)

    def run(self, coro: Coroutine[Any, Any, T] | Awaitable[T],
            timeout: float | None = None) -> T:
        """Run ``coro`` on the loop and wait for its result in the calling thread.

        On KeyboardInterrupt the task is cancelled and its cleanup awaited before
        :class:`Interrupted` is raised, so an interrupted request really is
        cancelled on the wire.
        """
        if self.in_loop_thread():
            raise RuntimeError("BackgroundLoop.run() called from the loop's own thread; "
                               "await the coroutine instead")
        if not self.running:
            if isinstance(coro, Coroutine):
                coro.close()  # never to run: closed, so Python does not warn it was not awaited
            raise RuntimeError("the mcp_nb background loop has stopped; reload the extension")
        call = _CellCall(coro)
        self._loop.call_soon_threadsafe(call.start, self._loop)
        try:
            call.wait(timeout)
        except (KeyboardInterrupt, TimeoutError) as exc:
            self._loop.call_soon_threadsafe(call.cancel)
            # The task runs its cancellation handlers (notifications/cancelled) on
            # the loop; wait for them so the wire is in order before we return.
            call.wait(_CANCEL_CLEANUP_SECONDS, quiet=True)
            if isinstance(exc, KeyboardInterrupt):
                raise Interrupted("interrupted: the waiting request was cancelled") from None
            raise
        return call.outcome()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the loop after pending callbacks; join the thread."""
        if not self.running:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)


class _CellCall:
    """One coroutine a cell waits for: run in a task on the loop, its end signalled by a lock."""

    __slots__ = ("coro", "error", "finished", "result", "task")

    def __init__(self, coro: Coroutine[Any, Any, Any] | Awaitable[Any]) -> None:
        self.coro = coro
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
        if isinstance(self.error, asyncio.CancelledError):
            raise Interrupted("the request was cancelled")
        if self.error is not None:
            raise self.error
        return self.result
