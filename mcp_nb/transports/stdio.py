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
"""

from __future__ import annotations

import atexit
import contextlib
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Mapping, Sequence

import anyio
from anyio.abc import Process, TaskGroup

from ..protocol.envelope import DEFAULT_MAX_MESSAGE_BYTES
from .base import Emit, TransportClosed, TransportEvent

#: Environment variables a server inherits by default. Everything else (API keys,
#: tokens in the notebook's environment) must be passed explicitly.
DEFAULT_INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")

_READ_CHUNK = 65536

# Children that have not been reaped yet, for the atexit sweep.
_LIVE_CHILDREN: dict[int, Process] = {}


def _kill_live_children() -> None:
    for pid, process in list(_LIVE_CHILDREN.items()):
        if process.returncode is None:
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
        self._process: Process | None = None
        self._emit: Emit = lambda event: None
        self._lines: deque[bytes] = deque()
        self._partial = b""
        self._discarding = False
        self._close_started = False
        # Created in start(): anyio events belong to a running event loop.
        self._closed: anyio.Event | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    @property
    def returncode(self) -> int | None:
        return self._process.returncode if self._process else None

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
        try:
            self._process = await anyio.open_process(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.env,
                cwd=self.cwd,
                # Own process group: a kernel interrupt (SIGINT to the group) must
                # cancel the request, not kill the server.
                start_new_session=True,
            )
        except OSError as exc:
            raise TransportClosed(f"cannot start server {self.command!r}: {exc}") from exc
        _LIVE_CHILDREN[self._process.pid] = self._process
        emit(TransportEvent(
            "spawned", f"pid {self._process.pid}: {' '.join(self.command)}",
            {"pid": self._process.pid, "argv": list(self.command), "cwd": self.cwd},
        ))
        task_group.start_soon(self._pump_stderr)

    async def _pump_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        partial = b""
        stream = self._process.stderr
        while True:
            try:
                chunk = await stream.receive(_READ_CHUNK)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                break
            *lines, partial = (partial + chunk).split(b"\n")
            if len(partial) > self.max_line_bytes:
                lines.append(partial[: self.max_line_bytes])
                partial = b""
            for raw in lines:
                self._record_stderr(raw)
        if partial:
            self._record_stderr(partial)

    def _record_stderr(self, raw: bytes) -> None:
        line = raw.rstrip(b"\r").decode("utf-8", "replace")
        self.stderr_tail.append(line)
        self._emit(TransportEvent("stderr", line))

    async def send(self, frame: bytes) -> None:
        process = self._process
        if process is None or process.stdin is None or self._close_started:
            raise TransportClosed("the server's stdin is closed")
        try:
            await process.stdin.send(frame + b"\n")
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            raise self.describe_exit() from None

    async def receive(self) -> bytes:
        lines = self._lines
        while not lines:
            process = self._process
            if process is None or process.stdout is None:
                raise TransportClosed("the transport was not started")
            try:
                chunk = await process.stdout.receive(_READ_CHUNK)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                if self._partial and not self._discarding:
                    # A last message without its newline still counts.
                    frame, self._partial = self._partial, b""
                    return frame
                self._emit(TransportEvent("stdout closed", "the server closed its stdout"))
                raise self.describe_exit() from None
            self._feed(chunk)
        return lines.popleft()

    def _feed(self, chunk: bytes) -> None:
        if b"\n" not in chunk:
            self._partial += chunk
            self._check_partial_size()
            return
        *complete, rest = (self._partial + chunk).split(b"\n")
        if self._discarding:
            # The first "line" is the tail of an oversized message: drop it.
            complete = complete[1:]
            self._discarding = False
        for line in complete:
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                continue
            if len(line) > self.max_line_bytes:
                self._report_oversized(len(line))
                continue
            self._lines.append(line)
        self._partial = rest
        self._check_partial_size()

    def _check_partial_size(self) -> None:
        if len(self._partial) > self.max_line_bytes:
            if not self._discarding:
                self._report_oversized(len(self._partial), complete=False)
            self._partial = b""
            self._discarding = True

    def _report_oversized(self, size: int, *, complete: bool = True) -> None:
        at_least = "" if complete else "at least "
        self._emit(TransportEvent(
            "oversized line",
            f"discarded a stdout line of {at_least}{size} bytes "
            f"(limit {self.max_line_bytes})",
            {"size": size, "limit": self.max_line_bytes},
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
        process = self._process
        if process is None or self._closed is None:
            return
        with anyio.CancelScope(shield=True):
            try:
                await self._escalate(process)
            finally:
                for stream in (process.stdout, process.stderr):
                    if stream is not None:
                        await stream.aclose()
                _LIVE_CHILDREN.pop(process.pid, None)
                self._closed.set()

    async def _escalate(self, process: Process) -> None:
        started = time.monotonic()

        def elapsed() -> dict[str, float]:
            return {"elapsed": time.monotonic() - started}

        if process.stdin is not None:
            with contextlib.suppress(anyio.BrokenResourceError, OSError):
                await process.stdin.aclose()
        already_gone = process.returncode is not None
        if not already_gone:
            self._emit(TransportEvent("stdin closed", "closed the server's stdin", elapsed()))
        steps = (
            (self.stdin_close_grace, "SIGTERM", process.terminate),
            (self.sigterm_grace, "SIGKILL", process.kill),
        )
        for grace, name, send_signal in steps:
            if await self._wait_for_exit(process, grace):
                break
            self._emit(TransportEvent(
                name, f"server still running after {grace:g}s: sent {name}", elapsed()
            ))
            with contextlib.suppress(ProcessLookupError):
                send_signal()
        await self._wait_for_exit(process, math.inf)
        self._emit(TransportEvent(
            "exited", f"server {describe_returncode(process.returncode)}",
            {**elapsed(), "returncode": process.returncode},
        ))

    @staticmethod
    async def _wait_for_exit(process: Process, timeout: float) -> bool:
        with anyio.move_on_after(timeout):
            await process.wait()
        return process.returncode is not None
