"""The checkup as a shell runs it (``python -m benchmarks.checkup_cli``): wall time and imports.

Prints numbers (a benchmark, never a timed test); RESULTS.md keeps them.  Two figures, each
the median of ``--runs`` runs in fresh processes:

- *CLI wall*: ``python -m mcp_nb.check -- python -m mcp_nb.lab`` from spawn to exit, as a
  shell times it: interpreter start, imports, the checkup (the lab's servers started, every
  check, their shutdown) and the report printed.  Also the CPU time of that process tree
  (user + system, the lab servers included), which a busy machine disturbs less than wall
  time.  Target (issue 32): ≤ 1.5 s.
- *import*: ``import mcp_nb.check.__main__`` timed inside a fresh interpreter (what the CLI
  loads before it starts the first server).

``benchmarks.checkup`` measures the checkup itself, in one process, with every tool called.

Usage::

    python -m benchmarks.checkup_cli [--runs 9]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

#: The checkout whose mcp_nb is measured: the lab server child imports it from its working
#: directory (``python -m`` puts that first on sys.path; the child inherits no PYTHONPATH).
ROOT = Path(__file__).resolve().parent.parent
IMPORT = ("import time; started = time.perf_counter(); import mcp_nb.check.__main__; "
          "print(time.perf_counter() - started)")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cli_run(extra: tuple[str, ...] = ()) -> tuple[float, float]:
    """One ``python -m mcp_nb.check`` of the lab over stdio: (wall, CPU) seconds."""
    command = [sys.executable, "-m", "mcp_nb.check", *extra, "--", sys.executable, "-m",
               "mcp_nb.lab"]
    cpu = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"the healthy lab failed the checkup:\n{done.stdout}{done.stderr}")
    return wall, _children_cpu() - cpu


def import_time() -> float:
    done = subprocess.run([sys.executable, "-c", IMPORT], capture_output=True, text=True,
                          check=True, cwd=ROOT)
    return float(done.stdout)


def _line(label: str, values: list[float]) -> str:
    return (f"{label}: median {statistics.median(values):.2f} s, min {min(values):.2f}, "
            f"max {max(values):.2f} ({len(values)} runs)")


def measure(runs: int) -> None:
    print(f"load average {os.getloadavg()[0]:.1f}")
    imports = [import_time() for _ in range(runs)]
    print(_line("import mcp_nb.check.__main__", imports))
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = cli_run()
        walls.append(wall)
        cpus.append(cpu)
    print(_line("python -m mcp_nb.check -- python -m mcp_nb.lab, wall", walls))
    print(_line("  CPU of the process tree (user + system)", cpus))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    measure(parser.parse_args().runs)


if __name__ == "__main__":
    main()
