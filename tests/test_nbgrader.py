"""nbgrader, as a teacher uses it, on every chapter's exercise (docs/teaching.md).

``scripts/nbgrader_marks.py`` marks each exercise for nbgrader: the learner's cell a solution
cell, the self-check an autograded test cell. Here nbgrader's own commands run on one course
directory as a teacher makes one (``source/ASSIGNMENT/CHAPTER.ipynb``, one assignment per
chapter and edition, all of them in one course and one gradebook): ``nbgrader
generate_assignment`` must take every solution out and keep every check; ``nbgrader
autograde`` must give a filled-in copy of each student version full points and the blank one
none. Autograding runs each chapter in a kernel, as a learner's would (its lab servers started
from that kernel, in its folder, found afterwards by a marker in their environment).

Every chapter, both editions, both learners, on every run, at the cost of two nbgrader
commands: one ``generate_assignment`` and one ``autograde`` over the whole course (nbgrader's
own start-up, its gradebook's creation and its converters are paid once, not per chapter; the
kernels, one per notebook graded, are most of what is left: ``benchmarks/RESULTS.md``). The
course is built once for the module (a module-scoped fixture, which keeps the module on one
xdist worker).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import pytest
from notebook_support import NOTEBOOKS, run_marker, stop_processes_with

sys.path.insert(0, str(NOTEBOOKS.parent / "scripts"))
import nbgrader_marks  # scripts/nbgrader_marks.py: the marks, and what a learner would type

sys.path.remove(str(NOTEBOOKS.parent / "scripts"))

#: Chapters with an exercise not yet marked for nbgrader: their tests are expected to fail,
#: and strictly (one that passes fails as a reminder to empty this set).
PENDING: set[str] = set()
EXERCISES = [path for edition in (NOTEBOOKS, NOTEBOOKS / "zh")
             for path in sorted(edition.glob("[0-9][0-9]_*.ipynb"))
             if nbgrader_marks.exercise(nbformat.read(path, as_version=4))[1] is not None]
CHAPTERS = sorted({path.stem for path in EXERCISES})
MARKED = [path for path in EXERCISES if path.stem not in PENDING]
COURSE = "mcp_nb"
CELL_SECONDS = 120
CONFIG = f'''\
c = get_config()
c.CourseDirectory.course_id = "{COURSE}"
# docs/teaching.md: the graded notebooks keep the widgets' HTML, not their live state
c.Execute.store_widget_state = False
# A cell's bound, as strict nbval's in tests/test_notebooks.py: with nbgrader's 30 s default,
# at load 30, two of the 72 notebooks failed where they pass on a machine less loaded.
c.Execute.timeout = {CELL_SECONDS}
'''
#: A bound on one nbgrader command, which grades every notebook one after the other (72
#: kernels); a hang ends here, not at the suite's time-out.
NBGRADER_SECONDS = 2400


def _stub() -> str:
    """What nbgrader's student version puts where the solution was (its default for Python).
    Imported when needed: nbgrader takes seconds to import, and every worker collects this."""
    from nbgrader.preprocessors import ClearSolutions

    stub: str = ClearSolutions().code_stub["python"]
    return stub


def _label(path: Path) -> str:
    return str(path.relative_to(NOTEBOOKS).with_suffix(""))


def _pending(path: Path) -> Any:
    if path.stem in PENDING:
        return pytest.param(path, id=_label(path), marks=pytest.mark.xfail(
            strict=True, reason="marked by the lead after the chapter's re-run"))
    return pytest.param(path, id=_label(path))


def _assignment(path: Path) -> str:
    """One assignment per chapter and edition: ``05_timeouts_and_progress``, ``…_zh``."""
    return path.stem + ("_zh" if path.parent.name == "zh" else "")


def _course(root: Path, chapters: list[Path]) -> Path:
    """A course directory as nbgrader expects it, with each chapter in its own assignment
    and the recordings beside it (chapter 12 reads them; nbgrader copies what is beside a
    notebook into the student version and into the grading folder)."""
    root.mkdir()
    (root / "nbgrader_config.py").write_text(CONFIG, encoding="utf-8")
    for path in chapters:
        folder = root / "source" / _assignment(path)
        folder.mkdir(parents=True)
        shutil.copy(path, folder)
        shutil.copytree(NOTEBOOKS / "recordings", folder / "recordings")
    return root


def _nbgrader(course: Path, *args: str, env: dict[str, str] | None = None) -> None:
    """``nbgrader ARGS`` in the course, from this environment as if it were activated:
    creating the gradebook, nbgrader runs the ``alembic`` command found on PATH."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    result = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course,
                            capture_output=True, text=True, timeout=NBGRADER_SECONDS,
                            env={**os.environ, **(env or {}), "PATH": path})
    assert result.returncode == 0, f"nbgrader {args[0]} failed:\n{result.stderr[-6000:]}"


