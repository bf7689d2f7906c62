"""Mark each chapter's exercise with nbgrader's cell metadata, so a teacher can grade it.

Every exercise is two tagged cells (tests/test_notebooks.py): the learner's work
(``exercise-answer``, committed with the solution so the chapter runs top to bottom) and a
self-check (``exercise-check``) whose asserts fail without that work. nbgrader reads the same
two cells as a solution cell and an autograded test cell:

    python scripts/nbgrader_marks.py                 # every exercise, both editions
    python scripts/nbgrader_marks.py 05_timeouts_and_progress zh/05_timeouts_and_progress
    python scripts/nbgrader_marks.py --check         # exit 1 and list what is not marked

What marking does to a chapter:

- the learner's cell gets ``### BEGIN SOLUTION`` / ``### END SOLUTION`` around the solution
  (everything below its ``# Your turn`` line), and the header loses its "(solution filled in)"
  note, which the markers now say and which the student version would make untrue. A cell
  magic (``%%mcp``) takes its whole body as it is, so there the whole cell is the solution
  and carries no markers; nbgrader's student version replaces it whole;
- the self-check becomes a locked test cell worth ``POINTS``;
- outputs are not touched: strict nbval compares outputs, so the repository's notebooks run
  and pass exactly as before.

Marking a marked chapter changes nothing. ``docs/teaching.md`` says how a teacher goes on
from here (``nbgrader generate_assignment``, ``nbgrader autograde``).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import nbformat

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
ANSWER_TAG, CHECK_TAG = "exercise-answer", "exercise-check"
#: nbgrader's cell metadata schema (``nbgrader.nbgraderformat.SCHEMA_VERSION`` in 0.9).
SCHEMA_VERSION = 3
#: What a self-check is worth. nbgrader scores a test cell all or nothing; a teacher who weighs
#: chapters differently changes this in their copy (so does nbgrader's Create Assignment panel).
POINTS = 1
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
#: The first line of a learner's cell in either edition ("# Your turn", "# 轮到你了").
YOUR_TURN = re.compile(r"^#\s*(Your turn|轮到你了)")
#: A note in parentheses (ASCII or full-width) at the end of that line: "(solution filled in)".
#: Written with escapes: \uff08 and \uff09 are the full-width parentheses of the Chinese edition.
NOTE = re.compile("\\s*[(\uff08][^()\uff08\uff09]*[)\uff09]\\s*$")
#: A sentence that says, without saying whose copy, that the solution is there: untrue in the
#: student version, where nbgrader has taken it out ("(Solution filled in.)", "答案已填好",
#: "答案已经填好了"). The chapters say instead that the repository's copy comes with a solution and
#: a handed-out copy leaves the cell to the learner; nbgrader itself only rewrites markdown that
#: is graded (a manually graded answer or task), which would add hand-grading to every chapter.
FILLED_IN = re.compile(r"solution (is )?filled in|答案已(经)?填好", re.IGNORECASE)


def answer_metadata(grade_id: str) -> dict[str, Any]:
    """An autograded answer: the learner writes here; nbgrader grades the test cell instead."""
    return {"grade": False, "grade_id": grade_id, "locked": False,
            "schema_version": SCHEMA_VERSION, "solution": True, "task": False}


def check_metadata(grade_id: str) -> dict[str, Any]:
    """An autograded test: read-only for the learner, scored by whether it runs without error."""
    return {"grade": True, "grade_id": grade_id, "locked": True, "points": POINTS,
            "schema_version": SCHEMA_VERSION, "solution": False, "task": False}


def _tags(cell: Any) -> list[str]:
    tags: list[str] = cell.get("metadata", {}).get("tags", [])
    return tags


def exercise(notebook: Any) -> tuple[list[int], int | None]:
    """Indices of the learner's cells and of the self-check (None: the chapter has none)."""
    answers = [i for i, cell in enumerate(notebook.cells) if ANSWER_TAG in _tags(cell)]
    checks = [i for i, cell in enumerate(notebook.cells) if CHECK_TAG in _tags(cell)]
    return answers, checks[0] if checks else None


def _grade_ids(count: int) -> list[str]:
    return ["answer" if n == 0 else f"answer_{n + 1}" for n in range(count)]


def is_cell_magic(source: str) -> bool:
    return source.lstrip().startswith("%%")


