"""Shared pytest configuration."""

from __future__ import annotations

import pytest

#: Peer servers run as subprocesses; importing one (--doctest-modules would) starts it.
collect_ignore = ["peers"]


@pytest.fixture
def anyio_backend() -> str:
    # Jupyter runs asyncio; that is the backend that matters.
    return "asyncio"


@pytest.fixture(scope="session")
def ip():
    """The one IPython shell of the test process, with mcp_nb loaded.

    IPython's test shell is a process-wide singleton (start_ipython() returns None
    the second time), so every module shares it through this fixture.
    """
    from IPython.testing.globalipapp import get_ipython

    shell = get_ipython()
    # A terminal shell shows only text; a kernel also sends HTML, as here.
    shell.display_formatter.formatters["text/html"].enabled = True
    shell.run_line_magic("load_ext", "mcp_nb")
    return shell


@pytest.fixture
def mcp(ip):
    """Run ``%mcp LINE`` in the shared shell; sessions a test opens are shut down after it."""
    from mcp_nb.notebook import manager

    def run(line: str):
        return ip.run_line_magic("mcp", line)

    run.shell = ip  # type: ignore[attr-defined]
    yield run
    magics = manager()
    for hosted in list(magics.sessions.values()):
        hosted.close()
    magics.sessions.clear()
    magics.current = None
