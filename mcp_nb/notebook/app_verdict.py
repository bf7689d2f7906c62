"""The cell's verdict on one hosted App: up, failed (and why), disconnected.

Kept apart from :mod:`mcp_nb.notebook.app_host`, which carries the messages: this module
only reads what the host found (a problem before the frame, the View silent past the wait,
a CSP violation the page reported, the session's end) and words it for the verdict line.
"""

from __future__ import annotations

from typing import Any

from ..apps.lifecycle import AppLifecycle, AppState
from ..i18n import N_, _

#: States of an App that came up: initialized, given its input and an outcome (the words).
_UP = {
    AppState.INTERACTIVE: N_("the App is up: initialized, given its input and result"),
    AppState.CANCELLED: N_("the App is up: initialized, given its input, told the call was "
                           "cancelled"),
}
#: States in which the View has not yet said ``initialized``.
_BEFORE_INITIALIZED = (AppState.LOADING, AppState.LOADED, AppState.INITIALIZING)


class AppVerdict:
    """Mixin of :class:`~mcp_nb.notebook.app_host.AppHosting`: the verdict line's facts."""

    lifecycle: AppLifecycle
    problem: str | None
    failures: list[str]
    not_initialized: str | None
    disconnected: str | None
    #: Seconds after the frame appears before the cell says the View has not initialized.
    initialized_wait: float = 5.0

    def _draw_verdict(self) -> Any:  # pragma: no cover - the drawing class overrides
        raise NotImplementedError

    def _still_waiting(self) -> None:
        """Say so in the cell when the View has not said ``initialized`` in good time."""
        state = self.lifecycle.state
        if state in (AppState.LOADING, AppState.LOADED, AppState.INITIALIZING):
            self.not_initialized = _(
                "the App is {state} after {seconds} s: no ui/notifications/initialized yet, "
                "so its input and result are held (until then the host MUST NOT send the "
                "View any request or notification)").format(
                state=state, seconds=f"{self.initialized_wait:g}")
            self._draw_verdict()

    def csp_violation(self, directive: str, blocked: str) -> None:
        """The page reports that the App's CSP blocked ``blocked`` (``directive``)."""
        self.failures.append(_("the CSP blocked {blocked} ({directive})").format(
            blocked=blocked, directive=directive))
        self._draw_verdict()

    def verdict(self) -> tuple[str, str]:
        """The cell's verdict on the App: ``("ok" | "warning" | "failed" | "", text)``."""
        state = self.lifecycle.state
        if self.problem:
            mark, text = "failed", _("not rendered, for the reason above; the tool's result "
                                     "is below")
        elif state in _UP:
            mark, text = "ok", _(_UP[state])
            if self.failures:
                # Up and working, yet something it tried was blocked (the official basic example
                # tries eval, and works without it): worth saying, not a failure of the App.
                mark = "warning"
                text += "; " + _("but {blocked}: whatever needed it does not work").format(
                    blocked="; ".join(self.failures[-3:]))
        elif self.failures or (self.not_initialized and state in _BEFORE_INITIALIZED):
            waiting = [self.not_initialized] if self.not_initialized \
                and state in _BEFORE_INITIALIZED else []
            mark, text = "failed", "; ".join([*waiting, *self.failures][-3:])
        else:
            mark, text = "", ""
        if self.disconnected:
            text += ("; " if text else "") + _(
                "{why}: the App stays on screen, disconnected; what it asks of the server "
                "is refused (session closed); clear the output or re-run the cell to remove "
                "it").format(why=self.disconnected)
        return mark, text
