"""The tutorial notebooks run, reproduce their committed outputs, and check their learners.

Strict nbval (not ``--nbval-lax``): every cell's outputs must match what is
committed, after ``notebooks/sanitize.cfg`` masks durations, times, pids and
ports.  nbval runs in a subprocess so its collection hooks stay out of this
suite's session.

Each exercise is two tagged cells: the learner's work (``exercise-answer``,
committed with a solution so the notebook runs top to bottom) and a self-check
(``exercise-check``).  A check that passes without the learner's work checks
nothing: tests/test_nbgrader.py grades every chapter's student version handed in
blank (the learner's cells replaced by a cell that raises) and asserts that, up to
the self-check, it fails only there, at the learner's cells and where the chapter
shows an error on purpose, and scores nothing.  That run is the one this module
made before, with the answers left out, done by nbgrader's own ``autograde``.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from sync_twins import same_code  # scripts/sync_twins.py: one rule for test and script

sys.path.remove(str(Path(__file__).resolve().parent.parent / "scripts"))
from notebook_support import private_copy, run_marker, stop_processes_with

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SANITIZE = NOTEBOOKS / "sanitize.cfg"
ZH = NOTEBOOKS / "zh"
#: The English notebooks; each has a Chinese twin of the same name under notebooks/zh/.
NOTEBOOK_FILES = sorted(NOTEBOOKS.glob("*.ipynb"))
ZH_FILES = sorted(ZH.glob("*.ipynb"))
#: Both editions: everything nbval runs and every check below applies to.
ALL_FILES = NOTEBOOK_FILES + ZH_FILES


def _label(path: Path) -> str:
    return str(path.relative_to(NOTEBOOKS).with_suffix(""))


def _notebook_of(classname: str) -> str:
    """nbval's junit class name, e.g. ``notebooks.zh.00_tour.ipynb`` → ``zh/00_tour.ipynb``."""
    _root, *folders, stem, suffix = classname.split(".")
    return "/".join([*folders, f"{stem}.{suffix}"])
#: Each notebook must run in under this many seconds.
BUDGET_SECONDS = 60.0
#: nbval's per-cell options that weaken the check (comments and tags alike).
LAX_COMMENTS = ("NBVAL_IGNORE_OUTPUT", "NBVAL_CHECK_OUTPUT", "NBVAL_SKIP",
                "NBVAL_RAISES_EXCEPTION", "PYTEST_VALIDATE_IGNORE_OUTPUT")
LAX_TAGS = ("nbval-ignore-output", "nbval-check-output", "nbval-skip", "nbval-raises-exception")
#: Chapter numbers other work owns (authorization, record/replay): they may be missing for now.
RESERVED_NUMBERS = {"11", "12"}
ANSWER_TAG, CHECK_TAG = "exercise-answer", "exercise-check"
#: Absolute paths of this machine (or a learner's) must not end up in committed outputs.
ABSOLUTE_PATH = re.compile(
    r"(?<![\w.:/])/(?:home|root|tmp|work|usr|opt|var|srv|mnt|private|Users)/|\b[A-Z]:\\\\")


def _load(path: Path) -> dict[str, Any]:
    notebook: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return notebook


def _code_cells(path: Path) -> list[dict[str, Any]]:
    return [cell for cell in _load(path)["cells"] if cell["cell_type"] == "code"]


def _source(cell: dict[str, Any]) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def _tags(cell: dict[str, Any]) -> list[str]:
    tags: list[str] = cell.get("metadata", {}).get("tags", [])
    return tags


def _output_text(output: dict[str, Any]) -> str:
    """Everything an output shows, as one string (stream text, data, error traceback)."""
    parts = [output.get("text", ""), output.get("evalue", ""), *output.get("traceback", [])]
    for value in output.get("data", {}).values():
        parts.append(value if isinstance(value, str) else json.dumps(value))
    return "\n".join(part if isinstance(part, str) else "".join(part) for part in parts)


def _in_copy(path: Path, copy: Path) -> Path:
    return copy / path.relative_to(NOTEBOOKS)


def _marker(test: str, path: Path) -> str:
    return run_marker(test, _label(path))


def test_there_is_a_tour_and_a_notebook_per_phase() -> None:
    numbers = [path.stem[:2] for path in NOTEBOOK_FILES]
    expected = [f"{n:02d}" for n in range(int(numbers[-1]) + 1)]
    assert len(numbers) >= 10 and numbers == [
        n for n in expected if n in numbers or n not in RESERVED_NUMBERS]
    assert NOTEBOOK_FILES[0].name == "00_tour.ipynb"


