"""Round trips of several clients taking turns in one process: ratios that survive drift.

The main run (:mod:`benchmarks.run`) measures each client in a process of its
own, one after the other.  On a shared machine whose speed changes by tens of
percent from one minute to the next, the ratio of two medians taken minutes
apart carries that drift.  Here each client holds one session to a server
process of its own, and the clients take turns in short blocks of sequential
``tools/call`` (the order rotating every round), so a slow minute slows all of
them.  Each block's median is divided by the reference client's block median
of the same round; the figure is the median of those per-block ratios.

Only clients that run under this interpreter can take part (raw pipe, mcp_nb,
the official SDK; fastmcp lives in another virtual environment).  Prints one
JSON object; :mod:`benchmarks.run` runs it as a script, once per server::

    python benchmarks/interleaved.py '["python", "benchmarks/canned_server.py"]' \\
        --clients raw,mcp_nb,sdk --rounds 20 --block 200

``--gap SECONDS`` pauses (untimed) before every call: one call now and then, as
a person running one ``%mcp call`` cell at a time makes them.  For the hosted
path that is the call that finds the loop back with the background thread.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import anyio

if not __package__:  # run as a script: the driver sits next to this file
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import driver
else:
    from . import driver


async def interleave(argv: list[str], clients: list[str], rounds: int, block: int,
                     warmup: int, gap: float = 0.0) -> dict[str, Any]:
    adapters = {name: driver.CLIENTS[name]() for name in clients}
    medians: dict[str, list[float]] = {name: [] for name in clients}
    samples: dict[str, list[float]] = {name: [] for name in clients}
    async with contextlib.AsyncExitStack() as stack:
        handles = {}
        for name, adapter in adapters.items():
            handles[name] = await stack.enter_async_context(adapter.session(argv))
            for _ in range(warmup):
                await adapter.call(handles[name])
        for round_number in range(rounds):
            shift = round_number % len(clients)
            for name in clients[shift:] + clients[:shift]:
                times, _cpu = await driver.round_trips(adapters[name], handles[name], block,
                                                     gap=gap)
                medians[name].append(statistics.median(times))
                samples[name].extend(times)

    def ratio_to(reference: str, name: str) -> float | None:
        if reference not in medians:
            return None
        return statistics.median(
            mine / theirs for mine, theirs in zip(medians[name], medians[reference], strict=True))

    return {name: {"version": adapters[name].version(),
                   "median_s": statistics.median(samples[name]),
                   "x_raw": ratio_to("raw", name), "x_sdk": ratio_to("sdk", name)}
            for name in clients}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("server", type=json.loads, help="the server's argv, as a JSON list")
    parser.add_argument("--clients", default="raw,mcp_nb,sdk",
                        help="comma-separated driver client keys (this interpreter's only)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--block", type=int, default=200, help="calls per client per round")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--gap", type=float, default=0.0,
                        help="untimed pause before each call, in seconds")
    options = parser.parse_args(argv)
    clients = options.clients.split(",")
    unknown = [name for name in clients if name not in driver.CLIENTS]
    if unknown:
        parser.error(f"unknown clients {unknown}; choose from {', '.join(driver.CLIENTS)}")
    result = anyio.run(interleave, options.server, clients, options.rounds, options.block,
                       options.warmup, options.gap)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
