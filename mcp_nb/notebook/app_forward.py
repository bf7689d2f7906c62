"""An App's request to the server: sent on the session's loop, and its answer posted once.

The App's ``tools/call`` or ``resources/read`` arrives as a widget message, on the thread
that handles the kernel's widget messages.  The request is sent on the sessions' loop
without blocking that thread for long; the answer goes back to the App from whichever
thread has it first: the loop's when it comes, or the receiving thread's if the answer
comes within :data:`ANSWER_INLINE_WAIT` and that thread may wait.

Why wait at all: JupyterLab sends widget messages to a kernel subshell of their own
(ipykernel 7, JupyterLab's "comms over subshells"), and the kernel publishes ``status:
idle`` as that thread's handler returns.  An answer posted before then reaches the page
ahead of the idle; posted from the loop's thread a moment later, it reaches the page
behind the busy and the idle, which the page handles first (benchmarks/RESULTS.md, "The
App's round trip, hop by hop").  The kernel's main thread runs the cells, so it never
waits here.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable, Mapping
from typing import Any

from ..client.errors import ServerError
from ..protocol.errors import McpError

#: How long the receiving thread waits for the server's answer to post it itself (seconds).
ANSWER_INLINE_WAIT = 0.010

#: ``answer(result, error)``: exactly one of the two is None.
Answer = Callable[[dict[str, Any] | None, dict[str, Any] | None], None]


def forward_request(hosted: Any, method: str, params: Mapping[str, Any] | None,
                    answer: Answer) -> None:
    """Send ``method`` on ``hosted``'s session; call ``answer`` once, with its outcome.

    ``answer`` gets a JSON-RPC error object for whatever went wrong (the server's error as
    it said it, anything else as an internal error): the App gets an answer in every case.
    """
    session = hosted.session

    async def send() -> dict[str, Any]:
        return await session.request(method, params)

    future = hosted.loop.submit(send())
    mutex = threading.Lock()
    inline = (threading.current_thread() is not threading.main_thread()
              and not hosted.loop.in_loop_thread())
    state = {"inline": inline, "posted": False}

    def post(finished: concurrent.futures.Future[dict[str, Any]]) -> None:
        result, error = outcome(finished)
        answer(result, error)

    def done(finished: concurrent.futures.Future[dict[str, Any]]) -> None:
        with mutex:  # the receiving thread, while it waits, posts the answer itself
            if state["posted"] or state["inline"]:
                return
            state["posted"] = True
        post(finished)

    future.add_done_callback(done)
    if not inline:
        return
    concurrent.futures.wait([future], timeout=ANSWER_INLINE_WAIT)
    with mutex:
        state["inline"] = False
        mine = future.done() and not state["posted"]
        state["posted"] = state["posted"] or mine
    if mine:
        post(future)


def outcome(finished: concurrent.futures.Future[dict[str, Any]]
            ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The request's result, or the JSON-RPC error to answer the App with."""
    try:
        return finished.result(), None
    except ServerError as exc:
        error: dict[str, Any] = {"code": exc.code, "message": exc.message}
        if exc.data is not None:
            error["data"] = exc.data
        return None, error
    except (McpError, Exception) as exc:  # the App gets an answer whatever happened
        return None, {"code": -32603, "message": f"{type(exc).__name__}: {exc}"}
