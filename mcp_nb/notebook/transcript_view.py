"""The wire transcript as a live widget: filtered, paged, following the tail, throttled.

Under a flood of messages the table is redrawn at most every ``_REFRESH_SECONDS``;
a snapshot keeps the entries of its moment (and what had been dropped by then).
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from collections.abc import Callable

import ipywidgets as w

from ..client.session import ClientSession
from ..client.transcript import APP_LANE, Transcript, TranscriptEntry
from ..i18n import _
from . import render
from .snapshots import NowLine, _SnapshotOnDisplay

# Redraw at most this often under a flood of messages.
_REFRESH_SECONDS = 0.2


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


def in_time_order(entries: list[TranscriptEntry]) -> list[TranscriptEntry]:
    """Entries by time, in their place: an App's messages are written into the transcript
    when the kernel gets to them, which under Run All is after later cells, with the time
    the host's page saw them (app_host.AppHosting._record)."""
    if all(a.time <= b.time for a, b in itertools.pairwise(entries)):
        return entries
    return sorted(entries, key=lambda entry: entry.time)


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
        entries = in_time_order(self._transcript.entries)
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


class FollowingTranscript(TranscriptView):
    """``%mcp transcript --direction app``: the App lane, live, not a snapshot.

    An App's messages reach the kernel only when it gets to them; under Run All that is
    after every queued cell, this one included.  A snapshot would show none of them, so
    this view follows the transcript and redraws as they are recorded; its text (what a
    saved notebook keeps) says that it was taken when the cell ran.
    """

    def __init__(self, session: ClientSession, direction: str = "app") -> None:
        super().__init__(session)
        self.direction.value = direction

    def snapshot(self) -> TranscriptView:
        return self

    def describe(self) -> str:
        return super().describe() + _(" when this cell ran; the view above follows the "
                                      "transcript as the kernel records the App's messages")
