"""The page's render levers in a real JupyterLab (``prestart``, ``warm_proxy``: ``app_frame.js``,
:mod:`mcp_nb.notebook.app_levers`), and the guard rails they must keep.

A proxy serves one App and one only: the warm proxy the page keeps goes to the next App with
the same proxy document (the same CSP), and the page then loads a new one; an App with
another CSP never gets it; a proxy started ahead is moved into its cell without loading again
(the View that started in it is the one the cell shows); and with the levers off the frame is
made and loaded in the cell as before.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from apps_support import install_example
from browser_support import (
    LAB,
    JupyterServer,
    browser_page,
    cell,
    jupyter_server,
    open_notebook,
    outputs,
    screenshot_on_failure,
    write_notebook,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page

NOTEBOOK = "warm.ipynb"
ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z")
PROBE = shlex.join([sys.executable, "-m", "mcp_nb.lab", "--apps",
                    "--app-fault=undeclared-fetch"])
LEVERS_OFF = "import os; os.environ['MCP_NB_APP_LEVERS_OFF'] = {}\n"
CELLS = [
    "%load_ext mcp_nb",
    "%mcp connect basic -- {command}",
    f"%mcp connect probe -- {PROBE}",
    LEVERS_OFF.format("''") + "%mcp use basic\n%mcp call get-time",  # 3: the page's first App
    "%mcp use basic\n%mcp call get-time",  # 4: the same CSP: the warm proxy
    "%mcp use probe\n%mcp call clock",  # 5: another CSP: never the warm proxy
    LEVERS_OFF.format("'frame_first,prestart,warm_proxy'")
    + "%mcp use basic\n%mcp call get-time",  # 6: every lever off
]

#: The page's warm proxy (in the off-screen holder), tagged so it can be recognised later.
TAG_WARM = """(tag) => {
    const frames = [...document.querySelectorAll('.mcpnb-app-holder iframe')];
    if (frames.length !== 1 || frames[0].dataset.test) return false;
    frames[0].dataset.test = tag;
    return true;
}"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    command = shlex.join(install_example())
    with jupyter_server(tmp_path_factory, LAB) as running:
        write_notebook(running.root / NOTEBOOK, [c.format(command=command) for c in CELLS])
        yield running


@pytest.fixture(scope="module")
def page(server: JupyterServer) -> Iterator[Page]:
    with browser_page(server) as opened:
        with screenshot_on_failure(opened, "apps-warm-failure-open.png"):
            open_notebook(opened, server, NOTEBOOK)
            for index in range(3):
                _run(opened, index)
        yield opened


def _run(page: Page, index: int) -> None:
    page.evaluate("""(index) => {
        const panel = window.jupyterapp.shell.currentWidget;
        panel.content.activeCellIndex = index;
        return window.jupyterapp.commands.execute('notebook:run-cell');
    }""", index)
    page.wait_for_function(
        "(i) => /\\[\\d+\\]/.test(window.jupyterapp.shell.currentWidget"
        ".content.widgets[i].promptNode.textContent)", arg=index)


def _frame_of(page: Page, index: int) -> dict[str, object]:
    """The App frame in cell ``index``: its test tag, where it is, its proxy document."""
    return outputs(cell(page, index)).locator("iframe.mcpnb-app-frame").evaluate(
        """(frame) => ({ tag: frame.dataset.test || null,
                         inCell: !!frame.closest('.jp-Cell'),
                         srcdoc: frame.getAttribute('srcdoc') || '' })""")


def _server_time(page: Page, index: int) -> str:
    shown = (outputs(cell(page, index)).frame_locator("iframe.mcpnb-app-frame")
             .frame_locator("iframe").locator("#server-time"))
    shown.filter(has_text=ISO_TIME).wait_for()
    return shown.inner_text()


