"""What nbgrader costs the test suite: autograding the chapters, and a Jupyter server's start.

Two measurements (docs/teaching.md, tests/test_nbgrader.py, tests/browser_support.py):

* **autograde**: a course as tests/test_nbgrader.py builds it (each chapter an assignment, in
  both editions; two learners, ``blank`` handing in the student version as given and
  ``filled`` the same with each solution typed in), graded with nbgrader's own commands. The
  CPU of each command is its whole process tree's (``RUSAGE_CHILDREN`` around it: nbgrader,
  its ``alembic`` run, the kernels and every server a chapter starts, all reaped before it
  exits), and nbgrader's own share is read inside it at exit. Two layouts:
  ``--layout course`` (the test's: one course, one ``generate_assignment`` and one
  ``autograde`` over everything) and ``--layout chapter`` (the test before it: a course per
  chapter, its two editions, and the two commands per chapter).
* **server**: JupyterLab started as tests/browser_support.py starts it, with nbgrader's
  server and lab extensions on (as installing nbgrader leaves them) and off (as the tests run
  it), in turns; the server process's CPU (``/proc/PID/stat``) once ``/api/status`` answers.

Run: ``python -m benchmarks.nbgrader_costs autograde [--layout course|chapter] [CHAPTER ...]``
(default every chapter with an exercise) or ``python -m benchmarks.nbgrader_costs server
[--rounds N]``. Prints a table and, last, one JSON line. Not part of ``python -m
benchmarks``: the autograde of every chapter takes minutes of CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import browser_support  # noqa: E402 (the tests' harness: the same servers, the same courses)
import test_nbgrader  # noqa: E402

#: nbgrader's command line, reporting its own CPU (user + system) on stderr as it exits.
NBGRADER = """\
import atexit, resource, sys
def report():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    sys.stderr.write(f"\\nNBGRADER_SELF_CPU {usage.ru_utime + usage.ru_stime}\\n")
atexit.register(report)
sys.argv[0] = "nbgrader"
from nbgrader.apps.nbgraderapp import main
main()
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _nbgrader(course: Path, *args: str, temporary: Path) -> dict[str, float]:
    """One nbgrader command: its tree's CPU, its own, its wall time."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    before, started = _children_cpu(), time.monotonic()
    result = subprocess.run([sys.executable, "-c", NBGRADER, *args], cwd=course,
                            capture_output=True, text=True,
                            env={**os.environ, "PATH": path, "TMPDIR": str(temporary)})
    wall, cpu = time.monotonic() - started, _children_cpu() - before
    if result.returncode:
        raise SystemExit(f"nbgrader {args[0]} failed:\n{result.stderr[-4000:]}")
    own = [float(line.split()[1]) for line in result.stderr.splitlines()
           if line.startswith("NBGRADER_SELF_CPU")]
    return {"cpu": cpu, "nbgrader": own[-1], "wall": wall}


def _grade(course: Path, paths: list[Path], temporary: Path) -> dict[str, dict[str, float]]:
    """``generate_assignment``, the two learners' submissions, ``autograde``; the scores
    must be what the test asserts, or the numbers would be a broken run's."""
    generate = _nbgrader(course, "generate_assignment", "*", temporary=temporary)
    for path in paths:
        student = test_nbgrader._released(course, path)
        filled = test_nbgrader._filled_in(nbformat.read(path, 4), student)
        for learner, notebook in [("blank", student), ("filled", filled)]:
            folder = course / "submitted" / learner / test_nbgrader._assignment(path)
            shutil.copytree(course / "release" / test_nbgrader._assignment(path), folder)
            nbformat.write(notebook, folder / path.name)
    autograde = _nbgrader(course, "autograde", "*", temporary=temporary)
    for path in paths:
        assignment = test_nbgrader._assignment(path)
        scores = [test_nbgrader._score(course, assignment, learner)
                  for learner in ("filled", "blank")]
        if scores != [(1.0, 1.0), (0.0, 1.0)]:
            raise SystemExit(f"{assignment}: scores {scores}, not full and none")
    return {"generate_assignment": generate, "autograde": autograde}