@pytest.mark.parametrize("path", ALL_FILES, ids=_label)
def test_committed_outputs_show_no_tracebacks_and_no_machine_paths(path: Path) -> None:
    for cell in _code_cells(path):
        for output in cell["outputs"]:
            text = _output_text(output)
            assert "\x1b[" not in text, f"ANSI escapes (a raw traceback?) in: {_source(cell)}"
            assert "Traceback (most recent call last)" not in text, (
                f"a traceback in the output of: {_source(cell)}")
            found = ABSOLUTE_PATH.search(text)
            assert not found, f"absolute path {text[found.start():found.start() + 60]!r} " \
                f"in the output of: {_source(cell)}"


@pytest.mark.parametrize("path", NOTEBOOK_FILES, ids=_label)
def test_every_notebook_has_a_chinese_twin_with_the_same_code(path: Path) -> None:
    twin = ZH / path.name
    assert twin.exists(), f"notebooks/zh/{path.name} is missing: add the Chinese edition"
    english, chinese = _code_cells(path), _code_cells(twin)
    assert len(chinese) == len(english), "the twins have different numbers of code cells"
    for ours, theirs in zip(english, chinese, strict=True):
        assert same_code(_source(ours), _source(theirs)), (
            f"the Chinese twin's code differs from the English: {_source(theirs)[:200]!r}")
    assert [_tags(cell) for cell in chinese] == [_tags(cell) for cell in english]


def test_twins_may_differ_in_what_they_say_to_a_person_not_in_what_they_do() -> None:
    english = ('%load_ext mcp_nb\n# Self-check\nassert done, "finish the cell above"\n'
               'print(f"✓ {name}")')
    assert same_code(english, '%load_ext mcp_nb\n%mcp lang zh\n# 自检\n'
                              'assert done, "先完成上面的单元"\nprint(f"✓ {name}")')
    assert not same_code(english, english.replace("done", "finished"))
    assert not same_code(english, english.replace("finish the cell above", "finish it"))
    assert not same_code("%mcp call add a=1", "%mcp call add a=2")
    assert not same_code("x = 1", "x = 1\ny = 2")


