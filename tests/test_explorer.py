"""%mcp explore against real lab servers: tools, resources, prompts, notifications, history."""

from __future__ import annotations

import re
import sys
import time

import anyio
import ipywidgets as w

from mcp_nb.notebook import render
from mcp_nb.notebook.explorer import SHOWN, Catalogue
from mcp_nb.notebook.request_views import RequestProgress
from mcp_nb.protocol.models import CallToolResult

LAB = f"{sys.executable} -m mcp_nb.lab"


def _until(condition, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} never happened"
        time.sleep(0.02)


def _markup(widget: w.Widget) -> list[str]:
    """Every HTML string in a widget tree."""
    found = [widget.value] if isinstance(widget, w.HTML) else []
    for child in getattr(widget, "children", ()):
        found += _markup(child)
    return found


def test_tools_resources_and_prompts_in_one_widget(mcp) -> None:
    mcp("connect explored")
    explorer = mcp("explore")
    assert repr(explorer) == "Explorer 'explored': 7 tools, 2 resources, 1 prompts"
    assert explorer.tool_list.count.value == "7 of 7 tools shown"
    assert explorer.tabs.get_title(0) == "Tools"

    explorer.tool_list.picker.value = "add"
    form = explorer.tool_box.children[0]
    form.form.fields[0].widget.value = 2
    form.form.fields[1].widget.value = 40
    form.submit().result(timeout=10)
    _until(lambda: form.last_result is not None, "the tool result")
    assert form.last_result.text == "42"
    assert explorer.history == ['%mcp call add {"a": 2, "b": 40}']
    assert explorer.history_view.value == '%mcp call add {"a": 2, "b": 40}'

    explorer.again.value = explorer.history[0]
    explorer.run_again().result(timeout=10)
    assert len(explorer.history) == 2

    explorer.resource_list.picker.value = "lab://static/hello.txt"
    _until(lambda: "Hello from the mcp_nb lab server" in explorer.contents.value, "the read")
    assert "text/plain" in explorer.contents.value

    explorer.prompt_list.picker.value = "greet"
    _title, prompt_form, buttons, shown = explorer.prompt_box.children
    buttons.children[0].click()  # Get, with the required name empty
    assert buttons.children[1].value == "not sent: name: required, missing"
    prompt_form.fields[0].widget.value = "Ada"
    buttons.children[0].click()
    _until(lambda: "Ada" in shown.value, "the prompt's messages")
    assert "<h4>user</h4>" in shown.value

    # The lab server logs every call: the line arrives in the Notifications tab.
    _until(lambda: "add called" in explorer.log_view.value, "the log line")
    explorer.level.value = "error"
    assert "add called" not in explorer.log_view.value
    explorer.set_level.value = "debug"
    explorer.set_level_button.click()
    _until(lambda: explorer.status.value == "server log level: debug", "logging/setLevel")

    explorer._draw_stderr()
    assert "lab:" in explorer.stderr_view.value  # the lab server's own stderr lines
    assert mcp("view").children[-1] is explorer  # also a tab of the session view


def test_a_list_change_refreshes_the_lists_live(mcp) -> None:
    mcp(f"connect changing -- {LAB} --list-changes")
    explorer = mcp("explore")
    count = len(explorer.tools)
    mcp("call toggle_bonus")  # the server adds a tool, a prompt and a resource, and says so
    _until(lambda: len(explorer.tools) == count + 1, "the refreshed tool list")
    assert "bonus" in explorer.tools
    assert any(e.endswith("notifications/tools/list_changed: list refreshed")
               for e in explorer.events)
    _until(lambda: "list_changed" in explorer.event_view.value, "the event row")


