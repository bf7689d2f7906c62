"""Newline framing of the server's stdout: bytes in, message frames out.  No I/O.

Both pipe backends (:mod:`._asyncio_pipes` and :mod:`._anyio_pipes`) feed what
they read into a :class:`LineFramer`, so framing behaves the same whichever
event loop runs the session, and can be tested with plain byte strings.

stdout carries messages, one per line.  A line over the size limit is
*discarded* as it arrives (half a JSON message is worth nothing, and keeping it
would let a misbehaving server grow our memory without bound); only its first
and last few KiB are kept, so the transport can still tell which request the
lost message answered.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from ...protocol.envelope import EDGE_BYTES


@dataclass(frozen=True, slots=True)
class OversizedLine:
    """A stdout line over the limit, already discarded.

    It waits in the frame queue in its place among the messages, so the
    transport reports it in order, from the task that reads the frames.
    """

    #: Its length, or (``complete=False``: the pipe ended inside it) how much arrived.
    size: int
    complete: bool
    #: Its first and last :data:`EDGE_BYTES` bytes.
    head: bytes = b""
    tail: bytes = b""


class LineFramer:
    """Splits stdout into message frames, queued in :attr:`frames`.

    ``\\r\\n`` endings are accepted and blank lines skipped.  A line longer
    than ``max_line_bytes`` is dropped as soon as it is known to be too long
    (its bytes are skipped up to the next newline, keeping only its two ends)
    and an :class:`OversizedLine` takes its place in the queue once it ends.
    """

    __slots__ = ("_discarded_head", "_discarded_size", "_discarded_tail", "_discarding",
                 "_held_cr", "_partial", "_partial_size", "frames", "max_line_bytes")

    def __init__(self, max_line_bytes: int) -> None:
        self.max_line_bytes = max_line_bytes
        #: Complete frames (and notices of discarded ones), oldest first.
        self.frames: deque[bytes | OversizedLine] = deque()
        # The unfinished last line, as the chunks it arrived in: joining them
        # once, when its newline comes, keeps a long line linear to collect.
        self._partial: list[bytes] = []
        self._partial_size = 0
        # Inside an oversized line: bytes are counted and dropped up to the next newline.
        self._discarding = False
        self._discarded_size = 0
        self._discarded_head = b""
        self._discarded_tail = b""
        # A discarded line's chunk ended in "\r": the line's ending if "\n" comes next,
        # else a byte of the line.  Held until the next byte tells which.
        self._held_cr = False

    def feed(self, chunk: bytes) -> None:
        if b"\n" not in chunk:
            if self._discarding:
                self._skip_unfinished(chunk)
                return
            self._partial.append(chunk)
            self._partial_size += len(chunk)
            self._check_partial_size()
            return
        if self._discarding:
            # Up to the first newline: the rest of the oversized line.
            end_of_line, _, chunk = chunk.partition(b"\n")
            if self._held_cr and end_of_line:  # more of the line came: the "\r" was in it
                self._skip(b"\r")
            self._held_cr = False
            self._skip(end_of_line.removesuffix(b"\r"))
            self._end_discarded(complete=True)
        elif self._partial:
            self._partial.append(chunk)
            chunk = b"".join(self._partial)
            self._partial.clear()
        *complete, rest = chunk.split(b"\n")
        limit = self.max_line_bytes
        append = self.frames.append
        for line in complete:
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                continue
            if len(line) > limit:
                append(OversizedLine(len(line), True, line[:EDGE_BYTES], line[-EDGE_BYTES:]))
                continue
            append(line)
        if rest:
            self._partial.append(rest)
        self._partial_size = len(rest)
        self._check_partial_size()

    def end(self) -> None:
        """The pipe reached its end: a last message without its newline still counts."""
        if self._discarding:
            if self._held_cr:  # no "\n" came: as for a last line, the "\r" ends it
                self._held_cr = False
            self._end_discarded(complete=False)
        elif self._partial:
            line = b"".join(self._partial).removesuffix(b"\r")
            if line:
                self.frames.append(line)
        self._partial.clear()
        self._partial_size = 0

    def _check_partial_size(self) -> None:
        if self._partial_size <= self.max_line_bytes:
            return  # the common case, on every chunk read: nothing more to do
        # A trailing "\r" may be the line's ending: it counts once a byte other than
        # "\n" follows it.  (A line of exactly the limit must not be dropped for it.)
        ends_in_cr = self._partial[-1].endswith(b"\r")
        if self._partial_size - ends_in_cr > self.max_line_bytes:
            if ends_in_cr:
                last = self._partial.pop()[:-1]
                if last:
                    self._partial.append(last)
                self._partial_size -= 1
                self._held_cr = True
            # Its two ends, without joining the whole line (that would double its memory).
            head = tail = b""
            for chunk in self._partial:
                head += chunk[:EDGE_BYTES - len(head)]
                if len(head) == EDGE_BYTES:
                    break
            for chunk in reversed(self._partial):
                tail = chunk[-(EDGE_BYTES - len(tail)):] + tail
                if len(tail) == EDGE_BYTES:
                    break
            self._discarding = True
            self._discarded_size = self._partial_size
            self._discarded_head, self._discarded_tail = head, tail
            self._partial.clear()
            self._partial_size = 0

    def _skip_unfinished(self, piece: bytes) -> None:
        """More of a discarded line, its end not yet in sight."""
        if not piece:
            return
        if self._held_cr:
            self._skip(b"\r")
        self._held_cr = piece.endswith(b"\r")
        self._skip(piece[:-1] if self._held_cr else piece)

    def _skip(self, piece: bytes) -> None:
        self._discarded_size += len(piece)
        missing = EDGE_BYTES - len(self._discarded_head)
        if missing > 0:  # only with a limit below EDGE_BYTES
            self._discarded_head += piece[:missing]
        if len(piece) >= EDGE_BYTES:
            self._discarded_tail = piece[-EDGE_BYTES:]
        else:
            self._discarded_tail = (self._discarded_tail + piece)[-EDGE_BYTES:]

    def _end_discarded(self, *, complete: bool) -> None:
        self.frames.append(OversizedLine(self._discarded_size, complete,
                                         self._discarded_head, self._discarded_tail))
        self._discarding = False
        self._discarded_head = self._discarded_tail = b""
