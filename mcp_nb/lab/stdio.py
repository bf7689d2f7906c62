"""The lab server over stdio: one session on this process's stdin and stdout.

A daemon thread reads lines (blocking reads would stall the loop), the loop
thread alone writes stdout, and stderr gets human-readable diagnostics only.
The stdio-only knobs (--garbage-stdout, --ignore-stdin-close) act here.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading

from mcp_nb.lab.knobs import Knobs
from mcp_nb.lab.menus import open_session
from mcp_nb.lab.process import arrange_exits, crash_if_due, prepare_process
from mcp_nb.lab.rpc import Message, diag, encode_message

_GARBAGE = b"lab server banner: not JSON\n"
#: Seconds that requests still running at stdin EOF get to finish and respond.
_EOF_GRACE = 1.0


class _StdoutWriter:
    """Writes one JSON message per line to stdout; used from the loop thread only."""

    def __init__(self, garbage: bool) -> None:
        self._garbage = garbage
        self._stream = sys.stdout.buffer
        self._broken = False

    def banner(self) -> None:
        """The --garbage-stdout startup line."""
        if self._garbage:
            self._write(_GARBAGE)

    def send(self, message: Message) -> None:
        data = encode_message(message)
        if self._garbage and "method" not in message:  # a response
            data = _GARBAGE + data
        self._write(data + b"\n")

    def _write(self, data: bytes) -> None:
        if self._broken:
            return
        try:
            self._stream.write(data)
            self._stream.flush()
        except (BrokenPipeError, ValueError):
            self._broken = True
            diag("stdout is closed; dropping outgoing messages")
            # Point fd 1 at /dev/null so the interpreter's final flush cannot fail too.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)


def _read_stdin(loop: asyncio.AbstractEventLoop, inbox: asyncio.Queue[bytes | str | None]) -> None:
    """Thread body: hand every stdin line to the loop, then ``None`` for EOF.

    It reads through a private reader on fd 0, not ``sys.stdin``: when the
    process exits while this daemon thread is blocked in a read, the interpreter
    flushes ``sys.stdin`` and would abort on the lock the thread still holds.
    """
    stdin = open(sys.stdin.fileno(), "rb", closefd=False)  # noqa: SIM115 (lives as long as we do)
    try:
        for line in iter(stdin.readline, b""):
            loop.call_soon_threadsafe(inbox.put_nowait, line)
        loop.call_soon_threadsafe(inbox.put_nowait, None)
    except RuntimeError:  # the loop has already closed: nobody is listening
        pass


async def _serve_stdio(knobs: Knobs) -> int:
    loop = asyncio.get_running_loop()
    # Lines (bytes), EOF (None) and reasons to stop (str) arrive through one queue.
    inbox: asyncio.Queue[bytes | str | None] = asyncio.Queue()
    writer = _StdoutWriter(knobs.garbage_stdout)
    session = open_session(knobs, writer.send)
    session.on_operating = restart_exit_timer = arrange_exits(knobs, inbox.put_nowait)
    threading.Thread(target=_read_stdin, args=(loop, inbox), name="lab-stdin", daemon=True).start()
    writer.banner()
    diag(f"mcp_nb lab server ready (pid {os.getpid()})")
    received = 0
    grace = 0.0
    while True:
        item = await inbox.get()
        if isinstance(item, bytes):
            received += 1
            if received == 1:
                restart_exit_timer()  # --exit-after counts from here, then from Operating
            crash_if_due(knobs, received)
            if item.strip():
                session.receive_json(item)
        elif item is None and knobs.ignore_stdin_close:
            diag("stdin closed; staying alive anyway (--ignore-stdin-close)")
        elif item is None:
            diag("stdin closed; finishing in-flight requests, then exiting")
            grace = _EOF_GRACE
            break
        else:
            diag(item)
            break
    await session.close(grace)
    return 0


def serve_stdio(knobs: Knobs) -> int:
    """Serve one session over this process's stdin/stdout; returns the exit code."""
    prepare_process(knobs)
    return asyncio.run(_serve_stdio(knobs))
