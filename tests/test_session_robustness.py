"""Whatever a peer sends or an observer does, the session neither hangs nor dies (issue 14).

Observers and callbacks that raise are contained and recorded; a lone surrogate
survives the transcript and its export; a response the client rejects fails its
request at once with the real cause; the transcript keeps only its most recent
entries.  Every server here is a real subprocess writing the exact bytes a test
needs.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_nb.client import (
    ClientSession,
    HttpRequestFailed,
    ResponseRejected,
    ServerExited,
    Transcript,
)
from mcp_nb.transports import StdioTransport
from mcp_nb.transports.base import TransportEvent

pytestmark = pytest.mark.anyio

# Writes, for each request, the bytes its tool name asks for (as Python bytes literals in
# ANSWERS, with {id} for the request id), so a test can send what no JSON library would.
BYTES_SERVER = textwrap.dedent(r'''
    import json, sys
    ANSWERS = json.loads(sys.argv[1])
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        msg = json.loads(line)
        method, id = msg.get("method"), msg.get("id")
        key = msg["params"]["name"] if method == "tools/call" else method
        if id is None or key not in ANSWERS:
            continue
        for chunk in ANSWERS[key]:
            out.write(eval(chunk).replace(b"{id}", str(id).encode()))
        out.flush()
''')

INITIALIZE = ('b\'{"jsonrpc":"2.0","id":{id},"result":{"protocolVersion":"2025-11-25",'
              '"capabilities":{"tools":{},"logging":{}},'
              '"serverInfo":{"name":"half \\\\ud83d emoji","version":"1"}}}\\n\'')
ECHO = 'b\'{"jsonrpc":"2.0","id":{id},"result":{"content":[{"type":"text","text":"ok"}]}}\\n\''


def server(**answers: list[str]) -> StdioTransport:
    table = {"initialize": [INITIALIZE], "echo": [ECHO], **answers}
    return StdioTransport([sys.executable, "-c", BYTES_SERVER, json.dumps(table)])


async def test_a_lone_surrogate_and_raising_observers_do_not_hang_or_kill_connect(
        tmp_path: Path) -> None:
    def raise_on_transition(record: Any) -> None:
        raise ValueError("transition observer broke")

    def raise_on_entry(entry: Any) -> None:
        # What a widget did: send the entry's text somewhere that insists on UTF-8.
        json.dumps(entry.message, ensure_ascii=False).encode("utf-8")

    async with ClientSession(server(), timeout=30) as session:
        session.on_transition(raise_on_transition)
        session.transcript.subscribe(raise_on_entry)
        with anyio.fail_after(10):  # the old behaviour: no answer until interrupted
            await session.connect()
            assert (await session.call_tool("echo")).text == "ok"
        assert session.server_info is not None
        assert session.server_info.name == "half \ud83d emoji"
        failed = {f.detail.split(" raised ")[0] for f in session.findings
                  if f.rule.id == "observer-failed"}
        assert failed == {f"on_transition callback {raise_on_transition.__qualname__}",
                          f"transcript observer {raise_on_entry.__qualname__}"}

        export = tmp_path / "t.jsonl"
        count = session.transcript.export_jsonl(export)
        assert count == len(session.transcript)
        export.read_bytes().decode("utf-8")  # valid UTF-8 throughout
        loaded = Transcript.load_jsonl(export)
        answer = next(e for e in loaded if e.kind == "response" and e.method == "initialize")
        assert answer.message is not None
        assert answer.message["result"]["serverInfo"]["name"] == "half \ud83d emoji"
        assert os.listdir(tmp_path) == ["t.jsonl"]


async def test_callbacks_that_raise_sync_or_async_are_contained() -> None:
    progress = textwrap.dedent('''\
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":{id},"progress":1}}\\n{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\\n{"jsonrpc":"2.0","id":{id},"result":{"content":[]}}\\n'
    ''').strip()

    def on_progress(*args: Any) -> None:
        raise KeyError("progress")

    async def on_notification(message: Any) -> None:
        raise RuntimeError("async notification callback")

    async with ClientSession(server(slow=[progress])) as session:
        await session.connect()
        session.on_notification(on_notification)
        with anyio.fail_after(10):
            await session.call_tool("slow", on_progress=on_progress)
            assert (await session.call_tool("echo")).text == "ok"
            while len([f for f in session.findings if f.rule.id == "observer-failed"]) < 2:
                await anyio.sleep(0.01)  # the async callback runs in a task of its own
        details = sorted(f.detail for f in session.findings if f.rule.id == "observer-failed")
        assert details[0].startswith("on_notification callback")
        assert "RuntimeError: async notification callback" in details[0]
        assert details[1].startswith("on_progress callback")
        assert session.state.value == "Operating"


async def test_a_finding_callback_that_raises_is_reported_once_not_forever() -> None:
    calls = []

    def bad(finding: Any) -> None:
        calls.append(finding.rule.id)
        raise RuntimeError("bad finding callback")

    unknown = 'b\'{"jsonrpc":"2.0","id":999,"result":{}}\\n' + ECHO[2:]
    async with ClientSession(server(stray=[unknown])) as session:
        await session.connect()
        session.on_finding(bad)
        with anyio.fail_after(10):
            await session.call_tool("stray")
            await session.call_tool("stray")
        assert calls.count("response-to-unknown-id") == 2
        assert [f.rule.id for f in session.findings].count("observer-failed") == 1


@pytest.mark.parametrize(("answer", "cause"), [
    ('b\'{"jsonrpc":"2.0","id":{id},"result":{},"error":{"code":1,"message":"m"}}\\n\'',
     "malformed"),
    ('b\'[{"jsonrpc":"2.0","id":{id},"result":{}}]\\n\'', "malformed"),
    ('b\'{"jsonrpc":"2.0","id":{id},"result":{"content":[{"type":"text","text":"\\xff"}]}}\\n\'',
     "invalid-utf8"),
    ('b\'{"result":{"content":[{"type":"text","text":"\' + b"x" * 5000 + '
     'b\'"}]},"jsonrpc":"2.0","id":{id}}\\n\'', "too-large"),
])
async def test_a_rejected_answer_fails_its_request_at_once(answer: str, cause: str) -> None:
    async with ClientSession(server(bad=[answer]), timeout=60,
                             max_message_bytes=4000) as session:
        await session.connect()
        with anyio.fail_after(10):  # not the 60 s timeout
            with pytest.raises(ResponseRejected) as caught:
                await session.call_tool("bad")
            assert (await session.call_tool("echo")).text == "ok"  # the session goes on
        assert caught.value.cause == cause
        assert caught.value.method == "tools/call"
        if cause == "too-large":
            assert caught.value.limit == 4000
            assert caught.value.option == "max_message_bytes"
            assert "max_message_bytes" in str(caught.value)
            too_large = [f for f in session.findings if f.rule.id == "message-too-large"]
            assert too_large[0].rule.kind == "policy"
            assert "client policy" in str(too_large[0])


async def test_a_server_request_with_a_bad_shape_fails_no_request_of_ours() -> None:
    # Its id (2) is the server's own, equal by chance to our tools/call's id.
    request = 'b\'{"jsonrpc":"2.0","id":{id},"method":"roots/list","params":[1]}\\n\''
    async with ClientSession(server(odd=[request]), timeout=1) as session:
        await session.connect()
        with pytest.raises(Exception) as caught:
            await session.call_tool("odd")
        assert not isinstance(caught.value, ResponseRejected)


async def test_a_request_failed_event_fails_that_request_and_keeps_the_session() -> None:
    async with ClientSession(server(silent=[]), timeout=60) as session:
        await session.connect()
        failures: list[BaseException] = []

        async def call() -> None:
            try:
                await session.call_tool("silent")
            except HttpRequestFailed as exc:
                failures.append(exc)

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                group.start_soon(call)
                while not session.in_flight:
                    await anyio.sleep(0.01)
                request_id = session.in_flight[0][0]
                # What an HTTP transport emits for one failed POST (the agreed contract).
                session._parts.inbound.on_transport_event(TransportEvent(
                    "request failed", "POST /mcp → 500 Internal Server Error",
                    {"request_id": request_id, "cause": "http-error", "status": 500,
                     "limit": None, "option": None}))
            assert (await session.call_tool("echo")).text == "ok"
        assert failures[0].status == 500  # type: ignore[attr-defined]
        assert "500" in str(failures[0])


async def test_every_waiter_is_released_when_the_server_dies() -> None:
    die = "__import__('os')._exit(3)"
    async with ClientSession(server(silent=[], die=[die]), timeout=60) as session:
        await session.connect()
        errors: list[BaseException] = []

        async def call(name: str) -> None:
            try:
                await session.call_tool(name)
            except ServerExited as exc:
                errors.append(exc)

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                for _ in range(3):
                    group.start_soon(call, "silent")
                while len(session.in_flight) < 3:
                    await anyio.sleep(0.01)
                group.start_soon(call, "die")
        assert len(errors) == 4


async def test_the_transcript_keeps_the_most_recent_entries_and_counts_the_rest() -> None:
    flood = ('b\'{"jsonrpc":"2.0","method":"notifications/message","params":'
             '{"level":"info","data":"x"}}\\n\' * 1000')
    async with ClientSession(server(flood=[flood, ECHO]), transcript_limit=100) as session:
        await session.connect()
        with anyio.fail_after(20):
            await session.call_tool("flood")
        transcript = session.transcript
        assert 100 <= len(transcript) <= 100 + 100 // 8
        assert transcript.dropped == transcript.next_seq - len(transcript)
        assert transcript.dropped_by_kind["notification notifications/message"] >= 880
        assert transcript[-1].kind == "response"
        assert [e.seq for e in transcript] == list(range(transcript[0].seq,
                                                         transcript.next_seq))
        assert len(session.log_messages) <= 112
        assert session.log_messages.dropped + len(session.log_messages) == 1000  # type: ignore[attr-defined]


def test_plain_text_views_neutralise_escapes_bell_and_bidi() -> None:
    transcript = Transcript()
    entry = transcript.add(0.0, "event", "stderr", "Operating",
                           text="\x1b[2J\x1b[31mred\x07 \u202egnp.exe \ud800")
    assert entry.label == ("· stderr \\u001b[2J\\u001b[31mred\\u0007 \\u202egnp.exe "
                           "\\ud800")


def test_a_failed_export_leaves_no_partial_file(tmp_path: Path) -> None:
    class Unprintable:
        def __repr__(self) -> str:
            raise RuntimeError("cannot show this")

    transcript = Transcript()
    for n in range(3):
        transcript.add(float(n), "recv", "notification", "Operating", message={"n": n})
    transcript.add(3.0, "recv", "notification", "Operating", message={"x": Unprintable()})
    target = tmp_path / "out.jsonl"
    target.write_text("previous export\n")
    with pytest.raises(RuntimeError, match="cannot show this"):
        transcript.export_jsonl(target)
    assert target.read_text() == "previous export\n"
    assert os.listdir(tmp_path) == ["out.jsonl"]


def test_the_flood_benchmark_runs_and_stays_bounded() -> None:
    import subprocess

    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, str(root / "benchmarks" / "flood.py"),
                           "--count", "3000", "--limit", "100"],
                          capture_output=True, text=True, timeout=120, check=True)
    figures = json.loads(done.stdout)
    assert figures["notifications"] == 3000
    assert figures["transcript_kept"] <= 112
    assert figures["transcript_dropped"]["notification notifications/message"] >= 2000


@pytest.mark.parametrize("megabytes", [10, 100])
async def test_a_big_result_succeeds_under_the_default_limit_and_a_huge_one_fails_fast(
        megabytes: int) -> None:
    big = ('b\'{"jsonrpc":"2.0","id":{id},"result":{"content":[{"type":"text","text":"\' + '
           f'b"x" * {megabytes * 2**20} + ' 'b\'"}]}}\\n\'')
    async with ClientSession(server(big=[big]), timeout=120) as session:
        await session.connect()
        with anyio.fail_after(60):  # far below the request's timeout
            if megabytes * 2**20 < session.max_message_bytes:
                assert len((await session.call_tool("big")).text or "") == megabytes * 2**20
            else:
                with pytest.raises(ResponseRejected) as caught:
                    await session.call_tool("big")
                assert caught.value.cause == "too-large"
                assert caught.value.option == "max_message_bytes"
                assert "max_message_bytes" in str(caught.value)
            assert (await session.call_tool("echo")).text == "ok"
