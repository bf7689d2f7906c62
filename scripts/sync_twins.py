"""Copy each English notebook's code cells into its Chinese twin under notebooks/zh/.

The two editions share their code exactly (tests/test_notebooks.py checks it) and differ only
in their prose. After changing code in an English notebook, run this, then re-run both:

    python scripts/sync_twins.py                    # every pair
    python scripts/sync_twins.py 04_operation
    python scripts/run_notebooks.py 04_operation zh/04_operation

A twin whose cells no longer line up with the original's (a cell added or removed on one side)
is reported and left alone: the Chinese prose around the new cell has to be written by hand.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def sync(english: Path, twin: Path) -> str:
    """Copy ``english``'s code cells (source and tags) into ``twin``; say what happened."""
    if not twin.exists():
        return "no Chinese twin yet: write notebooks/zh/" + english.name
    source = nbformat.read(english, as_version=4)
    target = nbformat.read(twin, as_version=4)
    if [c.cell_type for c in source.cells] != [c.cell_type for c in target.cells]:
        return "cells do not line up (one was added or removed): edit the twin by hand"
    changed = 0
    for original, copy in zip(source.cells, target.cells, strict=True):
        if original.cell_type != "code":
            continue
        tags = original.metadata.get("tags", [])
        if copy.source != original.source or copy.metadata.get("tags", []) != tags:
            copy.source = original.source
            copy.metadata["tags"] = list(tags)
            if not tags:
                del copy.metadata["tags"]
            changed += 1
    if changed:
        nbformat.write(target, twin)
    return f"{changed} code cell(s) copied" if changed else "in sync"


def main(names: list[str]) -> int:
    paths = ([NOTEBOOKS / f"{name.removesuffix('.ipynb')}.ipynb" for name in names]
             or sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")))
    for path in paths:
        print(f"{path.name}: {sync(path, NOTEBOOKS / 'zh' / path.name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
