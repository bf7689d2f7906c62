"""The session's lifecycle as a live widget: the state diagram drawn from the core's table.

In the stateless era there are no handshake states: the widget shows what every
request carries instead.
"""

from __future__ import annotations

import ipywidgets as w

from ..client.session import ClientSession
from ..i18n import _
from ..protocol import stateless
from ..protocol.lifecycle import TransitionRecord
from ..protocol.versions import Era
from . import diagrams, render
from .snapshots import NowLine, _SnapshotOnDisplay


class StateDiagram(_SnapshotOnDisplay, w.HTML):
    """The lifecycle state machine, current state highlighted, path taken in bold.

    ``now`` is the session's :class:`NowLine` for this part's snapshots (a
    :class:`SessionView` gives its parts its own); the other parts take it too.
    """

    def __init__(self, session: ClientSession, now: NowLine | None = None) -> None:
        super().__init__()
        self._session = session
        self._now = now
        self._redraw()
        session.on_transition(self._on_transition)

    def _on_transition(self, record: TransitionRecord) -> None:
        self._redraw()

    def _redraw(self) -> None:
        s = self._session
        if s.era is Era.STATELESS:
            meta = stateless.request_meta(s.stateless_version, s.client_capabilities,
                                          s.client_info.model_dump(exclude_none=True),
                                          s.log_level)
            self.value = render.stateless_model_html(s.stateless_version, s.state, meta,
                                                     s.last_server_info, s.era_steps)
            return
        self._svg = diagrams.state_diagram_svg(s.state, s.lifecycle.path)
        self.value = self._svg + render.era_steps_html(s.era_steps)

    def describe(self) -> str:
        s = self._session
        if s.era is Era.STATELESS:
            carried = ", ".join(key.rsplit("/", 1)[-1] for key in stateless.request_meta(
                s.stateless_version, {}, {}, s.log_level))
            return _("StateDiagram: stateless era {version}, {state}; no handshake states; "
                     "every request carries {carried}").format(
                version=s.stateless_version, state=s.state.value, carried=carried)
        path = " → ".join(state.value for state in s.lifecycle.path)
        era = ""
        if s.era_steps:
            era = _("; era chosen by probe: {steps}").format(
                steps=" → ".join(step.kind for step in s.era_steps))
        return _("StateDiagram: {state} (path: {path})").format(state=s.state.value,
                                                                 path=path) + era

    def frozen(self) -> w.HTML:
        return w.HTML(self.value)

    def static_html(self) -> str:
        if self._session.era is Era.STATELESS:
            return self.value  # a table, no SVG: sanitizers keep it
        return (render.svg_image_html(self._svg, self.describe())
                + render.era_steps_html(self._session.era_steps))
