"""Copy each English notebook's code cells into its Chinese twin under notebooks/zh/.

The two editions share their code (tests/test_notebooks.py checks it with :func:`same_code`)
and differ in their prose, in what the code says to a person (comments, and string literals
written in Chinese: a self-check's messages), and in one line: the Chinese notebooks tell the
kit to speak Chinese (``%mcp lang zh``). After changing code in an English notebook, run this,
then re-run both (a cell copied over loses its translated comments and messages: translate
them again):

    python scripts/sync_twins.py                    # every pair
    python scripts/sync_twins.py 04_operation
    python scripts/run_notebooks.py 04_operation zh/04_operation

A twin whose cells no longer line up with the original's (a cell added or removed on one side)
is reported and left alone: the Chinese prose around the new cell has to be written by hand.
"""

from __future__ import annotations

import io
import re
import sys
import tokenize
from pathlib import Path

import nbformat
from IPython.core.inputtransformer2 import TransformerManager

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


#: The Chinese edition's one extra line of code: the kit speaks Chinese from then on.
LANGUAGE_LINE = re.compile(r"^%mcp lang \w+[ \t]*\n?", re.MULTILINE)
CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
_IGNORED = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING}


def _tokens(source: str) -> list[tokenize.TokenInfo]:
    python = TransformerManager().transform_cell(LANGUAGE_LINE.sub("", source))
    return [token for token in tokenize.generate_tokens(io.StringIO(python).readline)
            if token.type not in _IGNORED]


def same_code(english: str, chinese: str) -> bool:
    """Whether two cells are the same code: token for token, comments and ``%mcp lang`` aside,
    a string literal written in Chinese standing for the English one in its place."""
    ours, theirs = _tokens(english), _tokens(chinese)
    return len(ours) == len(theirs) and all(
        a.type == b.type and (a.string == b.string or (
            a.type == tokenize.STRING and CHINESE.search(b.string) is not None))
        for a, b in zip(ours, theirs, strict=True))


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
        if not same_code(original.source, copy.source) or copy.metadata.get("tags", []) != tags:
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
