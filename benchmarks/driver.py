"""Measure one MCP client against one stdio server; print the figures as JSON.

The orchestrator (:mod:`benchmarks.run`) starts this file as a script, once per
client, server and repeat, so every client is measured the same way: in a fresh
process of its own (its memory figure is not polluted by another client's
imports), with the same code around the calls, and — for fastmcp, which lives
in its own virtual environment — under a different interpreter.  That is why
this file imports nothing from the project or from any client library at the
top: each adapter imports its client when it is chosen.

Usage (the orchestrator does this for you)::

    python benchmarks/driver.py mcp_nb '["python", "benchmarks/canned_server.py"]' \\
        --calls 2000 --burst 2000 --inflight 100 --spawns 10 --idle 20
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio

#: The tool every call uses: the canned server answers any name, the lab server has it.
TOOL = "echo"
ARGUMENTS = {"text": "hi"}
CALL_PARAMS = {"name": TOOL, "arguments": ARGUMENTS}
INITIALIZE_PARAMS = {"protocolVersion": "2025-11-25", "capabilities": {},
                     "clientInfo": {"name": "benchmark", "version": "0"}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
#: What mcp_nb and the official SDK let a server inherit by default (on POSIX).
SAFE_ENVIRONMENT = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")


def safe_environment() -> dict[str, str]:
    """Servers are spawned as mcp_nb and the SDK spawn them: only the safe variables."""
    return {name: os.environ[name] for name in SAFE_ENVIRONMENT if name in os.environ}


def frame(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


class Client:
    """One client library, reduced to what the figures need.

    ``session`` spawns the server and completes the handshake (and undoes both
    on exit); ``call`` is one ``tools/call``; ``burst`` keeps ``inflight``
    calls outstanding until ``total`` are answered.
    """

    name = ""

    def version(self) -> str:
        raise NotImplementedError

    def session(self, argv: list[str]) -> contextlib.AbstractAsyncContextManager[Any]:
        raise NotImplementedError

    async def call(self, handle: Any) -> None:
        """One tools/call; the SDK-shaped clients all spell it the same way."""
        await handle.call_tool(TOOL, ARGUMENTS)

    async def burst(self, handle: Any, total: int, inflight: int) -> None:
        """Concurrent callers, each awaiting its own calls in turn."""

        async def caller(count: int) -> None:
            for _ in range(count):
                await self.call(handle)

        share, extra = divmod(total, inflight)
        async with anyio.create_task_group() as group:
            for index in range(inflight):
                group.start_soon(caller, share + (index < extra))


class RawPipe(Client):
    """The physical limit: a blocking write-a-line, read-a-line loop.

    It still encodes each request and decodes each response (a client that
    skips that is not a client), but has no event loop, no task, no
    validation and no bookkeeping.  Its ``async`` methods never await, so the
    event loop around them costs one coroutine call per request and nothing
    else.
    """

    name = "raw pipe"

    def __init__(self) -> None:
        self._ids = itertools.count(1)  # one sequence for all sessions: unique in each

    def version(self) -> str:
        return f"Python {sys.version.split()[0]} subprocess"

    @contextlib.asynccontextmanager
    async def session(self, argv: list[str]) -> AsyncIterator[Any]:
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, env=safe_environment(),
                                   start_new_session=True)
        self._exchange(process, "initialize", INITIALIZE_PARAMS)
        self._send(process, INITIALIZED)
        try:
            yield process
        finally:
            process.stdin.close()  # the well-behaved server exits on EOF
            process.wait()
            process.stdout.close()

    @staticmethod
    def _send(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
        process.stdin.write(frame(message))
        process.stdin.flush()

    def _request(self, process: subprocess.Popen[bytes], method: str,
                 params: dict[str, Any]) -> None:
        self._send(process, {"jsonrpc": "2.0", "id": next(self._ids), "method": method,
                             "params": params})

    @staticmethod
    def _answer(process: subprocess.Popen[bytes]) -> dict[str, Any]:
        """The next response, past any notifications (the lab server logs each call)."""
        while True:
            message = json.loads(process.stdout.readline())
            if "result" in message:
                return message
            if "method" not in message:
                raise RuntimeError(f"the server answered {message!r}")

    def _exchange(self, process: subprocess.Popen[bytes], method: str,
                  params: dict[str, Any]) -> None:
        self._request(process, method, params)
        self._answer(process)

    async def call(self, handle: subprocess.Popen[bytes]) -> None:
        self._exchange(handle, "tools/call", CALL_PARAMS)

    async def burst(self, handle: subprocess.Popen[bytes], total: int, inflight: int) -> None:
        # A sliding window: the pipe buffers hold ``inflight`` small requests easily.
        sent = min(inflight, total)
        for _ in range(sent):
            self._request(handle, "tools/call", CALL_PARAMS)
        for _ in range(total):
            self._answer(handle)
            if sent < total:
                self._request(handle, "tools/call", CALL_PARAMS)
                sent += 1


class AsyncioFloor(Client):
    """The floor of any asyncio client: subprocess streams, a reader task, a future per call.

    No validation, no transcript, no timeouts, no lock.  What it costs is the
    event loop's own share (wake-ups, asyncio's pipe transports and streams),
    which mcp_nb, the SDK and fastmcp all pay on top of their own work; the
    gap between it and the raw pipe is what no asyncio client can close.
    """

    name = "asyncio floor"

    def version(self) -> str:
        return f"asyncio, Python {sys.version.split()[0]}"

    @contextlib.asynccontextmanager
    async def session(self, argv: list[str]) -> AsyncIterator[Any]:
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=safe_environment(), start_new_session=True)
        session = _FloorSession(process)
        reader = asyncio.ensure_future(session.read_responses())
        try:
            await session.request("initialize", INITIALIZE_PARAMS)
            process.stdin.write(frame(INITIALIZED))
            yield session
        finally:
            process.stdin.close()  # the well-behaved server exits on EOF
            await process.wait()
            await reader  # ends at EOF

    async def call(self, handle: _FloorSession) -> None:
        await handle.request("tools/call", CALL_PARAMS)


class _FloorSession:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.ids = itertools.count(1)

    async def read_responses(self) -> None:
        while line := await self.process.stdout.readline():
            message = json.loads(line)
            waiter = self.pending.pop(message.get("id"), None)  # None for a notification
            if waiter is not None:
                waiter.set_result(message)

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id = next(self.ids)
        waiter = self.pending[request_id] = asyncio.get_running_loop().create_future()
        self.process.stdin.write(frame({"jsonrpc": "2.0", "id": request_id, "method": method,
                                        "params": params}))
        await self.process.stdin.drain()
        return await waiter


class McpNb(Client):
    """mcp_nb's ClientSession over its StdioTransport; the transcript is always on."""

    name = "mcp_nb"

    def __init__(self, stdin_close_grace: float = 2.0, sigterm_grace: float = 2.0) -> None:
        self.graces = {"stdin_close_grace": stdin_close_grace, "sigterm_grace": sigterm_grace}

    def version(self) -> str:
        import mcp_nb

        return f"mcp_nb {mcp_nb.__version__}"

    @contextlib.asynccontextmanager
    async def session(self, argv: list[str]) -> AsyncIterator[Any]:
        from mcp_nb.client import ClientSession
        from mcp_nb.transports import StdioTransport

        async with ClientSession(StdioTransport(argv, **self.graces)) as session:
            await session.connect()
            yield session