def marked_source(source: str) -> str:
    """The learner's cell with its solution between nbgrader's markers (unchanged if marked)."""
    if BEGIN in source or is_cell_magic(source):
        return source
    lines = source.split("\n")
    header = []
    if YOUR_TURN.match(lines[0]):
        header = [NOTE.sub("", lines[0])]
        lines = lines[1:]
    return "\n".join([*header, BEGIN, *lines, END])


def solution(source: str) -> str:
    """What a learner who solved the exercise would have typed: the marked region's lines
    (the whole cell for a cell magic). The tests fill the student version in with it."""
    if is_cell_magic(source):
        return source
    lines = source.split("\n")
    return "\n".join(lines[lines.index(BEGIN) + 1:lines.index(END)])


def mark(notebook: Any) -> bool:
    """Mark ``notebook``'s exercise in place; whether anything changed."""
    answers, check = exercise(notebook)
    if check is None:
        return False
    changed = False
    wanted = [(notebook.cells[i], answer_metadata(grade_id))
              for i, grade_id in zip(answers, _grade_ids(len(answers)), strict=True)]
    wanted.append((notebook.cells[check], check_metadata("self_check")))
    for cell, metadata in wanted:
        if cell.metadata.get("nbgrader") != metadata:
            cell.metadata["nbgrader"] = metadata
            changed = True
    for i in answers:
        cell = notebook.cells[i]
        source = marked_source(cell.source)
        if source != cell.source:
            cell.source = source
            changed = True
    return changed


def problems(notebook: Any) -> list[str]:
    """What keeps ``notebook`` from being graded as its exercise says (empty: all is well)."""
    found = []
    answers, check = exercise(notebook)
    expected: dict[int, dict[str, Any]] = {
        i: answer_metadata(grade_id)
        for i, grade_id in zip(answers, _grade_ids(len(answers)), strict=True)}
    if check is not None:
        expected[check] = check_metadata("self_check")
    for i, cell in enumerate(notebook.cells):
        where = f"cell {i}"
        if cell.cell_type == "code" and YOUR_TURN.match(cell.source) and i not in answers:
            found.append(f"{where} says it is the learner's turn but is not tagged {ANSWER_TAG}")
        metadata = cell.metadata.get("nbgrader")
        if i in expected and metadata != expected[i]:
            found.append(f"{where}: nbgrader metadata {metadata}, not {expected[i]}")
        elif i not in expected and metadata is not None:
            found.append(f"{where}: nbgrader metadata on a cell outside the exercise")
        # nbgrader's ClearSolutions matches the words anywhere in any cell.
        has_region = BEGIN[4:] in cell.source or END[4:] in cell.source
        if i in answers and not is_cell_magic(cell.source):
            if marked_source(cell.source) != cell.source or cell.source.count(BEGIN) != 1 \
                    or cell.source.count(END) != 1:
                found.append(f"{where}: the solution is not between one {BEGIN} / {END} pair")
            if YOUR_TURN.match(cell.source) and NOTE.search(cell.source.split("\n")[0]):
                found.append(f"{where}: the header still says the solution is filled in")
        elif has_region:
            found.append(f"{where}: solution markers outside the learner's cell")
        if cell.cell_type == "markdown" and FILLED_IN.search(cell.source):
            found.append(f"{where} says the solution is filled in, untrue in the student version")
    return found


def chapters(names: list[str]) -> list[Path]:
    """The notebooks named (a chapter's name, or a notebook's path), or every exercise."""
    if names:
        return [Path(name) if name.endswith(".ipynb") and Path(name).is_file()
                else NOTEBOOKS / f"{name}.ipynb" for name in names]
    every = [*sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")),
             *sorted(NOTEBOOKS.glob("zh/[0-9][0-9]_*.ipynb"))]
    return [path for path in every if exercise(nbformat.read(path, as_version=4))[1] is not None]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="chapters, e.g. 05_timeouts_and_progress or "
                        "zh/05_timeouts_and_progress (default: every one with an exercise)")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 and list what is not marked")
    args = parser.parse_args(argv)
    failed = False
    for path in chapters(args.names):
        notebook = nbformat.read(path, as_version=4)
        name = (path.relative_to(NOTEBOOKS).with_suffix("")
                if path.is_relative_to(NOTEBOOKS) else path)
        if exercise(notebook)[1] is None:
            print(f"{name}: no exercise (no cell tagged {CHECK_TAG})")
            failed = True
        elif args.check:
            for problem in problems(notebook):
                print(f"{name}: {problem}")
                failed = True
        elif mark(notebook):
            nbformat.write(notebook, path)
            print(f"{name}: marked")
        else:
            print(f"{name}: already marked")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