def test_sync_twins_copies_changed_code_and_keeps_the_chinese_prose(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from sync_twins import sync
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    english, twin = tmp_path / "en.ipynb", tmp_path / "zh.ipynb"
    original = nbformat.read(NOTEBOOK_FILES[0], as_version=4)
    code = next(cell for cell in original.cells if cell.cell_type == "code")
    code.source += "\nchanged = True"
    nbformat.write(original, english)
    twin.write_bytes((ZH / NOTEBOOK_FILES[0].name).read_bytes())
    assert sync(english, twin) == "1 code cell(s) copied"
    synced = nbformat.read(twin, as_version=4)
    chinese = nbformat.read(ZH / NOTEBOOK_FILES[0].name, as_version=4)
    # The changed cell is the English one now; the others keep their Chinese words.
    synced_code = [c.source for c in synced.cells if c.cell_type == "code"]
    assert synced_code[0] == code.source
    assert synced_code[1:] == [c.source for c in chinese.cells if c.cell_type == "code"][1:]
    assert [c.source for c in synced.cells if c.cell_type == "markdown"] == [
        c.source for c in chinese.cells if c.cell_type == "markdown"]
    assert sync(english, twin) == "in sync"
    original.cells.append(nbformat.v4.new_code_cell("1"))
    nbformat.write(original, english)
    assert "do not line up" in sync(english, twin)


def test_every_chinese_notebook_has_an_english_original() -> None:
    assert ZH_FILES, "notebooks/zh/ holds the Chinese edition"
    assert {path.name for path in ZH_FILES} == {path.name for path in NOTEBOOK_FILES}


def _exercise_cells(path: Path) -> tuple[list[int], int | None]:
    """Indices of the learner's cells and of the self-check (None if there is no exercise)."""
    cells = _load(path)["cells"]
    answers = [i for i, cell in enumerate(cells) if ANSWER_TAG in _tags(cell)]
    checks = [i for i, cell in enumerate(cells) if CHECK_TAG in _tags(cell)]
    assert len(checks) <= 1, "one self-check per notebook"
    return answers, checks[0] if checks else None


@pytest.mark.parametrize("path", ALL_FILES, ids=_label)
def test_every_exercise_is_tagged_answer_then_check(path: Path) -> None:
    self_checks = [i for i, cell in enumerate(_code_cells(path))
                   if _source(cell).startswith("# Self-check")]
    answers, check = _exercise_cells(path)
    if not self_checks and check is None:
        pytest.skip("no exercise in this notebook")
    assert check is not None, f"tag the self-check cell {CHECK_TAG!r}"
    assert answers and max(answers) < check, f"tag the learner's cells {ANSWER_TAG!r}"


#: Chapter 16's exercise, answered in ways a learner might: the check judges the host's answer
#: under the id the learner chose, and a ui/initialize without appCapabilities (a View's MUST)
#: or without an id, or a handshake without initialized, fails with words that say which.
_INITIALIZE = {"jsonrpc": "2.0", "method": "ui/initialize",
               "params": {"protocolVersion": "2026-01-26",
                          "appInfo": {"name": "me", "version": "1"}, "appCapabilities": {}}}
_INITIALIZED = {"jsonrpc": "2.0", "method": "ui/notifications/initialized"}
_VIEW_ANSWERS: list[tuple[list[dict[str, Any]], str | None]] = [
    ([{**_INITIALIZE, "id": 7}, _INITIALIZED], None),
    ([{**_INITIALIZE, "id": "hello"}, _INITIALIZED], None),
    ([{**_INITIALIZE, "id": 7, "params": {"protocolVersion": "2026-01-26"}}, _INITIALIZED],
     "appCapabilities"),
    ([_INITIALIZE, _INITIALIZED], "id"),
    ([{**_INITIALIZE, "id": 1}], "tool-input"),
    ([_INITIALIZED, {**_INITIALIZE, "id": 1}], "tool-input"),
]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("path", [NOTEBOOKS / "16_mcp_apps.ipynb", ZH / "16_mcp_apps.ipynb"],
                         ids=_label)
def test_chapter_16s_check_judges_the_learners_own_id_and_their_capabilities(
        path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answers, check = _exercise_cells(path)
    assert check is not None
    notebook = nbformat.read(path, as_version=4)
    check_source = notebook.cells[check].source
    notebook.cells = [cell for i, cell in enumerate(notebook.cells[:check]) if i not in answers]
    marker = _marker("check16", path)
    monkeypatch.setenv(*marker.split("=", 1))
    folder = _in_copy(path, private_copy(tmp_path)).parent
    client = NotebookClient(notebook, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}})
    outcomes: list[str | None] = []
    try:
        with client.setup_kernel():
            for index, cell in enumerate(notebook.cells):
                client.execute_cell(cell, index)
            for messages, _said in _VIEW_ANSWERS:
                tried = [nbformat.v4.new_code_cell(f"view_messages = {messages!r}"),
                         nbformat.v4.new_code_cell(check_source)]
                notebook.cells += tried
                client.execute_cell(tried[0], len(notebook.cells) - 2)
                try:
                    client.execute_cell(tried[1], len(notebook.cells) - 1)
                    outcomes.append(None)
                except CellExecutionError as failed:
                    assert failed.ename == "AssertionError", failed.evalue
                    outcomes.append(failed.evalue)
                if outcomes[-1] is None:  # passed: it names the id the learner used
                    printed = "".join(o.get("text", "") for o in tried[1].outputs)
                    assert f"{messages[0]['id']!r}" in printed and "InputSent" in printed
    finally:
        stop_processes_with(marker, grace=0)
    for (messages, said), outcome in zip(_VIEW_ANSWERS, outcomes, strict=True):
        if said is None:
            assert outcome is None, f"{messages} was refused: {outcome}"
        else:
            assert outcome is not None and said in outcome, (messages, outcome)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("path", NOTEBOOK_FILES, ids=_label)
