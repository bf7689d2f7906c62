"""Server-sent events parsed with a size cap (transports.sse_events): bytes in, events out."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from mcp_nb.protocol.envelope import response_id_from_edges
from mcp_nb.transports.sse_events import OversizedEvent, SseEvent, SseParser


def parse(chunks: list[bytes], limit: int = 1000) -> list[SseEvent | OversizedEvent]:
    parser = SseParser(limit)
    return [event for chunk in chunks for event in parser.feed(chunk)]


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({0, len(data), *(cut % (len(data) + 1) for cut in cuts)})
    return [data[start:end] for start, end in itertools.pairwise(points)]


BIG = b'{"jsonrpc":"2.0","id":7,"result":{"text":"' + b"x" * 5000 + b'"}}'
STREAM = (b"id: 1\r\nretry: 500\r\n\r\n"           # a priming event: id and retry, no data
          b": a comment\n"
          b"event: message\ndata: {\"a\":\ndata: 1}\n\n"  # data over two lines
          b"data: " + BIG + b"\n\n"                  # over the limit
          b"id: 2\rdata: {\"b\":2}\r\r"              # CR line ends
          b"event: other\ndata: x\n\n"
          b"data: never ended")


def test_fields_comments_line_ends_and_an_oversized_event() -> None:
    events = parse([STREAM])
    assert events[:2] + events[3:] == [
        SseEvent("message", b"", "1", 500),
        SseEvent("message", b'{"a":\n1}', "1", None),
        SseEvent("message", b'{"b":2}', "2", None),
        SseEvent("other", b"x", "2", None),
    ]
    dropped = events[2]
    assert isinstance(dropped, OversizedEvent) and dropped.size == len(BIG)
    # Its ends, less the "data: " its line began with.
    assert BIG.startswith(dropped.head) and len(dropped.head) >= 4000
    assert dropped.tail == BIG[-4096:]


@given(st.lists(st.integers(min_value=0), max_size=12))
def test_where_the_chunks_split_the_stream_changes_nothing(cuts: list[int]) -> None:
    assert parse(split_at(STREAM, cuts)) == parse([STREAM])


def test_data_over_the_limit_in_many_lines_is_dropped_as_it_grows() -> None:
    parser = SseParser(100)
    for _ in range(1000):
        assert parser.feed(b"data: " + b"y" * 50 + b"\n") == []
        assert len(parser._data) <= 2  # memory stays bounded
    (dropped,) = parser.feed(b"data: end\n\n")
    assert isinstance(dropped, OversizedEvent) and dropped.size == 1000 * 51 + 3
    assert dropped.tail.endswith(b"y\nend")


def test_the_oversized_events_ends_still_name_the_request() -> None:
    (dropped,) = parse([b"data: " + BIG + b"\n\n"], limit=100)
    assert isinstance(dropped, OversizedEvent)
    assert response_id_from_edges(dropped.head, dropped.tail) == 7
