"""The kernel's side of what it hands to the host's page (:mod:`mcp_nb.apps.handoff`).

Under *Run All* a cell may ask the host for a step (``%mcp app --next`` *input*, *result*)
or a teardown (a later cell's ``view.teardown()``) before the kernel has read what the page
said: the View may be up, or not.  The page knows, so the kernel hands the step to it
through the frame's widget (``bootstrap["release"]``, ``teardown``) and records what the page
reports when it gets to it.  The cell that asked is answered at once, with what is known
then; the step's later fate is told to whoever watches (:meth:`AppHandoffs.watch_steps`:
the stepper's live outcome), with the page's time.  The frame's widget going away (the
output cleared, the cell re-run, the widget closed) ends the lifecycle, whatever it was.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..apps.actions import Action
from ..apps.host import AppHost
from ..apps.lifecycle import AppLifecycle, AppState, AppTransitionRecord

if TYPE_CHECKING:
    from .apps import AppFrame

#: Seconds the host waits for the View's answer to ui/resource-teardown (it SHOULD wait).
TEARDOWN_WAIT = 2.0

StepWatcher = Callable[[AppTransitionRecord, float], None]


class AppHandoffs:
    """Mixin of :class:`~mcp_nb.notebook.app_host.AppHosting`: steps and teardowns the
    page carries out, and the frame's widget going away."""

    host: AppHost | None
    frame: AppFrame | None
    hosted: Any
    lifecycle: AppLifecycle
    _lock: threading.RLock
    _shown_at: float
    _step_watchers: list[StepWatcher]

    def _apply(self, actions: list[Action]) -> None:  # pragma: no cover - AppHosting's
        raise NotImplementedError

    def _update_bootstrap(self) -> None:  # pragma: no cover - AppHosting's
        raise NotImplementedError

    def watch_steps(self, watcher: StepWatcher) -> None:
        """Call ``watcher(record, at)`` on each App transition from now on, ``at`` the time
        it happened in the session (the page's time when the page reported it)."""
        self._step_watchers.append(watcher)

    def _tell_watchers(self, record: AppTransitionRecord) -> None:
        for watcher in list(self._step_watchers):
            watcher(record, self._event_time())

    def _event_time(self) -> float:
        """Now in the session, or when the page said it happened (never before the frame
        appeared, never after now)."""
        now = self.hosted.session.lifecycle.elapsed()
        at = self.host.page_time if self.host is not None else None
        if at is None:
            return now
        return min(now, max(self._shown_at, now - (time.time() - at)))

    def send_tool_input(self) -> None:
        """``tool-input`` now, or held for the page to post once the View is initialized."""
        with self._lock:
            self._apply(self._handed().send_tool_input())
            self._update_bootstrap()

    def send_tool_result(self) -> None:
        """``tool-result`` (or ``tool-cancelled``) now, or held behind a held input."""
        with self._lock:
            self._apply(self._handed().send_tool_result())
            self._update_bootstrap()

    def teardown(self, reason: str = "torn down from the notebook") -> None:
        """``ui/resource-teardown``, then the frame goes (after the answer, or a wait).

        When the kernel has not heard the View say ``initialized`` (Run All: it may not have
        read the page yet), the page decides: it sends the request if the View is
        initialized, otherwise removes the frame, and reports which.
        """
        if self.host is None:
            return
        with self._lock:
            frame = self.frame
            if self.host.lifecycle.addressable or frame is None or frame.removed:
                self._apply(self.host.teardown(reason))
                return
            message = self.host.teardown_by_page(reason)
            if message is not None:
                frame.teardown = {"message": message, "wait": TEARDOWN_WAIT}

    def _page_tore_down(self, outcome: Any, at: float | None) -> None:
        """The page's report on the teardown it was handed."""
        assert self.host is not None
        self._apply(self.host.page_tore_down(outcome, at))

    def _frame_gone(self, why: str) -> None:
        """The frame's widget is gone from the page, or closed."""
        if self.host is not None and self.lifecycle.state is not AppState.TORN_DOWN:
            with self._lock:
                self._apply(self.host.output_cleared(why))

    def _handed(self) -> AppHost:
        if self.host is None:
            raise ValueError("the App's resource has not been read yet")
        return self.host
