"""The documentation builds with Sphinx, warnings as errors, notebooks included."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_docs_build_without_warnings(tmp_path) -> None:
    out = tmp_path / "html"
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         str(ROOT / "docs"), str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    magics = (out / "reference" / "magics.html").read_text()
    # Generated from the parser: every subcommand is documented.
    for subcommand in ("connect", "initialize", "call", "cancel", "shutdown", "transcript"):
        assert f"%mcp {subcommand}" in magics
    assert "--ignore-sigterm" in (out / "reference" / "lab-faults.html").read_text()
    assert (out / "notebooks" / "00_tour.html").exists()
