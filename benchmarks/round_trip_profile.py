"""Where an mcp_nb round trip goes: event-loop iterations and Python calls per ``tools/call``.

Both counts are exact (the same on a busy machine as on an idle one), so they
show what a change to the hot path did where wall times drown in noise; the
``--top`` listing (cProfile, internal time) shows where the calls are.

Usage (from the repository root; ``PYTHONPATH`` selects another mcp_nb, e.g. a
baseline made with ``git archive REV mcp_nb | tar -x -C DIR``)::

    python benchmarks/round_trip_profile.py canned
    PYTHONPATH=DIR python benchmarks/round_trip_profile.py lab --top 30
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import sys
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
SERVERS = {
    "canned": [sys.executable, str(HERE / "canned_server.py")],
    "lab": [sys.executable, "-m", "mcp_nb.lab"],
}


class IterationCounter:
    """Counts ``BaseEventLoop._run_once`` calls: one per event-loop iteration."""

    def __init__(self) -> None:
        self.count = 0
        self._original = asyncio.BaseEventLoop._run_once  # type: ignore[attr-defined]

    def install(self) -> None:
        original = self._original

        def counting(loop: Any) -> None:
            self.count += 1
            original(loop)

        asyncio.BaseEventLoop._run_once = counting  # type: ignore[attr-defined]


async def profile(server: str, calls: int, top: int) -> None:
    from mcp_nb.client import ClientSession
    from mcp_nb.transports import StdioTransport

    counter = IterationCounter()
    counter.install()
    async with ClientSession(StdioTransport(SERVERS[server])) as session:
        await session.connect()
        for _ in range(100):  # warm-up: caches, the tool list
            await session.call_tool("echo", {"text": "hi"})
        counter.count = 0
        for _ in range(calls):
            await session.call_tool("echo", {"text": "hi"})
        iterations = counter.count / calls
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(calls):
            await session.call_tool("echo", {"text": "hi"})
        profiler.disable()
    stats = pstats.Stats(profiler)
    print(f"{server}: {iterations:.2f} event-loop iterations and "
          f"{stats.total_calls / calls:.0f} Python function calls per round trip "  # type: ignore[attr-defined]
          f"(mcp_nb from {Path(sys.modules['mcp_nb'].__file__ or '').parent})")
    if top:
        stats.sort_stats("tottime").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("server", choices=SERVERS)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--top", type=int, default=0, help="also list the N costliest functions")
    options = parser.parse_args()
    anyio.run(profile, options.server, options.calls, options.top)


if __name__ == "__main__":
    main()
