"""Recording a session: the file, redaction at record time, bad files named by their line."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from http_support import lab_server, lab_session
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_nb.client import ClientSession, lab_command
from mcp_nb.recording import (
    FORMAT_VERSION,
    Header,
    Record,
    Recording,
    RecordingError,
    capture,
    load,
    loads,
    save,
)
from mcp_nb.recording.redact import REDACTED, Redactor
from mcp_nb.transports import StdioTransport

pytestmark = pytest.mark.anyio


async def test_a_saved_session_keeps_header_messages_and_timing(tmp_path: Path) -> None:
    path = tmp_path / "lab.jsonl"
    async with ClientSession(StdioTransport(lab_command()), timeout=12.5) as session:
        await session.connect()
        await session.call_tool("add", {"a": 1, "b": 2})
        written = save(session, path)
        entries_when_saved = len(session.transcript)
    recording = load(path)
    header = recording.header
    assert header.era == "handshake"
    assert header.protocol_version == session.negotiated_version
    assert header.server_info is not None and header.server_info["name"] == "mcp_nb-lab"
    assert "tools" in header.server_capabilities
    assert header.client_info["name"] == "mcp_nb"
    assert header.settings["default_timeout"] == 12.5
    assert header.transport["kind"] == "stdio"
    assert header.transport["command"][-2:] == ["-m", "mcp_nb.lab"]
    assert len(recording.records) == written == entries_when_saved
    methods = [r.method for r in recording.messages("send")]
    assert methods == ["initialize", "notifications/initialized", "tools/call"]
    answer = [r.message for r in recording.messages("recv") if r.message.get("id") == 2]
    assert answer[0]["result"]["structuredContent"] == {"sum": 3}
    times = [r.time for r in recording.records]
    assert times == sorted(times) and times[-1] > 0
    assert recording.records[0].kind == "spawned"
    # Line numbers point into the file: line 1 is the header.
    assert [r.line for r in recording.records] == list(range(2, len(recording.records) + 2))
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["version"] == FORMAT_VERSION
    assert json.loads(lines[-1]) == {"end": len(recording.records)}


async def test_http_credentials_never_reach_the_file(tmp_path: Path) -> None:
    token, api_key = "tok-5ecret-value-1234", "key-abcdef-987"
    headers = {"Authorization": f"Bearer {token}", "X-Api-Key": api_key}
    with lab_server() as server:
        async with lab_session(server, headers=headers) as session:
            await session.connect()
            # A server that echoes a credential back must not leak it through the file either.
            echoed = await session.call_tool("echo", {"text": f"my token is {token}"})
            assert token in echoed.text
            save(session, tmp_path / "http.jsonl")
    text = (tmp_path / "http.jsonl").read_text()
    assert token not in text and api_key not in text
    header = load(tmp_path / "http.jsonl").header
    assert header.transport["kind"] == "streamable-http"
    assert header.transport["headers"] == {"Authorization": REDACTED, "X-Api-Key": REDACTED}
    assert f"my token is {REDACTED}" in text
    assert '"event":"http"' in text  # the transport events are there, redacted


async def test_stdio_environment_and_extra_secrets_are_redacted(tmp_path: Path) -> None:
    env_secret, extra = "env-secret-value-42", "user-named-secret"
    transport = StdioTransport(lab_command(), env={"LAB_API_TOKEN": env_secret})
    async with ClientSession(transport) as session:
        await session.connect()
        await session.call_tool("echo", {"text": f"{env_secret} and {extra}"})
        recording = capture(session, secrets=[extra])
    recording.write(tmp_path / "env.jsonl")
    text = (tmp_path / "env.jsonl").read_text()
    assert env_secret not in text and extra not in text
    assert recording.header.transport["env"] == {"LAB_API_TOKEN": REDACTED}
    assert "HOME" not in recording.header.transport["env"]  # inherited, not caller-supplied


def test_redactor_masks_urls_command_lines_and_header_lines() -> None:
    redactor = Redactor()
    assert redactor.url("https://me:pa55word@host/mcp?api_key=k3y-value&page=2") == \
        f"https://me:{REDACTED}@host/mcp?api_key={REDACTED}&page=2"
    assert redactor.command(["srv", "--token", "t0ken-x", "--auth-header=Basic abc", "--port",
                             "80"]) == ["srv", "--token", REDACTED, f"--auth-header={REDACTED}",
                                        "--port", "80"]
    # Values found on the way are scrubbed everywhere afterwards.
    assert redactor.value({"args": ["pa55word", "t0ken-x here"]}) == \
        {"args": [REDACTED, f"{REDACTED} here"]}
    assert redactor.text("GET /x [Cookie: sid=1; other=2, Mcp-Session-Id: ab…]") == \
        f"GET /x [Cookie: {REDACTED}; other=2, Mcp-Session-Id: ab…]"
    assert redactor.text("sent Bearer abc.def-123") == f"sent Bearer {REDACTED}"


# -- bad input: every error names the line ------------------------------------------------

HEADER = json.dumps({"format": "mcp_nb-recording", "version": 1, "era": "handshake",
                     "protocol_version": "2025-11-25"})
PING = '{"t":0.1,"send":{"jsonrpc":"2.0","id":1,"method":"ping"}}'
PONG = '{"t":0.2,"recv":{"jsonrpc":"2.0","id":1,"result":{}}}'


def good(*middle: str) -> str:
    return "\n".join([HEADER, *middle, json.dumps({"end": len(middle)})]) + "\n"


def test_a_well_formed_file_loads() -> None:
    recording = loads(good(PING, PONG))
    assert [r.line for r in recording.records] == [2, 3] and recording.complete


@pytest.mark.parametrize(("text", "line", "words"), [
    ("", 1, "empty"),
    ('{"hello": 1}\n', 1, "not an mcp_nb recording"),
    (HEADER.replace('"version": 1', '"version": 7') + "\n", 1, "newer than this mcp_nb reads"),
    (HEADER.replace('"handshake"', '"stateful"') + "\n", 1, "'era' must be one of"),
    (good(PING, PONG)[:-20], 3, "cut off"),                        # ends mid-line
    ("\n".join([HEADER, PING, PONG]) + "\n", 3, "no trailer"),      # cut at a line boundary
    (good(PING, "{not json", PONG), 3, "not JSON"),
    (good(PING, PONG.replace('"recv"', '"recieve"')), 3, "unknown field(s) recieve"),
    (good(PING, PONG.replace("0.2", "0.05")), 3, "time goes backwards"),
    (good(PING, PONG.replace('"2.0"', '"1.0"')), 3, '"jsonrpc": "2.0"'),
    (good(PING, PONG.replace('"result":{}', '"result":{},"error":{}')), 3, "exactly one of"),
    (good(PING, PONG).replace('{"end": 2}', '{"end": 3}'), 4, "lines were added or removed"),
    (good(PING, PONG) + PING + "\n", 5, "content after the trailer"),
])
def test_bad_files_are_refused_naming_the_line(text: str, line: int, words: str) -> None:
    with pytest.raises(RecordingError) as caught:
        loads(text, "bad.jsonl")
    assert caught.value.line == line
    assert str(caught.value).startswith(f"bad.jsonl:{line}: ")
    assert words in str(caught.value)


def test_a_truncated_file_can_be_read_partially() -> None:
    recording = loads(good(PING, PONG)[:-20], partial=True)
    assert not recording.complete and [r.line for r in recording.records] == [2]


def test_bytes_that_are_not_utf8_are_named_by_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(good(PING, PONG).replace('"ping"', '"p\xefng"').encode("latin-1"))
    with pytest.raises(RecordingError, match=r"latin1.jsonl:2: not UTF-8"):
        load(path)


def test_the_command_line_reports_a_bad_file_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_text(good(PING, PONG)[:-20])
    shown = subprocess.run([sys.executable, "-m", "mcp_nb.recording", "show", str(path)],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 2
    assert f"{path}:3: the last line is cut off" in shown.stderr
    replayed = subprocess.run([sys.executable, "-m", "mcp_nb.replay", str(path)],
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert replayed.returncode == 2 and f"{path}:3:" in replayed.stderr
    partial = subprocess.run([sys.executable, "-m", "mcp_nb.recording", "show", str(path),
                              "--partial"], capture_output=True, text=True, timeout=60)
    assert partial.returncode == 0 and "(truncated)" in partial.stdout


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2**53, 2**53) | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12)


@given(st.lists(st.tuples(st.sampled_from(["send", "recv"]),
                          st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=4),
                          st.floats(0, 1e5)), max_size=8))
@settings(max_examples=60, deadline=None)
def test_any_messages_survive_a_write_and_a_load(
        exchanges: list[tuple[str, dict[str, Any], float]]) -> None:
    records = [Record(0, time, direction,  # type: ignore[arg-type]
                      {"jsonrpc": "2.0", "method": "x/y", "params": params})
               for direction, params, time in sorted(exchanges, key=lambda item: item[2])]
    header = Header(era="handshake", protocol_version="2025-11-25")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "any.jsonl"
        Recording(header, records).write(path)
        loaded = load(path)
    assert [r.message for r in loaded.records] == [r.message for r in records]
    assert [r.time for r in loaded.records] == [float(f"{r.time:.6f}") for r in records]
    assert loaded.header == header


async def test_a_session_that_let_entries_go_says_so_in_the_header(tmp_path: Path) -> None:
    async with ClientSession(StdioTransport(lab_command()), transcript_limit=4) as session:
        await session.connect()
        for number in range(3):
            await session.call_tool("add", {"a": number, "b": 1})
        save(session, tmp_path / "short.jsonl")
        dropped = session.transcript.dropped
    recording = load(tmp_path / "short.jsonl")
    assert dropped > 0 and recording.header.dropped == dropped
    assert "initialize" not in [record.method for record in recording.records]
