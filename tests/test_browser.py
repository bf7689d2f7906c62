"""A real browser: JupyterLab 4 and Notebook 7 on loopback, headless Chromium via Playwright.

The kernel tests prove the widgets send the right messages; only a browser
proves they *render*: that the front end's widget manager (``jupyterlab_widgets``,
which ipywidgets depends on) turns the widget-view output into live views, that
the state diagram shows the current state, and that a click on the tool form's
Call button reaches the kernel and the result comes back into the page.  Every
test runs in both front ends (``[lab]`` and ``[notebook]``); the machinery is in
``browser_support``.
"""

from __future__ import annotations

import importlib.util
import re
import urllib.error
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat
import pytest
from browser_support import (
    ARTIFACTS,
    FRONT_ENDS,
    NBGRADER_LAB_EXTENSION,
    POLL_MS,
    FrontEnd,
    JupyterServer,
    browser_page,
    cell,
    cells,
    jupyter_server,
    live_widgets,
    notebook_trusted,
    open_notebook,
    outputs,
    run_all,
    screenshot_on_failure,
    write_notebook,
)

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

NOTEBOOK = "browser.ipynb"


@pytest.fixture(scope="module", params=FRONT_ENDS, ids=str)
def server(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    front_end: FrontEnd = request.param
    with jupyter_server(tmp_path_factory, front_end) as running:
        write_notebook(running.root / NOTEBOOK,
                       ["%load_ext mcp_nb", "%mcp connect", "%mcp state", "%mcp form add"])
        yield running


@pytest.fixture(scope="module")
def page(server: JupyterServer) -> Iterator[Page]:
    """The test notebook open, all cells run, the widgets rendered."""
    with browser_page(server) as opened:
        with screenshot_on_failure(opened, f"browser-failure-run-{server.front_end}.png"):
            open_notebook(opened, server, NOTEBOOK)
            run_all(opened)
        opened.screenshot(path=str(ARTIFACTS / f"browser-notebook-{server.front_end}.png"))
        yield opened


def _shot(locator: Locator, server: JupyterServer, name: str) -> None:
    locator.scroll_into_view_if_needed()
    locator.screenshot(path=str(ARTIFACTS / f"browser-{name}-{server.front_end}.png"))


def test_the_state_diagram_renders_as_a_live_widget_showing_operating(
        server: JupyterServer, page: Page) -> None:
    state = cell(page, 2)  # %mcp state
    with screenshot_on_failure(page, f"browser-failure-state-diagram-{server.front_end}.png"):
        # Inside a live widget view, not the static text/html fallback that holds the
        # same picture: this is what fails if the widget manager is missing.
        current = live_widgets(state, "html").locator("svg g.state.current")
        current.wait_for()
        assert current.count() == 1
        assert current.get_attribute("data-state") == "Operating"
        assert "Loading widget" not in state.inner_text()
    _shot(state, server, "state-diagram")


def _fill(scope: Locator, label: str, value: str) -> None:
    box = scope.get_by_label(label, exact=True)
    box.fill(value)
    # Number boxes sync to the kernel on change, which needs Enter or a blur.
    box.press("Enter")


def test_the_tool_form_calls_the_tool(server: JupyterServer, page: Page) -> None:
    tool_form = cell(page, 3)  # %mcp form add
    with screenshot_on_failure(page, f"browser-failure-tool-form-{server.front_end}.png"):
        form = live_widgets(tool_form, "vbox").first
        for name, value in (("a", "2"), ("b", "3")):
            _fill(form, f"{name} *", value)  # "*": required in the inputSchema
        form.get_by_role("button", name="Call").click()
        form.locator(".widget-html", has_text=re.compile(r"\b5(\.0)?\b")).wait_for()
        assert "done" in form.inner_text()
    _shot(tool_form, server, "tool-form")


UNTRUSTED = "untrusted.ipynb"


def _executed_untrusted_notebook(path: Path) -> None:
    """A notebook run by nbclient and saved unsigned: the front end opens it untrusted."""
    from nbclient import NotebookClient

    write_notebook(path, ["%load_ext mcp_nb", "%mcp connect", "%mcp state", "%mcp view",
                          "%mcp shutdown"])
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    notebook.metadata.pop("widgets", None)  # as scripts/run_notebooks.py saves them
    nbformat.write(notebook, path)


def test_static_diagrams_survive_an_untrusted_notebook(server: JupyterServer,
                                                       page: Page) -> None:
    _executed_untrusted_notebook(server.root / UNTRUSTED)
    other = page.context.new_page()
    try:
        with screenshot_on_failure(other, f"browser-failure-untrusted-{server.front_end}.png"):
            open_notebook(other, server, UNTRUSTED)
            cells(other).nth(4).wait_for()
            assert notebook_trusted(other) is False  # opened as a stranger's would be
            state = outputs(cell(other, 2))
            diagram = state.locator('img[src^="data:image/svg+xml;base64,"]')
            diagram.wait_for()
            assert diagram.get_attribute("alt").startswith("StateDiagram: Operating")
            # The image really decodes (a sanitizer that mangled it would leave it 0 wide).
            other.wait_for_function(
                "(img) => img.complete && img.naturalWidth > 0", arg=diagram.element_handle(),
                polling=POLL_MS)
            # No inline SVG survived to spill its <title> tooltips as text.
            assert "the client offers a protocol version" not in state.inner_text()
            view = outputs(cell(other, 3))
            assert view.locator('img[src^="data:image/svg+xml;base64,"]').count() == 2
        _shot(cell(other, 2), server, "untrusted-state")
    finally:
        other.close()


EXPLORE = "explore.ipynb"


def test_the_explorer_end_to_end(server: JupyterServer, page: Page) -> None:
    write_notebook(server.root / EXPLORE, ["%load_ext mcp_nb", "%mcp connect", "%mcp explore"])
    other = page.context.new_page()
    try:
        with screenshot_on_failure(other, f"browser-failure-explorer-{server.front_end}.png"):
            open_notebook(other, server, EXPLORE)
            run_all(other)
            explorer = cell(other, 2)
            tabs = explorer.locator(".lm-TabBar-tab")
            tabs.filter(has_text="Tools").first.wait_for()
            _explore(explorer, tabs, server)
        _shot(explorer, server, "explorer")
    finally:
        other.close()


def _explore(explorer: Locator, tabs: Locator, server: JupyterServer) -> None:
    # A tool through its form.
    explorer.locator("select").first.select_option(label="add — Add")
    for name, value in (("a", "2"), ("b", "3")):
        _fill(explorer, f"{name} *", value)
    explorer.get_by_role("button", name="Call").click()
    explorer.locator(".widget-html", has_text=re.compile(r"\b5\b")).first.wait_for()
    _shot(explorer, server, "explorer-tool")

    # A slow call, cancelled from its progress widget once it has made progress.
    explorer.locator("select").first.select_option(label="slow — Slow")
    _fill(explorer, "steps", "1000")
    _fill(explorer, "interval", "0.1")
    explorer.get_by_role("button", name="Call").click()
    explorer.get_by_text(re.compile(r"step \d+ of 1000")).first.wait_for()
    explorer.get_by_role("button", name="Cancel").click()
    explorer.get_by_text(re.compile(r"cancelled at step \d+ of 1000")).wait_for()
    assert explorer.get_by_role("button", name="Cancel").is_disabled()

    # A resource, read and shown.
    tabs.filter(has_text="Resources").first.click()
    explorer.locator("select:visible").first.select_option(
        label="lab://static/hello.txt — hello.txt")
    explorer.get_by_text("Hello from the mcp_nb lab server").wait_for()

    # A prompt, its argument, its messages.
    tabs.filter(has_text="Prompts").first.click()
    explorer.locator("select:visible").first.select_option(index=0)
    _fill(explorer, "name *", "Ada")
    explorer.get_by_role("button", name="Get").click()
    explorer.get_by_text("greeting for Ada").first.wait_for()

    # The calls' log lines, in the Notifications tab.
    tabs.filter(has_text="Notifications").first.click()
    explorer.get_by_text("add called").wait_for()
    explorer.get_by_text("slow called").wait_for()


def test_the_servers_run_without_nbgraders_extensions(server: JupyterServer,
                                                     page: Page) -> None:
    """nbgrader, installed with the test extras, enables its server and JupyterLab extensions
    for every Jupyter server of the environment; browser_support turns them off for the tests'
    servers (none uses them, and they cost each start CPU), as a user-level config would."""
    if importlib.util.find_spec("nbgrader") is None:
        pytest.skip("nbgrader is not installed: nothing to turn off")
    with pytest.raises(urllib.error.HTTPError) as refused:
        server._request("/formgrader")
    assert refused.value.code == 404
    disabled = page.evaluate(
        "() => JSON.parse(document.getElementById('jupyter-config-data').textContent)"
        ".disabledExtensions")
    assert NBGRADER_LAB_EXTENSION in disabled