def test_the_warm_proxy_serves_the_next_app_once_and_a_new_one_is_loaded(page: Page) -> None:
    with screenshot_on_failure(page, "apps-warm-failure-warm.png"):
        _run(page, 3)
        _server_time(page, 3)
        # The first App of the page was started ahead (prestart); then a proxy is loaded
        # for the next App: the holder's only frame, which no App has had.
        page.wait_for_function(TAG_WARM, arg="first warm")
        _run(page, 4)
        _server_time(page, 4)
        first, second = _frame_of(page, 3), _frame_of(page, 4)
        assert second["tag"] == "first warm" and second["inCell"]  # moved, not reloaded
        assert first["tag"] is None and first["inCell"]
        # A new warm proxy, never the one the second App has now.
        page.wait_for_function(TAG_WARM, arg="second warm")
        assert page.evaluate("() => document.querySelectorAll("
                             "'.mcpnb-app-holder iframe[data-test=\"first warm\"]').length") == 0
        assert _frame_of(page, 4)["tag"] == "first warm"


def test_an_app_with_another_csp_never_gets_the_warm_proxy(page: Page) -> None:
    with screenshot_on_failure(page, "apps-warm-failure-csp.png"):
        page.wait_for_function(
            "() => document.querySelectorAll('.mcpnb-app-holder iframe[data-test]').length")
        _run(page, 5)
        # Its own CSP: the declared origin is in its proxy's policy, and the fetch its View
        # makes to an origin it did not declare is blocked and reported in the cell.
        outputs(cell(page, 5)).get_by_text(
            "CSP blocked https://undeclared.example/data.json (connect-src)", exact=True).wait_for()
        probe = _frame_of(page, 5)
        assert probe["tag"] is None and probe["inCell"]
        assert "connect-src https://declared.example" in str(probe["srcdoc"])


def test_with_the_levers_off_the_frame_loads_in_the_cell(page: Page) -> None:
    with screenshot_on_failure(page, "apps-warm-failure-off.png"):
        # The page keeps one warm proxy, for an App like the last one (the probe, by now).
        page.wait_for_function("""() => {
            const frames = [...document.querySelectorAll('.mcpnb-app-holder iframe')];
            return frames.length === 1 && !frames[0].dataset.test;
        }""")
        page.evaluate(TAG_WARM, "kept")
        _run(page, 6)
        _server_time(page, 6)
        shown = _frame_of(page, 6)
        assert shown["tag"] is None and shown["inCell"]
        # The warm proxy was left alone: the levers were off for this App.
        assert page.evaluate("() => document.querySelectorAll("
                             "'.mcpnb-app-holder iframe[data-test=\"kept\"]').length") == 1
        # Every App on the page still works: the second one (from the warm proxy) answers
        # its own button through the kernel.
        view = (outputs(cell(page, 4)).frame_locator("iframe.mcpnb-app-frame")
                .frame_locator("iframe"))
        before = view.locator("#server-time").inner_text()
        page.wait_for_timeout(5)
        view.get_by_role("button", name="Get Server Time").click()
        view.locator("#server-time").filter(
            has_text=re.compile(r"^(?!" + re.escape(before) + r"$)")).wait_for()


def test_a_second_view_of_the_output_shows_a_note_not_a_second_app(page: Page) -> None:
    with screenshot_on_failure(page, "apps-warm-failure-second-view.png"):
        page.evaluate("() => document.querySelectorAll('.mcpnb-app-holder iframe')"
                      ".forEach((frame) => { frame.dataset.test = 'kept for the second view'; })")
        frames = page.evaluate("() => document.querySelectorAll('iframe.mcpnb-app-frame').length")
        page.evaluate("""() => {
            const panel = window.jupyterapp.shell.currentWidget;
            panel.content.activeCellIndex = 4;
            return window.jupyterapp.commands.execute('notebook:create-output-view');
        }""")
        page.get_by_text("(this MCP App is shown in another view of this output)").wait_for()
        # No second frame for the same App, and the warm proxy is still the page's.
        assert page.evaluate(
            "() => document.querySelectorAll('iframe.mcpnb-app-frame').length") == frames
        assert page.evaluate("() => document.querySelectorAll('.mcpnb-app-holder "
                             "iframe[data-test=\"kept for the second view\"]').length") == 1
