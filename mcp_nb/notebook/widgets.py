"""The live window onto one session (:class:`SessionView`, its parts in tabs), and the
rule for its parts: displayed, they show snapshots.

Each widget subscribes to the session's lifecycle transitions and transcript
and redraws from :mod:`mcp_nb.notebook.render`.  Events arrive on whichever
thread runs the session's loop (the waiting cell's, or the background thread
between calls); ipywidgets sends the change to the browser from there
(ipykernel's iopub channel is thread-safe), so a widget moves while a cell is
still waiting.

**Snapshots and the live view.**  A cell that shows a session, or one part of it,
illustrates one step: the prose beside it describes the session at that step.
So *displaying* a session's part shows a :class:`Snapshot`: the part as it was
when the cell displayed it (built once, then never redrawn), with a one-line
:class:`NowLine` under it, shared by every snapshot of the session, that keeps
saying the state the session is in *now*.  After Run All the tour's first
diagram still shows ``Operating`` beside prose about ``Operating``, and its
``now: Terminated`` line says the session has moved on.  The rule:

* snapshots: the session itself (``%mcp connect``'s value, ``s`` in a cell),
  ``%mcp initialize``, ``%mcp initialized``, ``%mcp state``, ``%mcp caps``,
  ``%mcp findings``, ``%mcp transcript`` and any part shown by hand
  (``s.view.handshake``);
* live: :class:`SessionView` itself, ``%mcp view`` or ``s.view``, the one window
  that follows the session, and everything a person acts through (the explorer,
  the Requests inbox, a running call's progress, tool forms, App frames, the
  authorization flow).  A snapshot of the session keeps the tabs that were added
  to it for acting (Requests, Explore) live.

In a notebook::

    s = %mcp connect     # the session after its handshake, and a live "now: …" line
    %mcp state           # the diagram at this step, the same "now: …" line under it
    %mcp view            # every tab, following the session

Every widget also has a short deterministic ``text/plain`` repr (what nbval
compares) and a static ``text/html`` repr (what nbviewer and GitHub show); a
snapshot's are its part's at display time, so saved outputs are the same
either way (:mod:`.described`).

The parts, one module each: the lifecycle (:mod:`.lifecycle_view`), the
handshake and capabilities (:mod:`.handshake_views`), the transcript
(:mod:`.transcript_view`), the findings (:mod:`.findings_view`); the snapshot
machinery they share is :mod:`.snapshots`.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as w

from ..client.session import ClientSession
from ..i18n import _
from ..protocol.lifecycle import TransitionRecord
from ..protocol.versions import Era
from .described import _Described
from .findings_view import FindingsView
from .handshake_views import CapabilitiesView, Handshake
from .lifecycle_view import StateDiagram
from .snapshots import NowLine, Snapshot, _SnapshotOnDisplay
from .transcript_view import TranscriptView, _message_counts


class SessionView(_SnapshotOnDisplay, w.Tab):
    """Everything about one session in tabs: lifecycle, handshake, capabilities, wire.

    The live window onto a session: displayed (``%mcp view``, ``s.view``) it
    follows the session.  Its parts, displayed on their own, show snapshots; so
    does the session (``s``), through :meth:`snapshot`.
    """

    def __init__(self, session: ClientSession, name: str = "session") -> None:
        super().__init__()
        self._session = session
        self.name = name
        #: The session's one live ``now: …`` line, under every snapshot of it or its parts.
        self.now = self._now = NowLine(session)
        self.state_diagram = StateDiagram(session, self.now)
        self.handshake = Handshake(session, self.now)
        self.capabilities = CapabilitiesView(session, self.now)
        self.transcript = TranscriptView(session, now=self.now)
        self.findings = FindingsView(session, self.now)
        self.children = [self.state_diagram, self.handshake, self.capabilities,
                         self.transcript, self.findings]
        for index, title in enumerate((_("Lifecycle"), _("Handshake"), _("Capabilities"),
                                       _("Transcript"), _("Findings"))):
            self.set_title(index, title)
        session.on_transition(self._on_transition)

    def _on_transition(self, record: TransitionRecord) -> None:
        if self._session.era is Era.STATELESS:
            self.set_title(0, _("Requests (stateless)"))
            self.set_title(1, _("Discover"))
            self.handshake._redraw()

    def add_tab(self, title: str, widget: w.Widget) -> None:
        """Append a tab (the server-request inbox, when a person answers requests).

        Such a tab is for acting: snapshots of the session show it live.
        """
        self.children = [*self.children, widget]
        self.set_title(len(self.children) - 1, title)

    def frozen(self) -> w.Tab:
        parts = (self.state_diagram, self.handshake, self.capabilities, self.transcript,
                 self.findings)
        return w.Tab(children=[*(part.frozen() for part in parts), *self.children[len(parts):]],
                     titles=self.titles, selected_index=self.selected_index)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        # The live window: shown as itself, not as a snapshot.
        return _Described._repr_mimebundle_(self, **kwargs)

    def describe(self) -> str:
        s = self._session
        version = s.negotiated_version or _("no version yet")
        if s.era is Era.STATELESS:
            version = _("stateless era {version}").format(version=version)
        messages = sum(_message_counts(s.transcript.entries))
        return _("McpSession {name}: {state}, {version}, {messages} messages, {findings} "
                 "findings").format(name=repr(self.name), state=s.state.value, version=version,
                                    messages=messages, findings=len(s.findings))

    def static_html(self) -> str:
        return (self.state_diagram.static_html() + self.handshake.static_html()
                + self.capabilities.static_html() + self.findings.static_html())


# The parts SessionView is built from, importable from here too (scripts and benchmarks
# import them with the window).
__all__ = [
    "CapabilitiesView", "FindingsView", "Handshake", "NowLine", "SessionView", "Snapshot",
    "StateDiagram", "TranscriptView",
]
