"""The Streamable HTTP round trip: this tree's mcp_nb beside another's, against one lab server.

    python benchmarks/http_round_trip.py                       # this tree only
    python benchmarks/http_round_trip.py --baseline DIR        # DIR: a checkout to compare

One lab server (``python -m mcp_nb.lab --http``) serves every run.  Each run is a
process of its own calling the lab's ``echo`` tool ``--calls`` times per round over
``http_transport(url)`` (the default, auto transport); the trees take turns, pair
after pair, so the machine's drift falls on both.  Two figures per call: the
client process's CPU time, which other load on a shared machine disturbs little,
and wall time, which it disturbs a lot.  Medians over rounds, then over pairs.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TREE = HERE.parent

#: The client side, run in a process whose mcp_nb comes from the tree under test.
CLIENT = """
import json, statistics, sys, time, anyio
from mcp_nb.client import ClientSession
from mcp_nb.transports import http_transport

async def main(url, rounds, calls):
    async with ClientSession(http_transport(url)) as session:
        await session.connect()
        for _ in range(20):  # warm up: connections, caches
            await session.call_tool("echo", {"text": "x"})
        cpu, wall = [], []
        for _ in range(rounds):
            started_cpu, started = time.process_time(), time.perf_counter()
            for _ in range(calls):
                await session.call_tool("echo", {"text": "x"})
            cpu.append((time.process_time() - started_cpu) / calls * 1e6)
            wall.append((time.perf_counter() - started) / calls * 1e6)
    print(json.dumps({"cpu": statistics.median(cpu), "wall": statistics.median(wall)}))

anyio.run(main, sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def measure(tree: Path, url: str, rounds: int, calls: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}  # the tree's mcp_nb wins over the install
    done = subprocess.run([sys.executable, "-c", CLIENT, url, str(rounds), str(calls)],
                          env=env, capture_output=True, text=True, timeout=600, check=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="another checkout of mcp_nb")
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    trees = {"this tree": TREE}
    if args.baseline is not None:
        trees["baseline"] = args.baseline.resolve()
    port = free_port()
    lab = subprocess.Popen([sys.executable, "-m", "mcp_nb.lab", "--http", "--port", str(port)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("the lab server did not start") from None
                time.sleep(0.1)
        results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        for pair in range(args.pairs):
            order = list(trees.items())
            if pair % 2:
                order.reverse()  # neither tree always goes first
            for name, tree in order:
                results[name].append(measure(tree, url, args.rounds, args.calls))
    finally:
        lab.terminate()
        lab.wait(10)
    print(f"{args.pairs} pairs x {args.rounds} rounds x {args.calls} tools/call echo, "
          "Streamable HTTP to the lab (µs per call, median)")
    print(f"{'':12} {'client CPU':>12} {'wall':>10}")
    for name, runs in results.items():
        cpu = statistics.median(run["cpu"] for run in runs)
        wall = statistics.median(run["wall"] for run in runs)
        print(f"{name:12} {cpu:12.0f} {wall:10.0f}")
    if "baseline" in results:
        wins = sum(new["cpu"] < old["cpu"] for new, old in
                   zip(results["this tree"], results["baseline"], strict=True))
        print(f"this tree used less client CPU in {wins} of {args.pairs} pairs")


if __name__ == "__main__":
    main()
