"""Newline framing of the server's pipes (mcp_nb.transports.lines): bytes in, frames out."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from mcp_nb.transports.lines import LineFramer, LogLines, OversizedLine


def frame_all(chunks: list[bytes], limit: int = 100) -> list[bytes | OversizedLine]:
    framer = LineFramer(limit)
    for chunk in chunks:
        framer.feed(chunk)
    framer.end()
    return list(framer.frames)


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({0, len(data), *(cut % (len(data) + 1) for cut in cuts)})
    return [data[start:end] for start, end in itertools.pairwise(points)]


STREAM = b'{"a":1}\n\r\n\n{"b":2}\r\n' + b"x" * 150 + b'\n{"c":3}\n' + b"y" * 120 + b'{"d"'


def test_frames_blank_lines_crlf_oversize_and_a_last_line_without_newline() -> None:
    assert frame_all([STREAM]) == [
        b'{"a":1}', b'{"b":2}', OversizedLine(150, complete=True), b'{"c":3}',
        # The unterminated tail outgrew the limit before the pipe ended: dropped too.
        OversizedLine(124, complete=False),
    ]


def test_a_message_without_its_newline_at_the_end_of_the_pipe_still_counts() -> None:
    assert frame_all([b'{"a":1}\n{"b":', b"2}"]) == [b'{"a":1}', b'{"b":2}']
    assert frame_all([b'{"a":1}\r']) == [b'{"a":1}']


@given(st.lists(st.integers(min_value=0), max_size=12))
def test_where_the_chunks_split_the_stream_changes_nothing(cuts: list[int]) -> None:
    # Each oversized line is reported once, in its place; whether it was seen whole
    # or dropped while still arriving (and so its size) depends on the chunks.
    def comparable(frames: list[bytes | OversizedLine]) -> list[object]:
        return [f if isinstance(f, bytes) else "dropped" for f in frames]

    assert comparable(frame_all(split_at(STREAM, cuts))) == comparable(frame_all([STREAM]))


def test_an_oversized_line_is_dropped_as_it_grows_and_the_next_line_survives() -> None:
    framer = LineFramer(10)
    for _ in range(1000):  # far more than the limit, a byte at a time: memory stays bounded
        framer.feed(b"z")
        assert framer._partial_size <= 11
    framer.feed(b'zz\n{"ok":1}\n')
    assert list(framer.frames) == [OversizedLine(11, complete=False), b'{"ok":1}']


def test_stderr_lines_are_cut_at_the_limit_not_dropped() -> None:
    lines = LogLines(5)
    assert lines.feed(b"one\ntw") == [b"one"]
    # Carriage returns stay: the transport strips them when it records a line.
    assert lines.feed(b"o\r\n" + b"x" * 12) == [b"two\r", b"xxxxx"]
    assert lines.feed(b"tail") == []
    assert lines.end() == [b"tail"]
    assert lines.end() == []
