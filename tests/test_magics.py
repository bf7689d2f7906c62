"""The %mcp magics through a real IPython InteractiveShell, against real lab servers."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

import pytest
from support import svg_images_opened

from mcp_nb.client import Transcript
from mcp_nb.conformance import kernel as kernel_player
from mcp_nb.notebook import manager as loaded_magics
from mcp_nb.notebook.arguments_check import SchemaCheck
from mcp_nb.notebook.magics import McpCellError
from mcp_nb.notebook.magics.operations import ARGUMENTS_NOT_IN_SCHEMA
from mcp_nb.protocol import State
from mcp_nb.protocol.errors import LifecycleError, refusal
from mcp_nb.protocol.models import CallToolResult

LAB = f"{sys.executable} -m mcp_nb.lab"


def test_connect_defaults_to_the_lab_server_and_completes_the_handshake(mcp) -> None:
    hosted = mcp("connect")
    assert hosted.name == "lab"
    assert hosted.session.state is State.OPERATING
    assert repr(hosted) == "McpSession 'lab': Operating, 2025-11-25, 3 messages, 0 findings"
    listing = mcp("sessions")
    assert repr(listing) == "1 sessions: lab *"


def test_step_through_with_one_message_per_cell(mcp) -> None:
    hosted = mcp("connect stepper --step")
    assert hosted.session.state is State.UNINITIALIZED
    handshake = mcp("initialize")
    assert repr(handshake) == "Handshake: initialize #1 → result (2025-11-25)"
    assert hosted.session.state is State.INITIALIZED
    with pytest.raises(McpCellError, match="send notifications/initialized first"):
        mcp("tools")
    diagram = mcp("initialized")
    assert repr(diagram).startswith("StateDiagram: Operating (path: Uninitialized → ")
    assert "Operating" in diagram.value


def test_expected_errors_fail_the_cell_with_one_line(ip, mcp) -> None:
    mcp(f"connect guarded --step -- {LAB}")
    result = ip.run_cell("%mcp tools")
    assert not result.success
    error = result.error_in_exec
    assert isinstance(error, McpCellError)
    assert error._render_traceback_() == [
        "McpCellError: [LifecycleError] cannot send 'tools/list' while Uninitialized: "
        "send initialize first (add --force to send it anyway)"]
    # What the line says for people, as data for code driving a kernel.
    assert (error.rule, error.override) == ("client-message-before-initialize", "force")


def test_the_magics_word_a_refusals_override_from_its_data_not_its_text(
        ip, mcp, monkeypatch) -> None:
    hosted = mcp(f"connect worded --step -- {LAB}")
    hint = "pass force=True to send it anyway"  # inside the explanation too: left alone

    def refused(**_options: object) -> None:
        raise refusal(LifecycleError, "client-message-before-initialize",
                      f"cannot send {hint!r} while Uninitialized: send initialize first")

    monkeypatch.setattr(hosted, "list_tools", refused)
    error = ip.run_cell("%mcp tools").error_in_exec
    assert str(error) == (f"[LifecycleError] cannot send {hint!r} while Uninitialized: send "
                          "initialize first (add --force to send it anyway)")
    assert (error.rule, error.override) == ("client-message-before-initialize", "force")


def test_the_argument_check_refuses_with_a_rule_the_kernel_player_knows(ip, mcp) -> None:
    mcp(f"connect checked -- {LAB}")
    error = ip.run_cell("%mcp call echo text=5").error_in_exec
    assert isinstance(error, McpCellError)
    assert str(error).startswith("not sent: the arguments do not fit echo's inputSchema: ")
    assert (error.rule, error.override) == (ARGUMENTS_NOT_IN_SCHEMA, "force")
    assert kernel_player.ARGUMENTS_NOT_IN_SCHEMA == ARGUMENTS_NOT_IN_SCHEMA


def test_a_tools_schema_is_compiled_once_per_tool_list(mcp) -> None:
    hosted = mcp(f"connect compiled -- {LAB}")
    check = hosted.arguments_check("add")
    assert check is hosted.arguments_check("add")  # the meta-schema check ran once
    assert check.problems({"a": 1}) == ["b: required, missing"]
    assert check.problems({"a": 1, "b": 2}) == []
    mcp("tools")  # a fresh tools/list: new descriptions, so new checks
    assert hosted.arguments_check("add") is not check
    assert hosted.arguments_check("no_such_tool") is None


def test_a_schema_that_is_not_json_schema_is_reported_not_judged() -> None:
    broken = SchemaCheck({"type": "object", "properties": 5})
    [problem] = broken.problems({"anything": True})
    assert problem.startswith("(the tool's inputSchema is not a valid JSON Schema, so nothing "
                              "was checked: 5 is not of type 'object'")
    assert SchemaCheck(None).problems({"a": 1}) == []


def test_a_call_refused_by_the_lifecycle_names_the_call_and_the_magics_option(ip, mcp) -> None:
    # Before initialized the call is refused as itself: no tools/list is fetched for its
    # schema behind the learner's back (nothing at all goes on the wire).
    hosted = mcp(f"connect early --step -- {LAB}")
    mcp("initialize")
    result = ip.run_cell("%mcp call echo text=hi")
    assert not result.success
    assert result.error_in_exec._render_traceback_() == [
        "McpCellError: [LifecycleError] cannot send 'tools/call' while Initialized: "
        "send notifications/initialized first (add --force to send it anyway)"]
    assert [entry.method for entry in hosted.session.transcript.filter(direction="send")] == [
        "initialize"]


def test_json_arguments_are_never_mangled_by_variable_expansion(ip, mcp) -> None:
    mcp("connect")
    ip.user_ns["text"] = "EXPANDED"
    result = ip.run_cell('r = %mcp call echo {"text": "{text} $text {}"}')
    assert result.success, result.error_in_exec
    value = ip.user_ns["r"]
    assert isinstance(value, CallToolResult)
    assert value.content[0]["text"] == "{text} $text {}"


def test_key_value_arguments_and_results_as_python_values(ip, mcp) -> None:
    mcp("connect")
    result = mcp("call add a=2 b=40")
    assert result.text == "42" and result.structuredContent == {"sum": 42}
    formatted, _ = ip.display_formatter.format(result)
    assert formatted["text/plain"] == "ToolResult (ok): 42 + structuredContent {sum}"
    assert "<pre>42</pre>" in formatted["text/html"]
    assert mcp("call echo text=hello").text == "hello"
    greeting = mcp("prompt greet name=123")
    assert "123" in greeting["messages"][0]["content"]["text"]


def test_listings_and_resources(mcp, capsys) -> None:
    mcp("connect")
    assert repr(mcp("tools")).startswith("7 tools: echo, add, slow")
    resources = mcp("resources")
    assert repr(resources) == "2 resources: lab://static/hello.txt, lab://counter"
    assert "lab://counter" in resources._repr_html_()
    contents = mcp("read lab://static/hello.txt")
    assert contents[0]["text"] == "Hello from the mcp_nb lab server.\n"
    assert repr(mcp("prompts")) == "1 prompts: greet"
    mcp("subscribe lab://counter")
    mcp("ping")
    mcp("log-level debug")
    out = capsys.readouterr().out
    assert "subscribed to lab://counter" in out
    assert "pong (" in out and "log level set to debug" in out


def test_help_is_printed_and_bad_usage_fails(mcp, capsys) -> None:
    assert mcp("--help") is None
    assert "connect" in capsys.readouterr().out
    assert mcp("call --help") is None
    assert "--background" in capsys.readouterr().out
    with pytest.raises(McpCellError, match="no subcommand 'frobnicate'; %mcp --help"):
        mcp("frobnicate")
    with pytest.raises(McpCellError, match=r"no subcommand 'conect'; did you mean connect\?"):
        mcp("conect")
    with pytest.raises(McpCellError, match="a subcommand is needed"):
        mcp("")


def test_timeouts_from_the_magic(mcp, capsys) -> None:
    mcp(f"connect slow -- {LAB} --delay 0.5")
    # Id 2 is the tools/list that fetched the inputSchema the arguments are checked against.
    with pytest.raises(McpCellError, match=r"\[RequestTimeout\] tools/call \(id 3\) timed out"):
        mcp("call echo text=x --timeout 0.1")
    assert capsys.readouterr().out == "Request tools/call echo #3\n"  # no stale "waiting"
    mcp("timeout --default 7 --max 20 --reset-on-progress on")
    assert "timeout 7s, maximum 20s, reset on progress on" in capsys.readouterr().out
    hosted = loaded_magics().session()
    assert (hosted.session.default_timeout, hosted.session.max_timeout) == (7, 20)


def test_config_traitlet_sets_the_default_timeout(ip, mcp) -> None:
    ip.run_line_magic("config", "McpMagics.default_timeout = 12.5")
    try:
        hosted = mcp("connect")
        assert hosted.session.default_timeout == 12.5
    finally:
        ip.run_line_magic("config", "McpMagics.default_timeout = 30.0")


def test_connect_from_an_mcpservers_config_file(mcp, tmp_path) -> None:
    config = tmp_path / "claude_desktop_config.json"
    config.write_text(json.dumps({"mcpServers": {
        "mylab": {"command": sys.executable, "args": ["-m", "mcp_nb.lab"],
                  "env": {"LAB_NOTE": "from config"}},
    }}))
    hosted = mcp(f"connect mylab --config {config}")
    assert hosted.name == "mylab" and hosted.session.state is State.OPERATING
    assert hosted.session.transport.env["LAB_NOTE"] == "from config"
    with pytest.raises(McpCellError, match="no server 'nope'"):
        mcp(f"connect nope --config {config}")
    with pytest.raises(McpCellError, match="cannot read"):
        mcp(f"connect x --config {tmp_path / 'missing.json'}")


def test_raw_cell_messages_and_what_the_state_machine_made_of_them(ip, mcp) -> None:
    hosted = mcp("connect rawlab --step")
    init = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "by-hand", "version": "0"}}}, indent=2)
    view = ip.run_cell_magic("mcp", "", init)
    assert view.exchange.state is State.INITIALIZED
    assert hosted.session.negotiated_version == "2025-06-18"
    assert repr(view).splitlines()[:3] == [
        "state after: Initialized", "  → request initialize #7 [raw]",
        "  ← response initialize #7"]
    view = ip.run_cell_magic("mcp", "", '{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    assert view.exchange.state is State.OPERATING
    view = ip.run_cell_magic("mcp", "", "this is not json")
    assert [f.rule.id for f in view.exchange.findings] == ["invalid-message"]
    # The lab answers garbage with a -32700 error response carrying id null.
    time.sleep(0.3)
    assert hosted.session.findings[-1].rule.id == "invalid-message"
    # Automatic ids continue after the hand-picked one.
    mcp("ping")
    sent_ids = [e.id for e in hosted.session.transcript.filter(direction="send",
                                                                kind="request")]
    assert sent_ids == [7, 8]


def test_transcript_export_and_findings(mcp, tmp_path, capsys) -> None:
    mcp(f"connect noisy -- {LAB} --garbage-stdout")
    mcp("call add a=1 b=1")
    findings = mcp("findings")
    assert repr(findings).startswith("Findings: ")
    assert "invalid-json" in repr(findings)
    path = tmp_path / "t.jsonl"
    mcp(f"transcript --export {path}")
    assert "wrote" in capsys.readouterr().out
    loaded = Transcript.load_jsonl(path)
    assert any(e.note == "invalid-json" for e in loaded)
    view = mcp("transcript --direction recv")
    view.flush()
    assert view.direction.value == "recv"
    assert "notifications/initialized" not in view.table.value


def test_background_call_with_a_cancel_that_really_cancels(mcp) -> None:
    hosted = mcp("connect")
    call = mcp("call slow steps=100 interval=0.05 --background")
    deadline = time.monotonic() + 5
    while call.progress.request_id is None or call.progress.bar.value < 1:
        assert time.monotonic() < deadline, "no progress arrived"
        time.sleep(0.02)
    call.progress.cancel()  # what the Cancel button does
    with pytest.raises(Exception, match="Cancel button"):
        call.result(timeout=5)
    assert repr(call).startswith(
        f"Request tools/call slow #{call.progress.request_id}: cancelled at step ")
    assert call.progress.cancel_button.disabled and call.progress.cancel_button.button_style == ""
    cancels = hosted.session.transcript.filter(direction="send",
                                               method="notifications/cancelled")
    assert cancels[0].message["params"]["requestId"] == call.progress.request_id


def test_python_facades_blocking_and_async(mcp) -> None:
    hosted = mcp("connect")
    assert hosted.call_tool("add", {"a": 1, "b": 2}).text == "3"

    async def from_the_kernels_own_loop() -> str:
        result = await hosted.aio.call_tool("echo", {"text": "awaited"})
        return result.text

    assert asyncio.run(from_the_kernels_own_loop()) == "awaited"


def test_hostile_strings_are_escaped_in_every_view(mcp) -> None:
    hosted = mcp(f"connect hostile -- {LAB} --hostile-strings")
    tools = mcp("tools")
    mcp("call echo text=<b>bold</b>")
    view = hosted.view
    view.transcript.flush()
    rendered = [tools._repr_html_(), svg_images_opened(view.handshake.static_html()),
                view.capabilities.value, view.transcript.table.value, view.findings.value,
                view.state_diagram.value, svg_images_opened(view.static_html())]
    for markup in rendered:
        assert "<script" not in markup.lower()
        assert "<img" not in markup.lower()  # the payload <img src=x onerror=…> stays text
        assert "\u202e" not in markup
    assert "&lt;script&gt;" in tools._repr_html_()
    assert "&lt;script&gt;" in view.handshake.static_html()


def test_unload_shuts_every_session_down(ip) -> None:
    manager = loaded_magics()
    manager.stdin_close_grace = manager.sigterm_grace = 0.3
    try:
        hosted = ip.run_line_magic("mcp", f"connect doomed -- {LAB} --ignore-stdin-close")
        pid = hosted.session.transport.pid
        ip.run_line_magic("unload_ext", "mcp_nb")
        assert hosted.session.state is State.TERMINATED
        assert "SIGTERM" in [e.kind for e in hosted.session.transcript.events()]
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
        assert not manager.loop.running
        with pytest.raises(RuntimeError, match="not loaded"):
            loaded_magics()
    finally:
        ip.run_line_magic("load_ext", "mcp_nb")  # the module's other tests expect it