def test_a_failing_cell_leaves_nothing_behind(
        path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run All stops at a failing cell, and the learner shuts the kernel down. The chapter's
    last cell, which tidies up, never ran; still the working folder must not have moved, and
    once the kernel is gone nothing it started may run on and nothing it wrote may remain."""
    notebook = nbformat.read(path, as_version=4)
    last = max(i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code")
    probe = "import os\nprint(os.getcwd())"
    # Everything before the last cell, a cell that fails, and (run in spite of it) a probe.
    notebook.cells = [*notebook.cells[:last], nbformat.v4.new_code_cell("raise RuntimeError()"),
                      nbformat.v4.new_code_cell(probe)]
    marker = _marker("leftovers", path)
    monkeypatch.setenv(*marker.split("=", 1))
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))
    folder = _in_copy(path, private_copy(tmp_path)).parent
    beside = set(folder.iterdir())
    NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(folder)}}).execute()
    printed = "".join(output.get("text", "") for output in notebook.cells[-1].outputs).strip()
    assert printed == str(folder), f"the working folder moved to {printed}"
    left = stop_processes_with(marker)
    assert not left, f"processes outlived the kernel: {sorted(left)}"
    assert not list(temporary.iterdir()), f"left in TMPDIR: {list(temporary.iterdir())}"
    assert set(folder.iterdir()) == beside, (
        f"left beside the notebook: {sorted(set(folder.iterdir()) - beside)}")


@pytest.mark.parametrize("path", ALL_FILES, ids=_label)
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


#: An image inlined in an output (the lifecycle diagrams are SVG in base64).
_BASE64 = re.compile(r"[A-Za-z0-9+/]{200,}={0,2}")


def _readable(text: str) -> str:
    """``text`` with each inlined image replaced by what tells two apart: an SVG diagram's
    label and the edges it draws in bold (the path taken), else the blob's length."""
    def summary(match: re.Match[str]) -> str:
        blob = match.group(0)
        try:
            svg = base64.b64decode(blob + "=" * (-len(blob) % 4)).decode("utf-8")
        except ValueError:
            return f"<base64, {len(blob)} characters>"
        label = re.search(r'aria-label="([^"]*)"', svg)
        path = re.findall(r'stroke-width="3"[^>]*><title>([^<]*?)(?: — [^<]*)?</title>', svg)
        return f"<SVG {label.group(1) if label else '(no label)'}; bold: {path}>"
    return _BASE64.sub(summary, text)


def _failures(report: Path) -> str:
    """Each failed cell of an nbval run, by name, with its message made readable."""
    if not report.exists():
        return ""
    found = []
    for case in ET.parse(report).getroot().iter("testcase"):
        for failure in [*case.findall("failure"), *case.findall("error")]:
            text = _readable(re.sub(r"(?:#x1B|\x1b)\[\d+m", "",
                                    failure.text or failure.get("message", "")))
            found.append(f"{case.get('classname')}::{case.get('name')}\n{text[-4000:]}")
    return "\n\n".join(found)


@pytest.mark.timeout(400)
@pytest.mark.parametrize("path", NOTEBOOK_FILES, ids=_label)
def test_chapter_reproduces_its_outputs_under_strict_nbval(path: Path, tmp_path: Path) -> None:
    """One chapter, both editions, in one nbval run: chapters run side by side (xdist), each
    in its own copy of notebooks/, and a chapter's editions share one pytest start-up."""
    copy = private_copy(tmp_path)
    editions = [_in_copy(path, copy), _in_copy(ZH / path.name, copy)]
    report = tmp_path / "nbval.xml"
    marker = _marker("nbval", path)
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", *map(str, editions),
         "--nbval-sanitize-with", str(SANITIZE), "--nbval-current-env",
         "-p", "no:cacheprovider", "-p", "no:xdist", "--timeout=120", "-q",
         f"--junitxml={report}", f"--rootdir={tmp_path}"],
        cwd=tmp_path, capture_output=True, text=True, timeout=380,
        env={**os.environ, **dict([marker.split("=", 1)])},
    )
    elapsed = time.monotonic() - started
    assert result.returncode == 0, (
        f"nbval failed after {elapsed:.0f}s:\n"
        + (_failures(report) or _readable(result.stdout)[-8000:])
        + f"\n{result.stderr[-2000:]}")

    seconds: dict[str, float] = defaultdict(float)
    for case in ET.parse(report).getroot().iter("testcase"):
        seconds[case.get("classname", "")] += float(case.get("time", "0"))
    ran = {_notebook_of(classname) for classname in seconds}
    assert ran == {path.name, f"zh/{path.name}"}
    slow = {name: round(total, 1) for name, total in seconds.items() if total >= BUDGET_SECONDS}
    assert not slow, f"notebooks over the {BUDGET_SECONDS:g}s budget: {slow}"

    # Every server a notebook started is gone once its kernel has shut down.
    left = stop_processes_with(marker)
    assert not left, f"server processes outlived the notebooks: {sorted(left)}"


def test_a_failed_comparison_of_a_diagram_reads_as_its_label_and_path() -> None:
    from mcp_nb.notebook.diagrams import state_diagram_svg
    from mcp_nb.protocol.lifecycle import State

    svg = state_diagram_svg(State.TERMINATED, [State.UNINITIALIZED, State.INITIALIZING,
                                               State.TERMINATED])
    blob = base64.b64encode(svg.encode()).decode()
    shown = _readable(f'- <img src="data:image/svg+xml;base64,{blob}"/>')
    assert blob not in shown
    assert "current state Terminated" in shown
    assert "Initializing → Terminated" in shown and "Operating" not in shown.split("bold")[1]
