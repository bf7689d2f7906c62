"""Sphinx configuration for mcp_nb's documentation.

Two pages are generated at build time from the code itself, so they cannot
drift: the magics reference (from the ``%mcp`` argument parser) and the lab
server's fault catalogue (from its ``--help``).  Notebooks are rendered with
their committed outputs (they are executed and checked by nbval in CI, not here).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

project = "mcp_nb"
author = "The mcp_nb developers"
extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.viewcode"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**/.ipynb_checkpoints", "notebooks/sanitize.cfg"]
html_theme = "furo" if os.environ.get("MCP_NB_DOCS_THEME", "furo") == "furo" else "alabaster"
html_title = "mcp_nb"
nb_execution_mode = "off"  # outputs are committed and validated by nbval
myst_enable_extensions = ["colon_fence"]
autodoc_member_order = "bysource"
autodoc_typehints = "description"
# Widget views need a live kernel; the static text/html each widget also emits is shown instead.
nb_mime_priority_overrides = [("html", "application/vnd.jupyter.widget-view+json", None)]
suppress_warnings = ["mystnb.unknown_mime_type"]


def _magics_reference() -> str:
    from mcp_nb.notebook.magics import build_parser

    parser = build_parser()
    parts = [
        "# Magics reference\n",
        "Generated from the `%mcp` argument parser itself, so it is exactly what "
        "`%mcp SUBCOMMAND --help` prints.\n",
        "```text", parser.format_help().rstrip(), "```\n",
    ]
    subparsers = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, sub in subparsers.choices.items():
        parts += [f"## `%mcp {name}`\n", "```text", sub.format_help().rstrip(), "```\n"]
    parts += [
        "## `%%mcp`\n",
        "The cell body is sent as one raw JSON-RPC message (pretty-printed JSON is put on one "
        "line first, because stdio frames messages by newline). The output lists what came "
        "back, the findings it caused and the state afterwards.\n",
    ]
    return "\n".join(parts)


def _fault_catalogue() -> str:
    from mcp_nb.lab.knobs import build_parser

    help_text = build_parser().format_help()
    return "\n".join([
        "# The lab server's fault catalogue\n",
        "`python -m mcp_nb.lab` is well-behaved by default; each flag breaks one rule on "
        "purpose. Generated from the server's own `--help`:\n",
        "```text", help_text.rstrip(), "```\n",
    ])


def _write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def setup(app):  # type: ignore[no-untyped-def]
    generated = HERE / "reference"
    generated.mkdir(exist_ok=True)
    # COLUMNS fixes argparse's wrapping so the generated pages don't depend on the terminal.
    os.environ["COLUMNS"] = "100"
    _write_if_changed(generated / "magics.md", _magics_reference())
    _write_if_changed(generated / "lab-faults.md", _fault_catalogue())
