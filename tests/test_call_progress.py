"""What a blocking ``%mcp call`` shows: one line when it ends, a live widget only if it lasts.

Through a real IPython shell against real lab servers.  Whether a call goes
live is decided by what happened (progress, a held timeout) or by the delay
:data:`~mcp_nb.notebook.request_views.LIVE_AFTER`, which each test sets far
from the call's own length, so no test depends on how fast the machine is.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import pytest
from ipywidgets.widgets.widget import _instances

from mcp_nb.notebook import manager, request_views
from mcp_nb.notebook.magics import McpCellError
from mcp_nb.notebook.request_views import CallProgress, RequestProgress, tool_result_text
from mcp_nb.protocol.models import CallToolResult

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
ENDED = re.compile(r"Request tools/call (\w+) #(\d+): (.*)")


@pytest.fixture
def displayed(ip, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """Every bundle the shell publishes (displays and display updates), in order."""
    bundles: list[dict[str, Any]] = []
    publish = ip.display_pub.publish

    def record(data: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        bundles.append({**data, "update": bool(kwargs.get("update"))})
        return publish(data, *args, **kwargs)

    monkeypatch.setattr(ip.display_pub, "publish", record)
    yield bundles


@pytest.fixture
def live_after(monkeypatch: pytest.MonkeyPatch) -> Any:
    def set_to(seconds: float) -> None:
        monkeypatch.setattr(request_views, "LIVE_AFTER", seconds)
    return set_to


def _bar(html: str) -> str:
    found = re.search(r'role="progressbar" aria-valuenow="(\d+)"', html)
    assert found, html
    return found.group(1)


def test_a_quick_call_shows_its_end_in_one_static_output_and_opens_no_widget(
        mcp, displayed, live_after) -> None:
    live_after(60.0)  # far longer than the call: it never goes live
    mcp("connect")
    widgets = len(_instances)
    result = mcp("call add a=1 b=2")
    assert result.text == "3"
    assert len(_instances) == widgets  # no widget model was opened for the call
    [line] = displayed
    assert WIDGET_VIEW not in line and not line["update"]
    tool, request_id, outcome = ENDED.fullmatch(line["text/plain"]).groups()
    assert (tool, int(request_id)) == ("add", manager().session().session.transcript.filter(
        method="tools/call")[-1].id)
    assert re.fullmatch(r"done in \d+\.\d ms", outcome)
    assert f"Request tools/call add #{request_id}" in line["text/html"]
    assert outcome in line["text/html"] and _bar(line["text/html"]) == "100"


def test_a_call_that_reports_progress_goes_live_and_its_saved_output_follows_it(
        mcp, displayed, live_after) -> None:
    live_after(60.0)  # only the progress can make it go live
    mcp("connect")
    mcp("call slow steps=3 interval=0.05")
    first, *updates = displayed
    # Shown live at the first report, saved meanwhile as a label that claims nothing ...
    assert WIDGET_VIEW in first and not first["update"]
    assert re.fullmatch(r"Request tools/call slow #\d+", first["text/plain"])
    view = _instances[first[WIDGET_VIEW]["model_id"]]
    assert isinstance(view, RequestProgress)
    assert view.step == (3.0, 3.0) and view.bar.value == view.bar.max == 3.0
    assert view.bar.bar_style == "success" and view.cancel_button.disabled
    # ... and rewritten when it ends: the same line a quick call leaves.
    [end] = updates
    assert end["update"] and end[WIDGET_VIEW] == first[WIDGET_VIEW]
    assert ENDED.fullmatch(end["text/plain"]).group(3).startswith("done in ")
    assert _bar(end["text/html"]) == "100"


def test_a_call_still_running_after_the_delay_goes_live_without_progress(ip, displayed,
                                                                        live_after) -> None:
    live_after(0.05)

    async def slow_answer() -> CallProgress:
        progress = CallProgress("tools/call wait", 10.0)
        progress.sent(7)
        await asyncio.sleep(0.5)  # ten times the delay: the timer has fired
        assert progress.live is not None and progress.live.request_id == 7
        progress.done()
        return progress

    progress = asyncio.run(slow_answer())
    first, end = displayed
    assert WIDGET_VIEW in first and first["text/plain"] == "Request tools/call wait #7"
    assert end["update"] and end["text/plain"] == repr(progress) == progress.live.describe()


def test_an_answer_before_the_delay_cancels_the_timer(ip, displayed, live_after) -> None:
    live_after(0.05)

    async def quick_answer() -> CallProgress:
        progress = CallProgress("tools/call quick", 10.0)
        progress.sent(3)
        progress.done()
        await asyncio.sleep(0.2)  # past the delay: nothing more may happen
        return progress

    progress = asyncio.run(quick_answer())
    assert progress.live is None
    [line] = displayed
    assert WIDGET_VIEW not in line and line["text/plain"] == repr(progress)


def test_a_failed_call_says_so_in_its_line_before_the_error(ip, mcp, displayed,
                                                           live_after) -> None:
    live_after(60.0)
    mcp("connect")
    result = ip.run_cell("%mcp call no_such_tool")
    assert isinstance(result.error_in_exec, McpCellError)
    [line] = displayed
    outcome = ENDED.fullmatch(line["text/plain"]).group(3)
    assert outcome.startswith("failed: ServerError: ")
    assert "#f44336" in line["text/html"]  # the danger colour, as the live bar's


def test_a_refused_call_and_show_widgets_off_display_nothing(ip, mcp, displayed,
                                                            live_after) -> None:
    live_after(60.0)
    mcp("connect")
    assert not ip.run_cell("%mcp call add a=x b=2").success  # refused: never on the wire
    magics = manager()
    magics.show_widgets = False
    try:
        assert mcp("call add a=1 b=2").text == "3"
        assert mcp("call slow steps=2 interval=0.05").text == "done after 2 steps"
    finally:
        magics.show_widgets = True
    assert displayed == []


def test_the_live_widget_and_the_quiet_view_leave_the_same_saved_line() -> None:
    quiet = CallProgress("tools/call add", 10.0)
    live = RequestProgress("tools/call add", 10.0)
    for view in (quiet, live):
        view.request_id = 4
        view.progress(2, 5, None)
        view.timed_out(0.5)
    assert repr(quiet) == repr(live) == "Request tools/call add #4: timed out after 500.0 ms"
    assert quiet.ended_html() == live.static_html() == live._repr_mimebundle_()["text/html"]
    assert _bar(quiet.ended_html()) == "40"  # as far as the progress went
    for view in (quiet, live):
        view.done()
    assert _bar(quiet.ended_html()) == "100"


def test_the_line_escapes_what_the_tool_name_brings() -> None:
    progress = CallProgress('tools/call <img src=x onerror="alert(1)">', 10.0)
    progress.failed(RuntimeError("<b>boom</b>"))
    html = progress.ended_html()
    assert "<img" not in html and "<b>boom" not in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html


def test_a_results_text_is_written_without_a_widget(ip) -> None:
    result = CallToolResult(content=[{"type": "text", "text": "42"}],
                            structuredContent={"sum": 42})
    widgets = len(_instances)
    formatted, _ = ip.display_formatter.format(result)
    assert len(_instances) == widgets
    assert formatted["text/plain"] == tool_result_text(result) == (
        "ToolResult (ok): 42 + structuredContent {sum}")
