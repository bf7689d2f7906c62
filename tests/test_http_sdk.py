"""Interop over HTTP with servers built on the official MCP Python SDK (``mcp`` on PyPI).

The peer script (tests/peers/sdk_server.py) runs the SDK's own Streamable HTTP
transport (SSE responses, and JSON responses) and its legacy HTTP+SSE transport,
each on 127.0.0.1 on a port uvicorn picks and announces.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator

import pytest
from http_support import PEERS, ServerProcess, event_seen, events, http_lines

from mcp_nb.client import ClientSession
from mcp_nb.protocol import SUPPORTED_VERSIONS, VERSIONS, State
from mcp_nb.transports import AutoHttpTransport, StreamableHttpTransport

pytest.importorskip("mcp.server.mcpserver", reason="the official MCP SDK (mcp>=2) is needed")

pytestmark = [pytest.mark.anyio, pytest.mark.interop, pytest.mark.timeout(60)]

UVICORN_READY = re.compile(r"Uvicorn running on (http://\S+)")


def sdk_server(*args: str) -> Iterator[str]:
    server = ServerProcess([sys.executable, str(PEERS / "sdk_server.py"), *args], UVICORN_READY)
    try:
        yield server.ready_text
    finally:
        server.stop()


@pytest.fixture(scope="module")
def sdk_streaming() -> Iterator[str]:
    yield from sdk_server("streamable-http")


@pytest.fixture(scope="module")
def sdk_json() -> Iterator[str]:
    yield from sdk_server("streamable-http", "--json-response")


@pytest.fixture(scope="module")
def sdk_legacy() -> Iterator[str]:
    yield from sdk_server("sse")


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
async def test_every_version_over_streamable_http(sdk_streaming: str, version: str) -> None:
    async with ClientSession(StreamableHttpTransport(f"{sdk_streaming}/mcp")) as session:
        result = await session.connect(version)
        assert result.protocolVersion == version and result.serverInfo.name == "sdk-peer"
        assert (await session.call_tool("add", {"a": 20, "b": 22})).text == "42"
    assert session.findings == [] and session.state is State.TERMINATED
    header = f"MCP-Protocol-Version: {version}"
    assert all((header in line) == VERSIONS[version].http_version_header
               for line in http_lines(session, "POST")[1:])
    assert http_lines(session, "DELETE")[0].endswith("→ 200 OK, application/json")


async def test_progress_and_the_get_stream_with_the_sdk(sdk_streaming: str) -> None:
    progress: list[float] = []
    async with ClientSession(StreamableHttpTransport(f"{sdk_streaming}/mcp")) as session:
        await session.connect()
        counted = await session.call_tool("count", {"steps": 3},
                                          on_progress=lambda p, total, msg: progress.append(p))
        assert counted.text == "counted 3"
        bad = await session.call_tool("add", {"a": "not a number"})
        assert bad.isError is True
        await event_seen(session, "stream opened", "GET stream")
    assert progress == [1, 2, 3] and session.findings == []
    assert "GET stream: opened (GET /mcp)" in events(session, "stream opened")


async def test_json_responses_from_the_sdk(sdk_json: str) -> None:
    async with ClientSession(StreamableHttpTransport(f"{sdk_json}/mcp")) as session:
        await session.connect()
        assert (await session.call_tool("add", {"a": 1, "b": 2})).text == "3"
    calls = [line for line in http_lines(session, "POST") if "tools/call" in line]
    assert calls[0].endswith("→ 200 OK, application/json")
    assert session.findings == []


async def test_auto_falls_back_to_the_sdk_legacy_server(sdk_legacy: str) -> None:
    async with ClientSession(AutoHttpTransport(f"{sdk_legacy}/sse")) as session:
        await session.connect()
        assert session.transport.kind == "sse"
        assert (await session.call_tool("add", {"a": 2, "b": 2})).text == "4"
    assert "fallback" in [e.kind for e in session.transcript.events()]
    assert events(session, "endpoint")[0].startswith("the server said to POST messages to "
                                                     "/messages/?session_id=")
    assert session.findings == []
