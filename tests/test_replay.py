"""Replaying a recording as a mock server, over stdio and Streamable HTTP, to mcp_nb and the SDK."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from http_support import ServerProcess

from mcp_nb.client import ClientSession, RequestTimeout, ServerError, lab_command
from mcp_nb.protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND
from mcp_nb.recording import save
from mcp_nb.transports import StdioTransport, http_transport

pytestmark = pytest.mark.anyio

REPLAY_READY = re.compile(r"mcp_nb replay listening on (http://\S+)")
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "a haiku"},
           "model": "recorded-model", "stopReason": "endTurn"}


def replay_command(path: Path, *flags: str) -> list[str]:
    return [sys.executable, "-m", "mcp_nb.replay", str(path), *flags]


@contextlib.contextmanager
def replay_http(path: Path, *flags: str) -> Iterator[str]:
    """``python -m mcp_nb.replay PATH --http``; yields its /mcp URL."""
    server = ServerProcess(replay_command(path, "--http", *flags), REPLAY_READY)
    try:
        yield server.ready_text
    finally:
        server.stop()


@pytest.fixture(scope="module")
def lab_recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lab session with lists, calls, progress and a server→client request."""
    path = tmp_path_factory.mktemp("recordings") / "lab.jsonl"

    async def record() -> None:
        async with ClientSession(StdioTransport(lab_command()),
                                 on_sampling=lambda params: SAMPLED) as session:
            await session.connect()
            await session.list_tools()
            await session.call_tool("add", {"a": 1, "b": 2})
            await session.call_tool("add", {"a": 5, "b": 5})
            await session.call_tool("slow", {"steps": 3, "interval": 0.01},
                                    on_progress=lambda *args: None)
            await session.call_tool("ask_llm", {"prompt": "write a haiku"})
            await session.read_resource("lab://static/hello.txt")
            save(session, path)

    anyio.run(record)
    return path


@contextlib.asynccontextmanager
async def replayed(path: Path, *flags: str, **options: Any) -> AsyncIterator[ClientSession]:
    async with ClientSession(StdioTransport(replay_command(path, *flags)), **options) as session:
        await session.connect()
        yield session


async def test_replay_answers_what_was_recorded(lab_recording: Path) -> None:
    async with replayed(lab_recording) as session:
        assert session.server_info is not None and session.server_info.name == "mcp_nb-lab"
        assert "add" in [tool.name for tool in await session.list_tools()]
        assert (await session.call_tool("add", {"a": 5, "b": 5})).text == "10"
        assert (await session.call_tool("add", {"a": 1, "b": 2})).structuredContent == {"sum": 3}
        contents = await session.read_resource("lab://static/hello.txt")
        assert "hello" in contents[0]["text"].lower()
    assert session.findings == []


async def test_a_request_not_in_the_recording_names_the_closest_and_the_difference(
        lab_recording: Path) -> None:
    async with replayed(lab_recording, timeout=20) as session:
        with pytest.raises(ServerError) as caught:
            await session.call_tool("add", {"a": 1, "b": 3})
        error = caught.value
        assert error.code == INVALID_PARAMS
        assert "arguments.b: 2 → 3" in error.message
        assert error.data["closest"]["params"] == {"name": "add", "arguments": {"a": 1, "b": 2}}
        assert re.search(r"line \d+", error.message)
        with pytest.raises(ServerError) as caught:
            await session.request("prompts/lists", {})
        assert caught.value.code == METHOD_NOT_FOUND
        assert "'prompts/lists'" in caught.value.message
        # The replay still answers what it has after a miss.
        assert (await session.call_tool("add", {"a": 1, "b": 2})).text == "3"


async def test_progress_is_replayed_with_the_live_token_and_in_order(lab_recording: Path) -> None:
    seen: list[tuple[float, float | None]] = []
    async with replayed(lab_recording) as session:
        result = await session.call_tool("slow", {"steps": 3, "interval": 0.01},
                                         on_progress=lambda p, total, msg: seen.append((p, total)))
        assert result.text == "done after 3 steps"
    assert seen == [(1, 3), (2, 3), (3, 3)]
    # A token the live request did not carry would be a finding here.
    assert session.findings == []