class Hosted(Client):
    """What ``%mcp call`` runs on: a :class:`HostedSession` on the notebook's background loop.

    The driver's own loop plays the kernel's thread: each call blocks it, as a
    cell does, while the session's loop in another thread does the work.
    """

    name = "mcp_nb hosted"

    def version(self) -> str:
        import mcp_nb

        return f"mcp_nb {mcp_nb.__version__}, notebook background loop"

    @contextlib.asynccontextmanager
    async def session(self, argv: list[str]) -> AsyncIterator[Any]:
        from mcp_nb.notebook import BackgroundLoop, HostedSession
        from mcp_nb.transports import StdioTransport

        loop = BackgroundLoop()
        hosted = HostedSession.open("benchmark", StdioTransport(argv), loop)
        try:
            hosted.connect()
            yield hosted
        finally:
            hosted.close()
            loop.stop()

    async def call(self, handle: Any) -> None:
        handle.call_tool(TOOL, ARGUMENTS)


class OfficialSdk(Client):
    """The official MCP Python SDK: ``stdio_client`` plus ``ClientSession.initialize``."""

    name = "official SDK"

    def version(self) -> str:
        from importlib.metadata import version

        return f"mcp {version('mcp')}"

    @contextlib.asynccontextmanager
    async def session(self, argv: list[str]) -> AsyncIterator[Any]:
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        parameters = StdioServerParameters(command=argv[0], args=argv[1:])
        async with stdio_client(parameters) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()  # handshake mode: initialize, then initialized
            yield session


class FastMcp(Client):
    """fastmcp's Client in handshake (``legacy``) mode, not kept alive after the block."""

    name = "fastmcp"

    def version(self) -> str:
        from importlib.metadata import version

        return f"fastmcp {version('fastmcp')} (mcp {version('mcp')})"

    @contextlib.asynccontextmanager
    async def session(self, argv: list[str]) -> AsyncIterator[Any]:
        from fastmcp import Client as FastMcpClient
        from fastmcp.client.transports import StdioTransport

        transport = StdioTransport(argv[0], argv[1:], keep_alive=False)
        async with FastMcpClient(transport, mode="legacy") as client:
            yield client


