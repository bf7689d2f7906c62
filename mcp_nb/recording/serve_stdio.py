"""A replay server over stdio: JSON-RPC lines in on stdin, the recorded answers out on stdout.

The frames are split and answered in asyncio's read callback (no reader task,
no thread), so when timing is off a round trip costs one event-loop iteration,
close to a hand-written canned server (benchmarks/RESULTS.md).  Misses are
logged on stderr, where MCP lets a stdio server say anything.

Example::

    python -m mcp_nb.replay session.jsonl          # then speak MCP on its stdin/stdout
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from .replayer import Replayer

_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_DECODE = json.JSONDecoder().decode


class _StdinProtocol(asyncio.Protocol):
    """Splits stdin into lines and hands each decoded message to the replayer."""

    def __init__(self, replayer: Replayer, write: Any, finished: asyncio.Future[None]) -> None:
        self._replayer = replayer
        self._write = write
        self._finished = finished
        self._buffer = b""

    def out(self, message: dict[str, Any]) -> None:
        self._write((_ENCODE(message) + "\n").encode())

    def data_received(self, data: bytes) -> None:
        *lines, self._buffer = (self._buffer + data).split(b"\n")
        for line in lines:
            if line.strip():
                self._take(line)

    def _take(self, line: bytes) -> None:
        try:
            message = _DECODE(line.decode("utf-8"))
        except ValueError as exc:
            self.out({"jsonrpc": "2.0", "id": None,
                      "error": {"code": -32700, "message": f"Parse error: {exc}"}})
            return
        if isinstance(message, list):
            self._write((_ENCODE(self._replayer.refuse_batch(message)) + "\n").encode())
            return
        if not isinstance(message, dict):
            self.out({"jsonrpc": "2.0", "id": None,
                      "error": {"code": -32600, "message": "replay: not a JSON-RPC message"}})
            return
        self._replayer.handle(message, self.out)

    def eof_received(self) -> bool:
        if not self._finished.done():
            self._finished.set_result(None)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._finished.done():
            self._finished.set_result(None)


async def serve_stdio(replayer: Replayer) -> int:
    """Answer stdin until it closes (the client's way to end a stdio session)."""
    loop = asyncio.get_running_loop()
    # Duplicates, so closing the pipes' transports leaves the interpreter's own files alone.
    stdout_transport, _ = await loop.connect_write_pipe(
        asyncio.Protocol, os.fdopen(os.dup(sys.stdout.fileno()), "wb"))
    finished: asyncio.Future[None] = loop.create_future()
    protocol = _StdinProtocol(replayer, stdout_transport.write, finished)
    stdin_transport, _ = await loop.connect_read_pipe(
        lambda: protocol, os.fdopen(os.dup(sys.stdin.fileno()), "rb"))
    replayer.start(protocol.out)
    try:
        await finished
    finally:
        await replayer.aclose()
        stdin_transport.close()
        stdout_transport.close()
    return 0
