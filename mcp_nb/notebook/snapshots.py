"""Displaying a live part of a session shows a snapshot of it, with one live ``now: …`` line.

The rule (which parts are snapshots, which stay live) is told in
:mod:`mcp_nb.notebook.widgets`.  Here is how it works: :class:`_SnapshotOnDisplay` is
mixed into each part; when the part is displayed it builds a :class:`Snapshot` (the
part's :meth:`frozen` copy, its text and HTML at that moment) with the session's
:class:`NowLine` under it.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as w

from ..client.session import ClientSession
from ..i18n import _
from . import render
from .described import _Described


class NowLine(w.HTML):
    """One live line, ``now: Operating``: the state a session is in now.

    A session's snapshots all show the same NowLine (one widget, one subscription,
    however many cells display the session).
    """

    def __init__(self, session: ClientSession) -> None:
        super().__init__()
        self._show(session.state.value)
        # The record, not the session, is read: the line keeps no reference to it.
        session.on_transition(lambda record: self._show(record.target.value))

    def _show(self, state: str) -> None:
        tip = _("What is above shows the session as it was when the cell displayed it; "
                "this line follows the session (%mcp view shows every tab live).")
        self.value = (render.STYLE + f'<div class="mcpnb"><span class="no" '
                      f'title="{render.esc(tip)}">'
                      + render.esc(_("now: {state}").format(state=state)) + "</span></div>")


class Snapshot(_Described, w.VBox):
    """A part of a session as it was when displayed, with the session's live NowLine under it.

    Built once, at display time, by the part's :meth:`snapshot`; nothing in it
    is redrawn (widgets added for acting, like the Requests tab, stay live).
    Its text/plain and text/html are the part's at that moment.

    In Python (``hosted`` from ``%mcp connect``)::

        shot = hosted.view.state_diagram.snapshot()
        shot.frozen.value      # the diagram's HTML now, kept as it is
        shot.now.value         # "now: …", redrawn on every transition
    """

    def __init__(self, frozen: w.Widget, now: NowLine, plain: str, html: str) -> None:
        super().__init__(children=[frozen, now])
        #: The frozen copy of the part (a widget that is never redrawn).
        self.frozen = frozen
        self.now = now
        self._plain = plain
        self._html = html

    def describe(self) -> str:
        return self._plain

    def static_html(self) -> str:
        return self._html


class _SnapshotOnDisplay(_Described):
    """Mixin for a live part of a session: displaying it shows a :class:`Snapshot`."""

    _session: ClientSession
    _now: NowLine | None = None

    def frozen(self) -> w.Widget:  # pragma: no cover - every part overrides
        """A copy of what the part shows now, that is never redrawn."""
        raise NotImplementedError

    def now_line(self) -> NowLine:
        """The session's NowLine (given by the SessionView; made here for a part on its own)."""
        if self._now is None:
            self._now = NowLine(self._session)
        return self._now

    def snapshot(self) -> w.Widget:
        """This part as it is now, with the live ``now: …`` line under it."""
        return Snapshot(self.frozen(), self.now_line(), self.describe(), self.static_html())

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        shown = self.snapshot()
        if shown is self:
            return super()._repr_mimebundle_(**kwargs)
        return shown._repr_mimebundle_(**kwargs)
