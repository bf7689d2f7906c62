"""The official MCP Apps example servers from npm, installed on first use into ``.cache/``.

Like :func:`http_support.install_everything`: pinned versions (an upstream release
cannot change the tests under us), kept in the repository's ignored ``.cache/``,
skipped without node and npm.  Each example serves its App over stdio with
``--stdio`` (its README's client configuration).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: package name → pinned version.
EXAMPLES = {
    "@modelcontextprotocol/server-basic-vanillajs": "2.0.3",
    "@modelcontextprotocol/server-budget-allocator": "2.0.3",
}
BASIC = "@modelcontextprotocol/server-basic-vanillajs"
#: A richer example: a chart (chart.js bundled into the App) and app-side tool calls.
BUDGET = "@modelcontextprotocol/server-budget-allocator"


def install_example(package: str = BASIC) -> list[str]:
    """The command that starts ``package`` over stdio (npm-installed on first use)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip(f"node and npm are needed to run {package}")
    version = EXAMPLES[package]
    cache = ROOT / ".cache" / package.rsplit("/", 1)[-1]
    installed = cache / "node_modules" / package
    manifest = installed / "package.json"
    if not manifest.exists() or json.loads(manifest.read_text())["version"] != version:
        result = subprocess.run(
            [npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund",
             "--loglevel=error", f"{package}@{version}"],
            capture_output=True, text=True, timeout=240)
        if result.returncode != 0:
            pytest.fail(f"npm install {package}@{version} failed:\n{result.stderr[-2000:]}")
    bin_path = json.loads(manifest.read_text())["bin"]
    entry = bin_path if isinstance(bin_path, str) else next(iter(bin_path.values()))
    return [node, str(installed / entry), "--stdio"]
