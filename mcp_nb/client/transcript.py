"""The wire transcript: every message both ways plus transport events.

Entries are appended on the hot path, so they are slotted dataclasses holding
references to what the session already has (the raw frame's size, the parsed
message) — nothing is re-serialised until someone exports.

Example::

    transcript = session.transcript
    for entry in transcript.filter(direction="recv"):
        print(entry.time, entry.label)
    transcript.export_jsonl("bug-report.jsonl")
    again = Transcript.load_jsonl("bug-report.jsonl")
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any, Literal

Direction = Literal["send", "recv", "event"]

ARROWS = {"send": "→", "recv": "←", "event": "·"}


@dataclass(slots=True)
class TranscriptEntry:
    #: 0-based position in the transcript.
    seq: int
    #: Seconds since the session started.
    time: float
    #: "send" (client → server), "recv" (server → client) or "event" (transport/session).
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
        """One-line summary, e.g. ``→ request tools/call #3``."""
        parts = [ARROWS[self.direction], self.kind]
        if self.method:
            parts.append(self.method)
        if self.id is not None:
            parts.append(f"#{self.id}")
        if self.direction == "event" and self.text:
            parts.append(self.text)
        if self.note:
            parts.append(f"[{self.note}]")
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


Observer = Callable[[TranscriptEntry], None]


class Transcript:
    """An append-only list of :class:`TranscriptEntry` with observers and JSON Lines I/O."""

    def __init__(self) -> None:
        self.entries: list[TranscriptEntry] = []
        self._observers: list[Observer] = []

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[TranscriptEntry]:
        return iter(self.entries)

    def __getitem__(self, index: int) -> TranscriptEntry:
        return self.entries[index]

    def subscribe(self, observer: Observer) -> Callable[[], None]:
        """Call ``observer`` for every new entry; returns a function that unsubscribes.

        Observers are called synchronously, possibly outside any task (a
        session handles responses in the transport's read callback where it
        can): keep them quick and free of awaits.
        """
        self._observers.append(observer)
        return lambda: self._observers.remove(observer)

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
        entry = TranscriptEntry(
            len(self.entries), time, direction, kind, state, size, method, id, message, text, note
        )
        self.entries.append(entry)
        if self._observers:
            for observer in list(self._observers):
                observer(entry)
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
        """Write one JSON object per line; returns the number of entries written."""
        with open(path, "w", encoding="utf-8") as out:
            for entry in self.entries:
                out.write(json.dumps(entry.to_dict(), ensure_ascii=False, default=repr))
                out.write("\n")
        return len(self.entries)

    @classmethod
    def load_jsonl(cls, path: str | os.PathLike[str]) -> Transcript:
        """Read a transcript written by :meth:`export_jsonl`."""
        transcript = cls()
        with open(path, encoding="utf-8") as source:
            for number, line in enumerate(source, 1):
                if not line.strip():
                    continue
                try:
                    data = json.loads(line)
                    transcript.entries.append(TranscriptEntry(**data))
                except (ValueError, TypeError) as exc:
                    raise ValueError(f"{path}:{number}: not a transcript entry: {exc}") from None
        return transcript
