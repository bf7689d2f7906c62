"""stdio transport: the server is a child process speaking newline-delimited JSON.

Rules this module carries out (MCP spec, basic/transports#stdio and
basic/lifecycle#shutdown):

* spawn from an argv list, never through a shell;
* one message per line on stdin/stdout; anything on stderr is the server's log;
* shutdown: close the server's stdin, wait; SIGTERM, wait; SIGKILL; always reap.

And the kit's own promise: no child process outlives the Python process.  Three
layers make that hold: orderly :meth:`StdioTransport.close`, an ``atexit`` sweep
of every still-running child, and — on Linux, through ``setpriv`` — a
parent-death signal so even a SIGKILLed kernel takes its servers with it.

The bytes themselves are moved by one of two pipe backends, chosen when the
server starts: :mod:`.stdio_asyncio` on asyncio (what Jupyter runs; protocol
callbacks on the pipes, no stream or extra task between the pipe and the
session, so a round trip costs the fewest event-loop iterations) and
:mod:`.stdio_anyio` everywhere else (anyio's process streams, e.g. on trio).
Framing (:mod:`.lines`) and everything in this module are shared.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import math
import os
import shutil
import signal
import sys
import time
from collections import deque
from collections.abc import Awaitable, Mapping, Sequence
from typing import Protocol

import anyio
from anyio.abc import TaskGroup

from ..protocol.envelope import DEFAULT_MAX_MESSAGE_BYTES
from .base import Emit, TransportClosed, TransportEvent
from .lines import LineFramer, OversizedLine
from .stdio_anyio import spawn_anyio
from .stdio_asyncio import AsyncioServerProcess, TakeFailed, TakeInline, spawn_asyncio

#: Environment variables a server inherits by default. Everything else (API keys,
#: tokens in the notebook's environment) must be passed explicitly.
DEFAULT_INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")


class ServerProcess(Protocol):
    """A spawned server and its three pipes, as a pipe backend drives them.

    Two backends: :mod:`.stdio_asyncio` (the fast path, on asyncio) and
    :mod:`.stdio_anyio` (anyio's process streams, for other event loops).
    Both frame stdout into the :class:`~.lines.LineFramer` they were given
    and hand each stderr line to a callback; :class:`StdioTransport` does the
    rest (events, errors, the shutdown escalation) the same way for both.
    """

    pid: int

    @property
    def returncode(self) -> int | None: ...

    @property
    def stdout_ended(self) -> bool:
        """stdout reached its end; the framer has been told (a last unterminated line counts)."""

    def write(self, data: bytes) -> Awaitable[None]:
        """Write to stdin; raises :class:`BrokenPipeError` once it is gone."""

    def read_more(self) -> Awaitable[None]:
        """Wait until more of stdout was framed (maybe no complete frame) or it ended."""

    async def close_stdin(self) -> None: ...

    def terminate(self) -> None: ...

    def kill(self) -> None: ...

    async def wait(self) -> None:
        """Until the server has exited and been reaped."""

    async def aclose(self) -> None:
        """Release the pipes; called once the server has exited."""


# Children that have not been reaped yet, for the atexit sweep.
_LIVE_CHILDREN: dict[int, ServerProcess] = {}


def _kill_live_children() -> None:
    for pid, server in list(_LIVE_CHILDREN.items()):
        if server.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


atexit.register(_kill_live_children)

_SETPRIV = shutil.which("setpriv") if sys.platform.startswith("linux") else None


def default_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The server's environment: the safe inherited variables plus ``extra``."""
    env = {k: os.environ[k] for k in DEFAULT_INHERITED_ENV if k in os.environ}
    if extra:
        env.update(extra)
    return env


def _running_on_asyncio() -> bool:
    """Can the asyncio pipe backend run here?

    It needs an asyncio task (anyio has no public way to ask which backend
    runs) and POSIX pipes: on Windows asyncio reads pipes only through the
    proactor's overlapped I/O, which ``os.pipe()`` does not give.
    """
    if sys.platform == "win32":
        return False
    try:
        return asyncio.current_task() is not None
    except RuntimeError:  # no asyncio event loop in this thread
        return False


def describe_returncode(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class StdioTransport:
    """Runs an MCP server as a subprocess and frames its stdio by newlines.

    Example::

        transport = StdioTransport([sys.executable, "-m", "mcp_nb.lab"])
        async with ClientSession(transport) as session:
            await session.connect()

    ``stdin_close_grace`` and ``sigterm_grace`` are the two waits of the
    shutdown escalation; ``stderr_lines`` bounds the stderr buffer.
    """

    kind = "stdio"

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stdin_close_grace: float = 2.0,
        sigterm_grace: float = 2.0,
        max_line_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        stderr_lines: int = 500,
    ) -> None:
        if isinstance(command, (str, bytes)):
            raise TypeError(
                "command must be an argv list such as ['python', '-m', 'server']; "
                "mcp_nb never runs a command line through a shell"
            )
        if not command:
            raise ValueError("command is empty: give the server program and its arguments")
        self.command = [os.fspath(part) for part in command]
        self.env = default_environment(env)
        self.cwd = os.fspath(cwd) if cwd is not None else None
        self.stdin_close_grace = stdin_close_grace
        self.sigterm_grace = sigterm_grace
        self.max_line_bytes = max_line_bytes
        #: The last lines the server wrote to stderr (bounded).
        self.stderr_tail: deque[str] = deque(maxlen=stderr_lines)
        self._server: ServerProcess | None = None
        self._emit: Emit = lambda event: None
        self._framer = LineFramer(max_line_bytes)  # start() makes the one it uses
        self._close_started = False
        # Created in start(): anyio events belong to a running event loop.
        self._closed: anyio.Event | None = None

    @property
    def pid(self) -> int | None:
        return self._server.pid if self._server else None

    @property
    def returncode(self) -> int | None:
        return self._server.returncode if self._server else None

    def _resolve_program(self) -> str:
        program = self.command[0]
        if os.sep in program:
            if not os.access(program, os.X_OK):
                raise TransportClosed(f"cannot start server: {program!r} is not an executable file")
            return program
        found = shutil.which(program, path=self.env.get("PATH", os.defpath))
        if found is None:
            raise TransportClosed(
                f"cannot start server: {program!r} was not found on the server's PATH "
                f"({self.env.get('PATH', os.defpath)!r}); give a full path or pass env PATH"
            )
        return found

    async def start(self, task_group: TaskGroup, emit: Emit) -> None:
        self._emit = emit
        self._closed = anyio.Event()
        argv = [self._resolve_program(), *self.command[1:]]
        if _SETPRIV:
            # Parent-death signal: if this process dies without cleaning up, the
            # kernel delivers SIGKILL to the server (survives the exec below).
            argv = [_SETPRIV, "--pdeathsig", "KILL", "--", *argv]
        self._framer = LineFramer(self.max_line_bytes)
        try:
            if _running_on_asyncio():
                self._server = await spawn_asyncio(
                    argv, env=self.env, cwd=self.cwd, frames=self._framer,
                    on_stderr_line=self._record_stderr)
            else:
                self._server = await spawn_anyio(
                    argv, env=self.env, cwd=self.cwd, frames=self._framer,
                    on_stderr_line=self._record_stderr, task_group=task_group)
        except OSError as exc:
            raise TransportClosed(f"cannot start server {self.command!r}: {exc}") from exc
        pid = self._server.pid
        _LIVE_CHILDREN[pid] = self._server
        emit(TransportEvent(
            "spawned", f"pid {pid}: {' '.join(self.command)}",
            {"pid": pid, "argv": list(self.command), "cwd": self.cwd},
        ))

    def _record_stderr(self, raw: bytes) -> None:
        line = raw.rstrip(b"\r").decode("utf-8", "replace")
        self.stderr_tail.append(line)
        self._emit(TransportEvent("stderr", line))

    async def send(self, frame: bytes) -> None:
        if self.send_nowait(frame):  # also refuses a closed transport
            return
        try:
            await self._server.write(frame + b"\n")  # type: ignore[union-attr]
        except OSError:
            raise self.describe_exit() from None

    def send_nowait(self, frame: bytes) -> bool:
        """Send ``frame`` if that needs no waiting: True if it was sent, False if nothing was.

        An optional transport capability, the session's fast path: a frame the
        pipe takes at once needs neither a coroutine nor the session's send
        lock.  False where :meth:`send` would wait for the server to read (the
        pipe's buffer is over its high-water mark) and on the anyio pipe
        backend; then use :meth:`send`.  Raises :class:`TransportClosed` as
        :meth:`send` does.
        """
        server = self._server
        if server is None or self._close_started:
            raise TransportClosed("the server's stdin is closed")
        if type(server) is not AsyncioServerProcess:
            return False
        try:
            return server.write_nowait(frame + b"\n")
        except OSError:
            raise self.describe_exit() from None

    async def receive(self) -> bytes:
        server = self._server
        if server is None:
            raise TransportClosed("the transport was not started")
        frames = self._framer.frames
        while True:
            while frames:
                frame = frames.popleft()
                if type(frame) is bytes:
                    return frame
                if type(frame) is TakeFailed:
                    raise frame.error
                # Reported here, in the reader's task and in its place among the
                # messages, rather than from a pipe callback.
                assert isinstance(frame, OversizedLine)
                self._report_oversized(frame)
            if server.stdout_ended:
                self._emit(TransportEvent("stdout closed", "the server closed its stdout"))
                raise self.describe_exit()
            await server.read_more()

    def take_frames_inline(self, take: TakeInline) -> bool:
        """Offer frames to ``take`` right where they are read, while the reader sleeps.

        An optional transport capability, the session's fast path for
        responses and notifications (benchmarks/RESULTS.md, "Responses in the
        read callback"): ``take(frame)`` runs in the pipe's read callback,
        outside any task, and returns True if it handled the frame (then
        :meth:`receive` never returns it) or False to leave it, and every frame
        after it, to :meth:`receive`.  Frames are offered only while the reader waits in
        :meth:`receive` with nothing queued, so order is kept.  If ``take``
        raises, the next :meth:`receive` raises the same exception.

        Returns False (and does nothing) where the pipe backend cannot do it
        (anyio's process streams); call it after :meth:`start`.
        """
        if not isinstance(self._server, AsyncioServerProcess):
            return False
        self._server.take_inline(take)
        return True

    def _report_oversized(self, line: OversizedLine) -> None:
        at_least = "" if line.complete else "at least "
        self._emit(TransportEvent(
            "oversized line",
            f"discarded a stdout line of {at_least}{line.size} bytes "
            f"(limit {self.max_line_bytes})",
            {"size": line.size, "limit": self.max_line_bytes},
        ))

    def set_protocol_version(self, version: str) -> None:
        """stdio carries no per-message metadata: nothing to do."""

    def describe_exit(self) -> TransportClosed:
        code = self.returncode
        tail = list(self.stderr_tail)[-10:]
        state = describe_returncode(code)
        message = f"the server process {'is ' if code is None else ''}{state}"
        if tail:
            message += "; last stderr: " + " | ".join(tail[-3:])
        return TransportClosed(message, exit_code=code, stderr_tail=tail)

    async def close(self) -> None:
        """Shut the server down as the spec says, escalating only when it must.

        Close stdin → wait ``stdin_close_grace`` → SIGTERM → wait
        ``sigterm_grace`` → SIGKILL.  Shielded from cancellation: half a
        shutdown would leave an orphan.
        """
        if self._close_started:
            if self._closed is not None:
                await self._closed.wait()
            return
        self._close_started = True
        server = self._server
        if server is None or self._closed is None:
            return
        with anyio.CancelScope(shield=True):
            try:
                await self._escalate(server)
            finally:
                await server.aclose()
                _LIVE_CHILDREN.pop(server.pid, None)
                self._closed.set()

    async def _escalate(self, server: ServerProcess) -> None:
        started = time.monotonic()

        def elapsed() -> dict[str, float]:
            return {"elapsed": time.monotonic() - started}

        await server.close_stdin()
        already_gone = server.returncode is not None
        if not already_gone:
            self._emit(TransportEvent("stdin closed", "closed the server's stdin", elapsed()))
        steps = (
            (self.stdin_close_grace, "SIGTERM", server.terminate),
            (self.sigterm_grace, "SIGKILL", server.kill),
        )
        for grace, name, send_signal in steps:
            if await self._wait_for_exit(server, grace):
                break
            self._emit(TransportEvent(
                name, f"server still running after {grace:g}s: sent {name}", elapsed()
            ))
            with contextlib.suppress(ProcessLookupError):
                send_signal()
        await self._wait_for_exit(server, math.inf)
        self._emit(TransportEvent(
            "exited", f"server {describe_returncode(server.returncode)}",
            {**elapsed(), "returncode": server.returncode},
        ))

    @staticmethod
    async def _wait_for_exit(server: ServerProcess, timeout: float) -> bool:
        with anyio.move_on_after(timeout):
            await server.wait()
        return server.returncode is not None
