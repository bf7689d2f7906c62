"""What the class tests read off a cell (remote_kernel.CellRun.text) is what a notebook shows."""

from __future__ import annotations

from remote_kernel import CellRun


def _stream(text: str, name: str = "stdout") -> dict:
    return {"msg_type": "stream", "content": {"name": name, "text": text}}


def test_one_print_split_over_two_stream_messages_reads_as_one_line() -> None:
    # ipykernel flushes stdout on a timer: a loaded machine can send one print in two parts
    # (a class run on CI once lost "✓ request 5 cancelled with your reason" this way).
    run = CellRun("print(...)", [_stream("✓ request"), _stream(" 5 cancelled\n")])
    assert "✓ request 5 cancelled" in run.text()


def test_different_streams_and_data_stay_apart() -> None:
    run = CellRun("...", [_stream("out"), _stream("err", "stderr"),
                          {"msg_type": "execute_result",
                           "content": {"data": {"text/plain": "'value'"}}},
                          _stream("after")])
    assert run.text().split("\n") == ["out", "err", "'value'", "after"]
