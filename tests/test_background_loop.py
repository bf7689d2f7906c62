"""The notebook's background loop: cells' calls run there, and they end as they should.

Each call runs in a task of its own, in the calling thread's context.  These
tests pin what a faster hand-off must keep: results and errors come back, the
call sees the caller's context variables (ipykernel routes a display to its
cell that way, which a task reused across calls would break), a timed-out call
is cancelled on the loop and the next call still runs, two threads' calls run
side by side, and a stopped loop refuses calls cleanly.

A call that finds the background thread running the loop is handed to it; the
calls in a row after it run the loop on the calling thread itself (the loop
changes hands, never run by two threads at once).  The rest pins what that must
keep, on both paths: the loop still runs between calls, a thread that runs a
loop of its own (as ipykernel's main thread does) gets it back, and an interrupt
cancels the call on the loop instead of landing in the middle of the loop's work.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import os
import signal
import threading
import time
import warnings

import pytest

from mcp_nb.notebook import BackgroundLoop
from mcp_nb.notebook.loop import Interrupted


@pytest.fixture
def background():
    loop = BackgroundLoop("test-loop")
    yield loop
    loop.stop()


@pytest.fixture(params=["handed over", "run by the caller"])
def either_path(request):
    """A loop whose next call takes one of the two paths, and the thread that will run it.

    *handed over*: the background thread runs the loop (as at the first call of
    a cell) and runs the call; *run by the caller*: the loop sits parked after
    a call (kept parked for the test) and the calling thread runs it.
    """
    if request.param == "handed over":
        loop = BackgroundLoop("test-handed-over")
        runner = loop._thread.ident
    else:
        loop = BackgroundLoop("test-run-by-caller", handback_seconds=60)
        loop.run(_answer("parks the loop for the calls after it"))
        runner = threading.get_ident()
    yield loop, runner
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
        either_path: tuple[BackgroundLoop, int]) -> None:
    background, runner = either_path
    seen: list[str] = []

    async def slow() -> None:
        assert threading.get_ident() == runner
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


def test_the_loop_keeps_running_between_calls(background: BackgroundLoop) -> None:
    background.run(_answer("after a call the loop sits parked for a moment"))
    # Work that arrives while no call is waiting (a notification, a timer, another
    # thread's submit) is still done: the background thread takes the loop back.
    called = threading.Event()
    background.call_soon(called.set)
    assert called.wait(5)
    fired = threading.Event()
    background.loop.call_soon_threadsafe(background.loop.call_later, 0.01, fired.set)
    assert fired.wait(5)
    assert background.submit(_answer("submitted")).result(5) == "submitted"


def test_calls_in_a_row_run_on_the_thread_that_waits_for_them(
        background: BackgroundLoop) -> None:
    async def where() -> int:
        return threading.get_ident()

    # The first call is handed to the background thread, which runs the loop between
    # calls; as that call ends, the thread parks the loop for the cell's next call.
    assert background.run(where()) != threading.get_ident()
    # The calls after it run the loop on the calling thread, so the server's answer
    # wakes the thread that waits for it (a loaded machine may let the background
    # thread take the loop back between two calls, hence a few tries).
    assert threading.get_ident() in [background.run(where()) for _ in range(5)]


def test_a_thread_running_its_own_loop_gets_it_back(background: BackgroundLoop) -> None:
    async def cell() -> tuple[object, object]:
        # A cell's code is synchronous, called from the kernel's running loop.
        outer = asyncio.get_running_loop()
        inner = background.run(_running_loop())
        return inner, outer is asyncio.get_running_loop()

    inner, outer_back = asyncio.run(cell())
    assert inner is background.loop
    assert outer_back


async def _running_loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


def test_code_on_the_loop_cannot_wait_for_the_loop(background: BackgroundLoop) -> None:
    async def nested() -> None:
        inner = _answer("never")
        try:
            background.run(inner)
        finally:
            inner.close()

    with pytest.raises(RuntimeError, match="await the coroutine instead"):
        background.run(nested())


@pytest.fixture
def sigint_raises():
    """SIGINT raising KeyboardInterrupt, as ipykernel has it while a cell runs.

    A process started in the background by a non-interactive shell (CI) starts
    with SIGINT ignored, and then Python leaves it ignored.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _interrupt_main_thread_after(seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


def test_an_interrupt_cancels_the_call_on_the_loop(
        either_path: tuple[BackgroundLoop, int], sigint_raises: None) -> None:
    background, runner = either_path
    seen: list[str] = []

    async def slow() -> None:
        seen.append("ran on the expected thread" if threading.get_ident() == runner else "not")
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.sleep(0.01)  # cleanup that needs the loop (a cancel on the wire)
            seen.append("cleaned up")
            raise

    handler_before = signal.getsignal(signal.SIGINT)
    _interrupt_main_thread_after(0.2)
    with pytest.raises(Interrupted, match="cancelled"):
        background.run(slow())
    assert seen == ["ran on the expected thread", "cleaned up"]
    # The thread's own handler is back, and the loop still works.
    assert signal.getsignal(signal.SIGINT) is handler_before
    assert background.run(_answer("after")) == "after"


def test_a_second_interrupt_stops_waiting_for_a_stuck_cleanup(
        either_path: tuple[BackgroundLoop, int], sigint_raises: None) -> None:
    background, runner = either_path
    release, finished = threading.Event(), threading.Event()
    threads: list[int] = []

    async def stubborn() -> None:
        threads.append(threading.get_ident())
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            while not release.is_set():  # a cleanup that ends only when the test says so
                await asyncio.sleep(0.01)
            finished.set()
            raise

    _interrupt_main_thread_after(0.2)
    _interrupt_main_thread_after(0.4)
    started = time.monotonic()
    with pytest.raises(Interrupted):
        background.run(stubborn())
    # Not the cleanup's own bound (5 s): the second interrupt ended the wait.
    assert time.monotonic() - started < 4
    assert threads == [runner]
    assert not finished.is_set()
    # The cleanup goes on without the cell; the background thread finishes it.
    release.set()
    assert finished.wait(5)


def test_stop_after_a_call_ends_the_thread_and_runs_what_is_pending() -> None:
    loop = BackgroundLoop("test-stop-parked")
    assert loop.run(_answer(1)) == 1
    ran = threading.Event()
    loop.call_soon(ran.set)
    loop.stop()
    assert ran.is_set()
    assert not loop.running


def test_a_loop_left_held_by_an_interrupt_is_taken_again_by_its_thread(
        background: BackgroundLoop) -> None:
    background.run(_answer("first"))
    # What an interrupt landing between a call's end and its parking would leave:
    # this thread still named as the loop's driver, though it runs no loop.
    with background._baton:
        background._driver = threading.get_ident()
    assert background.run(_answer("taken again")) == "taken again"
    # ... and parked again after it, so the background thread gets the loop back.
    called = threading.Event()
    background.call_soon(called.set)
    assert called.wait(5)
