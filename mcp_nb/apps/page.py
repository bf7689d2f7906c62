"""The host's page brings a View up without waiting for the kernel, and the host judges after.

Under *Run All* the widgets' messages queue behind every cell already sent to the kernel:
a View whose ``ui/initialize`` waited for the kernel would initialize only after the last
cell (and a last cell that closes the session would close it first).  So the page holds
what the host already knows when the cell ends (:meth:`PageBootstrap.bootstrap`: the
``ui/initialize`` answer, the tool's input and, once known, its result) and makes the
host's opening moves itself: it answers a well-formed ``ui/initialize`` (one with
``appCapabilities``, while the View is loaded, with the id the View used) and, after
``ui/notifications/initialized``, posts ``tool-input`` then ``tool-result`` (or
``tool-cancelled``).  Everything else the View asks waits for the kernel.

The kernel still judges every step when it gets to it: the page reports each message it
relayed with what it posted in answer and when (its own clock), and
:meth:`PageBootstrap.receive_from_page` runs the host's own rules on it, records the
page's answer in its place instead of sending a second one, and says so in the
transcript wherever the page did what this host would not have done.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .actions import Action, Show, ToFrame
from .handoff import DELIVERED
from .lifecycle import AppEvent

if TYPE_CHECKING:
    from .host import AppHost

#: What the host's page may post to the View on its own, and the lifecycle edge of each.
PAGE_NOTIFICATIONS = {"ui/notifications/tool-input": AppEvent.TOOL_INPUT,
                      "ui/notifications/tool-result": AppEvent.TOOL_RESULT,
                      "ui/notifications/tool-cancelled": AppEvent.TOOL_CANCELLED}
#: The transcript's note on a message the page posted for the host.
BY_PAGE = "posted by the host's page"


class PageBootstrap:
    """Mixin of :class:`~mcp_nb.apps.host.AppHost`: the page's part of the host's opening,
    and the session ending before the View (which Run All makes the rule)."""

    #: The host's page posts tool-input, tool-result and tool-cancelled itself, from what
    #: :meth:`bootstrap` gave it, without waiting for the kernel; the host checks and
    #: records each one when the page reports it (:meth:`page_posted`) and never sends
    #: them itself.
    page_delivers = False
    #: Why the MCP session is gone, once it is (:meth:`disconnect`).
    disconnected: str | None = None
    #: While a page's message is handled: what the page posted in answer, and when.
    _page_posts: list[dict[str, Any]] | None = None
    _page_time: float | None = None

    @property
    def page_time(self) -> float | None:
        """While a message of the page's is handled: when the page saw or posted it (its
        clock, seconds since the epoch); else None."""
        return self._page_time

    def disconnect(self: AppHost, reason: str) -> list[Action]:
        """The MCP session closed (``reason`` says which, e.g. "the MCP session 'apps'
        ended"): the View stays as it is, and what it asks of the server from now on is
        refused ("session closed: …").  No ``ui/resource-teardown``: the View
        is not torn down (the spec asks for it before tearing down, for any reason)."""
        self.disconnected = reason
        return []

    def bootstrap(self: AppHost) -> dict[str, Any]:
        """What the host's page needs to make the host's opening moves itself.

        The ``ui/initialize`` answer (the page fills in what only it knows, exactly as
        ``created`` tells the kernel's :class:`~mcp_nb.apps.host.HostContext`: theme,
        container width, locale, time zone), whether the host delivers on its own
        (``deliver``; not in ``--step`` mode), the tool's arguments and, once known, its
        result or cancellation; in ``--step`` mode, the steps handed to the page
        (``release``: "input", "outcome"; :mod:`.handoff`).
        """
        boot: dict[str, Any] = {"initialize": self.initialize_result(None),
                                "deliver": self.deliver}
        if self.arguments is not None:
            boot["arguments"] = self.arguments
        if self.result is not None:
            boot["result"] = self.result
        if self.cancelled is not None:
            boot["cancelled"] = self.cancelled
        if self.released:  # --step: what the page posts once the View says initialized
            boot["release"] = list(self.released)
        return boot

    def receive_from_page(self: AppHost, message: Any, posted: list[Any] | tuple[Any, ...] = (),
                          at: float | None = None) -> list[Action]:
        """``message`` as the host's page relayed it, ``posted`` what the page posted to
        the View in answer, ``at`` when (the page's clock, seconds since the epoch).

        Judged like :meth:`~mcp_nb.apps.host.AppHost.receive`.  An answer the page already
        posted is recorded in its place, as the page posted it, and comes back as
        ``ToFrame(posted=True)``: never sent a second time.  The page's notifications go
        through :meth:`page_posted`.
        """
        self._page_time = at
        self._page_posts = [dict(m) for m in posted if isinstance(m, Mapping)]
        try:
            actions = self.receive(message)
            rest, self._page_posts = self._page_posts, None
            for extra in rest:
                if "method" in extra:
                    actions += self.page_posted(extra, at)
                else:
                    self._log("host→app", extra, f"{BY_PAGE}; this host did not answer so")
        finally:
            self._page_posts = None
            self._page_time = None
        return actions

    def page_posted(self: AppHost, message: Any, at: float | None = None) -> list[Action]:
        """A notification the host's page posted to the View on its own (``tool-input``,
        ``tool-result``, ``tool-cancelled``), checked against the App's lifecycle (after
        ``initialized``; input once, and before the outcome) and recorded.  One this host
        would not have sent is recorded as such and said in the cell."""
        method = message.get("method") if isinstance(message, Mapping) else None
        event = PAGE_NOTIFICATIONS.get(method) if isinstance(method, str) else None
        saved = self._page_time
        if at is not None:
            self._page_time = at
        try:
            if event is not None and self.lifecycle.addressable \
                    and self.lifecycle.can_fire(event):
                self._log("host→app", message, DELIVERED if self.delivered(method) else BY_PAGE)
                self.lifecycle.fire(event, f"{event} (by the host's page)")
                return []
            self._log("host→app", message, f"{BY_PAGE} while the App is {self.state}: "
                                           "this host would not have sent it")
            return [Show("late", {"state": str(self.state), "method": method})]
        finally:
            self._page_time = saved

    def _answered_by_page(self: AppHost, reply: dict[str, Any], note: str) -> ToFrame | None:
        """When the page already posted the answer ``reply`` is (same id): record the
        page's, in its place, and return it as posted; None when it did not."""
        if not self._page_posts or "method" in reply or "id" not in reply:
            return None
        for index, candidate in enumerate(self._page_posts):
            if "method" not in candidate and candidate.get("id") == reply["id"]:
                posted = self._page_posts.pop(index)
                break
        else:
            return None
        if posted.get("result", posted.get("error")) == reply.get("result", reply.get("error")):
            self._log("host→app", posted, BY_PAGE + (f"; {note}" if note else ""))
        else:
            said = json.dumps(reply.get("error") or reply.get("result"), default=repr)
            self._log("host→app", posted, f"{BY_PAGE}; this host would have answered "
                                          f"{said[:200]}")
        return ToFrame(posted, posted=True)
