"""The notebook's task view (SEP-2663) and the transcript's dropped-entries line, against the
real lab server (``--fixtures conformance`` makes tasks)."""

from __future__ import annotations

import asyncio
import base64
import re
import sys
import time

import anyio
import pytest
from support import lab_session

from mcp_nb.client import Task, TaskCancelled
from mcp_nb.notebook import diagrams
from mcp_nb.notebook.request_views import TaskView
from mcp_nb.notebook.transcript_view import TranscriptView
from mcp_nb.protocol.tasks import TASK_TRANSITIONS, TaskStatus

CONFORMANCE = ("--fixtures", "conformance")


def current(svg: str) -> str:
    [status] = re.findall(r'class="state current" data-state="([a-z_]+)"', svg)
    return status


def saved_svg(view: TaskView) -> str:
    [data] = re.findall(r'src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', view.static_html())
    return base64.b64decode(data).decode()


def test_the_task_diagram_draws_every_move_of_the_task_table() -> None:
    svg = diagrams.task_diagram_svg(TaskStatus.CANCELLED,
                                  [TaskStatus.WORKING, TaskStatus.CANCELLED])
    assert svg.count("<line ") == len(TASK_TRANSITIONS)
    for move in TASK_TRANSITIONS:
        assert f"{move.source.value} → {move.target.value}: " in svg
    assert re.findall(r'data-state="([a-z_]+)"', svg) == [s.value for s in TaskStatus]
    assert current(svg) == "cancelled"
    assert svg.count('stroke-width="3"') == 1  # working → cancelled, the one move taken


@pytest.mark.anyio
async def test_the_view_follows_a_task_to_its_end() -> None:
    async with lab_session(*CONFORMANCE, tasks=True) as session:
        with anyio.fail_after(30):
            task = await session.start_tool("slow_compute", {"seconds": 0.5})
            assert isinstance(task, Task)
            view = TaskView(task, asyncio.ensure_future)
            assert repr(view) == f"Task {task.task_id}: working (path: working)"
            assert current(view.diagram.value) == "working"
            first_image = saved_svg(view)
            await task.wait(poll_interval=0.05)
        assert repr(view) == f"Task {task.task_id}: completed (path: working → completed)"
        assert current(view.diagram.value) == "completed"
        assert view.diagram.value.count('stroke-width="3"') == 1
        assert view.cancel_button.disabled and view.refresh_button.disabled
        # The saved image is the diagram itself, and holds no time (it is saved in notebooks).
        assert saved_svg(view) == view.diagram.value != first_image
        assert task.snapshot.last_updated_at not in view.static_html()


@pytest.mark.anyio
async def test_cancel_sends_tasks_cancel_and_the_view_shows_cancelled() -> None:
    async with lab_session(*CONFORMANCE, tasks=True) as session:
        with anyio.fail_after(30):
            task = await session.start_tool("slow_compute", {"seconds": 60})
            assert isinstance(task, Task)
            view = TaskView(task, asyncio.ensure_future)
            view.cancel_button.click()
            while not task.done:
                await anyio.sleep(0.02)
        cancels = session.transcript.filter(direction="send", method="tasks/cancel")
        assert [e.message["params"]["taskId"] for e in cancels] == [task.task_id]
        assert task.status is TaskStatus.CANCELLED
        assert repr(view) == f"Task {task.task_id}: cancelled (path: working → cancelled)"
        assert current(saved_svg(view)) == "cancelled"


def test_percent_mcp_task_shows_the_latest_task_and_its_cancel_works(mcp) -> None:
    hosted = mcp(f"connect --tasks -- {sys.executable} -m mcp_nb.lab --fixtures conformance")
    call = mcp("call slow_compute seconds=60 --background")
    deadline = time.monotonic() + 20
    while not hosted.session.tasks:
        assert time.monotonic() < deadline, "no task was made"
        time.sleep(0.02)
    view = mcp("task")
    assert isinstance(view, TaskView) and view.task.status is TaskStatus.WORKING
    view.cancel()  # what the Cancel button does
    with pytest.raises(TaskCancelled):
        call.result(timeout=20)
    assert repr(view).endswith(": cancelled (path: working → cancelled)")
    assert hosted.session.transcript.filter(direction="send", method="tasks/cancel")


@pytest.mark.anyio
async def test_the_transcript_view_says_what_the_limit_dropped() -> None:
    async with lab_session(transcript_limit=10) as session:
        view = TranscriptView(session)
        assert "dropped" not in repr(view)
        with anyio.fail_after(30):
            for _ in range(12):
                await session.ping()
        transcript = session.transcript
        assert transcript.dropped > 0
        by_kind = {"request": 0, "response": 0, "notification": 0}
        for key, count in transcript.dropped_by_kind.items():
            kind = key.split(" ", 1)[0]
            if kind in by_kind:
                by_kind[kind] += count
        # The handshake (initialize, its response, initialized) and the first pings are gone.
        assert by_kind["notification"] == 1 and by_kind["request"] >= 5
        text = repr(view)
        assert text.startswith("Transcript: ")
        assert f"; {transcript.dropped:,} older entries dropped: " in text
        assert f"{by_kind['request']:,} request" in text
        assert "1 notification" in text
        view.flush()
        assert f"{transcript.dropped:,} older entries dropped" in view.position.value
        assert f"{transcript.dropped:,} older entries dropped" in view.static_html()
