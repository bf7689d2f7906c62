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
        # The page brought the View up itself; the kernel's diagram follows when the kernel
        # reads the page's messages (after the cells Run All queued), so wait for it.
        outputs(cell(page, 2)).locator(
            'svg.mcpnb-app-diagram g.state.current[data-state="Interactive"]'
        ).wait_for(state="attached")  # in a folded accordion: present, not visible
        # The judge on an App nobody here wrote: it came up, so whatever its CSP blocked (it
        # tries eval) is a warning beside ✓, never a failure.
        verdict = outputs(cell(page, 2)).locator(".mcpnb-app-verdict")
        verdict.filter(has_text="the App is up").wait_for()
        mark, said = verdict.evaluate("e => [e.dataset.verdict, e.innerText]")  # one moment
        assert mark == ("warning" if "the CSP blocked" in said else "ok"), said
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
        # notifications/message: shown as a log line.
        view.get_by_role("button", name="Send Log").click()
        outputs(cell(page, 2)).get_by_text("This is log text.").wait_for()
        # ui/open-link: offered as a link to click, never opened by the App itself.
        pages_before = len(page.context.pages)
        view.get_by_role("button", name="Open Link").click()
        link = outputs(cell(page, 2)).locator('a[href="https://modelcontextprotocol.io/"]')
        link.wait_for()
        assert link.get_attribute("rel") == "noopener noreferrer"
        assert link.get_attribute("target") == "_blank"
        assert len(page.context.pages) == pages_before


# -- the lab's App and its fault knobs ------------------------------------------------------

LAB_NOTEBOOK = "lab_apps.ipynb"
#: (cell source, what the cell must end up saying) for each fault knob.
FAULTS = {
    "wrong-mime": 'mimeType MUST be "text/html;profile=mcp-app"',
    "missing-resource": "Resource MUST exist on the server",
    "model-only-call": "the host MUST reject tools/call from apps",
    "undeclared-fetch": "CSP blocked https://undeclared.example/data.json (connect-src)",
}


@pytest.fixture(scope="module")
def lab_page(server: JupyterServer, page: Page) -> Iterator[Page]:
    """A notebook against the lab's App: well behaved, then each fault knob in turn."""
    sources = ["%load_ext mcp_nb", "%mcp connect clock --lab=--apps",
               "%mcp call clock label=Paris"]
    for fault in (*FAULTS, "no-initialized", "size-flood"):
        sources += [f"%mcp connect {fault} --lab=--apps --lab=--app-fault={fault}",
                    "%mcp call clock"]
    write_notebook(server.root / LAB_NOTEBOOK, sources)
    other = page.context.new_page()
    try:
        with screenshot_on_failure(other, f"apps-failure-lab-run-{server.front_end}.png"):
            open_notebook(other, server, LAB_NOTEBOOK)
            run_all(other)
        yield other
    finally:
        other.close()


def _lab_view(page: Page, index: int) -> FrameLocator:
    return outputs(cell(page, index)).frame_locator("iframe.mcpnb-app-frame").frame_locator(
        "iframe")


def _state(page: Page, index: int) -> str | None:
    current = outputs(cell(page, index)).locator("svg.mcpnb-app-diagram g.state.current")
    return current.get_attribute("data-state")


def test_the_lab_app_gets_input_and_result_and_its_app_only_tool_works(
        server: JupyterServer, lab_page: Page) -> None:
    view = _lab_view(lab_page, 2)
    with screenshot_on_failure(lab_page, f"apps-failure-lab-{server.front_end}.png"):
        view.locator("#input").filter(has_text='{"label":"Paris"}').wait_for()
        view.locator("#result").filter(has_text="tick 1 (Paris)").wait_for()
        view.get_by_role("button", name=re.compile("Refresh")).click()
        view.locator("#refreshed").filter(has_text="tick 2 (UTC)").wait_for()
    cell(lab_page, 2).screenshot(path=str(ARTIFACTS / f"apps-lab-{server.front_end}.png"))


def test_the_app_asks_for_fullscreen_and_the_host_brings_it_back(
        server: JupyterServer, lab_page: Page) -> None:
    view = _lab_view(lab_page, 2)
    frame = outputs(cell(lab_page, 2)).locator("iframe.mcpnb-app-frame")
    with screenshot_on_failure(lab_page, f"apps-failure-fullscreen-{server.front_end}.png"):
        view.get_by_role("button", name=re.compile("Fullscreen")).click()
        # Only the person's click, on the host's button outside the frame, grants it.
        outputs(cell(lab_page, 2)).get_by_role("button", name="Show this App fullscreen").click()
        view.locator("#mode").filter(has_text="fullscreen").wait_for()
        box = outputs(cell(lab_page, 2)).locator(".mcpnb-app")
        lab_page.wait_for_function("(box) => getComputedStyle(box).position === 'fixed'",
                                   arg=box.element_handle(), polling=250)
        assert frame.bounding_box()["height"] > 600  # the whole window, not the cell
        # The App has the focus (its button was clicked): the host's own button brings it back.
        outputs(cell(lab_page, 2)).get_by_role("button", name="Back inline").click()
        view.locator("#mode").filter(has_text="inline").wait_for()
        lab_page.wait_for_function("(box) => getComputedStyle(box).position !== 'fixed'",
                                   arg=box.element_handle(), polling=250)


