"""Playing a script back: answer a live client's messages with what the recorded server did.

The :class:`Replayer` is the transport-free part of a replay server.  It is
handed each client message with an ``out`` callback that sends a message back
(down stdout, or onto the message's HTTP stream), and plays the matching
exchange's steps with the recorded delays times ``timing`` (1: as recorded,
0: at once).  Live ids replace recorded ones: the response carries the live
request's id, progress the live progress token, and the server's own requests
get fresh ids whose answers it waits for (at most ``reply_timeout`` seconds,
so a client that never answers cannot stall the replay).

Example (what :mod:`.serve` does for each line on stdin)::

    replayer = Replayer(Script.from_recording(load("session.jsonl")), timing=0)
    replayer.handle(message, out=write_line)
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable
from typing import Any

from ..protocol.errors import INVALID_REQUEST
from .script import Exchange, Miss, Script, Step, progress_token

Out = Callable[[dict[str, Any]], None]
Log = Callable[[str], None]

#: Seconds a replay waits for the client to answer a server request before going on.
DEFAULT_REPLY_TIMEOUT = 10.0


class Replayer:
    """Answers client messages from a :class:`~mcp_nb.recording.script.Script` (asyncio)."""

    def __init__(self, script: Script, *, timing: float = 1.0,
                 reply_timeout: float = DEFAULT_REPLY_TIMEOUT, log: Log | None = None) -> None:
        if timing < 0:
            raise ValueError(f"timing is a factor on the recorded delays (≥ 0), not {timing}")
        self.script = script
        self.timing = timing
        self.reply_timeout = reply_timeout
        self.log: Log = log or (lambda text: None)
        #: Client requests the recording could not answer, with why, in order.
        self.misses: list[tuple[dict[str, Any], Miss]] = []
        self._server_ids = itertools.count(1)
        self._replies: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self, out: Out) -> None:
        """Play what the server sent before the client said anything."""
        if self.script.opening:
            self._schedule(self.script.opening, {}, out)

    def handle(self, message: dict[str, Any], out: Out) -> Exchange | Miss | None:
        """React to one client message; returns what it was matched with (None: a reply)."""
        if "method" not in message:
            future = self._replies.pop(message.get("id"), None)
            if future is not None and not future.done():
                future.set_result(message)
            return None
        found = self.script.find(message)
        if isinstance(found, Miss):
            if message["method"] == "ping" and "id" in message and found.closest is None:
                # Every handshake-era server must answer ping; a replay is no exception.
                out({"jsonrpc": "2.0", "id": message["id"], "result": {}})
                return found
            self.misses.append((message, found))
            self.log(found.message)
            if "id" in message:
                out({"jsonrpc": "2.0", "id": message["id"], "error": found.error()})
            return found
        if found.steps:
            self._schedule(found.steps, message, out)
        return found

    @staticmethod
    def refuse_batch(batch: list[Any]) -> list[dict[str, Any]]:
        """The answer to a JSON-RPC batch: an error for each request in it, so none hangs.

        Batches existed only in 2025-03-26 and a recording keeps single messages,
        so a replay refuses them rather than guess how the server split one up.
        """
        error = {"code": INVALID_REQUEST, "message": "replay: batches are not replayed; send "
                                                     "the messages one at a time"}
        answers = [{"jsonrpc": "2.0", "id": item["id"], "error": error} for item in batch
                   if isinstance(item, dict) and "method" in item and "id" in item]
        return answers or [{"jsonrpc": "2.0", "id": None, "error": error}]

    def _schedule(self, steps: list[Step], live: dict[str, Any], out: Out) -> None:
        if self.timing == 0 and all(step.wait_for is None for step in steps):
            # The fast path: no clock and no answers to wait for, so no task either.
            for step in steps:
                self._send(step, live, out)
            return
        task = asyncio.get_running_loop().create_task(self._play(steps, live, out))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _play(self, steps: list[Step], live: dict[str, Any], out: Out) -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        live_ids: dict[Any, Any] = {}
        for step in steps:
            if step.wait_for is not None:
                future = self._replies.get(live_ids.get(step.wait_for))
                if future is not None:
                    try:
                        await asyncio.wait_for(asyncio.shield(future), self.reply_timeout)
                    except asyncio.TimeoutError:
                        self.log(f"replay: no answer to server request "
                                 f"#{live_ids[step.wait_for]} within {self.reply_timeout:g}s; "
                                 "going on")
                continue
            wait = start + step.delay * self.timing - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            self._send(step, live, out, live_ids)

    def _send(self, step: Step, live: dict[str, Any], out: Out,
              live_ids: dict[Any, Any] | None = None) -> None:
        """Send one recorded server message with the live ids and token put in."""
        message = step.message
        assert message is not None
        if "method" not in message:  # the response
            out({**message, "id": live.get("id")})
            return
        params = message.get("params")
        if message["method"] == "notifications/progress":
            token = progress_token(live)
            if token is None:
                return  # the live request asked for no progress, so none may be sent
            out({**message, "params": {**params, "progressToken": token}})
        elif message["method"] == "notifications/cancelled" and isinstance(params, dict) \
                and "id" in live:
            out({**message, "params": {**params, "requestId": live["id"]}})
        elif "id" in message:  # a request to the client: a fresh id, and an answer awaited
            live_id = f"replay-{next(self._server_ids)}"
            if live_ids is not None:
                live_ids[message["id"]] = live_id
            self._replies[live_id] = asyncio.get_running_loop().create_future()
            out({**message, "id": live_id})
        else:
            out(message)

    async def aclose(self) -> None:
        """Stop every exchange still playing."""
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task
