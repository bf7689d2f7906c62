"""The page's render levers in a real JupyterLab (``prestart``, ``warm_proxy``, ``warm_view``:
``app_frame.js``, :mod:`mcp_nb.notebook.app_levers`), and the guard rails they must keep.

A proxy serves one App and one only: the warm proxy the page keeps goes to the next App with
the same proxy document (the same CSP), and the page then loads a new one; an App with
another CSP never gets it; a proxy started ahead is moved into its cell without loading again
(the View that started in it is the one the cell shows); a warm View goes only to the next
render of the same App, and shows that render's call, not the one before; and with the
levers off the frame is made and loaded in the cell as before.
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
    app_view,
    browser_page,
    cell,
    jupyter_server,
    open_notebook,
    outputs,
    run_cell,
    run_in_kernel,
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
    # 4: the same CSP: the warm proxy (warm_view off, or the warm View would serve it)
    LEVERS_OFF.format("'warm_view'") + "%mcp use basic\n%mcp call get-time",
    LEVERS_OFF.format("''") + "%mcp use basic\n%mcp call get-time",  # 5: the warm View
    LEVERS_OFF.format("''") + "%mcp use probe\n%mcp call clock",  # 6: another CSP
    LEVERS_OFF.format("'frame_first,prestart,warm_proxy,warm_view'")
    + "%mcp use basic\n%mcp call get-time",  # 7: every lever off
]

#: The holder's frames: the warm proxy (no App's yet) and the warm View (an App's, ahead).
WARM_PROXIES = ".mcpnb-app-holder iframe:not([data-mcpnb-warm-view])"
WARM_VIEWS = ".mcpnb-app-holder iframe[data-mcpnb-warm-view]"
#: The page's warm proxy (in the off-screen holder), tagged so it can be recognised later.
TAG_WARM = f"""(tag) => {{
    const frames = [...document.querySelectorAll('{WARM_PROXIES}')];
    if (frames.length !== 1 || frames[0].dataset.test) return false;
    frames[0].dataset.test = tag;
    return true;
}}"""
#: The page's warm View, tagged likewise.
TAG_VIEW = TAG_WARM.replace(WARM_PROXIES, WARM_VIEWS)


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
                run_cell(opened, index)
        yield opened


def _frame_of(page: Page, index: int) -> dict[str, object]:
    """The App frame in cell ``index``: its test tag, where it is, its proxy document."""
    return outputs(cell(page, index)).locator("iframe.mcpnb-app-frame").evaluate(
        """(frame) => ({ tag: frame.dataset.test || null,
                         inCell: !!frame.closest('.jp-Cell'),
                         srcdoc: frame.getAttribute('srcdoc') || '' })""")


def _server_time(page: Page, index: int) -> str:
    shown = app_view(cell(page, index)).locator("#server-time")
    shown.filter(has_text=ISO_TIME).wait_for()
    return shown.inner_text()


def test_the_warm_proxy_serves_the_next_app_once_and_a_new_one_is_loaded(page: Page) -> None:
    with screenshot_on_failure(page, "apps-warm-failure-warm.png"):
        run_cell(page, 3)
        _server_time(page, 3)
        # The first App of the page was started ahead (prestart); then a proxy is loaded
        # for the next App: the holder's only frame, which no App has had.
        page.wait_for_function(TAG_WARM, arg="first warm")
        run_cell(page, 4)
        _server_time(page, 4)
        first, second = _frame_of(page, 3), _frame_of(page, 4)
        assert second["tag"] == "first warm" and second["inCell"]  # moved, not reloaded
        assert first["tag"] is None and first["inCell"]
        # A new warm proxy, never the one the second App has now.
        page.wait_for_function(TAG_WARM, arg="second warm")
        assert page.evaluate("() => document.querySelectorAll("
                             "'.mcpnb-app-holder iframe[data-test=\"first warm\"]').length") == 0
        assert _frame_of(page, 4)["tag"] == "first warm"


def test_the_next_render_of_the_same_app_adopts_its_warm_view(page: Page) -> None:
    with screenshot_on_failure(page, "apps-warm-failure-view.png"):
        # Started once cell 3's App was up (cell 4 had warm_view off and left it alone).
        page.wait_for_function(TAG_VIEW, arg="warm view")
        started = page.locator(WARM_VIEWS).element_handle().content_frame()
        for _ in range(300):  # the proxy loads, then makes the View's frame
            if started.child_frames:
                break
            page.wait_for_timeout(50)
        view_started = started.child_frames[0].evaluate("() => performance.timeOrigin")
        ran = page.evaluate("() => performance.timeOrigin + performance.now()")
        run_cell(page, 5)
        shown = _server_time(page, 5)
        adopted = _frame_of(page, 5)
        assert adopted["tag"] == "warm view" and adopted["inCell"]  # moved, not reloaded
        # The View in the cell is the one that started before the cell ran...
        inner = (outputs(cell(page, 5)).locator("iframe.mcpnb-app-frame").element_handle()
                 .content_frame().child_frames[0])
        assert inner.evaluate("() => performance.timeOrigin") == view_started < ran
        # ...and it shows this cell's call: a time later than every earlier App's.
        assert shown > max(_server_time(page, 3), _server_time(page, 4))
        # The host's side: this render's lifecycle went through initialized, with the
        # result delivered (the View asked ui/initialize before the call: answered now).
        said = run_in_kernel(page, "shown = list(Out.values())[-1]\n"
                                   "print(*(r.target.value for r in shown.lifecycle.history))")
        assert said.split()[-3:] == ["Initialized", "InputSent", "Interactive"], said
        # The holder keeps no frame marked as a warm View that an App has taken.
        assert page.evaluate("() => document.querySelectorAll("
                             "'iframe.mcpnb-app-frame[data-mcpnb-warm-view]').length") == 0


def test_an_app_with_another_csp_never_gets_the_warm_proxy(page: Page) -> None:
    with screenshot_on_failure(page, "apps-warm-failure-csp.png"):
        page.wait_for_function(
            "() => document.querySelectorAll('.mcpnb-app-holder iframe[data-test]').length")
        run_cell(page, 6)
        # Its own CSP: the declared origin is in its proxy's policy, and the fetch its View
        # makes to an origin it did not declare is blocked and reported in the cell.
        outputs(cell(page, 6)).get_by_text(
            "CSP blocked https://undeclared.example/data.json (connect-src)", exact=True).wait_for()
        probe = _frame_of(page, 6)
        assert probe["tag"] is None and probe["inCell"]
        assert "connect-src https://declared.example" in str(probe["srcdoc"])


def test_with_the_levers_off_the_frame_loads_in_the_cell(page: Page) -> None:
    with screenshot_on_failure(page, "apps-warm-failure-off.png"):
        # The page keeps one warm proxy, for an App like the last one (the probe, by now).
        page.wait_for_function(f"""() => {{
            const frames = [...document.querySelectorAll('{WARM_PROXIES}')];
            return frames.length === 1 && !frames[0].dataset.test;
        }}""")
        page.evaluate(TAG_WARM, "kept")
        # And a warm View of each of the two Apps shown last (the basic one and the probe),
        # each started once no App had been drawn for a moment.
        page.wait_for_function(
            f"() => document.querySelectorAll('{WARM_VIEWS}:not([data-test])').length === 2")
        page.evaluate(f"() => document.querySelectorAll('{WARM_VIEWS}')"
                      ".forEach((frame) => {{ frame.dataset.test = 'kept view'; }})")
        run_cell(page, 7)
        _server_time(page, 7)
        shown = _frame_of(page, 7)
        assert shown["tag"] is None and shown["inCell"]
        # The warm proxy and any warm View were left alone: the levers were off for this App.
        assert page.evaluate("() => document.querySelectorAll("
                             "'.mcpnb-app-holder iframe[data-test=\"kept\"]').length") == 1
        assert page.evaluate(
            f"() => document.querySelectorAll('{WARM_VIEWS}[data-test=\"kept view\"]').length") == 2
        # Every App on the page still works: the second one (from the warm proxy) answers
        # its own button through the kernel.
        view = app_view(cell(page, 4))
        before = view.locator("#server-time").inner_text()
        page.wait_for_timeout(5)
        view.get_by_role("button", name="Get Server Time").click()
        view.locator("#server-time").filter(
            has_text=re.compile(r"^(?!" + re.escape(before) + r"$)")).wait_for()


def test_a_second_view_of_the_output_shows_a_note_not_a_second_app(page: Page) -> None:
    with screenshot_on_failure(page, "apps-warm-failure-second-view.png"):
        page.evaluate(f"() => document.querySelectorAll('{WARM_PROXIES}')"
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
