"""The stdio transport: the server is a child process speaking newline-delimited JSON.

Rules this module carries out (MCP spec, basic/transports#stdio and
basic/lifecycle#shutdown):

* spawn from an argv list, never through a shell;
* one message per line on stdin/stdout; anything on stderr is the server's log;
* shutdown: close the server's stdin, wait; SIGTERM, wait; SIGKILL; always reap.

The signals go to the server's whole process group, and what is left of the
group once the server has exited is killed (:mod:`.process`: no orphans).  The
bytes are moved by a pipe backend chosen in :mod:`.backends`; framing is
:mod:`.framing`, the bounded stderr log :mod:`.stderr`.
"""

from __future__ import annotations

import math
import os
import shutil
import signal
import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
from anyio.abc import TaskGroup

from ...i18n import _
from ...protocol.envelope import DEFAULT_MAX_MESSAGE_BYTES, response_id_from_edges
from ..base import Emit, Transport, TransportClosed, TransportEvent
from . import backends
from ._asyncio_pipes import AsyncioServerProcess, TakeFailed, TakeInline
from .backends import ServerProcess
from .framing import LineFramer, OversizedLine
from .process import (
    ProcessGroup,
    default_environment,
    describe_returncode,
    with_parent_death_signal,
)
from .stderr import DEFAULT_STDERR_LINE_BYTES, StderrLog


