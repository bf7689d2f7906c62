"""Responses handled in the stdio pipe's read callback, and what must not change because of it.

On asyncio the session takes a response (or a notification) right where the
transport read it and resumes the caller there (``Inbound.take_inline`` in mcp_nb.client.inbound);
server requests and malformed frames still go through the reader task.  These
tests hold it to the rules the reader task kept: wire order, one decode per
frame, errors not swallowed.
Each runs twice: with the inline path, and with the reader task alone and
``anyio.Event`` waits (what the session does on other event loops, e.g. trio).
"""

from __future__ import annotations

import asyncio
import textwrap
from typing import Any

import anyio
import pytest
from support import LoopIterations, python_command

from mcp_nb.client import ClientSession, RequestCancelled, RequestTimeout
from mcp_nb.client import inbound as inbound_module
from mcp_nb.client import lifetime as lifetime_module
from mcp_nb.transports import StdioTransport

pytestmark = pytest.mark.anyio

# Answers initialize, then tools/call by the tool's name; every reply of one request is
# written with one write() (one read on our side), so the order inside a read matters.
SCRIPTED_SERVER = textwrap.dedent(r'''
    import json, sys

    def out(*messages):
        sys.stdout.write("".join(json.dumps(m) + "\n" for m in messages))
        sys.stdout.flush()

    def result(id, text):
        return {"jsonrpc": "2.0", "id": id,
                "result": {"content": [{"type": "text", "text": text}]}}

    held = None
    for line in sys.stdin:
        msg = json.loads(line)
        method, id = msg.get("method"), msg.get("id")
        if method == "initialize":
            out({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": "2025-11-25", "serverInfo": {"name": "scripted", "version": "1"},
                "capabilities": {"tools": {}, "logging": {}}}})
        elif method == "tools/call":
            name = msg["params"]["name"]
            token = msg["params"].get("_meta", {}).get("progressToken")
            if name == "progress_then_result":
                out({"jsonrpc": "2.0", "method": "notifications/progress",
                     "params": {"progressToken": token, "progress": 1, "total": 2}},
                    result(id, "done"))
            elif name == "result_then_log":
                out(result(id, "done"),
                    {"jsonrpc": "2.0", "method": "notifications/message",
                     "params": {"level": "info", "data": "after"}})
            elif name == "ping_then_result":
                out({"jsonrpc": "2.0", "id": "s1", "method": "ping"}, result(id, "done"))
            elif name == "pair":  # the first waits for the second; both answered in one write
                if held is None:
                    held = id
                else:
                    out(result(held, "first"), result(id, "second"))
                    held = None
            elif name == "silent":
                pass
            else:
                out(result(id, name))
''')


