"""Run All with MCP Apps, in JupyterLab in headless Chromium (issue 33).

A newcomer's first click is Run All. The widgets' messages then reach the kernel only
after every cell already sent, so the page brings each App up itself from what the widget
holds, and the kernel records each step later, in its place. Chapter 16, both editions, is
run whole: every App it shows must come up while the kernel is still busy (the page posted
its input and result, the transcript says so), end on screen after the last cell's
``%mcp shutdown --all`` (disconnected, said in the cell), and section 6's App lane must list
the traffic. A second notebook tears an App down from a later cell: the page's ``created``
then reaches the kernel after the teardown, which must not pass for a new page.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat
import pytest
from browser_support import (
    ARTIFACTS,
    LAB,
    JupyterServer,
    browser_page,
    cells,
    jupyter_server,
    open_notebook,
    outputs,
    run_all,
    screenshot_on_failure,
    write_notebook,
)

if TYPE_CHECKING:
    from playwright.sync_api import FrameLocator, Locator, Page

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
CHAPTER = "16_mcp_apps.ipynb"
EDITIONS = {"en": NOTEBOOKS / CHAPTER, "zh": NOTEBOOKS / "zh" / CHAPTER}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    with jupyter_server(tmp_path_factory, LAB) as running:
        for edition, source in EDITIONS.items():
            # As a learner gets it, without the outputs of the run that saved it.
            notebook = nbformat.read(source, as_version=4)
            for code in notebook.cells:
                if code.cell_type == "code":
                    code.outputs, code.execution_count = [], None
            nbformat.write(notebook, running.root / f"{edition}_{CHAPTER}")
        yield running


def _cell(page: Page, source: str) -> Locator:
    """The code cell whose source is ``source`` (exactly, one line)."""
    return cells(page).filter(has=page.locator(".jp-InputArea-editor", has_text=re.compile(
        "^" + re.escape(source) + "$"))).first


def _view(cell_locator: Locator) -> FrameLocator:
    return outputs(cell_locator).frame_locator("iframe.mcpnb-app-frame").frame_locator("iframe")


def _state(cell_locator: Locator) -> str | None:
    return outputs(cell_locator).locator(
        "svg.mcpnb-app-diagram g.state.current").get_attribute("data-state")


@pytest.mark.parametrize("edition", list(EDITIONS))
def test_run_all_of_chapter_16_ends_with_its_apps_on_screen_and_their_transcript(
        server: JupyterServer, edition: str) -> None:
    with browser_page(server) as page, screenshot_on_failure(
            page, f"apps-runall-{edition}.png"):
        open_notebook(page, server, f"{edition}_{CHAPTER}")
        run_all(page)  # the last cell is %mcp shutdown --all

        # Section 2: the App shows its input and result, posted by the page.
        called = _cell(page, "%mcp call clock label=Paris")
        called.scroll_into_view_if_needed()
        _view(called).locator("#input").filter(has_text='{"label":"Paris"}').wait_for()
        _view(called).locator("#result").filter(has_text="tick 1 (Paris)").wait_for()
        verdict = outputs(called).locator(".mcpnb-app-verdict")
        # The session ended with the last cell: the App stays, and the cell says so.
        verdict.filter(has_text="'apps'").wait_for()
        assert verdict.get_attribute("data-verdict") == "ok"
        assert _state(called) == "Interactive"
        assert outputs(called).locator("iframe.mcpnb-app-frame").count() == 1

        # Section 3: the stepped App is up too (initialized by the page); its input is a
        # step of its own, which ran in the kernel before it heard from the page.
        loads = cells(page).filter(has=page.locator("iframe.mcpnb-app-frame"))
        assert loads.count() == 2
        stepped = loads.nth(1)
        stepped.scroll_into_view_if_needed()
        _view(stepped).locator("#input").filter(
            has_text="waiting for ui/notifications/tool-input").wait_for()
        page.wait_for_function(
            "(cell) => cell.querySelector('svg.mcpnb-app-diagram g.state.current')"
            "?.dataset.state === 'Initialized'", arg=stepped.element_handle(), polling=250)

        # Section 5: a refused resource has its verdict.
        refused = cells(page).filter(has=page.locator(
            ".jp-InputArea-editor", has_text="--app-fault=wrong-mime")).first
        assert outputs(refused).locator(".mcpnb-app-verdict").get_attribute(
            "data-verdict") == "failed"

        # Section 6: the App lane, recorded after the last cell, shown in the view.
        lane = _cell(page, "%mcp transcript apps --direction app")
        lane.scroll_into_view_if_needed()
        table = outputs(lane).locator("table")
        for method in ("ui/notifications/sandbox-proxy-ready", "ui/initialize",
                       "ui/notifications/initialized", "ui/notifications/tool-input",
                       "ui/notifications/tool-result"):
            table.get_by_text(method, exact=True).first.wait_for()
        assert table.get_by_text("posted by the host's page", exact=False).count() >= 3
        # No App message was taken for one of a new page (a note in the cell: the App's own
        # logs are the only notes there), and the page did nothing the host would not have.
        assert outputs(called).locator(".finding").count() == 0
        assert "this host would" not in page.locator("body").inner_text()
        page.screenshot(path=str(ARTIFACTS / f"apps-runall-{edition}-end.png"), full_page=False)


def test_a_teardown_the_page_hears_of_late_is_no_new_page(
        server: JupyterServer, tmp_path: Path) -> None:
    write_notebook(server.root / "late.ipynb", [
        "%load_ext mcp_nb",
        "%mcp connect clock --lab=--apps",
        "view = %mcp app clock label=Paris\nview",
        "view.teardown('torn down by a later cell')",
    ])
    with browser_page(server) as page, screenshot_on_failure(page, "apps-runall-late.png"):
        open_notebook(page, server, "late.ipynb")
        run_all(page)
        shown = cells(page).nth(2)
        # The kernel tore the App down before it read the page's "created": the page's
        # messages arrive afterwards, and are recorded as late, not as a new View.
        outputs(shown).get_by_text("already torn down", exact=False).wait_for()
        outputs(shown).get_by_text("(App torn down)").wait_for()
        assert outputs(shown).locator("iframe.mcpnb-app-frame").count() == 0
        assert "a new page shows this App" not in outputs(shown).inner_text()
        assert _state(shown) == "TornDown"
