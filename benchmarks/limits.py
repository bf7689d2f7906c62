"""Limits under load: a 10 MB answer, a 100 MB answer, and a 1,000,000-line stderr flood.

Each against a real server (:mod:`benchmarks.limits_server`, a subprocess),
with a plain :class:`~mcp_nb.client.ClientSession` and default settings:

* ``big_ok``: a 10 MB ``tools/call`` result, which must pass (seconds);
* ``big_rejected``: a 100 MB result, over the 64 MiB default, which must fail
  its request at once: seconds from the call to the error (the first call also
  times the server encoding its answer, the second only the client and the
  pipe), the error's text, and the client's memory: the line is discarded as
  it arrives, so the peak holds at most the limit's worth, never the message;
* ``stderr_flood``: ``--lines`` stderr lines; resident memory (``VmRSS`` after
  ``gc.collect()``) before and after, and what the transport's stderr log kept.

Printed as one JSON object; the server's memory is not counted::

    python benchmarks/limits.py --lines 1000000
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from mcp_nb.client import ClientSession, ResponseRejected
from mcp_nb.transports import StdioTransport

if not __package__:  # run as a script: the flood benchmark sits next to this file
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from flood import resident, status_bytes
else:
    from .flood import resident, status_bytes

SERVER = Path(__file__).resolve().with_name("limits_server.py")
MIB = 2**20


async def rejected_call(session: ClientSession) -> tuple[float, str]:
    """Seconds from calling for a 100 MB answer to the error, and the error's text."""
    start = time.perf_counter()
    try:
        await session.call_tool("big", {"bytes": 100_000_000})
    except ResponseRejected as exc:
        return time.perf_counter() - start, str(exc)
    raise AssertionError("a 100 MB answer passed the 64 MiB limit")


async def big_answers() -> dict[str, Any]:
    transport = StdioTransport([sys.executable, str(SERVER)])
    async with ClientSession(transport, timeout=120, max_timeout=120) as session:
        await session.connect()
        before, peak_before = resident(), status_bytes("VmHWM")
        cold_seconds, _ = await rejected_call(session)  # the server builds its answer here
        peak_growth = status_bytes("VmHWM") - peak_before
        warm_seconds, error = await rejected_call(session)
        after = resident()
        start = time.perf_counter()
        result = await session.call_tool("big", {"bytes": 10_000_000})
        ok_seconds = time.perf_counter() - start
        assert len(result.text) == 10_000_000
        return {
            "big_ok": {"bytes": 10_000_000, "seconds": round(ok_seconds, 3)},
            "big_rejected": {
                "bytes": 100_000_000, "seconds": round(warm_seconds, 3),
                "seconds_with_server_encoding": round(cold_seconds, 3), "error": error,
                "rss_growth_mib": round((after - before) / MIB, 1),
                "peak_rss_growth_mib": round(peak_growth / MIB, 1),
            },
        }


async def stderr_flood(lines: int) -> dict[str, Any]:
    transport = StdioTransport([sys.executable, str(SERVER)])
    async with ClientSession(transport, timeout=3600, max_timeout=3600) as session:
        await session.connect()
        await session.call_tool("stderr", {"lines": 1000})  # first-use costs count nowhere
        before = resident()
        start = time.perf_counter()
        await session.call_tool("stderr", {"lines": lines})
        log = transport.stderr
        while log.total_lines < lines + 1000:  # stderr may trail the answer
            await anyio.sleep(0.01)
        seconds = time.perf_counter() - start
        after = resident()
        return {"lines": lines, "seconds": round(seconds, 2),
                "rss_before_mib": round(before / MIB, 1), "rss_after_mib": round(after / MIB, 1),
                "rss_growth_mib": round((after - before) / MIB, 1),
                "stderr_kept": len(log.lines), "stderr_evicted": log.evicted_lines,
                "transcript_kept": len(session.transcript)}


async def measure(lines: int) -> dict[str, Any]:
    return {**await big_answers(), "stderr_flood": await stderr_flood(lines)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    options = parser.parse_args(argv)
    print(json.dumps(anyio.run(measure, options.lines), ensure_ascii=False))


if __name__ == "__main__":
    main()
