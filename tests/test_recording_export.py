"""Exporting a session as pytest tests: green on the recording, a readable failure on change."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from mcp_nb.client import ClientSession, ServerError, lab_command
from mcp_nb.recording import load, save
from mcp_nb.recording.checks import expect
from mcp_nb.recording.export import export_tests
from mcp_nb.transports import StdioTransport

SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "recorded reply"},
           "model": "m", "stopReason": "endTurn"}


def run_pytest(test_file: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
        capture_output=True, text=True, timeout=240, cwd=test_file.parent,
        env={**os.environ, **env})


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lab session (lists, calls, progress, a sampling round trip, an error) as tests."""
    where = tmp_path_factory.mktemp("exported")
    recorded = where / "recordings" / "lab.jsonl"
    recorded.parent.mkdir()

    async def record() -> None:
        async with ClientSession(StdioTransport(lab_command()),
                                 on_sampling=lambda params: SAMPLED) as session:
            await session.connect()
            await session.list_tools()
            await session.call_tool("add", {"a": 1, "b": 2})
            await session.call_tool("slow", {"steps": 2, "interval": 0.01},
                                    on_progress=lambda *args: None)
            await session.call_tool("ask_llm", {"prompt": "hello"})
            await session.read_resource("lab://static/hello.txt")
            with pytest.raises(ServerError):  # an error answer is an expectation too
                await session.request("resources/read", {"uri": "lab://nowhere"})
            save(session, recorded)

    anyio.run(record)
    test_file = where / "test_lab_exported.py"
    assert export_tests(load(recorded), test_file) == 6
    return test_file


def test_the_exported_file_is_readable_and_finds_its_recording(exported: Path) -> None:
    source = exported.read_text()
    compile(source, str(exported), "exec")
    assert "def test_002_tools_call_add_a_1_b_2(server):" in source
    assert "'structuredContent': {'sum': 3}" in source
    assert "progressToken" not in source  # the live session brings its own
    assert (exported.parent / "lab.jsonl").exists()  # copied next to the tests


def test_exported_tests_pass_against_the_recording(exported: Path) -> None:
    result = run_pytest(exported)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "6 passed" in result.stdout


def test_exported_tests_pass_against_the_same_live_server(exported: Path) -> None:
    result = run_pytest(exported, MCP_NB_TARGET="live")
    assert result.returncode == 0, result.stdout + result.stderr


def test_exported_tests_fail_readably_when_the_server_changes(exported: Path) -> None:
    changed = f"{sys.executable} -m mcp_nb.lab --hostile-strings"
    result = run_pytest(exported, MCP_NB_TARGET="live", MCP_NB_COMMAND=changed)
    assert result.returncode == 1
    assert "tools/call add {\"a\": 1, \"b\": 2}: the server no longer answers as recorded" \
        in result.stdout
    assert "result.content: 1 item → 2 items" in result.stdout
    assert "result.tools: 7 items → 8 items" in result.stdout


def test_normalisers_compare_text_only() -> None:
    recorded = {"result": {"content": [{"type": "text", "text": "took 12 ms"}],
                           "structuredContent": {"ms": 12}, "_meta": {"x": 1}}}
    now = {"result": {"content": [{"type": "text", "text": "took 15 ms"}],
                      "structuredContent": {"ms": 12}}}
    expect("call", now, recorded, "numbers")  # passes: text numbers masked, _meta ignored
    with pytest.raises(AssertionError, match=r'result.content\[0\].text: "took 12 ms" → '
                                             r'"took 15 ms"'):
        expect("call", now, recorded, "exact")
    structured = {"result": {**now["result"], "structuredContent": {"ms": 15}}}
    with pytest.raises(AssertionError, match=r"result.structuredContent.ms: 12 → 15"):
        expect("call", structured, recorded, "numbers")
    expect("call", {"result": {"content": [{"type": "text", "text": "a  b\n"}]}},
           {"result": {"content": [{"type": "text", "text": "a b"}]}}, "whitespace")


@pytest.mark.anyio
async def test_a_live_session_exports_with_its_recording_beside(tmp_path: Path) -> None:
    from mcp_nb.recording import capture

    async with ClientSession(StdioTransport(lab_command())) as session:
        await session.connect()
        await session.call_tool("add", {"a": 4, "b": 4})
        recording = capture(session)
    assert export_tests(recording, tmp_path / "test_live.py") == 1
    assert load(tmp_path / "test_live.jsonl").header.server_info["name"] == "mcp_nb-lab"
    result = run_pytest(tmp_path / "test_live.py")
    assert result.returncode == 0, result.stdout + result.stderr