@pytest.fixture(params=["inline", "reader task"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "reader task":
        # What the session does where asyncio does not run it: no inline offer, anyio waits.
        monkeypatch.setattr(lifetime_module, "_running_asyncio_loop", lambda: None)
    return str(request.param)


def scripted() -> ClientSession:
    return ClientSession(StdioTransport(python_command(SCRIPTED_SERVER)), timeout=5)


def wire(session: ClientSession) -> list[tuple[str, str | None]]:
    """(direction + kind, method) of every message, in transcript order."""
    return [(f"{e.direction} {e.kind}", e.method) for e in session.transcript
            if e.direction != "event"]


def text_of(result: Any) -> str:
    return str(result.content[0]["text"])


async def test_the_inline_path_is_taken_only_on_asyncio_stdio(path: str) -> None:
    async with scripted() as session:
        await session.connect()
        waiter = session._parts.table.new_waiter()
        offered = session.transport._server._stdout_reader.take_inline  # type: ignore[attr-defined]
    if path == "inline":
        assert type(waiter).__name__ == "InlineWakeup"
        assert offered is not None
    else:
        assert isinstance(waiter, anyio.Event)
        assert offered is None


async def test_a_round_trip_takes_one_event_loop_iteration_inline(path: str) -> None:
    """A count, not a timing: the read callback resumes the caller (the reader task: two)."""
    async with scripted() as session:
        await session.connect()
        for _ in range(10):
            await session.call_tool("echo")
        with LoopIterations() as iterations:
            for _ in range(200):
                assert text_of(await session.call_tool("echo")) == "echo"
    per_call = 1 if path == "inline" else 2
    # A response that arrives in two reads costs one more; allow a few.
    assert 200 * per_call <= iterations.count <= 200 * per_call + 20


async def test_progress_read_with_its_response_reaches_the_callback_before_the_result(
        path: str) -> None:
    seen: list[str] = []
    async with scripted() as session:
        await session.connect()
        result = await session.call_tool(
            "progress_then_result",
            on_progress=lambda progress, total, message: seen.append(f"progress {progress}"))
        seen.append(f"result {text_of(result)}")
        assert seen == ["progress 1", "result done"]
        assert wire(session)[-2:] == [("recv notification", "notifications/progress"),
                                      ("recv response", "tools/call")]
        assert session.findings == []


async def test_a_notification_read_after_a_response_keeps_its_place(path: str) -> None:
    async with scripted() as session:
        await session.connect()
        assert text_of(await session.call_tool("result_then_log")) == "done"
        with anyio.fail_after(5):
            while not session.log_messages:
                await anyio.sleep(0.01)
        assert session.log_messages == [{"level": "info", "data": "after"}]
        assert wire(session)[-2:] == [("recv response", "tools/call"),
                                      ("recv notification", "notifications/message")]


async def test_notification_callbacks_run_and_async_ones_get_a_task_of_their_own(
        path: str) -> None:
    seen: list[tuple[str, bool]] = []
    ran = anyio.Event()

    def sync_callback(message: Any) -> None:
        seen.append((message.method, False))

    async def async_callback(message: Any) -> None:
        await anyio.sleep(0)  # really a task: it can await
        seen.append((message.method, asyncio.current_task() is not None))
        ran.set()

    async with scripted() as session:
        await session.connect()
        session.on_notification(sync_callback)
        session.on_notification(async_callback)
        await session.call_tool("result_then_log")
        with anyio.fail_after(5):
            await ran.wait()
    assert seen == [("notifications/message", False), ("notifications/message", True)]


async def test_a_server_request_read_before_a_response_is_answered_first(path: str) -> None:
    async with scripted() as session:
        await session.connect()
        assert text_of(await session.call_tool("ping_then_result")) == "done"
        with anyio.fail_after(5):
            while ("send response", "ping") not in wire(session):
                await anyio.sleep(0.01)
        order = wire(session)
        assert order.index(("recv request", "ping")) < order.index(("recv response", "tools/call"))
        assert session.findings == []


async def test_two_responses_in_one_read_both_reach_their_callers(path: str) -> None:
    async with scripted() as session:
        await session.connect()
        results: dict[str, str] = {}

        async def call(label: str) -> None:
            results[label] = text_of(await session.call_tool("pair"))

        async with anyio.create_task_group() as group:
            group.start_soon(call, "a")
            await anyio.sleep(0.2)  # the server holds "a" until "b" arrives
            group.start_soon(call, "b")
        assert results == {"a": "first", "b": "second"}
        assert session.in_flight == []


async def test_every_frame_is_decoded_once(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    decoded: list[bytes | str] = []
    real_decode = inbound_module.decode

    def counting_decode(data: bytes | str, **options: Any) -> Any:
        decoded.append(data)
        return real_decode(data, **options)

    monkeypatch.setattr(inbound_module, "decode", counting_decode)
    async with scripted() as session:
        await session.connect()
        await session.call_tool("progress_then_result", on_progress=lambda *args: None)
        await session.call_tool("ping_then_result")
        await session.call_tool("result_then_log")
        with anyio.fail_after(5):
            while not session.log_messages:
                await anyio.sleep(0.01)
        received = [e for e in session.transcript if e.direction == "recv"]
    assert len(received) == 7  # the initialize result, then two frames per call
    assert len(decoded) == len(received)
    assert len(set(map(id, decoded))) == len(decoded)


async def test_a_timeout_and_a_cancel_still_end_the_wait(path: str) -> None:
    async with scripted() as session:
        await session.connect()
        with pytest.raises(RequestTimeout):
            await session.call_tool("silent", timeout=0.2)

        async def cancel_soon() -> None:
            while not session.in_flight:
                await anyio.sleep(0.01)
            await session.cancel()

        async with anyio.create_task_group() as group:
            group.start_soon(cancel_soon)
            with pytest.raises(RequestCancelled):
                await session.call_tool("silent", timeout=None)
        cancelled = [e.message for e in session.transcript
                     if e.method == "notifications/cancelled"]
        assert len(cancelled) == 2
        # The session goes on working after both.
        assert text_of(await session.call_tool("echo")) == "echo"


async def test_an_observer_that_raises_while_a_response_is_handled_is_contained(
        path: str) -> None:
    """Issue 14: the error is recorded as a finding, the caller gets its result, the session
    goes on (it used to end the session, in the read callback as in the reader task)."""

    def explode(entry: Any) -> None:
        if entry.direction == "recv" and entry.method == "tools/call":
            raise RuntimeError("observer failed")

    async with scripted() as session:
        await session.connect()
        session.transcript.subscribe(explode)
        with anyio.fail_after(5):
            assert text_of(await session.call_tool("echo")) == "echo"
            assert text_of(await session.call_tool("echo")) == "echo"
        failures = [f for f in session.findings if f.rule.id == "observer-failed"]
        assert len(failures) == 1  # recorded once, counted after that
        assert "RuntimeError: observer failed" in failures[0].detail
        assert failures[0].rule.kind == "policy"
        assert session._parts.record.observer_errors[
            ("transcript observer", explode.__qualname__)] == 2
        assert session.state.value == "Operating"


# Starts reading only after a while, so the stdin pipe fills; answers each tools/call with
# the ids it has seen so far being in order or not.
SLOW_READER = textwrap.dedent(r'''
    import json, sys, time
    time.sleep(0.5)
    last = 0
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("method") == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "slow", "version": "1"}}
        elif "id" in msg:
            in_order = msg["id"] > last
            last = msg["id"]
            size = len(msg["params"]["arguments"]["blob"])
            result = {"content": [{"type": "text", "text": f"{in_order} {size}"}]}
        else:
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
        sys.stdout.flush()
''')


async def test_concurrent_senders_on_a_full_pipe_keep_every_frame_whole_and_in_order(
        path: str) -> None:
    """The sending fast path (no lock, no coroutine) must not overtake a sender that waits."""
    async with ClientSession(StdioTransport(python_command(SLOW_READER)), timeout=30) as session:
        await session.connect()
        blob = "x" * 4096
        results: list[str] = []

        async def call() -> None:
            results.append(text_of(await session.call_tool("t", {"blob": blob})))

        async with anyio.create_task_group() as group:
            for _ in range(100):  # ~400 KiB: far more than a pipe and its write buffer hold
                group.start_soon(call)
    assert results == [f"True {len(blob)}"] * 100