def autograde(names: list[str], layout: str) -> dict[str, Any]:
    paths = ([path for name in names for path in (test_nbgrader.NOTEBOOKS / f"{name}.ipynb",
                                                  test_nbgrader.NOTEBOOKS / "zh" / f"{name}.ipynb")]
             if names else test_nbgrader.MARKED)
    groups = ([paths] if layout == "course" else
              [[path for path in paths if path.stem == stem]
               for stem in dict.fromkeys(path.stem for path in paths)])
    totals: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for n, group in enumerate(groups):
            temporary = Path(scratch, f"tmp{n}")
            temporary.mkdir()
            course = test_nbgrader._course(Path(scratch, f"course{n}"), group)
            for command, numbers in _grade(course, group, temporary).items():
                for key, value in numbers.items():
                    totals.setdefault(command, {}).setdefault(key, 0.0)
                    totals[command][key] += value
    graded = 2 * len(paths)
    kernels = totals["autograde"]["cpu"] - totals["autograde"]["nbgrader"]
    print(f"{layout} layout: {len(paths)} notebooks, {graded} graded, "
          f"{len(groups)} course(s)")
    print("| command | CPU (s) | nbgrader's own (s) | wall (s) |")
    print("|---|---|---|---|")
    for command, numbers in totals.items():
        print(f"| {command} | {numbers['cpu']:.1f} | {numbers['nbgrader']:.1f} | "
              f"{numbers['wall']:.1f} |")
    print(f"kernels and what they started: {kernels:.1f} s, {kernels / graded:.2f} s per "
          f"notebook graded; load average at the end: {os.getloadavg()[0]:.1f}")
    return {"layout": layout, "notebooks": len(paths), "graded": graded,
            "courses": len(groups), **{command: {key: round(value, 2)
                                                 for key, value in numbers.items()}
                                       for command, numbers in totals.items()}}


def _server_cpu(nbgrader: bool) -> tuple[float, float]:
    """(CPU, wall) of one JupyterLab until it answers, nbgrader's extensions on or off."""
    with tempfile.TemporaryDirectory() as scratch:
        root, home = Path(scratch, "root"), Path(scratch, "home")
        root.mkdir()
        home.mkdir()
        started = time.monotonic()
        server = browser_support.JupyterServer(root, home, browser_support.LAB,
                                               nbgrader=nbgrader)
        wall = time.monotonic() - started
        fields = Path(f"/proc/{server.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        leftovers = server.stop()
        if leftovers:
            raise SystemExit(f"left running: {leftovers}")
        return cpu, wall


def server(rounds: int) -> dict[str, Any]:
    samples: dict[str, list[tuple[float, float]]] = {"on": [], "off": []}
    for _ in range(rounds):  # in turns, so a change in the machine's load hits both
        samples["on"].append(_server_cpu(nbgrader=True))
        samples["off"].append(_server_cpu(nbgrader=False))
    print(f"JupyterLab start, {rounds} rounds in turns "
          f"(load average at the end: {os.getloadavg()[0]:.1f})")
    print("| nbgrader's extensions | CPU median (s) | CPU min (s) | wall median (s) |")
    print("|---|---|---|---|")
    result: dict[str, Any] = {"rounds": rounds}
    for state, values in samples.items():
        cpus, walls = [cpu for cpu, _ in values], [wall for _, wall in values]
        print(f"| {state} | {statistics.median(cpus):.2f} | {min(cpus):.2f} | "
              f"{statistics.median(walls):.2f} |")
        result[state] = {"cpu_median": round(statistics.median(cpus), 3),
                         "cpu_min": round(min(cpus), 3),
                         "wall_median": round(statistics.median(walls), 3)}
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    grading = commands.add_parser("autograde", help="grade chapters as the test does")
    grading.add_argument("chapters", nargs="*", help="e.g. 15_security_model (default: all)")
    grading.add_argument("--layout", choices=("course", "chapter"), default="course")
    starting = commands.add_parser("server", help="JupyterLab's start, nbgrader on and off")
    starting.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    result = (autograde(args.chapters, args.layout) if args.command == "autograde"
              else server(args.rounds))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
