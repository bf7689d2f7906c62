"""Live ipywidgets views of a session, fed by its events, and snapshots of them.

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
either way.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any, TypeVar

import ipywidgets as w

from ..client.session import ClientSession
from ..client.transcript import APP_LANE, Transcript, TranscriptEntry
from ..i18n import _
from ..protocol import stateless
from ..protocol.lifecycle import TransitionRecord
from ..protocol.models import CallToolResult
from ..protocol.versions import Era
from . import diagrams, render

T = TypeVar("T")

# Redraw at most this often under a flood of messages.
_REFRESH_SECONDS = 0.2


class _Described:
    """Mixin: deterministic text/plain and a static HTML fallback in the mime bundle."""

    def describe(self) -> str:  # pragma: no cover - every widget overrides
        raise NotImplementedError

    def static_html(self) -> str:
        return render.STYLE + f'<div class="mcpnb">{render.esc(self.describe())}</div>'

    def __repr__(self) -> str:
        return render.plain(self.describe())

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = super()._repr_mimebundle_(**kwargs) or {}  # type: ignore[misc]
        bundle["text/plain"] = repr(self)
        bundle["text/html"] = self.static_html()
        return bundle


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


class _Throttle:
    """Coalesce bursts of events into one redraw every ``_REFRESH_SECONDS``."""

    def __init__(self, redraw: Callable[[], None]) -> None:
        self._redraw = redraw
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()

    def poke(self) -> None:
        with self._lock:
            if self._timer is not None:
                return
            self._timer = threading.Timer(_REFRESH_SECONDS, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            self._timer = None
        self._redraw()

    def flush(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        self._redraw()


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


def _discover_entries(session: ClientSession) -> tuple[TranscriptEntry | None, ...]:
    """The ``server/discover`` exchange that settled a stateless session (the last one)."""
    request = response = None
    for entry in session.transcript.entries:
        if entry.direction == "send" and entry.method == "server/discover":
            request, response = entry, None
        elif (entry.direction == "recv" and request is not None and entry.id == request.id
              and response is None):
            response = entry
            if session.era is Era.STATELESS:
                break
    return request, response


def _handshake_entries(session: ClientSession) -> tuple[TranscriptEntry | None, ...]:
    request = response = initialized = None
    for entry in session.transcript.entries:
        if entry.direction == "send" and entry.method == "initialize" and request is None:
            request = entry
        elif (entry.direction == "recv" and request is not None and entry.id == request.id
              and response is None):
            response = entry
        elif entry.method == "notifications/initialized" and entry.direction == "send":
            initialized = entry
            break
    return request, response, initialized


class Handshake(_SnapshotOnDisplay, w.VBox):
    """The three handshake messages as cards, and their sequence diagram with timings."""

    def __init__(self, session: ClientSession, now: NowLine | None = None) -> None:
        super().__init__()
        self._session = session
        self._now = now
        self._cards = w.HTML()
        self._sequence = w.HTML()
        self._sequence_alt = _("sequence: nothing yet")
        self._shown: list[TranscriptEntry] = []
        self.children = [self._sequence, self._cards]
        self._unsubscribe = session.transcript.subscribe(self._on_entry)
        self._redraw()

    def _on_entry(self, entry: TranscriptEntry) -> None:
        if entry.direction != "event":
            self._redraw()

    def _redraw(self) -> None:
        if self._session.era is Era.STATELESS:
            self._redraw_discover()
            return
        request, response, initialized = _handshake_entries(self._session)
        if initialized is not None:
            # The handshake is over: stop listening, so later messages cost it nothing.
            self._unsubscribe()
            self._unsubscribe = lambda: None
        titles = (_("1. initialize (client → server)"), _("2. initialize result (server → client)"),
                  _("3. notifications/initialized (client → server)"))
        self._cards.value = render.STYLE + '<div class="mcpnb">' + "".join(
            render.message_card_html(title, entry)
            for title, entry in zip(titles, (request, response, initialized), strict=True)
        ) + "</div>"
        present = [e for e in (request, response, initialized) if e is not None]
        self._sequence.value = diagrams.sequence_svg(present)
        self._shown = present
        self._sequence_alt = _("sequence: ") + " → ".join(e.label for e in present)

    def _redraw_discover(self) -> None:
        """Stateless era: no handshake; the discover exchange is what the session began with."""
        request, response = _discover_entries(self._session)
        self._unsubscribe()
        self._unsubscribe = lambda: None
        titles = (_("1. server/discover (client → server)"),
                  _("2. discover result (server → client)"))
        self._cards.value = render.STYLE + '<div class="mcpnb"><p>' + render.esc(_(
            "The stateless era has no handshake: this is the optional server/discover "
            "exchange.")) + "</p>" + "".join(
            render.message_card_html(title, entry, ("supportedVersions", "capabilities"))
            for title, entry in zip(titles, (request, response), strict=True)) + "</div>"
        present = [e for e in (request, response) if e is not None]
        self._sequence.value = diagrams.sequence_svg(present)
        self._shown = present
        self._sequence_alt = _("sequence: ") + " → ".join(e.label for e in present)

    def describe(self) -> str:
        if self._session.era is Era.STATELESS:
            request, response = _discover_entries(self._session)
            versions = (self._session.discover_result.supportedVersions
                        if self._session.discover_result else [])
            return _("Discover: server/discover #{id} → supported {versions} (no "
                     "handshake)").format(id=request.id if request else "?",
                                          versions=", ".join(versions) or _("nothing"))
        request, response, initialized = _handshake_entries(self._session)
        if request is None:
            return _("Handshake: not started")
        steps = [f"initialize #{request.id}"]
        if response is not None:
            version = (response.message or {}).get("result", {}).get("protocolVersion")
            steps.append(f"result ({version})" if version else f"{response.kind}")
        if initialized is not None:
            steps.append("initialized")
        return "Handshake: " + " → ".join(steps)

    def frozen(self) -> w.VBox:
        return w.VBox([w.HTML(self._sequence.value), w.HTML(self._cards.value)])

    def static_html(self) -> str:
        return (render.svg_image_html(diagrams.sequence_svg(self._shown, times=False),
                                      self._sequence_alt) + self._cards.value)


class CapabilitiesView(_SnapshotOnDisplay, w.HTML):
    """Who declared what, what is usable now, and how the version was settled."""

    def __init__(self, session: ClientSession, now: NowLine | None = None) -> None:
        super().__init__()
        self._session = session
        self._now = now
        self._redraw()
        session.on_transition(lambda record: self._redraw())

    def _redraw(self) -> None:
        s = self._session
        preface = (render.discover_preface_html(s.discover_result, s.stateless_version)
                   if s.era is Era.STATELESS else None)
        self.value = render.capabilities_html(s.capabilities, s.version_outcome, s.state,
                                              preface=preface)

    def describe(self) -> str:
        s = self._session
        server = ", ".join(sorted(s.capabilities.server)) or _("none yet")
        client = ", ".join(sorted(s.capabilities.client)) or _("none")
        if s.era is Era.STATELESS:
            return _("Capabilities (server/discover): server [{server}]; client [{client}] "
                     "sent on every request; version {version} per request").format(
                server=server, client=client, version=s.stateless_version)
        version = (f"{s.version_outcome.answered} ({s.version_outcome.outcome})"
                   if s.version_outcome else _("not negotiated"))
        return _("Capabilities: server [{server}]; client [{client}]; version {version}").format(
            server=server, client=client, version=version)

    def frozen(self) -> w.HTML:
        return w.HTML(self.value)

    def static_html(self) -> str:
        return self.value


def _message_counts(entries: list[TranscriptEntry]) -> tuple[int, int]:
    """(sent, received) messages.  Text reprs count messages, not transcript entries:
    how many stderr lines have arrived when a cell ends is down to scheduling."""
    sent = received = 0
    for entry in entries:
        if entry.direction == "send":
            sent += 1
        elif entry.direction == "recv":
            received += 1
    return sent, received


class _TranscriptMoment:
    """A transcript's entries and drop counts as they were at one moment (a snapshot's).

    The entries are the transcript's own objects, so the copy costs one reference
    each, and nothing is added to it afterwards.
    """

    def __init__(self, transcript: Transcript) -> None:
        self.entries: list[TranscriptEntry] = list(transcript.entries)
        self.dropped_by_kind: Counter[str] = Counter(transcript.dropped_by_kind)

    @property
    def dropped(self) -> int:
        return sum(self.dropped_by_kind.values())


def dropped_summary(transcript: Transcript | _TranscriptMoment) -> str:
    """``42,113 older entries dropped: 42,100 notification, 13 request``; "" if none were."""
    if not transcript.dropped:
        return ""
    by_kind: Counter[str] = Counter()
    for key, count in transcript.dropped_by_kind.items():
        by_kind[key.split(" ", 1)[0]] += count  # "notification notifications/message" → kind
    kinds = ", ".join(f"{count:,} {kind}" for kind, count in
                      sorted(by_kind.items(), key=lambda item: (-item[1], item[0])))
    return f"{transcript.dropped:,} older entries dropped: {kinds}"


class TranscriptView(_SnapshotOnDisplay, w.VBox):
    """The wire transcript: filterable by direction and method, paged, following the tail.

    ``frozen=True`` makes a snapshot: the entries as they are now, still filterable
    and paged, never redrawn for new ones, with ``now`` (if given) shown under it.
    That is what ``%mcp transcript`` shows::

        TranscriptView(hosted.session, frozen=True, now=hosted.view.now)
    """

    def __init__(self, session: ClientSession, page_size: int = 50, *,
                 now: NowLine | None = None, frozen: bool = False) -> None:
        super().__init__()
        self._session = session
        self._now = now
        #: True for a snapshot: its entries are those of the moment it was made.
        self.is_frozen = frozen
        self._transcript: Transcript | _TranscriptMoment = (
            _TranscriptMoment(session.transcript) if frozen else session.transcript)
        self.page_size = page_size
        self.page = -1  # -1 follows the last page as messages arrive
        self.direction = w.Dropdown(options=[(_("all"), ""), (_("→ sent"), "send"),
                                             (_("← received"), "recv"), (_("· events"), "event"),
                                             # An MCP App's postMessage lane (app⇄host).
                                             ("⇄ App lane", "app")],
                                    description=_("direction"))
        self.method = w.Text(placeholder=_("method, e.g. tools/call"), description=_("method"))
        self.previous = w.Button(description="◀", layout=w.Layout(width="40px"))
        self.next = w.Button(description="▶", layout=w.Layout(width="40px"))
        self.position = w.Label()
        self.table = w.HTML()
        self.direction.observe(lambda change: self._reset(), names="value")
        self.method.observe(lambda change: self._reset(), names="value")
        self.previous.on_click(lambda button: self._turn(-1))
        self.next.on_click(lambda button: self._turn(+1))
        self.children = [
            w.HBox([self.direction, self.method]),
            w.HBox([self.previous, self.position, self.next]),
            self.table,
            *([now] if frozen and now is not None else []),
        ]
        self._throttle = _Throttle(self._redraw)
        self._redraw()
        if not frozen:
            session.transcript.subscribe(lambda entry: self._throttle.poke())

    def _selected(self) -> list[TranscriptEntry]:
        direction = self.direction.value or None
        method = self.method.value.strip() or None
        entries = self._transcript.entries
        if direction is None and method is None:
            return entries
        return [e for e in entries
                if (direction is None or e.direction == direction
                    or (direction == "app" and e.direction in APP_LANE))
                and (method is None or (e.method or "").startswith(method))]

    def _pages(self, count: int) -> int:
        return max(1, -(-count // self.page_size))

    def _reset(self) -> None:
        self.page = -1
        self._redraw()

    def _turn(self, step: int) -> None:
        pages = self._pages(len(self._selected()))
        current = pages - 1 if self.page < 0 else self.page
        self.page = min(max(current + step, 0), pages - 1)
        if self.page == pages - 1:
            self.page = -1
        self._redraw()

    def _redraw(self) -> None:
        selected = self._selected()
        pages = self._pages(len(selected))
        index = pages - 1 if self.page < 0 else min(self.page, pages - 1)
        chunk = selected[index * self.page_size:(index + 1) * self.page_size]
        self.table.value = render.transcript_rows_html(chunk, live=True)
        dropped = dropped_summary(self._transcript)
        self.position.value = _("page {page}/{pages} · {count} entries").format(
            page=index + 1, pages=pages, count=len(selected)) + (f" · {dropped}" if dropped else "")

    def flush(self) -> None:
        """Redraw now (tests and the end of a blocking magic)."""
        self._throttle.flush()

    def frozen(self) -> TranscriptView:
        """A snapshot without a now line (a tab of the session's snapshot), same filters."""
        return self._copy(None)

    def snapshot(self) -> TranscriptView:
        """A snapshot with the now line, same filters and page; a snapshot is its own."""
        return self if self.is_frozen else self._copy(self.now_line())

    def _copy(self, now: NowLine | None) -> TranscriptView:
        copy = TranscriptView(self._session, self.page_size, now=now, frozen=True)
        copy.direction.value = self.direction.value
        copy.method.value = self.method.value
        copy.page = self.page
        copy._redraw()
        return copy

    def describe(self) -> str:
        sent, received = _message_counts(self._transcript.entries)
        direction = self.direction.value or None
        method = self.method.value.strip() or None
        if direction is None and method is None:
            dropped = dropped_summary(self._transcript)
            if dropped:  # thousands separators only here: kept outputs never hit the limit
                return _("Transcript: {total} messages ({sent} sent, {received} received); "
                         "{dropped}").format(total=f"{sent + received:,}", sent=f"{sent:,}",
                                             received=f"{received:,}", dropped=dropped)
            return _("Transcript: {total} messages ({sent} sent, {received} received)").format(
                total=sent + received, sent=sent, received=received)
        selected = self._selected()
        what = _(" and ").join(part for part in (
            _("direction {direction}").format(direction=direction) if direction else "",
            _("method {method}…").format(method=method) if method else "") if part)
        if direction == "event":
            return _("Transcript: {count} events shown (filtered by {what})").format(
                count=len(selected), what=what)
        shown = sum(1 for e in selected if e.direction != "event")
        return _("Transcript: {shown} of {total} messages shown (filtered by {what})").format(
            shown=shown, total=sent + received, what=what)

    def static_html(self) -> str:
        # The saved snapshot: the last page of what every run reproduces (see
        # render.is_reproducible); the live table above shows everything.
        reproducible = [e for e in self._selected() if render.is_reproducible(e)]
        table = render.transcript_rows_html(reproducible[-self.page_size:])
        dropped = dropped_summary(self._transcript)
        if not dropped:
            return table
        note = _("(the transcript keeps the most recent entries only)")
        return (render.STYLE + f'<div class="mcpnb"><p class="no">{render.esc(dropped)} '
                f"{render.esc(note)}</p></div>" + table)


class FindingsView(_SnapshotOnDisplay, w.HTML):
    """Spec violations seen so far, each linked to its section of the spec."""

    def __init__(self, session: ClientSession, now: NowLine | None = None) -> None:
        super().__init__()
        self._session = session
        self._now = now
        self._redraw()
        session.on_finding(lambda finding: self._redraw())

    def _redraw(self) -> None:
        self.value = render.findings_html(self._session.findings)

    def describe(self) -> str:
        rules = [f.rule.id for f in self._session.findings]
        return _("Findings: {count}").format(count=len(rules)) + (
            f" ({', '.join(rules)})" if rules else "")

    def frozen(self) -> w.HTML:
        return w.HTML(self.value)

    def static_html(self) -> str:
        return self.value


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


class ToolResultView(_Described, w.HTML):
    """A tool result: text, images, embedded resources, and isError made obvious."""

    def __init__(self, result: CallToolResult) -> None:
        super().__init__()
        self.result = result
        self.value = render.content_blocks_html(result.content, result.isError,
                                                result.structuredContent)

    def describe(self) -> str:
        status = _("error") if self.result.isError else _("ok")
        text = render.content_summary(self.result.content)
        preview = text if len(text) <= 60 else text[:59] + "…"
        structured = self.result.structuredContent
        if structured is not None:
            keys = ", ".join(list(structured)[:4]) + (", …" if len(structured) > 4 else "")
            preview += f" + structuredContent {{{keys}}}"
        return f"ToolResult ({status}): {preview}"

    def static_html(self) -> str:
        return self.value


__all__ = [
    "CapabilitiesView", "FindingsView", "Handshake", "NowLine", "SessionView", "Snapshot",
    "StateDiagram", "ToolResultView", "TranscriptView",
]
