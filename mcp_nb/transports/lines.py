"""Newline framing of a child's pipes: bytes in, lines out.  No I/O.

Both stdio pipe backends (:mod:`.stdio_asyncio` and :mod:`.stdio_anyio`) feed
what they read into these splitters, so framing behaves the same whichever
event loop runs the session, and can be tested with plain byte strings.

stdout carries messages: one per line, and a line over the size limit is
*discarded* (half a JSON message is worth nothing, and keeping it would let a
misbehaving server grow our memory without bound).  stderr is the server's log,
read by people: an over-long line is *cut* at the limit and kept.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class OversizedLine:
    """A stdout line over the limit, already discarded.

    It waits in the frame queue in its place among the messages, so the
    transport reports it in order, from the task that reads the frames.
    """

    #: Its length, or (``complete=False``) how much of it arrived before it was dropped.
    size: int
    complete: bool


class LineFramer:
    """Splits stdout into message frames, queued in :attr:`frames`.

    ``\\r\\n`` endings are accepted and blank lines skipped.  A line longer
    than ``max_line_bytes`` is dropped as soon as it is known to be too long
    (its tail is skipped up to the next newline) and an :class:`OversizedLine`
    takes its place in the queue.
    """

    __slots__ = ("_discarding", "_partial", "_partial_size", "frames", "max_line_bytes")

    def __init__(self, max_line_bytes: int) -> None:
        self.max_line_bytes = max_line_bytes
        #: Complete frames (and notices of discarded ones), oldest first.
        self.frames: deque[bytes | OversizedLine] = deque()
        # The unfinished last line, as the chunks it arrived in: joining them
        # once, when its newline comes, keeps a long line linear to collect.
        self._partial: list[bytes] = []
        self._partial_size = 0
        # Inside an oversized line: drop bytes up to the next newline.
        self._discarding = False

    def feed(self, chunk: bytes) -> None:
        if b"\n" not in chunk:
            self._partial.append(chunk)
            self._partial_size += len(chunk)
            self._check_partial_size()
            return
        if self._partial:
            self._partial.append(chunk)
            chunk = b"".join(self._partial)
            self._partial.clear()
        *complete, rest = chunk.split(b"\n")
        if self._discarding:
            # The first "line" is the tail of an oversized message: drop it.
            del complete[0]
            self._discarding = False
        limit = self.max_line_bytes
        append = self.frames.append
        for line in complete:
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                continue
            if len(line) > limit:
                append(OversizedLine(len(line), complete=True))
                continue
            append(line)
        if rest:
            self._partial.append(rest)
        self._partial_size = len(rest)
        self._check_partial_size()

    def end(self) -> None:
        """The pipe reached its end: a last message without its newline still counts."""
        if self._partial and not self._discarding:
            line = b"".join(self._partial).removesuffix(b"\r")
            if line:
                self.frames.append(line)
        self._partial.clear()
        self._partial_size = 0
        self._discarding = False

    def _check_partial_size(self) -> None:
        if self._partial_size > self.max_line_bytes:
            if not self._discarding:
                self.frames.append(OversizedLine(self._partial_size, complete=False))
            self._partial.clear()
            self._partial_size = 0
            self._discarding = True


class LogLines:
    """Splits stderr into lines; a line over ``max_line_bytes`` is cut there and kept."""

    __slots__ = ("_partial", "max_line_bytes")

    def __init__(self, max_line_bytes: int) -> None:
        self.max_line_bytes = max_line_bytes
        self._partial = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        *lines, self._partial = (self._partial + chunk).split(b"\n")
        if len(self._partial) > self.max_line_bytes:
            lines.append(self._partial[: self.max_line_bytes])
            self._partial = b""
        return lines

    def end(self) -> list[bytes]:
        """The pipe reached its end: the unfinished last line, if any."""
        partial, self._partial = self._partial, b""
        return [partial] if partial else []
