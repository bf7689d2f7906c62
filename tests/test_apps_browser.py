"""MCP Apps in a real browser: JupyterLab 4 and Notebook 7, headless Chromium.

The official example ``@modelcontextprotocol/server-basic-vanillajs`` (npm, written by
the extension's authors) is connected with ``%mcp connect``, its App tool called with
``%mcp call``; the App must render inside the sandboxed frame, initialize, receive the
tool's input and result, and its own "Get Server Time" button must reach the server
through the host (App → browser → kernel → MCP server and back).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from apps_support import install_example
from browser_support import (
    ARTIFACTS,
    FRONT_ENDS,
    FrontEnd,
    JupyterServer,
    browser_page,
    cell,
    jupyter_server,
    open_notebook,
    outputs,
    run_all,
    screenshot_on_failure,
    write_notebook,
)

if TYPE_CHECKING:
    from playwright.sync_api import FrameLocator, Page

NOTEBOOK = "apps.ipynb"
ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z")


@pytest.fixture(scope="module", params=FRONT_ENDS, ids=str)
def server(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    front_end: FrontEnd = request.param
    command = shlex.join(install_example())
    with jupyter_server(tmp_path_factory, front_end) as running:
        write_notebook(running.root / NOTEBOOK, [
            "%load_ext mcp_nb",
            f"%mcp connect basic -- {command}",
            "%mcp call get-time",
        ])
        yield running


@pytest.fixture(scope="module")
def page(server: JupyterServer) -> Iterator[Page]:
    with browser_page(server) as opened:
        with screenshot_on_failure(opened, f"apps-failure-run-{server.front_end}.png"):
            open_notebook(opened, server, NOTEBOOK)
            run_all(opened)
        yield opened


def _view(page: Page) -> FrameLocator:
    """The App's document: the View inside the sandbox proxy inside the cell's output."""
    return (outputs(cell(page, 2)).frame_locator("iframe.mcpnb-app-frame")
            .frame_locator("iframe"))


def test_the_example_app_renders_initializes_and_gets_the_result(
        server: JupyterServer, page: Page) -> None:
    with screenshot_on_failure(page, f"apps-failure-render-{server.front_end}.png"):
        shown = _view(page).locator("#server-time")
        # "Loading..." until ui/notifications/tool-result arrives with the call's time.
        shown.filter(has_text=ISO_TIME).wait_for()
        diagram = outputs(cell(page, 2)).locator("svg.mcpnb-app-diagram g.state.current")
        assert diagram.get_attribute("data-state") == "Interactive"
    cell(page, 2).screenshot(path=str(ARTIFACTS / f"apps-basic-{server.front_end}.png"))


def test_a_button_in_the_app_calls_the_server_through_the_kernel(
        server: JupyterServer, page: Page) -> None:
    view = _view(page)
    shown = view.locator("#server-time")
    with screenshot_on_failure(page, f"apps-failure-button-{server.front_end}.png"):
        shown.filter(has_text=ISO_TIME).wait_for()
        before = shown.inner_text()
        page.wait_for_timeout(5)  # the server's clock has milliseconds: let one pass
        view.get_by_role("button", name="Get Server Time").click()
        shown.filter(has_text=re.compile(r"^(?!" + re.escape(before) + r"$)")).wait_for()
        assert ISO_TIME.fullmatch(shown.inner_text().strip())

        # ui/message goes to the cell (no conversation in a notebook), escaped.
        view.get_by_role("button", name="Send Message").click()
        outputs(cell(page, 2)).get_by_text("would go to the conversation").wait_for()
