"""The official MCP Apps example servers from npm, installed on first use into ``.cache/``.

Through :func:`http_support.install_npm_package`: pinned versions (an upstream release
cannot change the tests under us), kept in the repository's ignored ``.cache/``,
skipped without node and npm.  Each example serves its App over stdio with
``--stdio`` (its README's client configuration).
"""

from __future__ import annotations

import json
import shutil
from typing import Any

from http_support import ROOT, install_npm_package

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
    installed = install_npm_package(package, EXAMPLES[package],
                                    ROOT / ".cache" / package.rsplit("/", 1)[-1])
    bin_path = json.loads((installed / "package.json").read_text())["bin"]
    entry = bin_path if isinstance(bin_path, str) else next(iter(bin_path.values()))
    return [str(shutil.which("node")), str(installed / entry), "--stdio"]


def frame_says(view: Any, message: Any) -> list[dict[str, Any]]:
    """Deliver ``message`` to an App cell as its browser frame would; return what the kernel
    posted back to the frame."""
    posted: list[dict[str, Any]] = []
    assert view.frame is not None
    original = view.frame.send
    view.frame.send = lambda content, buffers=None: posted.append(content["message"])
    try:
        view._on_frame_message(view.frame, {"kind": "frame", "message": message}, [])
    finally:
        view.frame.send = original
    return posted
