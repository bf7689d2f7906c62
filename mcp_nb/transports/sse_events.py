"""Server-sent events parsed with a size cap: bytes in, events out.  No I/O.

The HTML standard's event-stream format (lines ending in CRLF, LF or CR;
``event``, ``data``, ``id`` and ``retry`` fields; comments; a blank line ends
an event), read so that no event can grow past ``max_event_bytes``: an event
whose data outgrows the limit is discarded as it arrives, keeping only its two
ends (:class:`OversizedEvent`), so the transport can still tell which request
it answered.  Data stays bytes: decoding it is the JSON-RPC decoder's job.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..protocol.envelope import EDGE_BYTES

_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One event: its type, data, the stream's last event id and the ``retry`` it set."""

    event: str = "message"
    data: bytes = b""
    id: str | None = None
    retry: int | None = None


@dataclass(frozen=True, slots=True)
class OversizedEvent:
    """An event whose data went over the limit, already discarded: its size and two ends."""

    size: int
    head: bytes
    tail: bytes


class SseParser:
    """Feed it the bytes of one response; it returns the events each chunk completed."""

    def __init__(self, max_event_bytes: int) -> None:
        self.max_event_bytes = max_event_bytes
        self.last_event_id: str | None = None
        self._line: list[bytes] = []
        self._line_size = 0
        self._line_dropped: Edges | None = None  # the line being discarded, if it is
        self._after_cr = False  # a chunk ended in CR: a LF starting the next one is its end
        self._reset_event()

    def _reset_event(self) -> None:
        self._type = ""
        self._data: list[bytes] = []
        self._data_size = 0
        self._data_lines = 0
        self._retry: int | None = None
        self._fields = False
        self._dropped: Edges | None = None  # the event's data, once over the limit

    def feed(self, chunk: bytes) -> list[SseEvent | OversizedEvent]:
        events: list[SseEvent | OversizedEvent] = []
        if self._after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self._after_cr = chunk.endswith(b"\r")
        start = 0
        for end in _LINE_END.finditer(chunk):
            self._add_to_line(chunk[start:end.start()])
            self._end_line(events)
            start = end.end()
        self._add_to_line(chunk[start:])
        return events

    def _add_to_line(self, piece: bytes) -> None:
        if not piece:
            return
        if self._line_dropped is not None:
            self._line_dropped.add(piece)
            return
        self._line.append(piece)
        self._line_size += len(piece)
        if self._line_size > self.max_event_bytes:
            self._line_dropped = Edges.of(self._line)
            self._line.clear()
            self._line_size = 0

    def _end_line(self, events: list[SseEvent | OversizedEvent]) -> None:
        dropped, self._line_dropped = self._line_dropped, None
        line = b"".join(self._line)
        self._line.clear()
        self._line_size = 0
        if dropped is not None:  # only a data line is ever this long; its data counts
            self._fields = True
            if dropped.head.startswith(b"data:"):
                value = dropped.head[5:].removeprefix(b" ")
                dropped.size -= len(dropped.head) - len(value)
                dropped.head = value
            self._drop_data(dropped)
            return
        if not line:
            self._dispatch(events)
            return
        if line.startswith(b":"):
            return
        name, colon, value = line.partition(b":")
        if colon:
            value = value.removeprefix(b" ")
        self._fields = True
        if name == b"data":
            self._add_data(value)
        elif name == b"event":
            self._type = value.decode("utf-8", "replace")
        elif name == b"id":
            if b"\0" not in value:
                self.last_event_id = value.decode("utf-8", "replace")
        elif name == b"retry" and value.isdigit():
            self._retry = int(value)

    def _add_data(self, value: bytes) -> None:
        separator = b"\n" if self._data_lines else b""
        self._data_lines += 1
        if self._dropped is not None:
            self._dropped.add(separator + value)
            return
        self._data.append(value)
        self._data_size += len(separator) + len(value)
        if self._data_size > self.max_event_bytes:
            self._dropped = Edges.of([b"\n".join(self._data)])
            self._data.clear()

    def _drop_data(self, line: Edges) -> None:
        """A data line too long to keep: from now on only the event's two ends are."""
        separator = b"\n" if self._data_lines else b""
        self._data_lines += 1
        if self._dropped is None:
            self._dropped = Edges.of([b"\n".join(self._data)])
            self._data.clear()
        self._dropped.add(separator)
        self._dropped.join(line)

    def _dispatch(self, events: list[SseEvent | OversizedEvent]) -> None:
        if self._dropped is not None:
            dropped = self._dropped
            events.append(OversizedEvent(dropped.size, dropped.head, dropped.tail))
        elif self._fields:
            events.append(SseEvent(self._type or "message", b"\n".join(self._data),
                                   self.last_event_id, self._retry))
        self._reset_event()


class Edges:
    """The size and the first and last :data:`EDGE_BYTES` of bytes that were let go."""

    __slots__ = ("head", "size", "tail")

    def __init__(self) -> None:
        self.size = 0
        self.head = b""
        self.tail = b""

    @classmethod
    def of(cls, pieces: list[bytes]) -> Edges:
        edges = cls()
        for piece in pieces:
            edges.add(piece)
        return edges

    def add(self, piece: bytes) -> None:
        self.size += len(piece)
        if len(self.head) < EDGE_BYTES:
            self.head += piece[:EDGE_BYTES - len(self.head)]
        self.tail = (self.tail + piece[-EDGE_BYTES:])[-EDGE_BYTES:]

    def join(self, other: Edges) -> None:
        """Append what ``other`` let go (its middle is gone, so only its ends count)."""
        if len(self.head) < EDGE_BYTES:
            self.head += other.head[:EDGE_BYTES - len(self.head)]
        self.tail = (self.tail + other.tail)[-EDGE_BYTES:]
        self.size += other.size