class StdioTransport(Transport):
    """Runs an MCP server as a subprocess and frames its stdio by newlines.

    Example::

        transport = StdioTransport([sys.executable, "-m", "mcp_nb.lab"])
        async with ClientSession(transport) as session:
            await session.connect()

    ``stdin_close_grace`` and ``sigterm_grace`` are the two waits of the
    shutdown escalation.  ``max_message_bytes`` bounds one incoming message
    (see :data:`~mcp_nb.protocol.envelope.DEFAULT_MAX_MESSAGE_BYTES`);
    ``stderr_lines`` and ``stderr_line_bytes`` bound what is kept of the
    server's stderr (:attr:`stderr`).
    """

    kind = "stdio"
    #: No HTTP underneath: no headers to mirror arguments into, no httpx.Auth.
    lacks = frozenset({"set_param_headers", "auth"})

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stdin_close_grace: float = 2.0,
        sigterm_grace: float = 2.0,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        stderr_lines: int = 500,
        stderr_line_bytes: int = DEFAULT_STDERR_LINE_BYTES,
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
        self.max_message_bytes = max_message_bytes
        #: The server's stderr: the last lines, and counts of what was dropped or cut.
        self.stderr = StderrLog(stderr_lines, stderr_line_bytes, self._on_stderr_line)
        self._server: ServerProcess | None = None
        self._group: ProcessGroup | None = None
        self._emit: Emit = lambda event: None
        self._framer = LineFramer(max_message_bytes)  # start() makes the one it uses
        self._close_started = False
        # Created in start(): anyio events belong to a running event loop.
        self._closed: anyio.Event | None = None

    @property
    def stderr_tail(self) -> deque[str]:
        """The last lines the server wrote to stderr (bounded; see :attr:`stderr`)."""
        return self.stderr.lines

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
                raise TransportClosed(_("cannot start server: {program} is not an executable "
                                        "file").format(program=repr(program)))
            return program
        found = shutil.which(program, path=self.env.get("PATH", os.defpath))
        if found is None:
            raise TransportClosed(_(
                "cannot start server: {program} was not found on the server's PATH ({path}); "
                "give a full path or pass env PATH").format(
                program=repr(program), path=repr(self.env.get("PATH", os.defpath))))
        return found

    async def start(self, task_group: TaskGroup, emit: Emit) -> None:
        self._emit = emit
        self._closed = anyio.Event()
        argv = with_parent_death_signal([self._resolve_program(), *self.command[1:]])
        self._framer = LineFramer(self.max_message_bytes)
        try:
            self._server = await backends.spawn(
                argv, env=self.env, cwd=self.cwd, frames=self._framer, stderr=self.stderr,
                task_group=task_group)
        except OSError as exc:
            raise TransportClosed(_("cannot start server {command}: {reason}").format(
                command=repr(self.command), reason=exc)) from exc
        pid = self._server.pid
        self._group = ProcessGroup(pid)
        emit(TransportEvent(
            "spawned", f"pid {pid}: {' '.join(self.command)}",
            {"pid": pid, "argv": list(self.command), "cwd": self.cwd},
        ))

    def _on_stderr_line(self, line: str) -> None:
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
            raise TransportClosed(_("the server's stdin is closed"))
        if type(server) is not AsyncioServerProcess:
            return False
        try:
            return server.write_nowait(frame + b"\n")
        except OSError:
            raise self.describe_exit() from None

    async def receive(self) -> bytes:
        server = self._server
        if server is None:
            raise TransportClosed(_("the transport was not started"))
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
                self._emit(TransportEvent("stdout closed", _("the server closed its stdout")))
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
        """Say a message was discarded: as a failure of the request it answered, if legible."""
        at_least = "" if line.complete else "at least "
        limit = self.max_message_bytes
        size = f"{at_least}{line.size:,} bytes, over the {limit:,}-byte limit on one message"
        request_id = response_id_from_edges(line.head, line.tail)
        if request_id is None:
            self._emit(TransportEvent(
                "oversized line", f"discarded a stdout line of {size} (max_message_bytes)",
                {"size": line.size, "limit": limit},
            ))
            return
        self._emit(TransportEvent(
            "request failed", f"discarded its response of {size}",
            {"request_id": request_id, "cause": "too-large", "status": None, "limit": limit,
             "option": "max_message_bytes", "size": line.size},
        ))

    def set_protocol_version(self, version: str) -> None:
        """stdio carries no per-message metadata: nothing to do."""

    def describe_target(self) -> dict[str, Any]:
        return {"kind": self.kind, "command": list(self.command), "env": dict(self.env),
                "cwd": self.cwd}

    def describe_exit(self) -> TransportClosed:
        code = self.returncode
        tail = list(self.stderr.lines)[-10:]
        state = describe_returncode(code)
        message = (_("the server process is {state}") if code is None
                   else _("the server process {state}")).format(state=state)
        if tail:
            message += _("; last stderr: {lines}").format(lines=" | ".join(tail[-3:]))
        return TransportClosed(message, exit_code=code, stderr_tail=tail)

    async def close(self) -> None:
        """Shut the server down as the spec says, escalating only when it must.

        Close stdin → wait ``stdin_close_grace`` → SIGTERM → wait
        ``sigterm_grace`` → SIGKILL, each signal to the server's whole process
        group; then kill what is left of the group.  Shielded from
        cancellation: half a shutdown would leave an orphan.
        """
        if self._close_started:
            if self._closed is not None:
                await self._closed.wait()
            return
        self._close_started = True
        server, group = self._server, self._group
        if server is None or group is None or self._closed is None:
            return
        with anyio.CancelScope(shield=True):
            try:
                await self._escalate(server, group)
            finally:
                group.sweep()  # again: whatever the escalation did not get to
                group.release()
                await server.aclose()
                self._closed.set()

    async def _escalate(self, server: ServerProcess, group: ProcessGroup) -> None:
        started = time.monotonic()

        def elapsed() -> dict[str, float]:
            return {"elapsed": time.monotonic() - started}

        await server.close_stdin()
        already_gone = server.returncode is not None
        if not already_gone:
            self._emit(TransportEvent("stdin closed", _("closed the server's stdin"), elapsed()))
        for grace, signum in ((self.stdin_close_grace, signal.SIGTERM),
                              (self.sigterm_grace, signal.SIGKILL)):
            if await self._wait_for_exit(server, grace):
                break
            name = signum.name
            self._emit(TransportEvent(
                name, _("server still running after {seconds}s: sent {signal} to its process "
                        "group").format(seconds=f"{grace:g}", signal=name),
                elapsed(),
            ))
            group.signal(signum)
        await self._wait_for_exit(server, math.inf)
        self._emit(TransportEvent(
            "exited", _("server {state}").format(state=describe_returncode(server.returncode)),
            {**elapsed(), "returncode": server.returncode},
        ))
        if group.sweep():
            self._emit(TransportEvent(
                "group swept", _("killed what the server left running in its process group "
                                 "(processes it started)"), elapsed(),
            ))

    @staticmethod
    async def _wait_for_exit(server: ServerProcess, timeout: float) -> bool:
        with anyio.move_on_after(timeout):
            await server.wait()
        return server.returncode is not None
