"""A tiny server built on fastmcp (PyPI), a peer for the server checkup's calibration.

fastmcp is a framework no one here wrote, on top of the official SDK: a tool, a
resource, a resource template and a prompt, so the checkup has each list to
check. ``python fastmcp_server.py`` serves stdio; ``python fastmcp_server.py http``
serves Streamable HTTP on 127.0.0.1 at ``/mcp``, on a free port that uvicorn
announces ("Uvicorn running on http://…"), as fastmcp serves it by default;
``http --guard-origin`` turns on fastmcp's opt-in Host/Origin guard
(``host_origin_protection="auto"``), which is off by default.
"""

from __future__ import annotations

import sys

from fastmcp import FastMCP

server = FastMCP("fastmcp-peer", instructions="Calibration peer for mcp_nb's checkup.")


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.resource("notes://today", mime_type="text/plain")
def today() -> str:
    """Today's note."""
    return "Nothing planned."


@server.resource("notes://{day}")
def note(day: str) -> str:
    """The note of one day."""
    return f"Nothing planned on {day}."


@server.prompt
def review(code: str) -> str:
    """Ask for a review of some code."""
    return f"Please review this code:\n\n{code}"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        guard = "--guard-origin" in sys.argv
        server.run("http", host="127.0.0.1", port=0, show_banner=False,
                   host_origin_protection="auto" if guard else None)
    else:
        server.run("stdio", show_banner=False)
