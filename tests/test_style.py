"""The code base stays ruff-clean (the project's lint rules live in pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_reports_nothing() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if not Path(ruff).exists():
        pytest.fail("ruff is a test dependency: install the project with its [test] extra")
    result = subprocess.run([ruff, "check", str(ROOT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_protocol_core_does_no_io() -> None:
    # The sans-I/O promise, checked: nothing in mcp_nb/protocol imports I/O libraries.
    forbidden = ("import anyio", "import subprocess", "import httpx", "import asyncio",
                 "from anyio", "from httpx", "import socket")
    offenders = [
        f"{path.name}: {line.strip()}"
        for path in (ROOT / "mcp_nb" / "protocol").glob("*.py")
        for line in path.read_text().splitlines()
        if line.strip().startswith(forbidden)
    ]
    assert offenders == []