def test_hostile_strings_stay_escaped_in_the_explorer(mcp) -> None:
    mcp(f"connect hostile -- {LAB} --hostile-strings")
    explorer = mcp("explore")
    for key, _ in explorer.resource_list.entries[:1]:
        explorer.resource_list.picker.value = key
        _until(lambda: "reading" not in explorer.contents.value, "the read")
    if explorer.prompt_list.entries:
        explorer.prompt_list.picker.value = explorer.prompt_list.entries[0][0]
    explorer.tool_list.picker.value = explorer.tool_list.entries[0][0]
    markup = _markup(explorer)
    assert any("&lt;script" in html.lower() for html in markup)  # the payload arrived, as text
    for html in markup:
        assert "<script" not in html.lower()
        assert not re.search(r"<img(?![^>]*src=\"data:image/(png|jpeg|gif|webp);base64,)",
                             html, re.IGNORECASE)
        assert "\u202e" not in html


def test_thousands_of_entries_stay_a_page() -> None:
    picked: list[str] = []
    catalogue = Catalogue("tools", picked.append)
    catalogue.set_entries([(f"tool{i}", f"tool{i}") for i in range(5000)])
    assert len(catalogue.picker.options) == SHOWN
    assert catalogue.count.value == f"{SHOWN} of 5,000 tools shown; type to narrow 4,900 more"
    catalogue.filter.value = "tool4999"
    assert catalogue.picker.options == (("tool4999", "tool4999"),)
    catalogue.picker.value = "tool4999"
    assert picked == ["tool4999"]


def test_a_ten_megabyte_text_resource_is_shown_truncated_with_its_size() -> None:
    html = render.resource_contents_html([{"uri": "big://x", "mimeType": "text/plain",
                                           "text": "x" * 10_485_760}])
    assert "showing the first 100,000 of 10,485,760 characters" in html
    assert len(html) < 2 * render.TEXT_SHOWN


def test_cancel_a_slow_call_from_the_explorer(mcp) -> None:
    mcp("connect slowly")
    explorer = mcp("explore")
    explorer.tool_list.picker.value = "slow"
    form, progress_box = explorer.tool_box.children
    steps = next(f for f in form.form.fields if f.name == "steps")
    steps.widget.value = 100
    future = form.submit()
    progress = progress_box.children[0]
    _until(lambda: progress.step is not None, "progress from the slow tool")
    progress.cancel_button.click()  # the kernel is free: the click works at once
    _until(future.done, "the cancelled call to end")
    assert progress.outcome.startswith("cancelled at step ")
    assert progress.cancel_button.disabled
    _until(lambda: form.status.value == "failed", "the form's status")
    assert "RequestCancelled" in form.result.value


def test_a_failed_prompt_get_is_said_beside_it_not_under_the_explorer(mcp) -> None:
    mcp("connect cut")
    explorer = mcp("explore")
    explorer.prompt_list.picker.value = "greet"
    _title, prompt_form, buttons, shown = explorer.prompt_box.children
    prompt_form.fields[0].widget.value = "Ada"
    buttons.children[0].click()
    _until(lambda: "Ada" in shown.value, "the prompt's messages")
    mcp("shutdown cut")  # the next Get cannot be answered
    buttons.children[0].click()
    status = buttons.children[1]
    _until(lambda: status.value.startswith("failed: "), "the failure beside the Get button")
    assert shown.value == ""  # the earlier answer is not shown as this one's
    assert explorer.status.value == ""


def test_tool_results_show_structured_content_and_error_results_are_not_green(mcp) -> None:
    mcp("connect structured")
    result = mcp("call add a=2 b=40")
    assert result.structuredContent is not None
    shown, _ = mcp.shell.display_formatter.format(result)
    assert "<b>structuredContent</b>" in shown["text/html"]
    assert shown["text/plain"].startswith("ToolResult (ok): 42 + structuredContent {")
    # What a server puts in structuredContent is escaped like everything else it says.
    hostile = render.content_blocks_html([], False, {"<script>": "</pre>"})
    assert "<script>" not in hostile and "&lt;script&gt;" in hostile

    async def answered(value: CallToolResult) -> CallToolResult:
        return value

    failing = RequestProgress("tools/call broken", 10.0)
    anyio.run(failing.follow, answered(CallToolResult(content=[], isError=True)), set())
    assert failing.outcome.startswith("tool error (isError) after ")
    fine = RequestProgress("tools/call fine", 10.0)
    anyio.run(fine.follow, answered(CallToolResult(content=[])), set())
    assert fine.outcome.startswith("done in ")
