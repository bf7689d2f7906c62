"""The tutorial notebooks run top to bottom and reproduce their committed outputs.

Strict nbval (not ``--nbval-lax``): every cell's outputs must match what is
committed, after ``notebooks/sanitize.cfg`` masks durations, times, pids and
ports.  nbval runs in a subprocess so its collection hooks stay out of this
suite's session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SANITIZE = NOTEBOOKS / "sanitize.cfg"
NOTEBOOK_FILES = sorted(NOTEBOOKS.glob("*.ipynb"))
#: Each notebook must run in under this many seconds.
BUDGET_SECONDS = 60.0
#: nbval's per-cell options that weaken the check (comments and tags alike).
LAX_COMMENTS = ("NBVAL_IGNORE_OUTPUT", "NBVAL_CHECK_OUTPUT", "NBVAL_SKIP",
                "NBVAL_RAISES_EXCEPTION", "PYTEST_VALIDATE_IGNORE_OUTPUT")
LAX_TAGS = ("nbval-ignore-output", "nbval-check-output", "nbval-skip", "nbval-raises-exception")


def _load(path: Path) -> dict[str, Any]:
    notebook: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return notebook


def _code_cells(path: Path) -> list[dict[str, Any]]:
    return [cell for cell in _load(path)["cells"] if cell["cell_type"] == "code"]


def _source(cell: dict[str, Any]) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def _servers_from_notebooks() -> set[int]:
    """Live server processes started by notebook kernels: lab servers whose working
    directory is notebooks/, and the hand-written server of 09_your_own_server."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = Path(os.readlink(entry / "cwd"))
        except OSError:  # gone meanwhile, or not ours to look at
            continue
        command = b" ".join(argv)
        if (b"mcp_nb.lab" in command and cwd == NOTEBOOKS) or b"my_server.py" in command:
            found.add(int(entry.name))
    return found


def test_there_is_a_tour_and_a_notebook_per_phase() -> None:
    numbers = [path.stem[:2] for path in NOTEBOOK_FILES]
    assert len(numbers) >= 10 and numbers == [f"{n:02d}" for n in range(len(numbers))]
    assert NOTEBOOK_FILES[0].name == "00_tour.ipynb"


@pytest.mark.parametrize("path", NOTEBOOK_FILES, ids=lambda path: path.stem)
def test_notebook_is_committed_executed_and_strict(path: Path) -> None:
    notebook = _load(path)
    cells = _code_cells(path)
    # Executed top to bottom in one kernel, outputs saved.
    assert [cell["execution_count"] for cell in cells] == list(range(1, len(cells) + 1)), (
        "re-run the notebook top to bottom and save it with its outputs")
    assert sum(len(cell["outputs"]) for cell in cells) >= len(cells) // 2
    # Widget state is not needed by nbval and bloats the file.
    assert "widgets" not in notebook["metadata"]
    assert path.stat().st_size < 150_000
    for cell in cells:
        tags = cell.get("metadata", {}).get("tags", [])
        source = _source(cell)
        assert not [tag for tag in tags if tag in LAX_TAGS], f"lax nbval tag in: {source}"
        assert not [c for c in LAX_COMMENTS if c in source], f"nbval marker in: {source}"
        # A cell that shows an error says so with the raises-exception tag, and vice versa.
        raised = any(output["output_type"] == "error" for output in cell["outputs"])
        assert raised == ("raises-exception" in tags), f"error output vs tag in: {source}"


@pytest.mark.timeout(900)
def test_notebooks_reproduce_their_outputs_under_strict_nbval(tmp_path: Path) -> None:
    before = _servers_from_notebooks()
    report = tmp_path / "nbval.xml"
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", str(NOTEBOOKS),
         "--nbval-sanitize-with", str(SANITIZE), "--nbval-current-env",
         "-p", "no:cacheprovider", "-q", f"--junitxml={report}"],
        cwd=ROOT, capture_output=True, text=True, timeout=800,
    )
    elapsed = time.monotonic() - started
    assert result.returncode == 0, (
        f"nbval failed after {elapsed:.0f}s:\n{result.stdout[-8000:]}\n{result.stderr[-2000:]}")

    seconds: dict[str, float] = defaultdict(float)
    for case in ET.parse(report).getroot().iter("testcase"):
        seconds[case.get("classname", "")] += float(case.get("time", "0"))
    ran = {name.removeprefix("notebooks.") for name in seconds}
    assert ran == {path.name for path in NOTEBOOK_FILES}
    slow = {name: round(total, 1) for name, total in seconds.items() if total >= BUDGET_SECONDS}
    assert not slow, f"notebooks over the {BUDGET_SECONDS:g}s budget: {slow}"

    # Every server a notebook started is gone once its kernel has shut down.
    deadline = time.monotonic() + 10
    while (left := _servers_from_notebooks() - before) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"server processes outlived the notebooks: {sorted(left)}"
