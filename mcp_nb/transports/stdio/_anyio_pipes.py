"""The stdio server's pipes through anyio's process streams (private strategy): the fallback
for event loops other than asyncio (trio).

Portable, and a round trip slower than :mod:`._asyncio_pipes` (a read in the
reader task and a checkpoint after every send); the session runs on asyncio
everywhere this kit is used (Jupyter), so that is where the fast path is.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Mapping, Sequence

import anyio
from anyio.abc import Process, TaskGroup

from .framing import LineFramer
from .stderr import StderrSink

_READ_CHUNK = 65536
_STREAM_GONE = (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError)


async def spawn_anyio(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str | None,
    frames: LineFramer,
    stderr: StderrSink,
    task_group: TaskGroup,
) -> AnyioServerProcess:
    """Start ``argv`` in a session of its own, its stdout framed into ``frames``."""
    process = await anyio.open_process(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
        # Own session and process group: a kernel interrupt (SIGINT to the group)
        # must cancel the request, not kill the server.
        start_new_session=True,
    )
    server = AnyioServerProcess(process, frames)
    task_group.start_soon(server.pump_stderr, stderr)
    return server


class AnyioServerProcess:
    """A running stdio server, read and written through anyio's process streams."""

    def __init__(self, process: Process, frames: LineFramer) -> None:
        self._process = process
        self._frames = frames
        self.pid: int = process.pid
        self.stdout_ended = False

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    async def write(self, data: bytes) -> None:
        """Write ``data`` to stdin; raises :class:`BrokenPipeError` when it is gone."""
        assert self._process.stdin is not None
        try:
            await self._process.stdin.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise BrokenPipeError(str(exc)) from exc

    async def read_more(self) -> None:
        """Read one chunk of stdout into the framer (which may complete no frame yet)."""
        assert self._process.stdout is not None
        try:
            chunk = await self._process.stdout.receive(_READ_CHUNK)
        except _STREAM_GONE:
            if not self.stdout_ended:
                self._frames.end()
                self.stdout_ended = True
            return
        self._frames.feed(chunk)

    async def pump_stderr(self, sink: StderrSink) -> None:
        assert self._process.stderr is not None
        stream = self._process.stderr
        while True:
            try:
                chunk = await stream.receive(_READ_CHUNK)
            except _STREAM_GONE:
                break
            sink.feed(chunk)
        sink.end()

    async def close_stdin(self) -> None:
        if self._process.stdin is not None:
            # Already gone is fine: that is what closing it was for.
            with contextlib.suppress(anyio.BrokenResourceError, OSError):
                await self._process.stdin.aclose()

    async def wait(self) -> None:
        await self._process.wait()

    async def aclose(self) -> None:
        for stream in (self._process.stdout, self._process.stderr):
            if stream is not None:
                await stream.aclose()
