"""The stdio server's pipes on asyncio (private strategy): protocol callbacks, nothing between.

Why not asyncio's subprocess streams (which ``anyio.open_process`` uses)?
Between the pipe and the session they cost a round trip three event-loop
iterations of its five (benchmarks/RESULTS.md, "The stdio transport on
asyncio's own pipes"):

* a subprocess transport hands every chunk it reads to its protocol through
  ``loop.call_soon`` (``BaseSubprocessTransport._pipe_data_received``): one
  iteration later;
* the stream reader then wakes the session's reader task, which a task
  always does through ``loop.call_soon``: one more;
* anyio's ``send()`` ends with a checkpoint, even when the pipe took the
  whole message: one more per message sent.

So the child is spawned with ``loop.subprocess_exec`` only for what it is
good at (fork/exec, and reaping through the loop's child watcher), and its
stdin, stdout and stderr are pipes this module makes itself and connects
with ``loop.connect_write_pipe`` / ``loop.connect_read_pipe``.  The stdout
protocol splits the bytes into frames right where they are read and resumes
the task waiting for them in the same iteration (:class:`InlineWakeup`); a
frame sent goes straight to the pipe transport's ``write``, which tries the
pipe at once and buffers what does not fit; a sender waits only while that
buffer is over its high-water mark.  That makes two iterations per round
trip: the one that reads the response, and the one that resumes the caller.
The session goes one further (``StdioTransport.take_frames_inline``): while
its reader sleeps, a response (or notification) is handled in the read
callback itself and resumes the caller there, so a round trip takes one.

Exit is watched by the subprocess transport alone: the pipes are not its own,
so :meth:`AsyncioServerProcess.wait` returns when the server exits even if a
grandchild still holds its stdout.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..wakeup import InlineWakeup
from .framing import LineFramer, OversizedLine
from .stderr import StderrSink

#: Handles one stdout frame in the pipe's read callback; False leaves it to the reader.
TakeInline = Callable[[bytes], bool]
#: Unread stdout frames at which reading the pipe stops until the reader catches up.
_PAUSE_AT_FRAMES = 256


async def spawn_asyncio(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str | None,
    frames: LineFramer,
    stderr: StderrSink,
) -> AsyncioServerProcess:
    """Start ``argv`` in a session of its own, its stdout framed into ``frames``."""
    loop = asyncio.get_running_loop()
    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()
    stderr_read, stderr_write = os.pipe()
    # Our ends, as the file objects the pipe transports take over (and close).
    ours = [open(fd, mode, buffering=0)  # noqa: SIM115 - closed by the transports below
            for fd, mode in ((stdin_write, "wb"), (stdout_read, "rb"), (stderr_read, "rb"))]
    exit_watch = _ExitWatch()
    try:
        process, _ = await loop.subprocess_exec(
            lambda: exit_watch, *argv,
            stdin=stdin_read, stdout=stdout_write, stderr=stderr_write,
            env=env, cwd=cwd,
            # Own session and process group: a kernel interrupt (SIGINT to the
            # group) must cancel the request, not kill the server.
            start_new_session=True,
        )
    except BaseException:
        for pipe in ours:
            pipe.close()
        raise
    finally:
        # The child has its copies (or there is no child): ours would keep the
        # pipes open after the server exits, and its stdout would never end.
        for fd in (stdin_read, stdout_write, stderr_write):
            os.close(fd)
    stdin_pipe, stdout_pipe, stderr_pipe = ours
    connected: list[asyncio.BaseTransport] = []
    try:
        stdin, stdin_flow = await loop.connect_write_pipe(_StdinFlow, stdin_pipe)
        connected.append(stdin)
        stdout, stdout_reader = await loop.connect_read_pipe(
            lambda: _StdoutReader(frames), stdout_pipe)
        connected.append(stdout)
        stderr_transport, _ = await loop.connect_read_pipe(
            lambda: _StderrReader(stderr), stderr_pipe)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        process.close()
        for transport in connected:
            transport.close()
        for pipe in ours[len(connected):]:  # not yet handed to a transport
            pipe.close()
        raise
    return AsyncioServerProcess(process, exit_watch, stdin, stdin_flow, stdout, stdout_reader,
                                stderr_transport)


class AsyncioServerProcess:
    """A running stdio server whose pipes this module drives (see the module docstring)."""

    def __init__(
        self,
        process: asyncio.SubprocessTransport,
        exit_watch: _ExitWatch,
        stdin: asyncio.WriteTransport,
        stdin_flow: _StdinFlow,
        stdout: asyncio.ReadTransport,
        stdout_reader: _StdoutReader,
        stderr: asyncio.ReadTransport,
    ) -> None:
        self._process = process
        self._exit_watch = exit_watch
        self._stdin = stdin
        self._stdin_flow = stdin_flow
        self._stdout = stdout
        self._stdout_reader = stdout_reader
        self._stderr = stderr
        self.pid: int = process.get_pid()

    @property
    def returncode(self) -> int | None:
        return self._process.get_returncode()

    @property
    def stdout_ended(self) -> bool:
        return self._stdout_reader.ended

    async def write(self, data: bytes) -> None:
        """Write ``data`` to stdin; wait only while the pipe's buffer is over its high-water mark.

        Raises :class:`BrokenPipeError` when the server's stdin is gone.
        """
        self._write_now(data)
        if self._stdin_flow.paused:
            await self._stdin_flow.drained()
            if self._stdin.is_closing():  # lost while this data waited in the buffer
                raise BrokenPipeError("the server closed its stdin")

    def write_nowait(self, data: bytes) -> bool:
        """Write ``data`` unless :meth:`write` would have to wait: True if it was written.

        Nothing is written while the pipe's buffer is over its high-water mark;
        raises :class:`BrokenPipeError` as :meth:`write` does.
        """
        if self._stdin_flow.paused and not self._stdin.is_closing():
            return False
        self._write_now(data)
        return True

    def _write_now(self, data: bytes) -> None:
        """Hand ``data`` to the stdin pipe transport (it writes at once, buffers the rest)."""
        stdin = self._stdin
        if stdin.is_closing():
            raise BrokenPipeError("the server's stdin is closed")
        stdin.write(data)
        if stdin.is_closing():  # the write failed (EPIPE): the transport closed itself
            raise BrokenPipeError("the server closed its stdin")

    def take_inline(self, take: TakeInline | None) -> None:
        """Offer stdout frames to ``take`` in the read callback while the reader sleeps."""
        self._stdout_reader.take_inline = take

    def read_more(self) -> asyncio.Future[None]:
        """Resolved once stdout has produced a frame (in the framer's queue) or ended."""
        return self._stdout_reader.wait()

    async def close_stdin(self) -> None:
        # Written data still buffered is sent first, then the pipe closes.
        self._stdin.close()

    async def wait(self) -> None:
        await self._exit_watch.exited.wait()

    async def aclose(self) -> None:
        """Release the pipes and the subprocess transport (after the server has exited)."""
        for pipe in (self._stdin, self._stdout, self._stderr, self._process):
            pipe.close()


class _ExitWatch(asyncio.SubprocessProtocol):
    """The subprocess transport's protocol: it has no pipes, so it only reports the exit."""

    def __init__(self) -> None:
        self.exited = asyncio.Event()

    def process_exited(self) -> None:
        self.exited.set()


class _StdinFlow(asyncio.BaseProtocol):
    """Flow control of the stdin pipe: paused while its write buffer is over the high-water mark."""

    def __init__(self) -> None:
        self.paused = False
        self._drained: asyncio.Future[None] | None = None

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self._release()

    def connection_lost(self, exc: Exception | None) -> None:
        # A sender waiting for room wakes up and finds the transport closing.
        self.paused = False
        self._release()

    async def drained(self) -> None:
        if self._drained is None:
            self._drained = asyncio.get_running_loop().create_future()
        await asyncio.shield(self._drained)

    def _release(self) -> None:
        if self._drained is not None:
            if not self._drained.done():
                self._drained.set_result(None)
            self._drained = None


@dataclass(frozen=True, slots=True)
class TakeFailed:
    """What :attr:`_StdoutReader.take_inline` raised, queued in its frame's place."""

    error: Exception


class _StdoutReader(asyncio.Protocol):
    """Frames stdout as it is read and wakes the one task waiting for frames.

    Reading stops while :data:`_PAUSE_AT_FRAMES` frames wait unread, so a
    server that writes faster than the session reads fills its own pipe
    (and blocks) instead of this process's memory.
    """

    def __init__(self, frames: LineFramer) -> None:
        self._frames = frames
        # Kept, not looked up per call: asyncio.get_running_loop() makes a getpid()
        # system call on every call (Python 3.11, its check against forks).
        self._loop = asyncio.get_running_loop()
        self._transport: asyncio.ReadTransport | None = None
        self._paused = False
        self._waiter: InlineWakeup | None = None
        self.ended = False
        #: Optional: offered each frame in the read callback (see :meth:`_offer_inline`).
        self.take_inline: TakeInline | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.ReadTransport)
        self._transport = transport

    def wait(self) -> asyncio.Future[None]:
        """Called by the reader once it has taken every queued frame."""
        if self._paused:
            self._paused = False
            assert self._transport is not None
            self._transport.resume_reading()
        waiter = self._waiter = InlineWakeup(loop=self._loop)
        if self.ended or self._frames.frames:
            waiter.set_result(None)
        return waiter

    def data_received(self, data: bytes) -> None:
        queued = self._frames.frames
        self._frames.feed(data)
        if not queued:
            return
        waiter = self._waiter
        if waiter is not None:
            if self.take_inline is not None:
                self._offer_inline(queued, waiter)
                if not queued:
                    return
            self._waiter = None
            waiter.resolve_inline()
        elif len(queued) >= _PAUSE_AT_FRAMES and not self._paused:
            self._paused = True
            assert self._transport is not None
            self._transport.pause_reading()

    def _offer_inline(self, queued: deque[bytes | OversizedLine | TakeFailed],
                      waiter: InlineWakeup) -> None:
        """Let :attr:`take_inline` handle frames here, in order, while the reader sleeps.

        Only while the reader task waits with nothing queued can a frame be
        handled outside it without overtaking one the reader holds; the first
        frame the callback declines (or anything that is not a frame) ends the
        offer, and the reader takes it and all after it.
        """
        take = self.take_inline
        assert take is not None
        while queued and type(queued[0]) is bytes and self._waiter is waiter \
                and not waiter.done():
            frame = queued.popleft()
            try:
                taken = take(frame)  # type: ignore[arg-type]
            except Exception as exc:  # handed to the reader, not lost
                # Raised by the reader's next receive(), as if it had handled the frame.
                queued.appendleft(TakeFailed(exc))
                return
            if not taken:
                queued.appendleft(frame)
                return

    def eof_received(self) -> None:
        self._end()

    def connection_lost(self, exc: Exception | None) -> None:
        self._end()

    def _end(self) -> None:
        if not self.ended:
            self._frames.end()
            self.ended = True
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)


class _StderrReader(asyncio.Protocol):
    """Hands stderr on as it arrives (no task needed: nothing waits for it)."""

    def __init__(self, sink: StderrSink) -> None:
        self._sink = sink

    def data_received(self, data: bytes) -> None:
        self._sink.feed(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self._sink.end()
