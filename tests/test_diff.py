"""Diffing sessions: interface and behaviour, as text, JSON and escaped HTML."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_nb.client import ClientSession, lab_command
from mcp_nb.recording import Recording, load, loads, save
from mcp_nb.recording.diff import diff_recordings
from mcp_nb.recording.diff_html import diff_html
from mcp_nb.transports import StdioTransport

ADD_V1 = {"name": "add", "inputSchema": {"type": "object", "properties": {
    "a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}}
ADD_V2 = {"name": "add", "inputSchema": {"type": "object", "properties": {
    "a": {"type": "number"}, "b": {"type": "string"}, "c": {"type": "number"}},
    "required": ["a", "b", "c"]}}


def recording(version: str, tools: list[dict[str, Any]], calls: list[tuple[dict, dict, float]],
              capabilities: dict[str, Any]) -> Recording:
    """A recording in the file format, built line by line (as a hand-made file would be)."""
    header = {"format": "mcp_nb-recording", "version": 1, "era": "handshake",
              "protocol_version": "2025-11-25", "server_info": {"name": "calc", "version": version},
              "server_capabilities": capabilities}
    lines = [json.dumps(header)]
    time = 0.0

    def add(direction: str, message: dict[str, Any], after: float = 0.001) -> None:
        nonlocal time
        time += after
        lines.append(json.dumps({"t": round(time, 6), direction: {"jsonrpc": "2.0", **message}}))

    add("send", {"id": 1, "method": "tools/list"})
    add("recv", {"id": 1, "result": {"tools": tools}})
    for number, (params, outcome, duration) in enumerate(calls, 2):
        add("send", {"id": number, "method": "tools/call", "params": params})
        add("recv", {"id": number, **outcome}, duration)
    lines.append(json.dumps({"end": len(lines) - 1}))
    return loads("\n".join(lines) + "\n", f"calc-{version}.jsonl")


def call(a: int, b: int) -> dict[str, Any]:
    return {"name": "add", "arguments": {"a": a, "b": b}}


def text(value: str) -> dict[str, Any]:
    return {"result": {"content": [{"type": "text", "text": value}]}}


BEFORE = recording("1.0", [ADD_V1, {"name": "old"}], [
    (call(1, 2), text("3"), 0.01), (call(2, 2), text("4"), 0.01), (call(5, 5), text("10"), 0.01),
    (call(9, 9), text("18"), 0.01)], {"tools": {}})
AFTER = recording("2.0", [ADD_V2, {"name": "new"}], [
    (call(1, 2), text("3"), 0.01), (call(2, 2), text("five"), 0.01),
    (call(5, 5), {"error": {"code": -32602, "message": "b must be a string"}}, 0.01)],
    {"tools": {"listChanged": True}})


def test_interface_changes_are_spelled_out() -> None:
    lines = diff_recordings(BEFORE, AFTER).text().splitlines()
    assert "~ server: server info changed: version: \"1.0\" → \"2.0\"" in lines[3]
    assert '  ~ server: capabilities changed: tools.listChanged: added (true)' in lines
    schema = next(line for line in lines if "tools: add changed" in line)
    assert 'inputSchema.properties.b.type: "number" → "string"' in schema
    assert 'inputSchema.properties.c: added ({"type": "number"})' in schema
    assert "inputSchema.required: 2 items → 3 items" in schema
    assert 'inputSchema.required[2]: added ("c")' in schema
    assert "  - tools: old removed" in lines
    assert "  + tools: new added" in lines


def test_behaviour_pairs_the_same_calls() -> None:
    diff = diff_recordings(BEFORE, AFTER)
    assert diff.compared_calls == 3
    lines = [change.line() for change in diff.behaviour]
    assert lines == [
        '~ calls: tools/call add {"a": 2, "b": 2} changed: result content[0].text: "4" → "five"',
        '~ calls: tools/call add {"a": 5, "b": 5} changed: result {"content": [{"text": "10", '
        '"type": "text"}]} → error {"code": -32602, "message": "b must be a string"}',
        '< calls: tools/call add {"a": 9, "b": 9} only before',
    ]


def test_timings_count_only_when_far_apart() -> None:
    slow = recording("1.0", [ADD_V1], [(call(1, 2), text("3"), 0.5)], {})
    fast = recording("1.0", [ADD_V1], [(call(1, 2), text("3"), 0.01)], {})
    near = recording("1.0", [ADD_V1], [(call(1, 2), text("3"), 0.015)], {})
    assert [c.line() for c in diff_recordings(fast, slow).behaviour] == \
        ['~ timing: tools/call add {"a": 1, "b": 2} changed: 10.0 ms → 500.0 ms']
    assert not diff_recordings(fast, near)


def test_json_output_is_machine_readable() -> None:
    data = json.loads(diff_recordings(BEFORE, AFTER).to_json())
    assert {c["name"] for c in data["interface"] if c["section"] == "tools"} == \
        {"add", "old", "new"}
    assert data["compared_calls"] == 3
    assert [c["kind"] for c in data["behaviour"]] == ["changed", "changed", "only before"]


def test_no_differences_says_so() -> None:
    diff = diff_recordings(BEFORE, BEFORE)
    assert not diff
    assert "no differences (interface, and 4 calls compared)" in diff.text()


def test_two_lab_servers_diff_with_hostile_strings_escaped(tmp_path: Path) -> None:
    async def record(path: Path, *flags: str) -> None:
        async with ClientSession(StdioTransport(lab_command(*flags))) as session:
            await session.connect()
            await session.list_tools()
            await session.call_tool("echo", {"text": "hi"})
            save(session, path)

    anyio.run(record, tmp_path / "plain.jsonl")
    anyio.run(record, tmp_path / "hostile.jsonl", "--hostile-strings")
    diff = diff_recordings(load(tmp_path / "plain.jsonl"), load(tmp_path / "hostile.jsonl"))
    shown = diff_html(diff)
    assert "<script>" not in shown and "<img" not in shown
    assert "&lt;script&gt;" in shown
    assert "\u202e" not in shown and "\x1b" not in shown
    plain = diff.text()
    assert "\u202e" not in plain and "\x1b" not in plain and "\\u202e" in plain
    assert "+ tools: echo<script>alert(1)</script>\\u202e added" in plain
    assert diff._repr_html_() == shown


def test_the_command_line_diffs_files(tmp_path: Path) -> None:
    BEFORE.write(tmp_path / "before.jsonl")
    AFTER.write(tmp_path / "after.jsonl")
    command = [sys.executable, "-m", "mcp_nb.recording", "diff", str(tmp_path / "before.jsonl"),
               str(tmp_path / "after.jsonl")]
    as_text = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert as_text.returncode == 0 and "- tools: old removed" in as_text.stdout
    as_json = subprocess.run([*command, "--json", "--exit-code"], capture_output=True, text=True,
                             timeout=60)
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["compared_calls"] == 3


@pytest.mark.anyio
async def test_a_live_session_diffs_against_a_recording(tmp_path: Path) -> None:
    async with ClientSession(StdioTransport(lab_command())) as session:
        await session.connect()
        await session.list_tools()
        save(session, tmp_path / "lab.jsonl")
    async with ClientSession(StdioTransport(lab_command("--omit-capability", "prompts"))) as live:
        await live.connect()
        await live.list_tools()
        diff = diff_recordings(load(tmp_path / "lab.jsonl"), live)
    assert [c.line() for c in diff.interface] == \
        ['~ server: capabilities changed: prompts: removed ({"listChanged": true})']
