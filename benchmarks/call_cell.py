"""The kernel's CPU for one ``%mcp call`` cell, widgets and display included.

A real ipykernel (started by jupyter_client's ``KernelManager``, as JupyterLab
starts one) loads the extension, connects to the bundled lab server over stdio
(``%mcp connect``), warms up, and then runs ``%mcp call add a=1 b=2`` cell after
cell.  Three views of the same cost:

* **run_cell**: inside the kernel, ``get_ipython().run_cell(LINE)`` in a loop,
  each timed with ``time.process_time()`` (the whole process's CPU, every thread:
  the cell's, the session loop's, ipykernel's IOPub thread), cells back to back.
  This is the issue's figure.  ``run_cell``'s default keeps the cells out of
  IPython's history (no ``In``/``Out``, no sqlite row), which a front end's cell
  pays for too: the next view counts it.  Two reference cells are measured the
  same way in the same kernel: ``pass`` and ``1`` (any cell that shows a value
  pays that much before it does anything).
* **execute_request**: one ``execute_request`` per cell from this process, as a
  front end sends them, one after the other; the kernel's CPU read from outside,
  before the request and after its reply, from ``/proc/PID/task/*/schedstat``
  (nanoseconds, all threads).  It adds what ipykernel spends on the request
  itself (the shell message, status messages, the reply).  The batch's total over
  its cells is reported too: it also counts what the kernel does between cells.
* **profile**: cProfile inside the kernel over more cells (timer: the cell
  thread's CPU), by package and by function: where the cell's thread spends it.

Run: ``python -m benchmarks.call_cell [--cells N] [--baseline DIR]``.  Prints a
table and, last, one JSON line.  ``--baseline DIR`` runs the same cells against
the mcp_nb package in DIR (make one with ``git archive REV mcp_nb | tar -x -C
DIR``) in a kernel of its own, the two kernels taking turns in blocks, so the
before/after ratio survives the machine's drift.  ``python -m benchmarks`` runs
it too and puts the table in RESULTS.md's generated block.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LINE = "%mcp call add a=1 b=2"
#: Cells that cost what IPython and ipykernel charge any cell: nothing, and showing a value.
REFERENCES = {"pass": "reference cell `pass`", "1": "reference cell `1`"}
TIMEOUT = 120

#: Defined in the kernel: the measuring loop and the profile, each printing one JSON line.
KERNEL_SETUP = r'''
def _bench_run_cells(line, count):
    import json, time
    shell = get_ipython()
    samples = []
    for _ in range(count):
        started = time.process_time()
        result = shell.run_cell(line)
        samples.append(time.process_time() - started)
        if not result.success:
            raise RuntimeError(f"{line!r} failed: {result.error_in_exec!r}")
    print(json.dumps(samples))

def _bench_profile(line, count):
    import cProfile, json, pstats, time
    shell = get_ipython()
    profile = cProfile.Profile(time.thread_time)
    profile.enable()
    for _ in range(count):
        shell.run_cell(line)
    profile.disable()
    stats = pstats.Stats(profile).stats
    rows = [(f"{path}:{line_number}({name})", calls, own, total)
            for (path, line_number, name), (_c, calls, own, total, _callers) in stats.items()]
    print(json.dumps(rows))
'''

#: Where a function's own time goes in the breakdown: the first matching path fragment.
PACKAGES = (
    ("mcp_nb/", "mcp_nb"),
    ("ipywidgets/", "ipywidgets"),
    ("traitlets/", "traitlets"),
    ("/comm/", "comm"),
    ("ipykernel/", "ipykernel"),
    ("jupyter_client/", "jupyter_client"),
    ("zmq/", "pyzmq"),
    ("IPython/", "IPython"),
    ("jsonschema", "jsonschema"),
    ("referencing/", "jsonschema"),
    ("pydantic", "pydantic"),
    ("anyio/", "anyio"),
    ("asyncio/", "asyncio"),
    ("json/", "json"),
    ("~:0(", "builtins (C)"),
    ("/lib/python3", "standard library"),
)


class Kernel:
    """One real kernel with the extension loaded and a session to the lab server."""

    def __init__(self, pythonpath: Path) -> None:
        from jupyter_client.manager import start_new_kernel

        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath),
                                                          env.get("PYTHONPATH")]))
        self.manager, self.client = start_new_kernel(kernel_name="python3", env=env,
                                                     cwd=str(ROOT))
        self.pid = self.manager.provisioner.process.pid  # type: ignore[union-attr]
        self.execute(KERNEL_SETUP)
        where = self.execute("import mcp_nb; print(mcp_nb.__file__)").strip()
        if not where.startswith(str(pythonpath)):
            raise RuntimeError(f"the kernel imported {where}, not the mcp_nb in {pythonpath}")
        self.execute("%load_ext mcp_nb")
        self.execute("%mcp connect")

    def execute(self, code: str) -> str:
        """Run a cell as a front end does; its printed text (the cell must succeed)."""
        printed: list[str] = []

        def collect(message: dict[str, Any]) -> None:
            if message["msg_type"] == "stream":
                printed.append(message["content"]["text"])
            elif message["msg_type"] == "error":
                printed.append("\n".join(message["content"]["traceback"]))

        reply = self.client.execute_interactive(code, timeout=TIMEOUT, output_hook=collect)
        if reply["content"]["status"] != "ok":
            raise RuntimeError(f"cell failed: {code[:80]!r}\n{''.join(printed)[-2000:]}")
        return "".join(printed)

    def cpu_seconds(self) -> float:
        """The kernel process's CPU so far, all its threads, from the scheduler (ns)."""
        total = 0
        for stat in Path(f"/proc/{self.pid}/task").glob("*/schedstat"):
            try:
                total += int(stat.read_text().split()[0])
            except (OSError, IndexError, ValueError):
                continue  # a thread that ended between the listing and the read
        return total / 1e9

    def run_cells(self, count: int, line: str = LINE) -> list[float]:
        """``count`` cells through the kernel's own run_cell; CPU seconds of each."""
        return list(json.loads(self.execute(f"_bench_run_cells({line!r}, {count})")
                               .strip().splitlines()[-1]))

    def execute_requests(self, count: int, line: str = LINE) -> tuple[list[float], float]:
        """``count`` execute_requests; the CPU of each (outside view), and of the whole batch."""
        samples = []
        started = self.cpu_seconds()
        for _ in range(count):
            before = self.cpu_seconds()
            self.execute(line)
            samples.append(self.cpu_seconds() - before)
        return samples, (self.cpu_seconds() - started) / count

    def profile(self, count: int) -> list[tuple[str, int, float, float]]:
        text = self.execute(f"_bench_profile({LINE!r}, {count})")
        return [tuple(row) for row in json.loads(text.strip().splitlines()[-1])]  # type: ignore

    def shutdown(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=False)


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def summary(samples: list[float]) -> dict[str, float]:
    return {"median_ms": statistics.median(samples) * 1e3,
            "p95_ms": percentile(samples, 0.95) * 1e3, "count": len(samples)}


