"""Client memory under a notification flood: a real server sends N log notifications at once.

The server (:mod:`benchmarks.flood_server`, a subprocess) answers one
``tools/call`` with ``--count`` ``notifications/message`` lines before the
result; the client is a plain :class:`~mcp_nb.client.ClientSession` with its
default ``transcript_limit`` (or ``--limit``).  Printed as one JSON object:
resident memory (``VmRSS``, after ``gc.collect()``) before the call, after it,
and the peak (``VmHWM``) of the client process, with what the transcript kept
and dropped.  The server's memory is not counted::

    python benchmarks/flood.py --count 1000000
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from mcp_nb.client import DEFAULT_TRANSCRIPT_LIMIT, ClientSession
from mcp_nb.transports import StdioTransport

SERVER = Path(__file__).resolve().with_name("flood_server.py")


def status_bytes(field: str) -> int:
    """A memory figure of this process from /proc/self/status (Linux), in bytes."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def resident() -> int:
    gc.collect()
    return status_bytes("VmRSS")


async def flood(count: int, limit: int) -> dict[str, Any]:
    transport = StdioTransport([sys.executable, str(SERVER)])
    async with ClientSession(transport, transcript_limit=limit, timeout=3600,
                             max_timeout=3600) as session:
        await session.connect()
        await session.call_tool("flood", {"count": 1000})  # first-use costs count nowhere
        before = resident()
        start = time.perf_counter()
        await session.call_tool("flood", {"count": count})
        seconds = time.perf_counter() - start
        after = resident()
        transcript = session.transcript
        return {
            "notifications": count,
            "transcript_limit": limit,
            "seconds": round(seconds, 2),
            "rss_before_mib": round(before / 2**20, 1),
            "rss_after_mib": round(after / 2**20, 1),
            "rss_growth_mib": round((after - before) / 2**20, 1),
            "peak_rss_mib": round(status_bytes("VmHWM") / 2**20, 1),
            "transcript_kept": len(transcript),
            "transcript_dropped": dict(transcript.dropped_by_kind),
            "log_messages_kept": len(session.log_messages),
        }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--limit", type=int, default=DEFAULT_TRANSCRIPT_LIMIT)
    options = parser.parse_args(argv)
    print(json.dumps(anyio.run(flood, options.count, options.limit)))


if __name__ == "__main__":
    main()
