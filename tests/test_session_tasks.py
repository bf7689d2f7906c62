"""The tasks extension (SEP-2663) on the client, against a real stdio server that makes tasks.

The server (tests/peers/task_server.py) decides which calls become tasks; the
client follows them to their end through ``tasks/get``, answers their input
requests with ``tasks/update``, echoes the latest ``requestState`` and judges
every status by the task's own table.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_nb.client import (
    ClientSession,
    InvalidResult,
    Task,
    TaskCancelled,
)
from mcp_nb.protocol.tasks import TASK_TRANSITIONS, TaskStatus, TaskTracker, parse_task
from mcp_nb.transports import StdioTransport

pytestmark = pytest.mark.anyio

SERVER = [sys.executable, str(Path(__file__).resolve().parent / "peers" / "task_server.py")]


def answer_name(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


def session(**options: Any) -> ClientSession:
    return ClientSession(StdioTransport(SERVER), tasks=True, on_elicitation=answer_name,
                         **options)


async def test_call_tool_follows_a_task_to_its_result_answering_its_input() -> None:
    async with session() as s:
        await s.connect()
        assert s.client_capabilities["extensions"] == {"io.modelcontextprotocol/tasks": {}}
        with anyio.fail_after(20):
            assert (await s.call_tool("quick")).text == "at once"
            result = await s.call_tool("slow")
        task = s.tasks["task-1"]
        assert [status.value for status in task.tracker.path] == [
            "working", "input_required", "completed"]
        calls = [e.method for e in s.transcript.filter(direction="send")
                 if (e.method or "").startswith("tasks/")]
        assert calls == ["tasks/get", "tasks/get", "tasks/update", "tasks/get"]
        # Each tasks/* request echoed the latest requestState received (the update's ack
        # carries none, so the poll after it echoes the one before).
        greeting, echoed = (result.text or "").split("; echoed ")
        assert greeting == "hello Ada"
        assert echoed.split(",") == ["task-1-state-1", "task-1-state-2", "task-1-state-3",
                                     "task-1-state-3"]
        assert not [f for f in s.findings if f.rule.id.startswith("task-")]


async def test_start_tool_hands_out_the_task_to_poll_and_cancel() -> None:
    async with session() as s:
        await s.connect()
        with anyio.fail_after(20):
            started = await s.start_tool("slow")
            assert isinstance(started, Task)
            assert started.status is TaskStatus.WORKING
            seen: list[str] = []
            started.on_status(lambda snapshot: seen.append(snapshot.status.value))
            await started.refresh()
            await started.cancel()
            with pytest.raises(TaskCancelled, match="task-1 was cancelled"):
                await started.wait(answer_inputs=False, poll_interval=0.01)
        assert seen[-1] == "cancelled"
        assert started.done
        assert any(e.kind == "task status" for e in s.transcript.events())


async def test_a_status_notification_ends_the_task_without_another_poll() -> None:
    async with session() as s:
        await s.connect()
        with anyio.fail_after(20):
            started = await s.start_tool("pushed")
            assert isinstance(started, Task)
            while not started.done:
                await anyio.sleep(0.01)
            assert (await started.wait())["content"][0]["text"] == "pushed"
        assert "tasks/get" not in [e.method for e in s.transcript.filter(direction="send")]


async def test_a_move_out_of_a_terminal_status_is_a_finding() -> None:
    async with session() as s:
        await s.connect()
        with anyio.fail_after(20):
            started = await s.start_tool("relapse")
            assert isinstance(started, Task)
            await started.refresh()  # completed
            await started.refresh()  # "working" again
        broken = [f for f in s.findings if f.rule.id == "task-transition-invalid"]
        assert len(broken) == 1
        assert "from completed to working" in broken[0].detail
        assert "terminal status is final" in broken[0].detail
        assert broken[0].rule.url() == \
            "https://modelcontextprotocol.io/seps/2663-tasks-extension#task-status"


async def test_a_task_handle_to_a_client_that_did_not_declare_the_extension_is_invalid() -> None:
    async with ClientSession(StdioTransport(SERVER)) as s:
        await s.connect()
        with anyio.fail_after(20), pytest.raises(InvalidResult, match="did not declare"):
            await s.call_tool("slow")
        assert [f.rule.id for f in s.findings] == ["task-result-invalid"]


def test_the_table_allows_no_move_out_of_a_terminal_status() -> None:
    assert {t.source for t in TASK_TRANSITIONS}.isdisjoint(
        {TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED})
    tracker = TaskTracker()
    base = {"taskId": "t", "createdAt": "x", "lastUpdatedAt": "x"}
    assert tracker.observe(parse_task({**base, "status": "working"})) is None
    assert tracker.observe(parse_task({**base, "status": "working"})) is None  # no news
    assert tracker.observe(parse_task({**base, "status": "cancelled"})) is None
    assert "cancelled to working" in str(tracker.observe(parse_task({**base,
                                                                     "status": "working"})))
    assert tracker.request_state is None


@pytest.mark.parametrize(("task", "why"), [
    ({"status": "working"}, "taskId"),
    ({"taskId": "t", "status": "paused"}, "unknown status"),
    ({"taskId": "t", "status": "working", "createdAt": 1}, "createdAt"),
    ({"taskId": "t", "status": "completed", "createdAt": "x", "lastUpdatedAt": "x"},
     "inlines its result"),
    ({"taskId": "t", "status": "failed", "createdAt": "x", "lastUpdatedAt": "x"},
     "JSON-RPC error"),
    ({"taskId": "t", "status": "input_required", "createdAt": "x", "lastUpdatedAt": "x"},
     "inputRequests"),
])
def test_malformed_tasks_are_refused_with_the_reason(task: dict[str, Any], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_task(task)


def test_a_create_result_must_not_carry_the_result() -> None:
    with pytest.raises(ValueError, match="must not carry result"):
        parse_task({"taskId": "t", "status": "working", "createdAt": "x",
                    "lastUpdatedAt": "x", "result": {}}, created=True)


def test_the_suggested_poll_interval_and_ttl_are_read_in_milliseconds() -> None:
    # SEP-2663 v2 names both durations with the Ms suffix (integer milliseconds); a client
    # keying off other names would silently ignore the server's pacing.
    snapshot = parse_task({"taskId": "t", "status": "working", "createdAt": "x",
                           "lastUpdatedAt": "x", "ttlMs": 60_000, "pollIntervalMs": 250})
    assert (snapshot.ttl_ms, snapshot.poll_interval_ms) == (60_000, 250)
    unnamed = parse_task({"taskId": "t", "status": "working", "createdAt": "x",
                          "lastUpdatedAt": "x", "ttl": 5, "pollInterval": 5})
    assert (unnamed.ttl_ms, unnamed.poll_interval_ms) == (None, None)


async def test_waiting_on_a_task_polls_at_the_servers_suggested_interval() -> None:
    # The peer suggests 10 ms over the wire (the default is 1 s); wait() sleeps what the
    # task's latest snapshot suggests, so the snapshot is what is checked (no timing).
    async with session() as s:
        await s.connect()
        with anyio.fail_after(20):
            started = await s.start_tool("slow")
            assert started.snapshot.poll_interval_ms == 10
            assert started.snapshot.ttl_ms == 60_000
