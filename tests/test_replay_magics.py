"""``%mcp save``, ``connect --replay``, ``diff`` and ``export-tests`` in a notebook shell."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_nb.notebook.magics import McpCellError
from mcp_nb.recording import load
from mcp_nb.recording.diff import SessionDiff


@pytest.fixture
def lab_file(ip, mcp, tmp_path: Path) -> Path:
    """A lab session (tools listed, add and echo called) saved with ``%mcp save``."""
    ip.user_ns["recording_file"] = str(tmp_path / "lab.jsonl")
    mcp("connect lab")
    mcp("tools")
    assert mcp("call add a=1 b=2").text == "3"
    mcp("call echo text=hello")
    mcp("save lab {recording_file}")
    return tmp_path / "lab.jsonl"


def test_save_writes_a_recording_and_says_where(mcp, lab_file: Path, capsys) -> None:
    mcp("save {recording_file}")  # the current session
    assert "lab: saved 15 records to lab.jsonl (credentials redacted)" in capsys.readouterr().out
    recording = load(lab_file)
    assert recording.header.server_info["name"] == "mcp_nb-lab"
    assert [r.method for r in recording.messages("send")][-2:] == ["tools/call", "tools/call"]


def test_connect_replay_answers_from_the_file_and_names_a_miss(ip, mcp, lab_file: Path) -> None:
    ip.user_ns["recording_file"] = str(lab_file)
    hosted = mcp("connect old --replay {recording_file} --replay-timing none")
    assert hosted.name == "old"
    assert hosted.session.era.value == "handshake"
    assert hosted.session.server_info.name == "mcp_nb-lab"
    assert mcp("call add a=1 b=2").text == "3"
    with pytest.raises(McpCellError, match=r"arguments.a: 1 → 2; arguments.b: 2 → 5"):
        mcp("call add a=2 b=5")
    # The replay said so on its stderr too, which the transcript keeps.
    assert any("replay: no recorded tools/call" in (e.text or "")
               for e in hosted.session.transcript.events("stderr"))


def test_a_stateless_recording_replays_in_its_era(ip, mcp, tmp_path: Path) -> None:
    ip.user_ns["recording_file"] = str(tmp_path / "stateless.jsonl")
    mcp("connect st --era stateless --lab=--era=stateless")
    mcp("call add a=2 b=3")
    mcp("save st {recording_file}")
    hosted = mcp("connect again --replay {recording_file}")
    assert hosted.session.era.value == "stateless"
    assert mcp("call add a=2 b=3").text == "5"


def test_diff_takes_sessions_and_files(ip, mcp, lab_file: Path, capsys) -> None:
    ip.user_ns["recording_file"] = str(lab_file)
    mcp("connect changed --lab=--list-changes")
    mcp("tools")
    found = mcp("diff {recording_file} changed")
    assert isinstance(found, SessionDiff)
    assert "+ tools: toggle_bonus added" in found.text()
    assert found.after.startswith("changed (mcp_nb-lab")
    assert "<b>toggle_bonus</b>" in found._repr_html_()
    capsys.readouterr()
    assert mcp("diff lab changed --json") is None
    printed = json.loads(capsys.readouterr().out)
    assert {"section": "tools", "kind": "added", "name": "toggle_bonus", "details": []} in \
        printed["interface"]


def test_export_tests_from_a_session_runs_green(ip, mcp, lab_file: Path, tmp_path: Path,
                                                 capsys) -> None:
    ip.user_ns["test_file"] = str(tmp_path / "exported" / "test_lab.py")
    (tmp_path / "exported").mkdir()
    mcp("export-tests lab {test_file} --normalize whitespace")
    assert "wrote 3 tests to test_lab.py" in capsys.readouterr().out
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "test_lab.py"], cwd=tmp_path / "exported", capture_output=True,
                            text=True, timeout=240)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout


def test_bad_files_fail_the_cell_with_one_line(ip, mcp, tmp_path: Path) -> None:
    cut = tmp_path / "cut.jsonl"
    cut.write_text('{"format": "mcp_nb-recording", "version": 1, "era": "handshake", '
                   '"protocol_version": "2025-11-25"}\n{"t": 0.1, "send": {"jsonrp')
    ip.user_ns["recording_file"] = str(cut)
    with pytest.raises(McpCellError, match=r"cut.jsonl:2: the last line is cut off"):
        mcp("connect --replay {recording_file}")
    with pytest.raises(McpCellError, match=r"cannot read nowhere.jsonl"):
        mcp("diff nowhere.jsonl {recording_file}")
    with pytest.raises(McpCellError, match=r"usage: %mcp save \[NAME\] FILE"):
        mcp("save a b c")
