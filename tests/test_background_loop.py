"""The notebook's background loop: cells' calls run there, and they end as they should.

Each call runs in a task of its own, in the calling thread's context.  These
tests pin what a faster hand-off must keep: results and errors come back, the
call sees the caller's context variables (ipykernel routes a display to its
cell that way, which a task reused across calls would break), a timed-out call
is cancelled on the loop and the next call still runs, two threads' calls run
side by side, and a stopped loop refuses calls cleanly.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import threading
import warnings

import pytest

from mcp_nb.notebook import BackgroundLoop


@pytest.fixture
def background():
    loop = BackgroundLoop("test-loop")
    yield loop
    loop.stop()


async def _answer(value: object) -> object:
    await asyncio.sleep(0)
    return value


async def _fail() -> None:
    await asyncio.sleep(0)
    raise LookupError("no such thing")


def test_results_and_errors_come_back(background: BackgroundLoop) -> None:
    assert [background.run(_answer(n)) for n in range(5)] == [0, 1, 2, 3, 4]
    with pytest.raises(LookupError, match="no such thing"):
        background.run(_fail())
    assert background.run(_answer("after an error")) == "after an error"


CELL: contextvars.ContextVar[str] = contextvars.ContextVar("cell", default="none")


def test_each_call_sees_the_context_of_the_thread_that_asked(
        background: BackgroundLoop) -> None:
    async def which_cell() -> str:
        return CELL.get()

    for cell in ("first cell", "second cell"):
        CELL.set(cell)
        assert background.run(which_cell()) == cell


def test_a_timed_out_call_is_cancelled_on_the_loop_and_the_next_call_runs(
        background: BackgroundLoop) -> None:
    seen: list[str] = []

    async def slow() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen.append("cancelled on the loop")
            raise

    with pytest.raises(TimeoutError):
        background.run(slow(), timeout=0.05)
    assert seen == ["cancelled on the loop"]
    assert background.run(_answer("next")) == "next"
    assert background.run(_answer("and the one after")) == "and the one after"


def test_calls_from_two_threads_run_side_by_side(background: BackgroundLoop) -> None:
    release = threading.Event()
    results: list[object] = []

    async def held() -> str:
        while not release.is_set():
            await asyncio.sleep(0.01)
        return "held call done"

    other = threading.Thread(target=lambda: results.append(background.run(held())))
    other.start()
    # While the other thread's call waits, this thread's calls still run.
    assert background.run(_answer("meanwhile")) == "meanwhile"
    release.set()
    other.join(10)
    assert results == ["held call done"]
    assert background.run(_answer("after both")) == "after both"


def test_a_stopped_loop_refuses_calls_without_leaving_them_unawaited() -> None:
    loop = BackgroundLoop("test-stop")
    assert loop.run(_answer(1)) == 1
    loop.stop()
    assert not loop.running
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="stopped"):
            loop.run(_answer(2))
        gc.collect()  # an unawaited coroutine is reported when it is collected
    assert not [w for w in caught if "never awaited" in str(w.message)]
