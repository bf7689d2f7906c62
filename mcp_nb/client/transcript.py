"""The wire transcript: every message both ways plus transport events, the most recent N kept.

Entries are appended on the hot path, so they are slotted dataclasses holding
references to what the session already has (the raw frame's size, the parsed
message) — nothing is re-serialised until someone exports.  The transcript
keeps the most recent ``limit`` entries (a chatty server cannot exhaust the
kernel's memory) and counts what it dropped, by kind (:attr:`Transcript.dropped_by_kind`).
Entry numbers (``seq``) keep counting across what was dropped.

The MCP App lane (``app→host`` / ``host→app``) has a bound of its own, in entries and in
bytes: an App is untrusted code that can post thousands of messages, and its traffic must
never evict the session's own wire history (``initialize``, ``tools/list`` …).  Each lane
drops only its own oldest entries; the one list stays in ``seq`` order.

Example::

    transcript = session.transcript
    for entry in transcript.filter(direction="recv"):
        print(entry.time, entry.label)
    transcript.export_jsonl("bug-report.jsonl")
    again = Transcript.load_jsonl("bug-report.jsonl")
"""

from __future__ import annotations

import bisect
import contextlib
import json
import os
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from ..protocol.observers import Observers
from ..protocol.plaintext import plain_text

#: "send"/"recv": the MCP wire (client → server, server → client); "event": transport and
#: session events; "app→host"/"host→app": an MCP App's postMessage lane (its own JSON-RPC
#: with the host, not on the MCP wire: recordings and replays leave it out).
Direction = Literal["send", "recv", "event", "app→host", "host→app"]

ARROWS = {"send": "→", "recv": "←", "event": "·", "app→host": "app→host",
          "host→app": "host→app"}
#: The App lane's directions.
APP_LANE = frozenset({"app→host", "host→app"})

#: Entries a session's transcript keeps by default (about 13 MB of typical messages).
DEFAULT_TRANSCRIPT_LIMIT = 10_000
#: Entries and bytes the App lane keeps by default, apart from the wire's: an App's page
#: may send up to 1 MiB a message (the host page's limit), so entries alone are no bound.
DEFAULT_APP_LANE_LIMIT = 5_000
DEFAULT_APP_LANE_BYTES = 32 * 1024 * 1024

# A str can hold a surrogate only unpaired (json.loads pairs them); UTF-8 cannot encode it.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(slots=True)
class TranscriptEntry:
    #: 0-based number of the entry in its session (keeps counting across dropped entries).
    seq: int
    #: Seconds since the session started.
    time: float
    #: "send" (client → server), "recv" (server → client), "event" (transport/session),
    #: or the App lane's "app→host" / "host→app".
    direction: Direction
    #: request, notification, response, error, invalid, or the transport event kind.
    kind: str
    #: Lifecycle state when the entry was recorded.
    state: str
    #: Encoded size in bytes (0 for events).
    size: int = 0
    method: str | None = None
    id: str | int | None = None
    #: The parsed message (dict) for messages; None for events.
    message: dict[str, Any] | None = None
    #: Raw text for unparseable input, or the event's detail.
    text: str | None = None
    #: Annotation such as "late, ignored" or the rule a finding cites.
    note: str | None = None

    @property
    def label(self) -> str:
        """One-line summary, e.g. ``→ request tools/call #3``.

        Safe to print: control characters (ANSI escapes, BEL), bidi overrides
        and lone surrogates a server sent are shown as ``\\uXXXX``.
        """
        parts = [ARROWS[self.direction], self.kind]
        if self.method:
            parts.append(self.method)
        if self.id is not None:
            parts.append(f"#{self.id}")
        if self.direction == "event" and self.text:
            parts.append(self.text)
        if self.note:
            parts.append(f"[{self.note}]")
        return plain_text(" ".join(parts), one_line=True)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


Observer = Callable[[TranscriptEntry], None]


