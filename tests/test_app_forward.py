"""An App's request forwarded to its session (:mod:`mcp_nb.notebook.app_forward`): the answer
is posted exactly once, by the receiving thread when it may wait and the answer is quick,
else by the loop's thread; and every outcome becomes an answer for the App.

The session here is a stand-in with a coroutine ``request`` (the threads and the loop are
the real ones): the real session's App traffic is tested in ``tests/test_apps.py`` and the
browser suites.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_nb.client.errors import ServerError
from mcp_nb.notebook import app_forward
from mcp_nb.notebook.app_forward import forward_request
from mcp_nb.notebook.loop import BackgroundLoop


class Session:
    """Answers after ``delay`` seconds, or raises ``error``; an event holds it until set."""

    def __init__(self, *, error: BaseException | None = None,
                 hold: threading.Event | None = None) -> None:
        self.error = error
        self.hold = hold
        self.asked: list[tuple[str, Any]] = []

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        self.asked.append((method, params))
        while self.hold is not None and not self.hold.is_set():
            await asyncio.sleep(0.001)
        if self.error is not None:
            raise self.error
        return {"content": [{"type": "text", "text": "ok"}]}


class Hosted:
    def __init__(self, loop: BackgroundLoop, session: Session) -> None:
        self.loop = loop
        self.session = session


@pytest.fixture
def loop() -> Iterator[BackgroundLoop]:
    running = BackgroundLoop("test-app-forward")
    yield running
    running.stop()


def _forward_from(thread_name: str | None, hosted: Hosted) -> tuple[list[Any], threading.Event]:
    """Forward one tools/call from a new thread (or this one, for None); the answers
    posted, as (result, error, the posting thread's name), and an event set by the first."""
    answers: list[Any] = []
    answered = threading.Event()

    def answer(result: Any, error: Any) -> None:
        answers.append((result, error, threading.current_thread().name))
        answered.set()

    def run() -> None:
        forward_request(hosted, "tools/call", {"name": "clock"}, answer)

    if thread_name is None:
        run()
    else:
        thread = threading.Thread(target=run, name=thread_name)
        thread.start()
        thread.join()
    return answers, answered


def test_a_quick_answer_is_posted_by_the_thread_that_received_the_request(
        loop: BackgroundLoop, monkeypatch: pytest.MonkeyPatch) -> None:
    # "Quick" on a machine of any load: the wait is what decides, not this machine's speed.
    monkeypatch.setattr(app_forward, "ANSWER_INLINE_WAIT", 30.0)
    session = Session()
    answers, _answered = _forward_from("comm-subshell", Hosted(loop, session))
    # Posted before the receiving thread returned (join above), by that thread.
    assert answers == [({"content": [{"type": "text", "text": "ok"}]}, None, "comm-subshell")]
    assert session.asked == [("tools/call", {"name": "clock"})]


def test_a_slow_answer_is_posted_once_by_the_loop(loop: BackgroundLoop) -> None:
    hold = threading.Event()
    answers, answered = _forward_from("comm-subshell", Hosted(loop, Session(hold=hold)))
    assert answers == []  # the receiving thread went on without it
    hold.set()
    assert answered.wait(10)
    loop.run(asyncio.sleep(0.05))  # anything else the loop had to do, done
    assert answers == [({"content": [{"type": "text", "text": "ok"}]}, None,
                        "test-app-forward")]


def test_the_main_thread_never_waits_for_an_answer(loop: BackgroundLoop) -> None:
    hold = threading.Event()
    answers, answered = _forward_from(None, Hosted(loop, Session(hold=hold)))
    assert answers == []
    hold.set()
    assert answered.wait(10)
    assert [name for *_, name in answers] == ["test-app-forward"]


@pytest.mark.parametrize("error, expected", [
    (ServerError("tools/call", -32602, "Unknown tool: clock", {"tool": "clock"}),
     {"code": -32602, "message": "Unknown tool: clock", "data": {"tool": "clock"}}),
    (ServerError("tools/call", -32000, "busy"), {"code": -32000, "message": "busy"}),
    (ConnectionResetError("the server went away"),
     {"code": -32603, "message": "ConnectionResetError: the server went away"}),
])
def test_every_outcome_is_an_answer(loop: BackgroundLoop, error: BaseException,
                                    expected: dict[str, Any]) -> None:
    for thread_name in ("comm-subshell", None):
        answers, answered = _forward_from(thread_name, Hosted(loop, Session(error=error)))
        assert answered.wait(10)
        assert [(result, said) for result, said, _name in answers] == [(None, expected)]
