"""The stdio transport: spawning, environment, framing, stderr, shutdown escalation."""

from __future__ import annotations

import json
import os
import signal
import sys
import textwrap

import anyio
import pytest
from support import (
    event_kinds,
    lab_session,
    python_command,
    rules,
    until_in_flight,
)

from mcp_nb.client import ClientSession
from mcp_nb.protocol import State
from mcp_nb.transports import StdioTransport, TransportClosed

pytestmark = pytest.mark.anyio

SLACK = 1.5
GRACE = 0.4


def event_time(session: ClientSession, kind: str) -> float:
    return session.transcript.events(kind)[0].time


# -- shutdown escalation ------------------------------------------------------------------------

async def test_server_ignoring_stdin_close_gets_sigterm_after_the_grace_period() -> None:
    async with lab_session("--ignore-stdin-close", stdin_close_grace=GRACE,
                           sigterm_grace=GRACE) as session:
        pass
    kinds = event_kinds(session)
    assert "SIGTERM" in kinds and "SIGKILL" not in kinds
    waited = event_time(session, "SIGTERM") - event_time(session, "stdin closed")
    assert GRACE <= waited < GRACE + SLACK
    # The lab server handles SIGTERM by leaving cleanly.
    assert session.transport_events[-1].data["returncode"] == 0
    assert session.transport_events[-1].detail == "server exit code 0"
    assert session.state is State.TERMINATED


async def test_server_ignoring_stdin_close_and_sigterm_gets_sigkill_after_both_graces() -> None:
    async with lab_session("--ignore-stdin-close", "--ignore-sigterm", stdin_close_grace=GRACE,
                           sigterm_grace=GRACE) as session:
        await session.ping()
    kinds = event_kinds(session)
    assert kinds.index("stdin closed") < kinds.index("SIGTERM") < kinds.index("SIGKILL")
    total = event_time(session, "SIGKILL") - event_time(session, "stdin closed")
    assert 2 * GRACE <= total < 2 * GRACE + SLACK
    exited = session.transport_events[-1]
    assert exited.kind == "exited" and exited.data["returncode"] == -signal.SIGKILL
    # The escalation steps carry their elapsed time for the transcript.
    sigkill = next(e for e in session.transport_events if e.kind == "SIGKILL")
    assert sigkill.data["elapsed"] >= 2 * GRACE


async def test_shutdown_cancels_pending_requests_but_never_initialize() -> None:
    async with lab_session() as session:
        errors: list[Exception] = []

        async def call() -> None:
            try:
                await session.call_tool("slow", {"steps": 100, "interval": 0.05})
            except Exception as exc:
                errors.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await until_in_flight(session)
            await session.shutdown()
    assert "shutting down" in str(errors[0])
    cancels = session.transcript.filter(direction="send", method="notifications/cancelled")
    assert cancels[0].state == "ShuttingDown"
    assert cancels[0].message is not None
    assert cancels[0].message["params"]["requestId"] == 2


# -- spawning and environment --------------------------------------------------------------------

async def test_a_command_string_is_refused_because_no_shell_is_used() -> None:
    with pytest.raises(TypeError, match="argv list"):
        StdioTransport("python -m mcp_nb.lab")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="empty"):
        StdioTransport([])


async def test_missing_program_gives_a_clear_error() -> None:
    session = ClientSession(StdioTransport(["no-such-mcp-server-xyz"]))
    with pytest.raises(TransportClosed, match="'no-such-mcp-server-xyz' was not found"):
        async with session:
            pass


async def test_environment_is_minimal_plus_what_the_user_passes(tmp_path) -> None:
    os.environ["MCP_NB_TEST_SECRET"] = "must-not-leak"
    try:
        code = textwrap.dedent("""
            import json, os, sys
            sys.stderr.write(json.dumps({"env": sorted(os.environ), "cwd": os.getcwd()}) + "\\n")
            sys.stderr.flush()
            sys.stdin.read()
        """)
        transport = StdioTransport(python_command(code), env={"EXTRA": "1"}, cwd=tmp_path)
        async with ClientSession(transport):
            with anyio.fail_after(10):
                while not transport.stderr_tail:
                    await anyio.sleep(0.01)
    finally:
        del os.environ["MCP_NB_TEST_SECRET"]
    seen = json.loads(transport.stderr_tail[0])
    allowed = {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "EXTRA"}
    # The interpreter may add LC_CTYPE on some platforms; nothing from our environment leaks.
    assert set(seen["env"]) - {"LC_CTYPE"} <= allowed
    assert "EXTRA" in seen["env"] and "MCP_NB_TEST_SECRET" not in seen["env"]
    assert os.path.realpath(seen["cwd"]) == os.path.realpath(tmp_path)


# -- framing --------------------------------------------------------------------------------------

SCRIPTED_SERVER = textwrap.dedent("""
    import json, sys
    request = json.loads(sys.stdin.readline())
    out = sys.stdout.buffer
    out.write(b"x" * 5000 + b"\\n")                 # oversized
    out.write(b"\\r\\n\\n")                          # blank lines are ignored
    out.write(b'[{"jsonrpc": "2.0", "method": "notifications/message"}]\\n')  # batch
    out.write(b'{"jsonrpc": "2.0", "id": null, "method": "ping"}\\n')   # invalid id
    result = {"protocolVersion": "2025-11-25", "capabilities": {},
              "serverInfo": {"name": "scripted", "version": "1"}}
    reply = {"jsonrpc": "2.0", "id": request["id"], "result": result}
    body = json.dumps(reply).encode()
    out.write(body[:10]); out.flush()                 # a message split across writes
    out.write(body[10:] + b"\\r\\n"); out.flush()
    sys.stdin.read()
""")


async def test_framing_survives_oversize_blank_split_and_invalid_lines() -> None:
    transport = StdioTransport(python_command(SCRIPTED_SERVER), max_message_bytes=1000)
    async with ClientSession(transport) as session:
        result = await session.initialize(timeout=10)
        assert result.serverInfo.name == "scripted"
    assert rules(session) == ["message-too-large", "batch-not-allowed", "invalid-message"]
    oversized = session.transcript.events("oversized line")[0]
    assert "5,000 bytes" in (oversized.text or "")


async def test_stderr_works_without_a_file_descriptor_on_sys_stderr(monkeypatch) -> None:
    # Inside Jupyter sys.stderr is an object with no fileno(); the transport must
    # not depend on it.
    class NoFd:
        def write(self, text: str) -> int:
            return len(text)

        def flush(self) -> None:
            pass

        def fileno(self) -> int:
            raise OSError("no file descriptor")

    monkeypatch.setattr(sys, "stderr", NoFd())
    async with lab_session("--stderr-chatter", "3") as session:
        await session.ping()
    assert any("lab server ready" in line for line in session.transport.stderr_tail)  # type: ignore[attr-defined]