CLIENTS: dict[str, Callable[..., Client]] = {
    "raw": RawPipe, "floor": AsyncioFloor, "mcp_nb": McpNb, "hosted": Hosted,
    "sdk": OfficialSdk, "fastmcp": FastMcp,
}


def resident_bytes() -> int:
    """VmRSS of this process, from /proc (Linux): what the kernel really holds for us."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def _p99(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[98]


async def spawn_and_close(client: Client, argv: list[str], times: int) -> dict[str, list[float]]:
    """Spawn + handshake, one call, graceful close; each step timed, ``times`` over."""
    opened, closed = [], []
    for _ in range(times):
        async with contextlib.AsyncExitStack() as stack:
            start = time.perf_counter()
            handle = await stack.enter_async_context(client.session(argv))
            opened.append(time.perf_counter() - start)
            await client.call(handle)
            start = time.perf_counter()
            await stack.aclose()
            closed.append(time.perf_counter() - start)
    return {"spawn_handshake": opened, "close": closed}


async def round_trips(client: Client, handle: Any, calls: int,
                      gap: float = 0.0) -> tuple[list[float], float]:
    """Each call's wall time, and this process's CPU time per call over all of them.

    The CPU figure is the client's own cost without the server's or the
    scheduler's share, so it stays comparable when the machine is busy.
    ``gap`` is an untimed pause before each call (the whole thread sleeps, as a
    person between two cells does).
    """
    samples = []
    cpu_start = time.process_time()
    for _ in range(calls):
        if gap:
            time.sleep(gap)
        start = time.perf_counter()
        await client.call(handle)
        samples.append(time.perf_counter() - start)
    return samples, (time.process_time() - cpu_start) / calls


async def idle_memory(client: Client, argv: list[str], sessions: int) -> float:
    """Resident bytes per idle session: RSS delta over ``sessions`` open ones, divided."""
    gc.collect()
    before = resident_bytes()
    async with contextlib.AsyncExitStack() as stack:
        for _ in range(sessions):
            await stack.enter_async_context(client.session(argv))
        gc.collect()
        after = resident_bytes()
    return (after - before) / sessions


async def measure(client: Client, argv: list[str], options: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, Any] = {"client": client.name, "version": client.version()}
    # One untimed session first: imports and first-use caches are charged to no figure.
    async with client.session(argv) as handle:
        await client.call(handle)
    if options.idle:
        # Before the other figures: memory they touched and freed would be reused by the
        # sessions and hide part of their cost.
        figures["idle_session_bytes"] = await idle_memory(client, argv, options.idle)
    if options.spawns:
        lifecycle = await spawn_and_close(client, argv, options.spawns)
        figures["spawn_handshake_s"] = statistics.median(lifecycle["spawn_handshake"])
        figures["close_s"] = statistics.median(lifecycle["close"])
    if options.calls:
        async with client.session(argv) as handle:
            for _ in range(options.warmup):  # also lets clients cache the tool list
                await client.call(handle)
            samples, figures["round_trip_cpu_s"] = await round_trips(client, handle, options.calls)
            start = time.perf_counter()
            await client.burst(handle, options.burst, options.inflight)
            figures["throughput_rps"] = options.burst / (time.perf_counter() - start)
        figures["round_trip_median_s"] = statistics.median(samples)
        figures["round_trip_p99_s"] = _p99(samples)
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("client", choices=CLIENTS)
    parser.add_argument("server", type=json.loads, help="the server's argv, as a JSON list")
    parser.add_argument("--warmup", type=int, default=50, help="untimed calls first")
    parser.add_argument("--calls", type=int, default=0, help="sequential round trips")
    parser.add_argument("--burst", type=int, default=0, help="requests in the throughput run")
    parser.add_argument("--inflight", type=int, default=100)
    parser.add_argument("--spawns", type=int, default=0, help="spawn/handshake/close cycles")
    parser.add_argument("--idle", type=int, default=0, help="idle sessions for the memory figure")
    parser.add_argument("--stdin-close-grace", type=float, help="mcp_nb only")
    parser.add_argument("--sigterm-grace", type=float, help="mcp_nb only")
    options = parser.parse_args(argv)
    graces = {name: getattr(options, name) for name in ("stdin_close_grace", "sigterm_grace")
              if getattr(options, name) is not None}
    client = CLIENTS[options.client](**graces)
    figures = anyio.run(measure, client, options.server, options)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
