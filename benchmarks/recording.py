"""Recording and replay, measured: replay round trips, what saving costs, loading a big file.

Prints numbers (a benchmark, never a timed test); RESULTS.md keeps them.

- *replay round trip*: the raw pipe and mcp_nb each hold a session to the canned server and one
  to a replay of a recording of it (``python -m mcp_nb.replay FILE --timing none``) and take turns
  in blocks of sequential ``tools/call``, as :mod:`benchmarks.interleaved` does, so a slow minute
  slows all four; each block median is divided by the raw pipe's on the canned server in the
  same round.  Target: a replayed round trip ≤ 2x the raw pipe's.
- *recording overhead*: mcp_nb's round trips against the lab server (which logs each call) and
  the canned server (the fastest round trip there is), then ``save()`` of that session; saving's
  cost spread over the round trips it records, as a share of one round trip.
  (Recording adds nothing during the session: the transcript it is made from is always kept.)
  Target ≤ 10 %.
- *load*: a file of 100,000 messages (50,000 ``tools/call`` and their answers) written with the
  format module, then ``load()`` and ``Script.from_recording``; best of three.  Target < 2 s.

Usage::

    python -m benchmarks.recording [--rounds 10 --block 200 --calls 2000 --messages 100000]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from benchmarks import driver
from mcp_nb.recording import Header, Record, Recording, Script, load, save

CANNED = [sys.executable, str(Path(__file__).resolve().parent / "canned_server.py")]
LAB = [sys.executable, "-m", "mcp_nb.lab"]


async def record(server: list[str], path: Path, calls: int) -> tuple[list[float], float]:
    """Round trips of mcp_nb against ``server``, then the seconds ``save()`` took."""
    from mcp_nb.client import ClientSession
    from mcp_nb.transports import StdioTransport

    async with ClientSession(StdioTransport(server)) as session:
        await session.connect()
        for _ in range(50):
            await session.call_tool(driver.TOOL, driver.ARGUMENTS)
        times, _cpu = await driver.round_trips(driver.McpNb(), session, calls)
        start = time.perf_counter()
        save(session, path)
        return times, time.perf_counter() - start


async def replay_rounds(recording: Path, rounds: int, block: int) -> dict[str, Any]:
    replay = [sys.executable, "-m", "mcp_nb.replay", str(recording), "--timing", "none"]
    pairs = {"raw pipe → canned": (driver.RawPipe(), CANNED),
             "raw pipe → replay": (driver.RawPipe(), replay),
             "mcp_nb → canned": (driver.McpNb(), CANNED),
             "mcp_nb → replay": (driver.McpNb(), replay)}
    medians: dict[str, list[float]] = {name: [] for name in pairs}
    async with contextlib.AsyncExitStack() as stack:
        handles = {}
        for name, (client, argv) in pairs.items():
            handles[name] = await stack.enter_async_context(client.session(argv))
            for _ in range(50):
                await client.call(handles[name])
        names = list(pairs)
        for number in range(rounds):
            shift = number % len(names)
            for name in names[shift:] + names[:shift]:
                times, _cpu = await driver.round_trips(pairs[name][0], handles[name], block)
                medians[name].append(statistics.median(times))
    reference = medians["raw pipe → canned"]
    return {name: (statistics.median(values),
                   statistics.median(m / r for m, r in zip(values, reference, strict=True)))
            for name, values in medians.items()}


def big_recording(messages: int) -> Recording:
    """``messages`` records: tools/call requests and their answers, 1 ms apart."""
    header = Header(era="handshake", protocol_version="2025-11-25",
                    server_info={"name": "big", "version": "1"})
    records = []
    for number in range(messages // 2):
        params = {"name": "echo", "arguments": {"text": f"message number {number}"}}
        result = {"content": [{"type": "text", "text": f"message number {number}"}],
                  "isError": False}
        records.append(Record(0, number * 0.001, "send",
                              {"jsonrpc": "2.0", "id": number + 1, "method": "tools/call",
                               "params": params}))
        records.append(Record(0, number * 0.001 + 0.0005, "recv",
                              {"jsonrpc": "2.0", "id": number + 1, "result": result}))
    return Recording(header, records)


def load_times(path: Path) -> tuple[float, float]:
    best_load = best_script = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        recording = load(path)
        loaded = time.perf_counter()
        Script.from_recording(recording)
        best_load = min(best_load, loaded - start)
        best_script = min(best_script, time.perf_counter() - loaded)
    return best_load, best_script


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--block", type=int, default=200)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--messages", type=int, default=100_000)
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        recorded = Path(folder) / "canned.jsonl"
        for name, server in (("lab", LAB), ("canned", CANNED)):
            times, saving = anyio.run(record, server, recorded, options.calls)
            round_trip = statistics.median(times)
            records = len(load(recorded).records)
            share = saving / options.calls / round_trip
            print(f"recording, {name} server: {options.calls} round trips, median "
                  f"{round_trip * 1e6:.0f} µs; save() of {records} records took "
                  f"{saving * 1e3:.1f} ms = {saving / options.calls * 1e6:.1f} µs per round "
                  f"trip = {share:.1%} of one (target ≤ 10 %)")
        print(f"replay round trips ({options.rounds} rounds of {options.block}, interleaved):")
        for name, (median, ratio) in anyio.run(replay_rounds, recorded, options.rounds,
                                               options.block).items():
            print(f"  {name:<18} median {median * 1e6:6.0f} µs   x raw pipe → canned {ratio:.2f}")
        big = Path(folder) / "big.jsonl"
        big_recording(options.messages).write(big)
        size = big.stat().st_size
        loading, scripting = load_times(big)
        print(f"load: {options.messages} messages ({size / 1e6:.1f} MB): load() {loading:.2f} s, "
              f"Script.from_recording {scripting:.2f} s, together {loading + scripting:.2f} s "
              "(target < 2 s)")


if __name__ == "__main__":
    main()
