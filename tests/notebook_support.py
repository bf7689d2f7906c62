"""Running the tutorial chapters in tests as a learner's kernel runs them.

A chapter starts servers from its kernel and writes beside itself, so a test runs it in a
private copy of notebooks/ and finds what it started by a marker in the processes'
environment (tests/test_notebooks.py, tests/test_nbgrader.py).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import time
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
#: The environment variable a test sets, to a value of its own, for the kernels it starts.
MARKER_VARIABLE = "MCP_NB_NOTEBOOK_RUN"


def private_copy(tmp_path: Path) -> Path:
    """A copy of notebooks/ (both editions, the recordings, sanitize.cfg) for one test.

    The suite runs in parallel (pytest-xdist): chapters that write beside themselves
    (scratch folders) or look for what is left there must not see another test's run, so each
    run executes in a folder of its own. Nothing in a notebook refers outside notebooks/."""
    copy = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOKS, copy, ignore=shutil.ignore_patterns(
        "scratch_*", ".ipynb_checkpoints", "__pycache__"))
    return copy


def processes_with(marker: str) -> set[int]:
    """Live processes whose environment holds ``marker``: a kernel started with it in its
    environment, and everything that kernel started in turn. A marker of its own per test
    tells its processes from those of the tests running beside it."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker.encode() in (entry / "environ").read_bytes().split(b"\0"):
                found.add(int(entry.name))
        except OSError:  # gone meanwhile, or not ours to look at
            continue
    return found


def stop_processes_with(marker: str, grace: float = 10.0) -> set[int]:
    """Wait up to ``grace`` for the processes marked ``marker`` to end; kill and return those
    that did not (a test that asserts nothing is left fails with them)."""
    deadline = time.monotonic() + grace
    while (left := processes_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in left:  # not to leave them to the next test either
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return left


def run_marker(test: str, label: str) -> str:
    """``VARIABLE=value`` for one run: this test process, the test, the chapter."""
    return f"{MARKER_VARIABLE}={os.getpid()}-{test}-{label.replace('/', '-')}"
