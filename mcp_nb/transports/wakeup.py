"""A future that can resume its waiting task in the same event-loop iteration (asyncio only).

Shared by the stdio pipe reader (:mod:`.stdio._asyncio_pipes`), which wakes the
session's reader task from the pipe's read callback, and by the session
(:mod:`mcp_nb.client.session`), whose callers wait for their responses on one
each: a response handled right in the read callback resumes its caller there.
Each saved hand-over is one event-loop iteration less per round trip
(benchmarks/RESULTS.md).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable

#: What a task passes to ``add_done_callback`` of the future it awaits: its wake-up.
_WakeupCallback = Callable[["asyncio.Future[None]"], object]


class InlineWakeup(asyncio.Future[None]):
    """A future whose waiting task resumes *inside* :meth:`resolve_inline`.

    A task awaiting a future is resumed through ``loop.call_soon``: one
    event-loop iteration after the future is resolved.  A task awaits an
    object that is not exactly ``asyncio.Future`` through the object's own
    ``add_done_callback`` (the future-compatible protocol), so this subclass
    keeps the task's wake-up callback and :meth:`resolve_inline` calls it
    directly when no task is running (in an I/O callback, between tasks).
    From inside a task, and for every other way of finishing (``set_result``,
    ``set_exception``, ``cancel`` by the task or a cancel scope), the wake-up
    is scheduled as usual.

    :meth:`set` and :meth:`wait` spell the same as :class:`anyio.Event`'s, so
    code that waits once can hold either (the session does, per backend).
    """

    __slots__ = ("_wakeup",)

    def __init__(self, *, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop=loop)
        self._wakeup: tuple[_WakeupCallback, contextvars.Context | None] | None = None

    def add_done_callback(self, fn: _WakeupCallback, *,
                          context: contextvars.Context | None = None) -> None:
        if self._wakeup is None and not self.done():
            self._wakeup = (fn, context)
        else:
            super().add_done_callback(fn, context=context)

    def remove_done_callback(self, fn: _WakeupCallback) -> int:
        if self._wakeup is not None and self._wakeup[0] == fn:
            self._wakeup = None
            return 1 + super().remove_done_callback(fn)
        return super().remove_done_callback(fn)

    def resolve_inline(self) -> None:
        """Resolve (to None) and resume the waiting task now if no task is running."""
        if self.done():
            return
        wakeup, self._wakeup = self._wakeup, None
        super().set_result(None)
        if wakeup is None:
            return
        fn, context = wakeup
        # A task can only be stepped while no other one is running: a pipe
        # callback runs between tasks; from inside a task, fall back.
        loop = self.get_loop()
        if asyncio.current_task(loop) is None:
            if context is None:
                fn(self)
            else:
                context.run(fn, self)
        else:
            loop.call_soon(fn, self, context=context)

    def set(self) -> None:
        """Like :meth:`anyio.Event.set`: resolve once (later calls do nothing)."""
        self.resolve_inline()

    def wait(self) -> InlineWakeup:
        """Like :meth:`anyio.Event.wait`: ``await waiter.wait()`` (the future itself)."""
        return self

    def set_result(self, result: None) -> None:
        super().set_result(result)
        self._schedule_wakeup()

    def set_exception(self, exception: type | BaseException) -> None:
        super().set_exception(exception)
        self._schedule_wakeup()

    def cancel(self, msg: object = None) -> bool:
        cancelled = super().cancel(msg)
        if cancelled:
            self._schedule_wakeup()
        return cancelled

    def _schedule_wakeup(self) -> None:
        wakeup, self._wakeup = self._wakeup, None
        if wakeup is not None:
            fn, context = wakeup
            self.get_loop().call_soon(fn, self, context=context)