def _released(course: Path, path: Path) -> nbformat.NotebookNode:
    return nbformat.read(course / "release" / _assignment(path) / path.name, as_version=4)


def _is_solution(cell: Any) -> bool:
    return bool(cell.metadata.get("nbgrader", {}).get("solution"))


def _filled_in(original: Any, released: Any) -> Any:
    """The student version with each solution typed where the stub stands, as a learner who
    solved the exercise hands it in (the check cells are left as they were given)."""
    filled = nbformat.from_dict(json.loads(json.dumps(released)))
    stub = _stub()
    for ours, theirs in zip(original.cells, filled.cells, strict=True):
        if _is_solution(ours):
            assert stub in theirs.source
            theirs.source = theirs.source.replace(stub, nbgrader_marks.solution(ours.source))
    return filled


@contextmanager
def _gradebook(course: Path) -> Iterator[Any]:
    """The course's gradebook, read with nbgrader's API (a teacher reads the same with
    ``nbgrader export`` or the formgrader). Imported here: nbgrader takes seconds to import."""
    from nbgrader.api import Gradebook as NbgraderGradebook

    with NbgraderGradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE) as gradebook:
        yield gradebook


def _score(course: Path, assignment: str, student: str) -> tuple[float, float]:
    """(score, max score) of a submission, as the gradebook holds it."""
    with _gradebook(course) as gradebook:
        submission = gradebook.find_submission(assignment, student)
        return float(submission.score), float(submission.max_score)


def _errors(notebook: Any) -> dict[int, str]:
    """The cells that raised, and what (the message ends an assertion's diff)."""
    return {i: f"{output.ename}: {output.evalue[:200]}" for i, cell in enumerate(notebook.cells)
            if cell.cell_type == "code" for output in cell.outputs
            if output.output_type == "error"}


@pytest.mark.parametrize("path", [_pending(path) for path in EXERCISES])
def test_every_exercise_is_marked_for_nbgrader(path: Path) -> None:
    assert nbgrader_marks.problems(nbformat.read(path, as_version=4)) == []


def test_every_chapter_with_an_exercise_is_marked_in_both_editions() -> None:
    assert len(CHAPTERS) >= 17, CHAPTERS
    assert [path.stem for path in EXERCISES] == CHAPTERS * 2  # each chapter, in each edition
    assert nbgrader_marks.main(["--check", *map(_label, MARKED)]) == 0


def test_marking_is_idempotent_and_leaves_outputs_and_the_rest_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for path in [NOTEBOOKS / "00_tour.ipynb", NOTEBOOKS / "zh" / "01_initialization.ipynb"]:
        committed = nbformat.read(path, as_version=4)
        unmarked = nbformat.read(path, as_version=4)
        answers, _check = nbgrader_marks.exercise(unmarked)
        for cell in unmarked.cells:
            cell.metadata.pop("nbgrader", None)
        for i in answers:  # as the chapter was before it was marked
            source = unmarked.cells[i].source
            if nbgrader_marks.BEGIN in source:
                header = source.split("\n")[0]
                unmarked.cells[i].source = "\n".join(
                    [header + " (solution filled in)", nbgrader_marks.solution(source)])
        copy = tmp_path / path.name
        nbformat.write(unmarked, copy)
        assert nbgrader_marks.main(["--check", str(copy)]) == 1
        assert "nbgrader metadata None" in capsys.readouterr().out
        assert nbgrader_marks.main([str(copy)]) == 0
        marked = copy.read_bytes()
        assert nbformat.reads(marked.decode(), as_version=4) == committed
        assert nbgrader_marks.main([str(copy)]) == 0
        assert copy.read_bytes() == marked
        assert nbgrader_marks.main(["--check", str(copy)]) == 0


