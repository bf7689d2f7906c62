"""Newline framing of the server's pipes (mcp_nb.transports.stdio.framing): bytes in, frames out."""

from __future__ import annotations

import itertools

from hypothesis import example, given
from hypothesis import strategies as st

from mcp_nb.protocol.envelope import EDGE_BYTES
from mcp_nb.transports.stdio.framing import LineFramer, OversizedLine


def frame_all(chunks: list[bytes], limit: int = 100) -> list[bytes | tuple[int, bool]]:
    """The frames, a discarded line shown as its (size, complete)."""
    framer = LineFramer(limit)
    for chunk in chunks:
        framer.feed(chunk)
    framer.end()
    return [frame if isinstance(frame, bytes) else (frame.size, frame.complete)
            for frame in framer.frames]


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({0, len(data), *(cut % (len(data) + 1) for cut in cuts)})
    return [data[start:end] for start, end in itertools.pairwise(points)]


STREAM = b'{"a":1}\n\r\n\n{"b":2}\r\n' + b"x" * 150 + b'\n{"c":3}\n' + b"y" * 120 + b'{"d"'


def test_frames_blank_lines_crlf_oversize_and_a_last_line_without_newline() -> None:
    assert frame_all([STREAM]) == [
        b'{"a":1}', b'{"b":2}', (150, True), b'{"c":3}',
        # The unterminated tail outgrew the limit before the pipe ended: dropped too.
        (124, False),
    ]


def test_a_message_without_its_newline_at_the_end_of_the_pipe_still_counts() -> None:
    assert frame_all([b'{"a":1}\n{"b":', b"2}"]) == [b'{"a":1}', b'{"b":2}']
    assert frame_all([b'{"a":1}\r']) == [b'{"a":1}']


@given(st.lists(st.integers(min_value=0), max_size=12))
def test_where_the_chunks_split_the_stream_changes_nothing(cuts: list[int]) -> None:
    # Each oversized line is reported once, in its place, with its whole size.
    assert frame_all(split_at(STREAM, cuts)) == frame_all([STREAM])


def test_an_oversized_line_is_dropped_as_it_grows_and_the_next_line_survives() -> None:
    framer = LineFramer(10)
    for _ in range(1000):  # far more than the limit, a byte at a time: memory stays bounded
        framer.feed(b"z")
        assert framer._partial_size <= 11
    assert not framer.frames  # reported once it ends, in its place
    framer.feed(b'zz\n{"ok":1}\n')
    assert list(framer.frames) == [OversizedLine(1002, True, b"z" * 1002, b"z" * 1002),
                                   b'{"ok":1}']


@given(st.lists(st.integers(min_value=0), max_size=8))
# The "\r" of its ending at the end of one chunk, the "\n" at the start of the next (found
# by hypothesis: the "\r" was counted in the size and kept in the tail).
@example([10_019 + 1])
def test_a_discarded_line_keeps_its_two_ends_however_it_arrives(cuts: list[int]) -> None:
    line = b'{"id":7,"result":' + b"x" * 10_000 + b'"}'
    framer = LineFramer(1000)
    for chunk in split_at(line + b"\r\n", cuts):
        framer.feed(chunk)
    (dropped,) = framer.frames
    assert dropped == OversizedLine(len(line), True, line[:EDGE_BYTES], line[-EDGE_BYTES:])


@given(st.lists(st.integers(min_value=0), max_size=6))
def test_a_carriage_return_inside_a_discarded_line_is_part_of_it(cuts: list[int]) -> None:
    line = b"a" * 600 + b"\r" + b"b" * 600
    framer = LineFramer(1000)
    for chunk in split_at(line + b"\n", cuts):
        framer.feed(chunk)
    (dropped,) = framer.frames
    assert dropped == OversizedLine(len(line), True, line[:EDGE_BYTES], line[-EDGE_BYTES:])


def test_a_line_of_exactly_the_limit_is_kept_when_its_ending_is_split() -> None:
    line = b"x" * 1000
    framer = LineFramer(1000)
    framer.feed(line + b"\r")
    framer.feed(b"\n")
    assert list(framer.frames) == [line]