class Transcript:
    """The most recent :class:`TranscriptEntry` objects, with observers and JSON Lines I/O.

    ``limit`` is how many entries are kept (None: all, for transcripts loaded
    from a file); older ones are dropped and counted in :attr:`dropped_by_kind`.
    """

    def __init__(self, limit: int | None = DEFAULT_TRANSCRIPT_LIMIT, *,
                 app_limit: int = DEFAULT_APP_LANE_LIMIT,
                 app_bytes: int = DEFAULT_APP_LANE_BYTES) -> None:
        if (limit is not None and limit < 1) or app_limit < 1:
            raise ValueError(f"limits must be at least 1, not {limit} and {app_limit}")
        self.entries: list[TranscriptEntry] = []
        #: Dropped entries by kind: ``"notification notifications/message"``, ``"stderr"`` …
        self.dropped_by_kind: Counter[str] = Counter()
        #: How many of the dropped entries were the App lane's.
        self.app_dropped = 0
        #: Told of every new entry; one that raises is contained (see Observers).
        self.observers: Observers[TranscriptEntry] = Observers()
        self._next_seq = 0
        self._limit = limit
        self.app_limit = app_limit
        self.app_bytes = app_bytes
        # What each lane holds now; a lane is trimmed in steps of an eighth of its limit,
        # so appending stays O(1) amortised (as RecentList does for one lane).
        self._wire_count = self._app_count = self._app_size = 0

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[TranscriptEntry]:
        return iter(self.entries)

    def __getitem__(self, index: int) -> TranscriptEntry:
        return self.entries[index]

    @property
    def limit(self) -> int | None:
        """Entries the MCP wire and events keep (None: all); the App lane has ``app_limit``."""
        return self._limit

    @property
    def dropped(self) -> int:
        """How many entries were dropped to keep the transcript within its limits."""
        return sum(self.dropped_by_kind.values())

    @property
    def wire_dropped(self) -> int:
        """How many entries of the MCP wire and events were dropped (the App lane's apart)."""
        return self.dropped - self.app_dropped

    def _count_dropped(self, entries: list[TranscriptEntry]) -> None:
        self.dropped_by_kind.update(
            f"{e.kind} {e.method}" if e.method else e.kind for e in entries)

    def _trim(self, app: bool) -> None:
        """Drop the oldest entries of one lane (down to its limit), keeping the other's."""
        if app:
            excess = max(0, self._app_count - self.app_limit)
            excess_bytes = max(0, self._app_size - self.app_bytes * 7 // 8)
        else:
            assert self._limit is not None
            excess, excess_bytes = self._wire_count - self._limit, 0
        kept: list[TranscriptEntry] = []
        gone: list[TranscriptEntry] = []
        for entry in self.entries:
            if (entry.direction in APP_LANE) == app and (excess > 0 or excess_bytes > 0):
                gone.append(entry)
                excess -= 1
                excess_bytes -= entry.size
            else:
                kept.append(entry)
        self.entries[:] = kept
        self._count_dropped(gone)
        if app:
            self.app_dropped += len(gone)
            self._app_count -= len(gone)
            self._app_size -= sum(e.size for e in gone)
        else:
            self._wire_count -= len(gone)

    def since(self, seq: int) -> list[TranscriptEntry]:
        """The entries still kept whose ``seq`` is ``seq`` or later."""
        entries = self.entries
        return entries[bisect.bisect_left(entries, seq, key=lambda e: e.seq):]

    @property
    def next_seq(self) -> int:
        """The ``seq`` the next entry will get (entries ever added, dropped ones included)."""
        return self._next_seq

    def subscribe(self, observer: Observer) -> Callable[[], None]:
        """Call ``observer`` for every new entry; returns a function that unsubscribes.

        Observers are called synchronously, possibly outside any task (a
        session handles responses in the transport's read callback where it
        can): keep them quick and free of awaits.  One that raises is
        contained: the session records an ``observer-failed`` finding.
        """
        return self.observers.add(observer)

    def add(
        self,
        time: float,
        direction: Direction,
        kind: str,
        state: str,
        *,
        size: int = 0,
        method: str | None = None,
        id: str | int | None = None,
        message: dict[str, Any] | None = None,
        text: str | None = None,
        note: str | None = None,
    ) -> TranscriptEntry:
        seq = self._next_seq
        self._next_seq = seq + 1
        entry = TranscriptEntry(
            seq, time, direction, kind, state, size, method, id, message, text, note
        )
        self.entries.append(entry)
        if self._limit is None:
            pass  # a transcript loaded from a file keeps everything
        elif direction in APP_LANE:
            self._app_count += 1
            self._app_size += size
            if (self._app_count > self.app_limit + max(1, self.app_limit // 8)
                    or self._app_size > self.app_bytes):
                self._trim(app=True)
        else:
            self._wire_count += 1
            if self._wire_count > self._limit + max(1, self._limit // 8):
                self._trim(app=False)
        if self.observers:
            self.observers.notify(entry)
        return entry

    def filter(
        self,
        *,
        direction: Direction | None = None,
        method: str | None = None,
        kind: str | None = None,
    ) -> list[TranscriptEntry]:
        """Entries matching every given criterion."""
        return [
            e for e in self.entries
            if (direction is None or e.direction == direction)
            and (method is None or e.method == method)
            and (kind is None or e.kind == kind)
        ]

    def events(self, kind: str | None = None) -> list[TranscriptEntry]:
        """Transport and session events (optionally of one kind, e.g. ``"SIGKILL"``)."""
        return self.filter(direction="event", kind=kind)

    def export_jsonl(self, path: str | os.PathLike[str]) -> int:
        """Write one JSON object per line; returns the number of entries written.

        The file appears whole or not at all (written aside, then renamed).  A
        lone surrogate a server sent (half an emoji) is written as its JSON
        escape, so the file is valid UTF-8 and loads back to the same text.
        """
        target = Path(path)
        entries = list(self.entries)
        fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                         suffix=".tmp")
        try:
            with open(fd, "w", encoding="utf-8") as out:
                for entry in entries:
                    line = json.dumps(entry.to_dict(), ensure_ascii=False, default=repr)
                    out.write(_LONE_SURROGATE.sub(_json_escape, line))
                    out.write("\n")
            os.replace(temporary, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        return len(entries)

    @classmethod
    def load_jsonl(cls, path: str | os.PathLike[str]) -> Transcript:
        """Read a transcript written by :meth:`export_jsonl`."""
        transcript = cls(limit=None)
        with open(path, encoding="utf-8") as source:
            for number, line in enumerate(source, 1):
                if not line.strip():
                    continue
                try:
                    data = json.loads(line)
                    transcript.entries.append(TranscriptEntry(**data))
                except (ValueError, TypeError) as exc:
                    raise ValueError(f"{path}:{number}: not a transcript entry: {exc}") from None
        if transcript.entries:
            transcript._next_seq = transcript.entries[-1].seq + 1
        return transcript


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"