async def test_server_requests_are_replayed_and_wait_for_the_answer(lab_recording: Path) -> None:
    asked: list[dict[str, Any]] = []

    def answer(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {**SAMPLED, "content": {"type": "text", "text": "a live answer"}}

    async with replayed(lab_recording, on_sampling=answer) as session:
        result = await session.call_tool("ask_llm", {"prompt": "write a haiku"})
    assert asked and asked[0]["messages"][0]["content"]["text"] == "write a haiku"
    assert result.text is not None and "a haiku" in result.text  # the recorded result


async def test_an_unanswered_recorded_request_gets_an_error_not_a_hang(tmp_path: Path) -> None:
    path = tmp_path / "never.jsonl"
    async with ClientSession(StdioTransport(lab_command("--never-answer", "tools/call"))) \
            as session:
        await session.connect()
        with pytest.raises(RequestTimeout):
            await session.call_tool("add", {"a": 1, "b": 2}, timeout=0.3)
        save(session, path)
    async with replayed(path, timeout=30) as session:
        with anyio.fail_after(20), pytest.raises(ServerError) as caught:
            await session.call_tool("add", {"a": 1, "b": 2})
    assert caught.value.code == INTERNAL_ERROR
    assert "never answered" in caught.value.message


async def test_streamable_http_replay_with_mcp_nb(lab_recording: Path) -> None:
    progress: list[float] = []
    with replay_http(lab_recording) as url:
        async with ClientSession(http_transport(url, "streamable-http"),
                                 on_sampling=lambda params: SAMPLED) as session:
            await session.connect()
            assert session.negotiated_version == "2025-11-25"
            assert (await session.call_tool("add", {"a": 1, "b": 2})).text == "3"
            slow = await session.call_tool("slow", {"steps": 3, "interval": 0.01},
                                           on_progress=lambda p, *rest: progress.append(p))
            assert slow.text == "done after 3 steps"
            asked = await session.call_tool("ask_llm", {"prompt": "write a haiku"})
            assert asked.text is not None and "a haiku" in asked.text
            with pytest.raises(ServerError) as caught:
                await session.call_tool("add", {"a": 2, "b": 2})
            assert caught.value.code == INVALID_PARAMS
    assert progress == [1, 2, 3]
    assert session.findings == []


async def test_the_official_sdk_client_over_stdio_and_http(lab_recording: Path) -> None:
    pytest.importorskip("mcp.client.session", reason="the official MCP SDK is needed")
    from mcp.client.session import ClientSession as SdkSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client

    async def exercise(read: Any, write: Any) -> None:
        async with SdkSession(read, write) as sdk:
            initialized = await sdk.initialize()
            assert initialized.server_info.name == "mcp_nb-lab"
            tools = await sdk.list_tools()
            assert "add" in [tool.name for tool in tools.tools]
            added = await sdk.call_tool("add", {"a": 1, "b": 2})
            assert added.content[0].text == "3"
            assert added.structured_content == {"sum": 3}

    command = replay_command(lab_recording)
    parameters = StdioServerParameters(command=command[0], args=command[1:])
    with anyio.fail_after(60):
        async with stdio_client(parameters) as (read, write):
            await exercise(read, write)
        with replay_http(lab_recording) as url:
            async with streamable_http_client(url) as (read, write):
                await exercise(read, write)


async def test_a_stateless_era_recording_replays_in_its_era_over_http(tmp_path: Path) -> None:
    path = tmp_path / "stateless.jsonl"
    async with ClientSession(StdioTransport(lab_command("--era", "stateless"))) as session:
        await session.connect(era="stateless")
        await session.call_tool("add", {"a": 1, "b": 2})
        save(session, path)
    with replay_http(path) as url:
        async with ClientSession(http_transport(url, "streamable-http")) as session:
            await session.connect(era="auto")
            assert session.era is not None and session.era.value == "stateless"
            assert (await session.call_tool("add", {"a": 1, "b": 2})).text == "3"
            assert not any("Mcp-Session-Id" in (e.text or "") for e in session.transcript)


def test_garbage_and_batches_get_answers_naming_their_ids(lab_recording: Path) -> None:
    lines = ['{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}',
             "this is not json",
             '[{"jsonrpc": "2.0", "id": 7, "method": "ping"}, '
             '{"jsonrpc": "2.0", "method": "notifications/initialized"}, '
             '{"jsonrpc": "2.0", "id": "x", "method": "tools/list"}]',
             '{"jsonrpc": "2.0", "id": 9, "method": "nothing/here"}']
    result = subprocess.run(replay_command(lab_recording, "--timing", "none"),
                            input="\n".join(lines) + "\n", capture_output=True, text=True,
                            timeout=60)
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert answers[0]["id"] == 1 and answers[0]["result"]["serverInfo"]["name"] == "mcp_nb-lab"
    assert answers[1]["id"] is None and answers[1]["error"]["code"] == -32700
    assert [(a["id"], a["error"]["code"]) for a in answers[2]] == [(7, -32600), ("x", -32600)]
    assert answers[3]["id"] == 9 and answers[3]["error"]["code"] == METHOD_NOT_FOUND
    assert "replay: the recording has no 'nothing/here' request" in result.stderr
