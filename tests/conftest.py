"""Shared pytest configuration."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
#: A fixture declared with one of these scopes is set up once for many tests: a JupyterLab
#: with its browser, a started peer server, a built virtual environment.
SHARED_FIXTURE = re.compile(r"""@pytest\.fixture\([^)]*scope=["'](module|class|package|session)""")


def modules_with_shared_fixtures() -> set[str]:
    """Test modules (as node-id paths) that declare a fixture shared by their tests."""
    return {f"tests/{path.name}" for path in TESTS.glob("test_*.py")
            if SHARED_FIXTURE.search(path.read_text(encoding="utf-8"))}


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook; without xdist it is never called
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """The suite runs under pytest-xdist (README's test command: ``-n 4``). A module whose
    tests share a fixture goes to one worker whole, so the fixture is built once and never
    twice at the same time; every other test is handed out on its own.

    xdist's own ``loadgroup`` mode cannot do this with pytest 9.2 and later (it renames
    node ids, which pytest no longer lets a plugin do), so the grouping is this scheduler's:
    xdist's load-by-scope scheduling, where a scope is the module for those modules and the
    test itself for all others.
    """
    from xdist.scheduler import LoadScopeScheduling

    shared = modules_with_shared_fixtures()

    class SharedFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if module in shared else nodeid

    return SharedFixtureScheduling(config, log)


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
