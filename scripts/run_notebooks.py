"""Re-run the tutorial notebooks in place, so their committed outputs match the code.

Run it whenever code a notebook shows changes (nbval in CI compares the saved
outputs with a fresh run, strictly):

    python scripts/run_notebooks.py                 # every notebook, both editions
    python scripts/run_notebooks.py 00_tour 07_shutdown zh/00_tour

Widget state is dropped from the saved files: nbval ignores it, it makes the
files large, and the static HTML every widget also emits is what nbviewer shows.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


class _AsNbvalSeesIt(NotebookClient):
    """Saves each output as first displayed: nbval ignores later ``update_display_data``
    messages (a --background call's progress widget sends them), so an output rewritten
    through its display id would never match."""

    def _update_display_id(self, display_id: str, msg: dict) -> None:  # type: ignore[override]
        return None


def run(path: Path) -> float:
    notebook = nbformat.read(path, as_version=4)
    started = time.monotonic()
    _AsNbvalSeesIt(notebook, timeout=120, kernel_name="python3", record_timing=False,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    notebook.metadata.pop("widgets", None)
    nbformat.write(notebook, path)
    return time.monotonic() - started


def main(names: list[str]) -> int:
    paths = ([NOTEBOOKS / f"{name.removesuffix('.ipynb')}.ipynb" for name in names]
             or [*sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")),
                 *sorted(NOTEBOOKS.glob("zh/[0-9][0-9]_*.ipynb"))])
    for path in paths:
        print(f"{path.relative_to(NOTEBOOKS)}: {run(path):.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
