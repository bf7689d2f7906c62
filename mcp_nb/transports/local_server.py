"""A local HTTP MCP server started from a notebook, which cannot outlive the kernel.

A stdio server is the kernel's child by construction, and its transport
(:mod:`.stdio.process`) makes sure it dies with the kernel. An HTTP server a notebook
starts with ``subprocess.Popen`` has none of that: ``atexit`` runs only when Python exits
in order, so a kernel that is restarted, killed by its manager or by the OOM killer
leaves the server listening on its port for good. :func:`start_local_server` gives such a
server the same three guards as a stdio server: a process group of its own, a watchdog
that kills the group when this process dies, and (Linux) a parent-death signal.

>>> from mcp_nb import start_lab
>>> lab = start_lab("--auth")          # python -m mcp_nb.lab --http --port 0 --auth
>>> lab.url
'http://127.0.0.1:.../mcp'
>>> lab.stop()                         # SIGTERM, then SIGKILL after a grace period
0
"""

from __future__ import annotations

import atexit
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence

from ..i18n import _
from .stdio.process import ProcessGroup, describe_returncode, with_parent_death_signal
from .stdio.stderr import StderrLog

#: The lab's first line on stdout: "mcp_nb lab server listening on http://127.0.0.1:PORT/mcp".
LAB_READY = re.compile(r"listening on (\S+)")


class LocalServerError(RuntimeError):
    """The server ended, or said nothing usable, before it was ready."""


class LocalServer:
    """A server process this kernel started; :attr:`url` is where it listens.

    Its output is read all along (a full pipe would stop it); its stderr is kept as a stdio
    server's is (:class:`~.stdio.stderr.StderrLog`: the latest lines, each cut at a limit),
    for :meth:`stderr_tail`.
    """

    def __init__(self, process: subprocess.Popen[bytes], group: ProcessGroup) -> None:
        self.process = process
        #: Where the server listens, from the line that said it was ready.
        self.url = ""
        self._group = group
        self._stopped = False
        self._stdout: queue.Queue[str | None] = queue.Queue()
        self.stderr = StderrLog(max_lines=200)
        self._readers = [
            threading.Thread(target=target, daemon=True, name=f"mcp_nb-local-server-{process.pid}")
            for target in (self._read_stdout, self._read_stderr)]
        for reader in self._readers:
            reader.start()

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        # Lines cut at 64 KiB: a server's readiness line is short, and nothing is held longer.
        while line := self.process.stdout.readline(65536):
            self._stdout.put(line.decode("utf-8", "replace").rstrip("\n"))
        self._stdout.put(None)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        while chunk := self.process.stderr.read1(65536):
            self.stderr.feed(chunk)
        self.stderr.end()

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.poll()

    def stderr_tail(self, lines: int = 20) -> list[str]:
        """The server's last ``lines`` lines on stderr."""
        return list(self.stderr.lines)[-lines:]

    def wait_ready(self, ready: re.Pattern[str], timeout: float) -> str:
        """The URL of the first stdout line ``ready`` matches (its first group)."""
        try:
            while (line := self._stdout.get(timeout=timeout)) is not None:
                if match := ready.search(line):
                    self.url = match.group(1)
                    return self.url
        except queue.Empty:
            self.stop()
            raise LocalServerError(
                _("the server said nothing matching {pattern!r} in {seconds:g} s").format(
                    pattern=ready.pattern, seconds=timeout)) from None
        code = self.process.wait()
        self.stop()
        self._readers[1].join(1.0)  # the stderr it wrote as it ended, for the message
        tail = "\n".join(self.stderr_tail(5))
        raise LocalServerError(_("the server ended before it was ready ({how})").format(
            how=describe_returncode(code)) + (f":\n{tail}" if tail else ""))

    def stop(self, grace: float = 5.0) -> int:
        """End the server and whatever it started: SIGTERM to its group, SIGKILL after
        ``grace`` seconds (a server may ignore SIGTERM). Returns its exit code; stopping a
        stopped server does nothing more."""
        if self._stopped:
            # Its group was released: that group id may be another's by now.
            return self.process.returncode
        if self.process.poll() is None:
            self._group.signal(signal.SIGTERM)
            try:
                self.process.wait(grace)
            except subprocess.TimeoutExpired:
                self._group.signal(signal.SIGKILL)
                self.process.wait()
        self._group.sweep()  # what the server started and left behind
        self._group.release()
        self._stopped = True
        return self.process.returncode

    def __repr__(self) -> str:
        state = describe_returncode(self.process.poll())
        return f"<LocalServer pid {self.pid} {self.url or '(not ready)'}: {state}>"


def start_local_server(argv: Sequence[str], *, ready: re.Pattern[str] = LAB_READY,
                       timeout: float = 30.0, env: Mapping[str, str] | None = None
                       ) -> LocalServer:
    """Start ``argv`` and return once a line of its stdout matches ``ready``.

    Call it from the kernel's main thread: Linux sends the parent-death signal when the
    *thread* that started the child ends, and the main thread ends only with the kernel.

    Raises :class:`LocalServerError` if the server exits first (with its last stderr
    lines) or says nothing that matches within ``timeout`` seconds.
    """
    process = subprocess.Popen(
        with_parent_death_signal(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env=None if env is None else dict(env),
        # The leader of a group of its own: a stop reaches what it starts, and the
        # watchdog (out of the kernel's group) kills the group if the kernel dies.
        start_new_session=hasattr(os, "killpg"))
    server = LocalServer(process, ProcessGroup(process.pid))
    atexit.register(server.stop)
    server.wait_ready(ready, timeout)
    return server


def start_lab(*flags: str, timeout: float = 30.0) -> LocalServer:
    """The bundled lab server over HTTP on a free port of 127.0.0.1, with ``flags``
    (``python -m mcp_nb.lab --help`` lists them); it ends with this kernel at the latest.

    >>> lab = start_lab("--drop-stream-after", "2")
    >>> lab
    <LocalServer pid ... http://127.0.0.1:.../mcp: still running>
    >>> lab.stop()
    0
    """
    return start_local_server([sys.executable, "-m", "mcp_nb.lab", "--http", "--port", "0",
                               *flags], timeout=timeout)
