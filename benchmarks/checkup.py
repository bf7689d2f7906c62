"""How long a full checkup of the lab takes over stdio (``python -m benchmarks.checkup``).

Prints numbers (a benchmark, never a timed test); RESULTS.md keeps them.  Each run is the
whole checkup as ``python -m mcp_nb.check --call-tools all -- python -m mcp_nb.lab`` does
it: server processes started (the dual-era lab gets a stateless main session, a handshake
session and an unknown-version session, concurrently), every check, shutdown.  Target
(issue 27): ≤ 3 s.

Usage::

    python -m benchmarks.checkup [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import anyio

from mcp_nb.check import run_checkup
from mcp_nb.client import lab_command


async def measure(runs: int) -> None:
    for flags in ((), ("--era", "handshake")):
        seconds = []
        for _ in range(runs):
            started = time.perf_counter()
            report = await run_checkup(lab_command(*flags), call_tools="all")
            seconds.append(time.perf_counter() - started)
            assert report.exit_status == 0, "the healthy lab failed a check"
        label = " ".join(("python -m mcp_nb.lab", *flags))
        print(f"{label}: median {statistics.median(seconds):.2f} s, min {min(seconds):.2f}, "
              f"max {max(seconds):.2f} ({runs} runs, {len(report.results)} checks)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    anyio.run(measure, parser.parse_args().runs)


if __name__ == "__main__":
    main()