@dataclass
class Grading:
    """The course after one ``autograde`` of every learner's every notebook."""

    course: Path
    #: Processes the kernels started that were still running once nbgrader had finished.
    left: set[int]


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every marked chapter, both editions, one assignment each, in one course, and one
    ``generate_assignment`` over them all."""
    course = _course(tmp_path_factory.mktemp("nbgrader") / "course", MARKED)
    _nbgrader(course, "generate_assignment", "*")
    return course


@pytest.fixture(scope="module")
def graded(course: Path, tmp_path_factory: pytest.TempPathFactory) -> Grading:
    """Two learners hand in every assignment: ``blank`` the student version as given,
    ``filled`` the same with each solution typed in. One ``autograde`` grades them all (nbgrader
    runs the notebooks one after the other, each in a fresh kernel)."""
    for path in MARKED:
        student = _released(course, path)
        for learner, notebook in [("blank", student),
                                  ("filled", _filled_in(nbformat.read(path, 4), student))]:
            folder = course / "submitted" / learner / _assignment(path)
            shutil.copytree(course / "release" / _assignment(path), folder)
            nbformat.write(notebook, folder / path.name)
    marker = run_marker("nbgrader", "autograde")
    env = {"TMPDIR": str(tmp_path_factory.mktemp("tmp")), **dict([marker.split("=", 1)])}
    try:
        _nbgrader(course, "autograde", "*", env=env)
    finally:
        left = stop_processes_with(marker)
    return Grading(course, left)


def test_generate_assignment_takes_every_solution_out_and_keeps_every_check(
        course: Path) -> None:
    """One ``generate_assignment`` over every marked chapter, both editions: the student
    version has the stub where the solution was, the self-check as it is (locked), everything
    else as committed, and no outputs. Its checks fail without the learner's work: the blank
    copies score nothing (below)."""
    stub = _stub()
    for path in MARKED:
        original, student = nbformat.read(path, as_version=4), _released(course, path)
        assert len(student.cells) == len(original.cells)
        for ours, theirs in zip(original.cells, student.cells, strict=True):
            assert theirs.get("outputs", []) == []
            if not _is_solution(ours):
                assert theirs.source == ours.source
                continue
            answer = nbgrader_marks.solution(ours.source)
            assert answer.strip() and answer not in theirs.source
            region = "\n".join([nbgrader_marks.BEGIN, answer, nbgrader_marks.END])
            # The header ("# Your turn") stays; a cell magic is replaced whole.
            assert theirs.source == (ours.source.replace(region, stub)
                                     if region in ours.source else stub)
        check = nbgrader_marks.exercise(original)[1]
        assert check is not None
        assert student.cells[check].metadata["nbgrader"]["locked"]
        # The prose tells the two copies apart; none of it says the solution is there.
        assert [cell.source for cell in student.cells if cell.cell_type == "markdown"
                and nbgrader_marks.FILLED_IN.search(cell.source)] == []
        assert (course / "release" / _assignment(path) / "recordings").is_dir()


#: What the first test to ask for ``graded`` may take: its set-up grades the whole course.
GRADING_SECONDS = NBGRADER_SECONDS + 300


@pytest.mark.timeout(GRADING_SECONDS)
def test_autograde_graded_every_notebook_and_left_nothing_running(graded: Grading) -> None:
    with _gradebook(graded.course) as gradebook:
        handed_in = {(submission.assignment.name, submission.student.id)
                     for assignment in gradebook.assignments
                     for submission in assignment.submissions}
    assert handed_in == {(_assignment(path), learner) for path in MARKED
                         for learner in ("blank", "filled")}
    assert not graded.left, f"processes outlived the grading: {sorted(graded.left)}"


@pytest.mark.timeout(GRADING_SECONDS)
@pytest.mark.parametrize("path", MARKED, ids=_label)
def test_autograde_gives_a_filled_in_copy_full_points_and_a_blank_one_none(
        path: Path, graded: Grading) -> None:
    """The blank copy's run is also each chapter's proof that its self-check fails without
    the learner's work, and only there (tests/test_notebooks.py relies on it)."""
    original = nbformat.read(path, as_version=4)
    answers, check = nbgrader_marks.exercise(original)
    assert check is not None
    points = float(nbgrader_marks.POINTS)
    assert _score(graded.course, _assignment(path), "filled") == (points, points)
    assert _score(graded.course, _assignment(path), "blank") == (0.0, points)
    # Why: the filled-in run failed nowhere but where the chapter shows an error on purpose;
    # the blank one, up to the self-check, there and at the stubs and the self-check only.
    notebooks = {learner: nbformat.read(graded.course / "autograded" / learner
                                        / _assignment(path) / path.name, as_version=4)
                 for learner in ("filled", "blank")}
    on_purpose = [i for i, cell in enumerate(original.cells)
                  if "raises-exception" in cell.metadata.get("tags", [])]
    filled, blank = _errors(notebooks["filled"]), _errors(notebooks["blank"])
    assert sorted(filled) == on_purpose, filled
    assert sorted(i for i in blank if i <= check) == sorted(
        {*[i for i in on_purpose if i < check], *answers, check}), blank
