"""Interop over HTTP with ``@modelcontextprotocol/server-everything`` (npm), a peer in TypeScript.

The package is installed once per machine into the repository's ignored
``.cache/`` (pinned, so upstream releases cannot change the tests under us) and
started in its ``streamableHttp`` and ``sse`` modes.  Its listen() would take a
fixed port on every interface; ``peers/loopback_listen.cjs``, preloaded into
node, moves it to 127.0.0.1 on a free port and announces the port.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from http_support import events, everything_http, http_lines, install_everything

from mcp_nb.client import ClientSession
from mcp_nb.protocol import State
from mcp_nb.transports import AutoHttpTransport, SseTransport, StreamableHttpTransport

# The first run installs the package (tens of seconds on a cold npm cache).
pytestmark = [pytest.mark.anyio, pytest.mark.interop, pytest.mark.timeout(300)]

@pytest.fixture(scope="session")
def everything() -> Path:
    """The installed server's entry point (installing it on first use)."""
    return install_everything()


@pytest.fixture(scope="module")
def streamable(everything: Path) -> Iterator[str]:
    yield from everything_http(everything, "streamableHttp")


@pytest.fixture(scope="module")
def legacy(everything: Path) -> Iterator[str]:
    yield from everything_http(everything, "sse")


async def test_streamable_http_with_server_everything(streamable: str) -> None:
    progress: list[float] = []
    async with ClientSession(StreamableHttpTransport(f"{streamable}/mcp")) as session:
        result = await session.connect()
        assert result.serverInfo.name
        tools = {tool.name for tool in await session.list_tools()}
        assert {"echo", "trigger-long-running-operation"} <= tools
        assert "hello" in (await session.call_tool("echo", {"message": "hello"})).text
        done = await session.call_tool(
            "trigger-long-running-operation", {"duration": 0.3, "steps": 3},
            on_progress=lambda p, total, msg: progress.append(p))
        assert "completed" in done.text
    assert progress == [1, 2, 3]
    assert session.findings == [] and session.state is State.TERMINATED
    assert len(events(session, "session id")) == 1
    assert http_lines(session, "DELETE")[0].endswith("→ 200 OK")


async def test_auto_falls_back_to_server_everything_in_sse_mode(legacy: str) -> None:
    async with ClientSession(AutoHttpTransport(f"{legacy}/sse")) as session:
        await session.connect()
        assert session.transport.kind == "sse"
        assert "hi" in (await session.call_tool("echo", {"message": "hi"})).text
    kinds = [e.kind for e in session.transcript.events()]
    assert kinds[:4] == ["http", "fallback", "http", "endpoint"]
    assert "404" in events(session, "http")[0]
    assert session.findings == []


async def test_sse_transport_with_server_everything(legacy: str) -> None:
    async with ClientSession(SseTransport(f"{legacy}/sse")) as session:
        await session.connect()
        assert "again" in (await session.call_tool("echo", {"message": "again"})).text
    assert events(session, "endpoint")[0].startswith("the server said to POST messages to "
                                                     "/message?sessionId=")
    assert session.findings == []
