"""Run All with MCP Apps, in JupyterLab in headless Chromium (issue 33).

A newcomer's first click is Run All. The widgets' messages then reach the kernel only
after every cell already sent, so the page brings each App up itself from what the widget
holds, and the kernel records each step later, in its place. Chapter 16, both editions, is
run whole: every App it shows must come up while the kernel is still busy (the page posted
its input and result, the transcript says so), end on screen after the last cell's
``%mcp shutdown --all`` (disconnected, said in the cell), and section 6's App lane must list
the traffic; the stepped App's input, held by the kernel, is delivered by the page. Two more
notebooks: one tears Apps down from a later cell before the kernel has read their pages
(the page decides: ui/resource-teardown to the View it brought up, only removal for one that
never said initialized), and one clears an App's output (its lifecycle ends).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat
import pytest
from browser_support import (
    ARTIFACTS,
    LAB,
    POLL_MS,
    WAIT_MS,
    JupyterServer,
    browser_page,
    cells,
    jupyter_server,
    open_notebook,
    outputs,
    run_all,
    run_in_kernel,
    screenshot_on_failure,
    start_all,
    wait_until_done,
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

        # Section 3: the stepped App is up too (initialized by the page). Its input step ran
        # in the kernel before it heard from the page: held, and posted by the page the
        # moment the View said initialized; the step's cell says when, once the kernel knows.
        loads = cells(page).filter(has=page.locator("iframe.mcpnb-app-frame"))
        assert loads.count() == 2
        stepped = loads.nth(1)
        stepped.scroll_into_view_if_needed()
        _view(stepped).locator("#input").filter(has_text='{"label":"Oslo"}').wait_for()
        step = cells(page).filter(has=page.locator(".mcpnb-app-step[data-step=input]"))
        done = outputs(step).locator(".mcpnb-app-step[data-event=TOOL_INPUT]")
        done.wait_for()
        if edition == "en":
            # Either the kernel had heard initialized by then (through the App channel, while
            # cells ran) and sent it, or it held it and the page posted it.
            said = done.inner_text()
            assert said.startswith("App step input: ui/notifications/tool-input sent") or (
                said.startswith("App step input: held until the View says")
                and re.search(r"delivered at \d+\.\d{3} s", said)), said
        assert _state(stepped) != "Initialized"  # the input moved it on (InputSent or later)

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


#: The teardowns the page decides: one App it brought up, one that never says initialized.
#: The App channel is off: through it the kernel hears the pages while a cell runs (below).
TEARDOWNS = [
    "import os; os.environ['MCP_NB_APP_LEVERS_OFF'] = 'channel'\n%load_ext mcp_nb",
    "%mcp connect clock --lab=--apps",
    "up = %mcp app clock label=Paris\nup",
    "%mcp connect silent --lab=--apps --lab=--app-fault=no-initialized",
    "silent = %mcp app clock\nsilent",
    # The kernel waits here (the pages go on) until the test has seen both Views load.
    "import pathlib, time\nwhile not pathlib.Path('go').exists():\n    time.sleep(0.05)",
    "up.teardown('torn down by a later cell')\nsilent.teardown('torn down by a later cell')",
]


@contextmanager
def _late_teardowns(server: JupyterServer, name: str,
                    notebook: list[str]) -> Iterator[tuple[Page, Locator, Locator]]:
    """Run All of ``notebook`` (TEARDOWNS' shape): both Views up while a cell waits, then the
    cell that tears them down; yields the page and the two App cells, both torn down."""
    write_notebook(server.root / f"{name}.ipynb", notebook)
    (server.root / "go").unlink(missing_ok=True)
    with browser_page(server) as page, screenshot_on_failure(page, f"apps-runall-{name}.png"):
        open_notebook(page, server, f"{name}.ipynb")
        start_all(page)
        up, silent = cells(page).nth(2), cells(page).nth(4)
        _view(up).locator("#result").filter(has_text="tick 1 (Paris)").wait_for()
        _view(silent).locator("#isolation").wait_for(state="attached")
        (server.root / "go").write_text("")
        wait_until_done(page)
        for shown in (up, silent):
            outputs(shown).get_by_text("(App torn down)").wait_for()
        yield page, up, silent


def test_teardowns_decided_before_the_kernel_heard_the_page_are_the_pages(
        server: JupyterServer) -> None:
    """The kernel tears two Apps down before it has read a message of their pages: the
    page sends ui/resource-teardown to the View it brought up (and removes the frame on the
    answer), and only removes the one that never said initialized."""
    with _late_teardowns(server, "teardowns", TEARDOWNS) as (page, up, silent):
        for shown in (up, silent):
            assert outputs(shown).locator("iframe.mcpnb-app-frame").count() == 0
        said = run_in_kernel(page, """
for view in (up, silent):
    print(view.lifecycle.state, [r.event.name for r in view.lifecycle.history][-3:])
    print([(e.kind, e.note.split(': ', 1)[1]) for e in view.hosted.session.transcript
           if e.method == 'ui/resource-teardown'])
""").splitlines()
    assert said[0] == "TornDown ['TOOL_RESULT', 'TEARDOWN', 'TEARDOWN_ANSWERED']", said
    assert "('request', \"posted by the host's page\")" in said[1]
    assert said[1].startswith("[('held', ")
    assert said[2] == "TornDown ['RESOURCE_SENT', 'INITIALIZE', 'REMOVE']", said
    assert "request" not in said[3] and said[3].startswith("[('held', "), said


def test_through_the_app_channel_the_kernel_hears_the_pages_while_a_cell_runs(
        server: JupyterServer) -> None:
    """The same two Apps and the same late teardown, the App channel on (the second App at
    least is drawn with it open): the channel's own thread hands the kernel what the pages said
    while the cell ran, so the kernel knows the state of each View when the teardown comes."""
    heard = TEARDOWNS[5] + "\nprint('heard:', silent.lifecycle.state)"
    notebook = ["%load_ext mcp_nb", *TEARDOWNS[1:5], heard, TEARDOWNS[6]]
    with _late_teardowns(server, "teardowns-channel", notebook) as (page, _up, _silent):
        # While the cell waited, the kernel had heard the silent View ask ui/initialize.
        assert outputs(cells(page).nth(5)).inner_text().strip() == "heard: Initializing"
        said = run_in_kernel(page, """
for view in (up, silent):
    print(view.lifecycle.state, [r.event.name for r in view.lifecycle.history][-3:],
          view.frame.channel_end is not None
          and view.frame.channel_end.bound(view.frame.channel['frame']))
""").splitlines()
    assert said[1].endswith("True"), said  # the second App talked through the channel
    assert said[1].startswith("TornDown ['RESOURCE_SENT', 'INITIALIZE', 'REMOVE']"), said
    assert said[0].startswith("TornDown ['TOOL_RESULT', 'TEARDOWN', 'TEARDOWN_ANSWERED']"), said


def test_clearing_an_apps_output_ends_its_lifecycle(server: JupyterServer) -> None:
    write_notebook(server.root / "cleared.ipynb", [
        "%load_ext mcp_nb",
        "%mcp connect clock --lab=--apps",
        "shown = %mcp app clock label=Lima\nshown",
    ])
    with browser_page(server) as page, screenshot_on_failure(page, "apps-cleared.png"):
        open_notebook(page, server, "cleared.ipynb")
        run_all(page)
        _view(cells(page).nth(2)).locator("#result").filter(has_text="(Lima)").wait_for()
        page.wait_for_function(
            "(cell) => cell.querySelector('svg.mcpnb-app-diagram g.state.current')"
            "?.dataset.state === 'Interactive'", arg=cells(page).nth(2).element_handle(),
            polling=POLL_MS)
        page.evaluate("""() => window.jupyterapp.shell.currentWidget.content.widgets[2]
                             .model.outputs.clear()""")
        said = ""
        deadline = page.evaluate("Date.now()") + WAIT_MS
        while "TornDown" not in said and page.evaluate("Date.now()") < deadline:
            said = run_in_kernel(page, "print(shown.lifecycle.state, '|', "
                                 "shown.lifecycle.history[-1].cause)")
            page.wait_for_timeout(POLL_MS)
    assert said.strip() == "TornDown | the output was cleared or the cell re-run", said
