"""Interop over stdio with a server built on the official MCP Python SDK (``mcp`` on PyPI)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support import event_kinds

from mcp_nb.client import ClientSession
from mcp_nb.protocol import SUPPORTED_VERSIONS, State
from mcp_nb.transports import StdioTransport

pytest.importorskip("mcp.server.mcpserver", reason="the official MCP SDK (mcp>=2) is needed")

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

PEER = Path(__file__).parent / "peers" / "sdk_server.py"


def sdk_session(**options: object) -> ClientSession:
    return ClientSession(StdioTransport([sys.executable, str(PEER)]), **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
async def test_handshake_with_the_official_sdk_in_every_version(version: str) -> None:
    async with sdk_session() as session:
        result = await session.connect(version)
        assert result.protocolVersion == version
        assert result.serverInfo.name == "sdk-peer"
        assert result.instructions == "Interop peer for mcp_nb's tests."
        assert session.capabilities.server_supports("tools/call")
        assert session.state is State.OPERATING
        await session.ping()
    assert session.findings == []


async def test_tools_progress_and_shutdown_with_the_official_sdk() -> None:
    progress: list[float] = []
    async with sdk_session() as session:
        await session.connect()
        tools = {tool.name: tool for tool in await session.list_tools()}
        assert set(tools) == {"add", "count", "greet", "count_roots"}
        assert tools["add"].inputSchema["properties"].keys() == {"a", "b"}
        added = await session.call_tool("add", {"a": 20, "b": 22})
        assert added.isError is False and added.text == "42"
        counted = await session.call_tool(
            "count", {"steps": 3}, on_progress=lambda p, total, msg: progress.append(p))
        assert counted.text == "counted 3"
        bad = await session.call_tool("add", {"a": "not a number"})
        assert bad.isError is True
    assert progress == [1, 2, 3]
    assert session.findings == []
    assert session.state is State.TERMINATED
    # The SDK server leaves when its stdin closes: no signal needed.
    assert "SIGTERM" not in event_kinds(session)
    assert session.transport_events[-1].data["returncode"] == 0
