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

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

# How often a waiting cell wakes to let KeyboardInterrupt in (Lock waits are
# interruptible on POSIX, but a short poll keeps this true everywhere).
_POLL_SECONDS = 0.1
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
            raise RuntimeError("the mcp_nb background loop has stopped; reload the extension")
        finished = threading.Event()
        outcome: dict[str, Any] = {}

        def start() -> None:
            task = asyncio.ensure_future(coro, loop=self._loop)
            outcome["task"] = task
            task.add_done_callback(lambda _: finished.set())

        self._loop.call_soon_threadsafe(start)
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while not finished.wait(_POLL_SECONDS):
                if deadline is not None and time.monotonic() > deadline:
                    raise TimeoutError(f"no result within {timeout:g}s")
        except (KeyboardInterrupt, TimeoutError) as exc:
            self._loop.call_soon_threadsafe(lambda: outcome["task"].cancel())
            # The task runs its cancellation handlers (notifications/cancelled) on
            # the loop; wait for them so the wire is in order before we return.
            finished.wait(_CANCEL_CLEANUP_SECONDS)
            if isinstance(exc, KeyboardInterrupt):
                raise Interrupted("interrupted: the waiting request was cancelled") from None
            raise
        task = outcome["task"]
        if task.cancelled():
            raise Interrupted("the request was cancelled")
        return task.result()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the loop after pending callbacks; join the thread."""
        if not self.running:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)
