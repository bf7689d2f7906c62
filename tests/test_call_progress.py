"""What a blocking ``%mcp call`` shows: its label, and a live widget only if it lasts.

Through a real IPython shell against real lab servers.  Whether a call goes
live is decided by what happened (progress, a held timeout) or by the delay
:data:`~mcp_nb.notebook.request_views.LIVE_AFTER`, which each test sets far
from the call's own length, so no test depends on how fast the machine is.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from ipywidgets.widgets.widget import _instances

from mcp_nb.notebook import manager, render, request_views
from mcp_nb.notebook.magics import McpCellError
from mcp_nb.notebook.request_views import CallProgress, RequestProgress, tool_result_text
from mcp_nb.protocol.models import CallToolResult

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.fixture
def live_after(monkeypatch: pytest.MonkeyPatch) -> Any:
    def set_to(seconds: float) -> None:
        monkeypatch.setattr(request_views, "LIVE_AFTER", seconds)
    return set_to


LABEL = re.compile(r"Request tools/call (\w+) #(\d+)")


def _label_html(text: str) -> str:
    return render.STYLE + f'<div class="mcpnb">{render.esc(text)}</div>'


def test_a_quick_call_shows_its_label_in_one_static_output_and_opens_no_widget(
        mcp, displayed, live_after) -> None:
    live_after(60.0)  # far longer than the call: it never goes live
    mcp("connect")
    widgets = len(_instances)
    result = mcp("call add a=1 b=2")
    assert result.text == "3"
    assert len(_instances) == widgets  # no widget model was opened for the call
    [line] = displayed
    assert WIDGET_VIEW not in line and not line["update"]
    tool, request_id = LABEL.fullmatch(line["text/plain"]).groups()
    assert (tool, int(request_id)) == ("add", manager().session().session.transcript.filter(
        method="tools/call")[-1].id)
    # Exactly what the live widget saves beside itself: a saved notebook cannot tell them apart.
    assert line["text/html"] == _label_html(line["text/plain"])


def test_a_call_that_reports_progress_goes_live_and_saves_the_same_label(
        mcp, displayed, live_after) -> None:
    live_after(60.0)  # only the progress can make it go live
    mcp("connect")
    mcp("call slow steps=3 interval=0.05")
    # Shown once, live, at the first report; never rewritten (nbval would not see it).
    [first] = displayed
    assert WIDGET_VIEW in first and not first["update"]
    assert LABEL.fullmatch(first["text/plain"])
    assert first["text/html"] == _label_html(first["text/plain"])
    view = _instances[first[WIDGET_VIEW]["model_id"]]
    assert isinstance(view, RequestProgress)
    assert view.step == (3.0, 3.0) and view.bar.value == view.bar.max == 3.0
    assert view.outcome.startswith("done in ") and view.status.value == view.outcome
    assert view.bar.bar_style == "success" and view.cancel_button.disabled


def test_a_call_still_running_after_the_delay_goes_live_without_progress(ip, displayed,
                                                                        live_after) -> None:
    live_after(0.05)

    async def slow_answer() -> CallProgress:
        progress = CallProgress("tools/call wait", 10.0)
        progress.sent(7)
        await asyncio.sleep(0.5)  # ten times the delay: the timer has fired
        assert progress.live is not None and progress.live.request_id == 7
        assert progress.live.step is None  # the timer, not a report, made it live
        progress.done()
        return progress

    progress = asyncio.run(slow_answer())
    [first] = displayed
    assert WIDGET_VIEW in first and first["text/plain"] == "Request tools/call wait #7"
    assert repr(progress) == repr(progress.live) == progress.live.describe()
    assert progress.live.outcome.startswith("done in ")


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
    assert displayed == [{**progress.label_bundle(), "update": False}]
    assert progress.outcome.startswith("done in ")


def test_a_failed_call_shows_its_label_before_the_error(ip, mcp, displayed,
                                                       live_after) -> None:
    live_after(60.0)
    mcp("connect")
    result = ip.run_cell("%mcp call no_such_tool")
    assert isinstance(result.error_in_exec, McpCellError)
    [line] = displayed
    assert LABEL.fullmatch(line["text/plain"]).group(1) == "no_such_tool"


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


def test_the_live_widget_and_the_quiet_view_say_the_same() -> None:
    quiet = CallProgress("tools/call add", 10.0)
    live = RequestProgress("tools/call add", 10.0)
    for view in (quiet, live):
        view.request_id = 4  # as sent() records it (the quiet view's needs a running loop)
        view.progress(2, 5, None)
        assert view._status_text().startswith("step 2 of 5 · ")
        view.timed_out(0.5)
    assert repr(quiet) == repr(live) == "Request tools/call add #4: timed out after 500.0 ms"
    assert quiet.label_bundle() == live.label_bundle() == {
        "text/plain": "Request tools/call add #4",
        "text/html": _label_html("Request tools/call add #4")}


def test_the_label_escapes_what_the_tool_name_brings() -> None:
    progress = CallProgress('tools/call <img src=x onerror="alert(1)">', 10.0)
    progress.request_id = 1
    html = progress.label_bundle()["text/html"]
    assert "<img" not in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt; #1" in html


def test_a_results_text_is_written_without_a_widget(ip) -> None:
    result = CallToolResult(content=[{"type": "text", "text": "42"}],
                            structuredContent={"sum": 42})
    widgets = len(_instances)
    formatted, _ = ip.display_formatter.format(result)
    assert len(_instances) == widgets
    assert formatted["text/plain"] == tool_result_text(result) == (
        "ToolResult (ok): 42 + structuredContent {sum}")


def test_showing_a_result_asks_the_model_for_no_other_forms(ip, monkeypatch) -> None:
    # Each miss raises through pydantic's __getattr__: the costliest part of showing a result.
    asked: list[str] = []
    missing = CallToolResult.__getattr__

    def counting(self: CallToolResult, name: str) -> Any:
        asked.append(name)
        return missing(self, name)

    monkeypatch.setattr(CallToolResult, "__getattr__", counting)
    for formatter in ip.display_formatter.formatters.values():
        monkeypatch.setattr(formatter, "enabled", True)  # as in a kernel, not a terminal
    formatted, _ = ip.display_formatter.format(CallToolResult(content=[]))
    assert set(formatted) == {"text/plain", "text/html"}
    # Only the two formatters IPython asks before any other remain: a rich bundle, or a
    # display of its own.
    assert set(asked) <= {"_ipython_canary_method_should_not_exist_", "_repr_mimebundle_",
                          "_ipython_display_"}, asked