@pytest.mark.parametrize("fault", list(FAULTS))
def test_each_app_fault_is_refused_citing_the_spec(server: JupyterServer, lab_page: Page,
                                                  fault: str) -> None:
    index = 4 + 2 * list(FAULTS).index(fault)
    with screenshot_on_failure(lab_page, f"apps-failure-{fault}-{server.front_end}.png"):
        outputs(cell(lab_page, index)).get_by_text(FAULTS[fault], exact=False).first.wait_for()


def test_a_view_that_never_says_initialized_is_sent_nothing(
        server: JupyterServer, lab_page: Page) -> None:
    index = 4 + 2 * len(FAULTS)
    view = _lab_view(lab_page, index)
    with screenshot_on_failure(lab_page, f"apps-failure-never-{server.front_end}.png"):
        view.locator("#isolation").wait_for(state="attached")
        # The cell says why nothing more happens, after a few seconds.
        outputs(cell(lab_page, index)).get_by_text(
            "MUST NOT send the View any request or notification").wait_for()
        assert _state(lab_page, index) == "Initializing"
        assert view.locator("#input").inner_text() == "waiting for ui/notifications/tool-input"


def test_a_flood_of_size_changes_ends_at_the_last_size(
        server: JupyterServer, lab_page: Page) -> None:
    index = 6 + 2 * len(FAULTS)
    frame = outputs(cell(lab_page, index)).locator("iframe.mcpnb-app-frame")
    # The flood's sizes run from 100 to 599 px; the View's last message is its real height,
    # which the frame must end at (each size passes through the kernel, in order).
    reported = _lab_view(lab_page, index).locator("body[data-reported-height]")
    reported.wait_for(state="attached")
    last = int(reported.get_attribute("data-reported-height") or 0)
    lab_page.wait_for_function(
        "([frame, last]) => parseInt(frame.style.height) === last",
        arg=[frame.element_handle(), max(40, min(600, last))], polling=250)
    assert _state(lab_page, index) == "Interactive"


# -- a richer official example ---------------------------------------------------------------

def test_the_budget_allocator_example_renders_its_chart_and_sliders(
        server: JupyterServer, page: Page) -> None:
    """@modelcontextprotocol/server-budget-allocator: 437 KB of App (chart.js bundled), its
    whole state from the tool result's structuredContent."""
    from apps_support import BUDGET

    command = shlex.join(install_example(BUDGET))
    write_notebook(server.root / "budget.ipynb", [
        "%load_ext mcp_nb", f"%mcp connect budget -- {command}", "%mcp call get-budget-data"])
    other = page.context.new_page()
    try:
        with screenshot_on_failure(other, f"apps-failure-budget-{server.front_end}.png"):
            open_notebook(other, server, "budget.ipynb")
            run_all(other)
            view = outputs(cell(other, 2)).frame_locator("iframe.mcpnb-app-frame").frame_locator(
                "iframe")
            view.locator("#status-bar").filter(has_text=re.compile(r"\$[1-9]")).wait_for()
            view.locator("#sliders-container input[type=range]").nth(4).wait_for()
            assert view.locator("#budget-selector option").count() == 4
            # The chart was drawn: the canvas has a size and pixels (chart.js ran in the sandbox).
            drawn = view.locator("#budget-chart").evaluate(
                "(c) => c.width > 0 && c.getContext('2d').getImageData(0, 0, c.width, c.height)"
                ".data.some((v) => v !== 0)")
            assert drawn
        cell(other, 2).screenshot(path=str(ARTIFACTS / f"apps-budget-{server.front_end}.png"))
    finally:
        other.close()


def test_a_reloaded_page_shows_the_app_again(server: JupyterServer, lab_page: Page) -> None:
    """Last of the lab page's tests: it reloads the page (the kernel lives on)."""
    with screenshot_on_failure(lab_page, f"apps-failure-reload-{server.front_end}.png"):
        _lab_view(lab_page, 2).locator("#result").filter(has_text="tick 1 (Paris)").wait_for()
        # Saved first, as a person's notebook would be: the outputs name the live widgets.
        lab_page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        lab_page.wait_for_function(
            "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", polling=250)
        lab_page.reload()
        view = _lab_view(lab_page, 2)
        view.locator("#input").filter(has_text='{"label":"Paris"}').wait_for()
        view.locator("#result").filter(has_text="tick 1 (Paris)").wait_for()
        outputs(cell(lab_page, 2)).get_by_text("a new page shows this App").wait_for()


def test_the_explorers_apps_tab_renders_an_app(server: JupyterServer, page: Page) -> None:
    write_notebook(server.root / "explore_apps.ipynb",
                   ["%load_ext mcp_nb", "%mcp connect clock --lab=--apps", "%mcp explore"])
    other = page.context.new_page()
    try:
        with screenshot_on_failure(other, f"apps-failure-explorer-{server.front_end}.png"):
            open_notebook(other, server, "explore_apps.ipynb")
            run_all(other)
            explorer = cell(other, 2)
            explorer.locator(".lm-TabBar-tab").filter(has_text="Apps").first.click()
            explorer.get_by_role("cell", name="clock_reset").wait_for()  # the visibility table
            explorer.get_by_role("button", name="Render").click()
            view = outputs(explorer).frame_locator("iframe.mcpnb-app-frame").frame_locator(
                "iframe")
            view.locator("#result").filter(has_text="tick 1 (UTC)").wait_for()
    finally:
        other.close()
