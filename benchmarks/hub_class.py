"""A class on JupyterHub: what each learner costs the machine, and how long a chapter takes.

For N learners (``--learners 1,10,20``) on one local hub (``deploy/hub/``, started as
``tests/hub_support.py`` starts it for tests/test_hub_class.py), every learner logs in through
the hub's proxy, gets a server spawned and runs chapters 01, 05, 06, 07 and 11 in real kernels
over REST and the kernel websocket, all N at once (``--at-once`` caps how many work at a time).
Reported per N:

* **memory per learner**: RSS and PSS summed over the learner's processes (their Jupyter
  server, chapter 11's kernel, the HTTP lab server that chapter starts and a stdio lab
  session), read from ``/proc/PID/smaps_rollup`` when the learner has finished chapter 11 and
  everything is still running; PSS shares the pages the processes have in common (the Python
  interpreter, the libraries) out among them, so it is what one more learner adds;
* **start**: from the login form's POST to a server ready and opened through the proxy;
* **time per chapter**: p50 and p95 over the learners of the wall time from opening the
  notebook to its last cell done, kernel start included;
* **CPU**: user + system of the hub and everything below it, over the whole class;
* **failures**: chapters with a failed cell or without what they show when they work.

Run: ``python -m benchmarks.hub_class [--learners 1,10,20] [--at-once N]``. Prints a table
and, last, one JSON line. Not part of ``python -m benchmarks`` (minutes per class).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import anyio  # noqa: E402
from hub_support import CHAPTERS, cpu_seconds, run_class, running_hub  # noqa: E402

MIB = 1024 * 1024


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile (``share`` in 0..1) of ``values``."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def one_class(learners: int, at_once: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="mcp_nb-hub-bench-") as folder, \
            running_hub(Path(folder), learners) as hub:
        hub_pid = hub.process.process.pid
        cpu_before, started = cpu_seconds(hub_pid), time.monotonic()
        runs = anyio.run(lambda: run_class(hub, hub.learners, at_once=at_once))
        wall, cpu = time.monotonic() - started, cpu_seconds(hub_pid) - cpu_before
    finished = [run for run in runs.values() if not run.error]
    chapters = {chapter: [run.seconds[chapter] for run in finished if chapter in run.seconds]
                for chapter in CHAPTERS}
    return {
        "learners": learners, "at_once": at_once, "wall_s": wall, "cpu_s": cpu,
        "failures": [failure for run in runs.values() for failure in run.failures()],
        "rss_mib": [run.rss / MIB for run in finished],
        "pss_mib": [run.pss / MIB for run in finished],
        "pss_by_kind_mib": {kind: statistics.median(run.pss_by_kind.get(kind, 0) / MIB
                                                    for run in finished)
                            for kind in sorted({k for run in finished for k in run.pss_by_kind})},
        "processes": [run.processes for run in finished],
        "start_s": [run.start_seconds for run in finished],
        "chapters_s": chapters,
    }


def row(result: dict[str, Any]) -> str:
    def spread(values: list[float], unit: str = "") -> str:
        if not values:
            return "-"
        return f"{percentile(values, 0.5):.1f}{unit} / {percentile(values, 0.95):.1f}{unit}"

    chapters = " | ".join(spread(result["chapters_s"][chapter]) for chapter in CHAPTERS)
    return (f"| {result['learners']} | {result['at_once']} | "
            f"{statistics.median(result['rss_mib']):.0f} | "
            f"{statistics.median(result['pss_mib']):.0f} | {spread(result['start_s'])} | "
            f"{chapters} | {result['cpu_s'] / result['learners']:.0f} | "
            f"{result['wall_s']:.0f} | {len(result['failures'])} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", default="1,10,20",
                        help="class sizes to measure, comma-separated")
    parser.add_argument("--at-once", type=int, default=0,
                        help="learners working at a time (default: the whole class)")
    args = parser.parse_args(argv)
    header = ("| learners | at once | RSS per learner, MiB | PSS per learner, MiB "
              "| start p50 / p95, s | "
              + " | ".join(f"{chapter[:2]} p50 / p95, s" for chapter in CHAPTERS)
              + " | CPU per learner, s | class wall, s | failures |")
    print(header)
    print("|" + "|".join(" --- " for _ in range(header.count("|") - 1)) + "|")
    results = []
    for size in (int(value) for value in args.learners.split(",")):
        result = one_class(size, args.at_once or size)
        results.append(result)
        print(row(result), flush=True)
        print("  PSS per learner by process, median MiB:", ", ".join(
            f"{kind} {mib:.0f}" for kind, mib in result["pss_by_kind_mib"].items()), flush=True)
        for failure in result["failures"]:
            print("  failed:", failure.splitlines()[0][:300], flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
