"""The server's stderr, bounded: lines cut at a limit, a ring of the latest, counts of the rest.

stderr is the server's log, read by people, and nothing stops a server from
writing it without end (a debug flood, one 200 MB line).  So memory spent on it
is bounded twice: a line longer than ``line_bytes`` is cut there (the rest is
counted and skipped as it arrives, never held), and only the last ``max_lines``
lines are kept.  What was dropped is counted, so a view can say so.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Protocol

#: Default cap on one stderr line: a long traceback line fits, a megabyte of JSON does not.
DEFAULT_STDERR_LINE_BYTES = 8192


class StderrSink(Protocol):
    """Where a pipe backend puts what the server writes to stderr (a :class:`StderrLog`).

    Declared here, beside what implements it, so that the backends depend on
    this module and not on :mod:`.backends`, which chooses between them.
    """

    def feed(self, chunk: bytes) -> None: ...

    def end(self) -> None: ...


class StderrLog:
    """Splits stderr into lines and keeps the latest, calling ``on_line`` for each as it ends.

    >>> log = StderrLog(max_lines=2, line_bytes=5)
    >>> log.feed(b"one\\ntwo\\nthree and more\\nfour")
    >>> log.end()
    >>> list(log.lines), log.total_lines, log.evicted_lines, log.cut_lines, log.cut_bytes
    (['three … (9 more bytes cut)', 'four'], 4, 2, 1, 9)
    """

    __slots__ = ("_cut_size", "_partial", "_partial_size", "cut_bytes", "cut_lines",
                 "line_bytes", "lines", "on_line", "total_lines")

    def __init__(self, max_lines: int = 500, line_bytes: int = DEFAULT_STDERR_LINE_BYTES,
                 on_line: Callable[[str], None] | None = None) -> None:
        #: The last ``max_lines`` lines, oldest first (a line being written is not here yet).
        self.lines: deque[str] = deque(maxlen=max_lines)
        self.line_bytes = line_bytes
        self.on_line = on_line
        #: Lines seen, including the ones no longer kept.
        self.total_lines = 0
        #: Lines cut at ``line_bytes``, and how many bytes were cut from them.
        self.cut_lines = 0
        self.cut_bytes = 0
        self._partial: list[bytes] = []
        self._partial_size = 0
        # Bytes cut from the line being written (its kept start is in _partial).
        self._cut_size = 0

    @property
    def evicted_lines(self) -> int:
        """Lines pushed out of the ring by newer ones."""
        return self.total_lines - len(self.lines)

    def feed(self, chunk: bytes) -> None:
        *ended, rest = chunk.split(b"\n")
        for piece in ended:
            self._add_to_partial(piece)
            self._end_line()
        self._add_to_partial(rest)

    def end(self) -> None:
        """The pipe reached its end: the unfinished last line, if any, counts."""
        if self._partial_size or self._cut_size:
            self._end_line()

    def _add_to_partial(self, piece: bytes) -> None:
        room = self.line_bytes - self._partial_size
        if len(piece) > room:
            self._cut_size += len(piece) - max(room, 0)
            piece = piece[:max(room, 0)]
        if piece:
            self._partial.append(piece)
            self._partial_size += len(piece)

    def _end_line(self) -> None:
        raw = b"".join(self._partial)
        self._partial.clear()
        self._partial_size = 0
        line = raw.removesuffix(b"\r").decode("utf-8", "replace")
        if self._cut_size:
            self.cut_lines += 1
            self.cut_bytes += self._cut_size
            line += f" … ({self._cut_size} more bytes cut)"
            self._cut_size = 0
        self.total_lines += 1
        self.lines.append(line)
        if self.on_line is not None:
            self.on_line(line)
