"""What the host hands to its page when it has not heard the View say ``initialized`` yet.

Under *Run All* the kernel runs a cell before it has read what the page said: the View may
have initialized long ago while the kernel still thinks it is loading.  Two of the host's
steps then must not be decided by the kernel alone:

* **a held step** (``%mcp app --next`` *input* or *result* in ``--step`` mode): the host
  MUST NOT send the View any notification before ``ui/notifications/initialized``, and only
  the page knows when that happened.  So the step is *held*: recorded as such, and handed to
  the page (``bootstrap()["release"]``), which posts it the moment the View says
  ``initialized`` (or at once, if it already has).  The page reports the post and when;
  :meth:`~mcp_nb.apps.page.PageBootstrap.page_posted` records the delivery in its place.  A
  host with no such page (:attr:`page_releases` false) sends what it holds itself, at
  ``initialized``.
* **a teardown** (a later cell's ``view.teardown()``, the stepper's last step): the host
  MUST send ``ui/resource-teardown`` before it tears down an initialized View, and MUST NOT
  send it to one that is not.  So the page decides (:meth:`PageHandoff.teardown_by_page`):
  it sends the request (the host's id) if the View is initialized and waits for the answer
  within a bound, else it removes the frame; it reports which, and
  :meth:`PageHandoff.page_tore_down` records it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .actions import Action, RemoveFrame, Show
from .actions import notification_message as _notification
from .lifecycle import AppEvent, AppState

if TYPE_CHECKING:
    from .host import AppHost

#: The transcript's note on a step handed to the page.
HELD = "held: handed to the host's page, which posts it once the View says initialized " \
       "(the host MUST NOT send it before)"
#: The transcript's note on the delivery of a held step.
DELIVERED = "posted by the host's page, held until the View said initialized"
#: The transcript's note on a teardown handed to the page.
TEARDOWN_HANDED = "held: handed to the host's page, which sends it if the View said " \
                  "initialized and otherwise removes the frame (nothing may be sent before)"
#: What a page may report of a teardown it was handed (``kind: "teardown"``).
TEARDOWN_OUTCOMES = ("sent", "removed", "no-answer")
#: The steps a page may be handed, and the notification each posts.
STEP_METHODS = {"input": ("ui/notifications/tool-input",),
                "outcome": ("ui/notifications/tool-result", "ui/notifications/tool-cancelled")}


class PageHandoff:
    """Mixin of :class:`~mcp_nb.apps.host.AppHost`: held steps and teardowns the page
    carries out, because only it knows whether the View has said ``initialized``."""

    #: Steps handed to the page and not yet reported posted ("input", "outcome"), in order.
    held: tuple[str, ...] = ()
    #: Every step ever handed to the page (what the page is told it may post).
    released: tuple[str, ...] = ()
    #: The page said (``created``) that it posts what it is handed; else this host sends
    #: what it holds itself at ``initialized``.
    page_releases = False
    #: The ``ui/resource-teardown`` handed to the page (its id pending), once it is.
    teardown_handed: dict[str, Any] | None = None

    # -- held steps -----------------------------------------------------------------------

    def hold(self: AppHost, step: str) -> list[Action]:
        """Hand ``step`` ("input" or "outcome") to the page: recorded as held, not sent."""
        self.held = (*self.held, step)
        self.released = (*self.released, step)
        self._log("host→app", self._step_message(step), HELD, held=True)
        return []

    def release_held(self: AppHost) -> list[Action]:
        """The View said ``initialized``: what is held goes out, unless the page posts it."""
        if self.page_releases or not self.held:
            return []
        steps, self.held = self.held, ()
        actions: list[Action] = []
        for step in steps:
            actions += self._post_step(step)
        return actions

    def delivered(self: AppHost, method: str) -> bool:
        """The page reports it posted ``method``: True when that was a held step (now
        delivered), False when the page posted it on its own."""
        for step in self.held:
            if method in STEP_METHODS[step]:
                self.held = tuple(s for s in self.held if s != step)
                return True
        return False

    def _step_message(self: AppHost, step: str) -> dict[str, Any]:
        if step == "input":
            return _notification("ui/notifications/tool-input", {"arguments": self.arguments})
        if self.cancelled is not None:
            return _notification("ui/notifications/tool-cancelled", {"reason": self.cancelled})
        return _notification("ui/notifications/tool-result", self.result or {})

    # -- teardown -------------------------------------------------------------------------

    def teardown_by_page(self: AppHost, reason: str) -> dict[str, Any] | None:
        """Hand the teardown to the page: the ``ui/resource-teardown`` request it sends if
        the View said ``initialized`` (its id is this host's, and pending), or None when
        there is nothing to tear down (or it was handed already)."""
        if self.teardown_handed is not None or self.state in (
                AppState.REQUESTED, AppState.REFUSED, AppState.TEARING_DOWN, AppState.TORN_DOWN):
            return None
        request_id = next(self._ids)
        self._pending[request_id] = "ui/resource-teardown"
        self.teardown_handed = {"jsonrpc": "2.0", "id": request_id,
                                "method": "ui/resource-teardown", "params": {"reason": reason}}
        self._log("host→app", self.teardown_handed, TEARDOWN_HANDED, held=True)
        return self.teardown_handed

    def page_tore_down(self: AppHost, outcome: Any, at: float | None = None) -> list[Action]:
        """What the page did with the teardown it was handed: ``sent`` (the View was
        initialized; its answer comes as a message of its own), ``removed`` (it was not:
        the frame went, nothing sent) or ``no-answer`` (sent, and the wait ran out)."""
        asked = self.teardown_handed
        if asked is None or outcome not in TEARDOWN_OUTCOMES:
            return []
        saved, self._page_time = self._page_time, at if at is not None else self._page_time
        try:
            reason = str(asked["params"]["reason"])
            if outcome == "sent":
                if self.lifecycle.addressable and self.lifecycle.can_fire(AppEvent.TEARDOWN):
                    self._log("host→app", asked, "posted by the host's page")
                    self.lifecycle.fire(AppEvent.TEARDOWN, f"{reason} (by the host's page)")
                    return []
                self._log("host→app", asked, f"posted by the host's page while the App is "
                                             f"{self.state}: this host would not have sent it")
                return [Show("late", {"state": str(self.state), "method": asked["method"]})]
            self._pending.pop(asked["id"], None)
            if outcome == "no-answer":
                return self.give_up_teardown(
                    "no answer to ui/resource-teardown within the page's wait")
            self.held = ()
            for event in (AppEvent.REMOVE, AppEvent.CLEARED):
                if self.lifecycle.can_fire(event):
                    self.lifecycle.fire(event, f"{reason} (the host's page removed the frame: "
                                               "the View had not said initialized)")
                    return [RemoveFrame(reason)]
            return []
        finally:
            self._page_time = saved

    def output_cleared(self: AppHost, why: str) -> list[Action]:
        """The frame is gone from the page (the output cleared, the cell re-run, the widget
        closed): the lifecycle ends there, whatever state it was in."""
        if not self.lifecycle.can_fire(AppEvent.CLEARED):
            return []
        self.held = ()
        self.lifecycle.fire(AppEvent.CLEARED, why)
        return [RemoveFrame(why)]
