"""Helpers for the HTTP tests: server subprocesses on loopback, found by the line they print.

Every server here listens on 127.0.0.1 on a port the OS picked, and says which
on its output; :class:`ServerProcess` waits for that line, so no test races for a
port.  Servers run in their own process group with a parent-death signal (as the
stdio transport does it), and :meth:`ServerProcess.stop` ends the whole group and
checks it is gone: no test leaves a server behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_nb.client import ClientSession, lab_command
from mcp_nb.transports import http_transport

ROOT = Path(__file__).resolve().parent.parent
PEERS = Path(__file__).resolve().parent / "peers"
#: The lab server's first stdout line.
LAB_READY = re.compile(r"mcp_nb lab server listening on (http://\S+)")
#: Upper bound for a server to start (a cold npm-installed node server included).
START_TIMEOUT = 20.0

_SETPRIV = shutil.which("setpriv") if sys.platform.startswith("linux") else None


class ServerProcess:
    """A server subprocess whose merged stdout/stderr is drained by a thread.

    ``ready`` is a regex for the line that says the server is listening; its
    first group is kept as :attr:`ready_text` (the URL, or the port).
    """

    def __init__(self, argv: Sequence[str], ready: re.Pattern[str], *,
                 env: dict[str, str] | None = None, cwd: Path = ROOT) -> None:
        argv = list(argv)
        if _SETPRIV:
            argv = [_SETPRIV, "--pdeathsig", "KILL", "--", *argv]
        self.lines: list[str] = []
        self._output_ended = False
        self._changed = threading.Condition()
        self.process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            cwd=cwd, env=env, start_new_session=True, text=True, errors="replace",
        )
        threading.Thread(target=self._drain, daemon=True).start()
        try:
            self.ready_text = self.wait_for(ready, START_TIMEOUT).group(1)
        except BaseException:
            self.stop()
            raise

    def _drain(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._output_ended = True
            self._changed.notify_all()

    def wait_for(self, pattern: re.Pattern[str] | str, timeout: float = 5.0) -> re.Match[str]:
        """The first output line matching ``pattern``, waiting up to ``timeout`` seconds."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for line in self.lines:
                    if (match := regex.search(line)) is not None:
                        return match
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._output_ended:
                    raise AssertionError(
                        f"no line matching {regex.pattern!r} within {timeout:g}s; the server "
                        f"{'closed its output' if self._output_ended else 'said'}:\n"
                        + "\n".join(self.lines[-40:]))
                self._changed.wait(remaining)

    def stop(self) -> None:
        """SIGTERM the process group, SIGKILL it if it lingers; then check nothing is left."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=5)
        assert self.process.returncode is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, 0)
            # A process of the group survived its leader: kill it and report it.
            os.killpg(self.process.pid, signal.SIGKILL)
            raise AssertionError(f"a child of {self.process.args!r} outlived it")


@contextlib.contextmanager
def lab_server(*flags: str) -> Iterator[ServerProcess]:
    """``python -m mcp_nb.lab --http FLAGS…``; ``ready_text`` is the /mcp URL."""
    server = ServerProcess(lab_command("--http", *flags), LAB_READY)
    try:
        yield server
    finally:
        server.stop()


def lab_session(server: ServerProcess, *, path: str = "/mcp", transport: str = "streamable-http",
                headers: dict[str, str] | None = None, **options: Any) -> ClientSession:
    """A session to a running lab server over HTTP (not yet opened)."""
    url = server.ready_text.replace("/mcp", path)
    return ClientSession(http_transport(url, transport, headers=headers),  # type: ignore[arg-type]
                         **options)


async def event_seen(session: ClientSession, kind: str, containing: str = "",
                     timeout: float = 5.0) -> None:
    """Wait (bounded) for an event of ``kind`` whose detail contains ``containing``.

    For events of concurrent HTTP exchanges (the GET stream opens alongside the
    session's own traffic), which a quick test could otherwise close before.
    """
    with anyio.fail_after(timeout):
        while not any(containing in text for text in events(session, kind)):
            await anyio.sleep(0.01)


def events(session: ClientSession, kind: str | None = None) -> list[str]:
    """Transport event details (of one kind), in order."""
    return [e.text or "" for e in session.transcript.events(kind)]


def http_lines(session: ClientSession, method: str | None = None) -> list[str]:
    """The ``http`` events, optionally only those of one HTTP method."""
    return [text for text in events(session, "http")
            if method is None or text.startswith(f"{method} ")]


def transcript_text(session: ClientSession) -> str:
    """Everything a transcript export would show, plus the transport events' data."""
    parts = [repr(entry.to_dict()) for entry in session.transcript]
    parts += [repr(event.data) for event in session.transport_events]
    return "\n".join(parts)


@contextlib.contextmanager
def cache_lock(cache: Path) -> Iterator[None]:
    """Hold ``cache`` for this process alone while it is being installed into.

    The suite runs in several pytest-xdist workers; two of them reaching an empty cache at
    once would run two ``npm install`` into one folder. An OS lock (released when the
    process dies, so a killed worker leaves no stale lock) makes the second one wait and
    then find the install done.
    """
    cache.parent.mkdir(parents=True, exist_ok=True)
    with open(cache.parent / f".{cache.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


EVERYTHING_PACKAGE = "@modelcontextprotocol/server-everything"
EVERYTHING_VERSION = "2026.8.31"
EVERYTHING_CACHE = ROOT / ".cache" / "server-everything"


def install_npm_package(package: str, version: str, cache: Path) -> Path:
    """``package``@``version`` installed from npm into ``cache`` on first use; its folder.

    Pinned, so upstream releases cannot change the tests under us; kept in the
    repository's ignored ``.cache/``.  Skips the test without node and npm.
    """
    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        pytest.skip(f"node and npm are needed to run {package}")
    installed = cache / "node_modules" / package
    # Written when npm has finished: a cut-short install has the package without its
    # dependencies, and is redone.
    finished = cache / f".installed-{package.replace('/', '+')}"
    with cache_lock(cache):
        if not finished.exists() or finished.read_text(encoding="utf-8") != version:
            # A cut-short install leaves files missing that npm, trusting its own record,
            # would not fetch again: start from an empty folder.
            shutil.rmtree(cache, ignore_errors=True)
            result = subprocess.run(
                [npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund",
                 "--loglevel=error", f"{package}@{version}"],
                capture_output=True, text=True, timeout=240,
            )
            if result.returncode != 0:
                pytest.fail(f"npm install {package}@{version} failed:\n{result.stderr[-2000:]}")
            finished.write_text(version, encoding="utf-8")
    return installed


def install_everything() -> Path:
    """``@modelcontextprotocol/server-everything``'s entry point (:func:`install_npm_package`)."""
    package = install_npm_package(EVERYTHING_PACKAGE, EVERYTHING_VERSION, EVERYTHING_CACHE)
    return package / "dist" / "index.js"


EVERYTHING_READY = re.compile(r"mcp_nb test peer listening on port (\d+)")


def everything_http(entry: Path, mode: str) -> Iterator[str]:
    """server-everything in ``mode`` (streamableHttp, sse) on 127.0.0.1; yields its base URL.

    Its listen() would take a fixed port on every interface; the preloaded
    ``peers/loopback_listen.cjs`` moves it to 127.0.0.1 on a free port.
    """
    node = shutil.which("node")
    assert node is not None
    server = ServerProcess([node, "--require", str(PEERS / "loopback_listen.cjs"), str(entry),
                            mode], EVERYTHING_READY)
    try:
        yield f"http://127.0.0.1:{server.ready_text}"
    finally:
        server.stop()