def breakdown(rows: list[tuple[str, int, float, float]], cells: int,
              top: int) -> dict[str, Any]:
    """The profile per cell: own time by package, and the costliest functions."""
    packages: dict[str, float] = {}
    for where, _calls, own, _total in rows:
        package = next((name for fragment, name in PACKAGES if fragment in where), "other")
        packages[package] = packages.get(package, 0.0) + own
    def listed(key: int) -> list[dict[str, Any]]:
        ranked = sorted(rows, key=lambda row: row[key], reverse=True)[:top]
        return [{"function": where.replace(str(ROOT) + "/", ""),
                 "calls_per_cell": calls / cells, "own_ms": own * 1e3 / cells,
                 "cumulative_ms": total * 1e3 / cells} for where, calls, own, total in ranked]

    return {
        "cells": cells,
        "by_package_ms": {name: seconds * 1e3 / cells for name, seconds in
                          sorted(packages.items(), key=lambda item: -item[1])},
        "by_cumulative": listed(3),
        "by_own": listed(2),
    }


def measure(cells: int = 300, warmup: int = 30, blocks: int = 3, profile_cells: int = 200,
            top: int = 25, baseline: Path | None = None,
            log: Callable[[str], None] = lambda text: None) -> dict[str, Any]:
    """The figures for this tree's mcp_nb (and, with ``baseline``, for that one too)."""
    trees = {"mcp_nb": ROOT}
    if baseline is not None:
        trees = {"baseline": baseline.resolve(), **trees}
    kernels = {}
    try:
        for name, path in trees.items():
            log(f"  starting a kernel for {name} ({path})")
            kernels[name] = Kernel(path)
            kernels[name].run_cells(warmup)
            for code in REFERENCES:
                kernels[name].run_cells(warmup, code)
        run_cell: dict[str, list[float]] = {name: [] for name in kernels}
        references: dict[str, dict[str, list[float]]] = {
            name: {code: [] for code in REFERENCES} for name in kernels}
        reference_requests: dict[str, dict[str, list[float]]] = {
            name: {code: [] for code in REFERENCES} for name in kernels}
        requests: dict[str, list[float]] = {name: [] for name in kernels}
        batch: dict[str, list[float]] = {name: [] for name in kernels}
        block = max(1, cells // blocks)
        for number in range(blocks):
            # The kernels take turns, the order rotating: a slow minute slows each alike.
            order = list(kernels)[number % len(kernels):] + list(kernels)[:number % len(kernels)]
            for name in order:
                log(f"  block {number + 1}/{blocks}: {name}, {block} cells twice")
                run_cell[name] += kernels[name].run_cells(block)
                for code in REFERENCES:
                    references[name][code] += kernels[name].run_cells(block, code)
                    reference_requests[name][code] += kernels[name].execute_requests(
                        block, code)[0]
                samples, per_cell = kernels[name].execute_requests(block)
                requests[name] += samples
                batch[name].append(per_cell)
        figures: dict[str, Any] = {}
        for name, kernel in kernels.items():
            log(f"  profiling {name}, {profile_cells} cells")
            figures[name] = {
                "run_cell": summary(run_cell[name]),
                "references": {code: summary(samples)
                               for code, samples in references[name].items()},
                "reference_requests": {code: summary(samples)
                                       for code, samples in reference_requests[name].items()},
                "execute_request": summary(requests[name]),
                "execute_request_batch_ms": statistics.median(batch[name]) * 1e3,
                "profile": breakdown(kernel.profile(profile_cells), profile_cells, top),
            }
        return figures
    finally:
        for kernel in kernels.values():
            kernel.shutdown()


#: The issue's target for the cell (run_cell, median).
TARGET_MS = 2.0


#: Column names: the baseline of ``--baseline`` and this tree.
LABELS = {"baseline": "mcp_nb baseline", "mcp_nb": "mcp_nb"}
#: Packages shown in the table's profile rows: those costing at least this much somewhere.
PROFILE_ROW_MS = 0.05


def table(figures: dict[str, Any]) -> str:
    names = list(figures)
    header = " | ".join(["figure (ms of kernel CPU per cell)", *(LABELS[n] for n in names)])
    lines = [f"Kernel CPU per `{LINE}` cell (lab server over stdio; medians unless said):", "",
             f"| {header} |", "|---|" + "---:|" * len(names)]
    rows = [("run_cell, median", lambda f: f["run_cell"]["median_ms"]),
            ("run_cell, p95", lambda f: f["run_cell"]["p95_ms"]),
            ("execute_request, median", lambda f: f["execute_request"]["median_ms"]),
            ("execute_request, p95", lambda f: f["execute_request"]["p95_ms"]),
            ("execute_request, whole batch / cells", lambda f: f["execute_request_batch_ms"]),
            *[(f"{label}: {view}, median",
               lambda f, code=code, key=key: f[key][code]["median_ms"])
              for code, label in REFERENCES.items()
              for view, key in (("run_cell", "references"),
                                ("execute_request", "reference_requests"))]]
    for label, value in rows:
        lines.append(f"| {label} | " + " | ".join(f"{value(figures[n]):.2f}" for n in names)
                     + " |")
    packages = sorted({p for n in names for p, ms in figures[n]["profile"]["by_package_ms"].items()
                       if ms >= PROFILE_ROW_MS},
                      key=lambda p: -figures[names[-1]]["profile"]["by_package_ms"].get(p, 0))
    for package in packages:
        cells = [f"{figures[n]['profile']['by_package_ms'].get(package, 0.0):.2f}" for n in names]
        lines.append(f"| profile (cell thread, under cProfile): {package} | "
                     + " | ".join(cells) + " |")
    mine = figures["mcp_nb"]["run_cell"]["median_ms"]
    verdict = "met" if mine <= TARGET_MS else "missed"
    lines += ["", f"Target: run_cell median ≤ {TARGET_MS:g} ms: {mine:.2f} ms, {verdict}."]
    return "\n".join(lines)


def functions_table(figures: dict[str, Any], name: str = "mcp_nb", key: str = "by_own",
                    top: int = 15) -> str:
    rows = figures[name]["profile"][key][:top]
    lines = [f"| function ({name}, per cell, cell thread under cProfile) | calls | own ms "
             "| cumulative ms |", "|---|---:|---:|---:|"]
    lines += [f"| `{row['function']}` | {row['calls_per_cell']:.1f} | {row['own_ms']:.3f} "
              f"| {row['cumulative_ms']:.3f} |" for row in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.call_cell",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=300, help="measured cells per view")
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--blocks", type=int, default=3,
                        help="blocks the cells are split into (kernels take turns per block)")
    parser.add_argument("--profile-cells", type=int, default=200)
    parser.add_argument("--top", type=int, default=25, help="functions kept from the profile")
    parser.add_argument("--baseline", type=Path, metavar="DIR",
                        help="also measure the mcp_nb package found in DIR")
    options = parser.parse_args(argv)
    started = time.monotonic()
    figures = measure(options.cells, options.warmup, options.blocks, options.profile_cells,
                      options.top, options.baseline,
                      log=lambda text: print(text, file=sys.stderr, flush=True))
    print(table(figures))
    print()
    for name in figures:
        for key in ("by_cumulative", "by_own"):
            print(functions_table(figures, name, key))
            print()
    print(f"({time.monotonic() - started:.0f} s; load average {os.getloadavg()[0]:.2f})")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
