"""The stateless era against peers no one here wrote.

* the official MCP Python SDK's server (dual-era): both eras over stdio and
  Streamable HTTP, including multi-round-trip input (elicitation, roots) in the
  stateless era and the same tools answered by server→client requests in the
  handshake era;
* ``@modelcontextprotocol/server-everything`` (handshake era only): ``era="auto"``
  must probe, fall back to initialize and work; ``era="stateless"`` must refuse
  clearly.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from http_support import PEERS, ServerProcess, events, everything_http, install_everything

from mcp_nb.client import ClientSession
from mcp_nb.client.errors import EraProbeFailed
from mcp_nb.protocol import State
from mcp_nb.protocol.models import DiscoverResult, InitializeResult
from mcp_nb.protocol.versions import Era
from mcp_nb.transports import StdioTransport, http_transport

pytest.importorskip("mcp.server.mcpserver", reason="the official MCP SDK (mcp>=2) is needed")

pytestmark = [pytest.mark.anyio, pytest.mark.interop, pytest.mark.timeout(120)]

SDK = [sys.executable, str(PEERS / "sdk_server.py")]
UVICORN_READY = re.compile(r"Uvicorn running on (http://\S+)")


def answer_name(params: dict[str, Any]) -> dict[str, Any]:
    assert params["message"] == "What is your name?"
    return {"action": "accept", "content": {"name": "Ada"}}


def roots(params: dict[str, Any]) -> dict[str, Any]:
    return {"roots": [{"uri": "file:///srv/a", "name": "a"}, {"uri": "file:///srv/b"}]}


def session_for(transport: Any) -> ClientSession:
    return ClientSession(transport, on_elicitation=answer_name, on_roots=roots, probe_timeout=10)


def era_lines(session: ClientSession) -> list[str]:
    return [f"{step.kind}: {step.detail}" for step in session.era_steps]


@pytest.fixture(scope="module")
def sdk_http() -> Iterator[str]:
    server = ServerProcess([*SDK, "streamable-http"], UVICORN_READY)
    try:
        yield f"{server.ready_text}/mcp"
    finally:
        server.stop()


@pytest.fixture(scope="module")
def everything() -> Path:
    return install_everything()


@pytest.mark.parametrize("era", ["stateless", "auto"])
async def test_sdk_over_stdio_in_the_stateless_era(era: str) -> None:
    progress: list[float] = []
    async with session_for(StdioTransport(SDK)) as session:
        discover = await session.connect(era=era)
        assert isinstance(discover, DiscoverResult) and "2026-07-28" in discover.supportedVersions
        assert session.era is Era.STATELESS and session.state is State.OPERATING
        assert session.negotiated_version == "2026-07-28"
        assert session.server_info is not None and session.server_info.name == "sdk-peer"
        assert (await session.call_tool("add", {"a": 20, "b": 22})).text == "42"
        done = await session.call_tool("count", {"steps": 3},
                                       on_progress=lambda p, t, m: progress.append(p))
        assert done.text == "counted 3"
        # Multi round trip: input_required, answered by the handlers, retried with a new id.
        assert (await session.call_tool("greet", {})).text == "Hello, Ada!"
        assert (await session.call_tool("count_roots", {})).text == "2 roots"
    assert progress == [1, 2, 3]
    assert session.findings == []
    assert session.initialize_result is None
    assert [e.method for e in session.transcript.entries if e.direction == "send"][:1] == [
        "server/discover"]
    assert "initialize" not in {e.method for e in session.transcript.entries}
    calls = [e for e in session.transcript.entries
             if e.direction == "send" and e.method == "tools/call"]
    greet = [e for e in calls if e.message["params"]["name"] == "greet"]
    assert len(greet) == 2 and greet[0].id != greet[1].id
    retry = greet[1].message["params"]
    assert retry["inputResponses"] and list(retry["inputResponses"].values()) == [
        {"action": "accept", "content": {"name": "Ada"}}]
    assert "requestState" in retry or "requestState" not in greet[0].message["params"]
    for entry in calls:
        meta = entry.message["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        assert meta["io.modelcontextprotocol/clientCapabilities"] == {"elicitation": {},
                                                                      "roots": {}}
        assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "mcp_nb"
    assert [k for k, _ in (line.split(":", 1) for line in era_lines(session))] == [
        "probe", "verdict", "adopt"]


async def test_sdk_over_stdio_in_the_handshake_era_uses_server_requests() -> None:
    async with session_for(StdioTransport(SDK)) as session:
        result = await session.connect()
        assert isinstance(result, InitializeResult) and session.era is Era.HANDSHAKE
        assert (await session.call_tool("greet", {})).text == "Hello, Ada!"
        assert (await session.call_tool("count_roots", {})).text == "2 roots"
    received = [e.method for e in session.transcript.entries
                if e.direction == "recv" and e.kind == "request"]
    assert received == ["elicitation/create", "roots/list"]
    assert session.era_steps == [] and session.findings == []


@pytest.mark.parametrize("era", ["stateless", "auto"])
async def test_sdk_over_streamable_http_in_the_stateless_era(sdk_http: str, era: str) -> None:
    async with session_for(http_transport(sdk_http)) as session:
        await session.connect(era=era)
        assert session.era is Era.STATELESS
        assert (await session.call_tool("add", {"a": 1, "b": 2})).text == "3"
        assert (await session.call_tool("greet", {})).text == "Hello, Ada!"
    http = events(session, "http")
    posts = [line for line in http if line.startswith("POST")]
    assert posts and all("MCP-Protocol-Version: 2026-07-28" in line for line in posts)
    assert all("Mcp-Session-Id" not in line for line in http)
    assert any("Mcp-Method: tools/call, Mcp-Name: greet" in line for line in posts)
    assert not any(line.startswith(("GET", "DELETE")) for line in http)
    assert session.findings == []


async def test_sdk_over_streamable_http_in_the_handshake_era(sdk_http: str) -> None:
    async with session_for(http_transport(sdk_http)) as session:
        await session.connect(era="handshake")
        assert (await session.call_tool("greet", {})).text == "Hello, Ada!"
    assert events(session, "session id") and session.era is Era.HANDSHAKE


async def test_everything_over_stdio_auto_falls_back_to_initialize(everything: Path) -> None:
    node = shutil.which("node")
    async with session_for(StdioTransport([str(node), str(everything), "stdio"])) as session:
        result = await session.connect(era="auto")
        assert isinstance(result, InitializeResult) and session.era is Era.HANDSHAKE
        assert "hi" in (await session.call_tool("echo", {"message": "hi"})).text
    steps = era_lines(session)
    assert [s.split(":", 1)[0] for s in steps] == ["probe", "verdict", "fallback"]
    assert steps[1].startswith("verdict: handshake")
    sent = [e.method for e in session.transcript.entries if e.direction == "send"]
    assert sent[:3] == ["server/discover", "initialize", "notifications/initialized"]
    assert session.findings == []


async def test_everything_refuses_a_stateless_only_connect(everything: Path) -> None:
    node = shutil.which("node")
    async with session_for(StdioTransport([str(node), str(everything), "stdio"])) as session:
        with pytest.raises(EraProbeFailed, match=r"does not speak the stateless era.*era='auto'"):
            await session.connect(era="stateless")
    assert session.state is State.TERMINATED


async def test_everything_over_http_auto_falls_back(everything: Path) -> None:
    for base in everything_http(everything, "streamableHttp"):
        async with session_for(http_transport(f"{base}/mcp")) as session:
            await session.connect(era="auto")
            assert session.era is Era.HANDSHAKE and session.transport.kind == "streamable-http"
            assert "ok" in (await session.call_tool("echo", {"message": "ok"})).text
        assert events(session, "request refused")  # the probe got a plain 400
        assert events(session, "session id")
    for base in everything_http(everything, "sse"):
        async with session_for(http_transport(f"{base}/sse")) as session:
            await session.connect(era="auto")
            # Two fallbacks: era (discover refused) and transport (initialize POST refused).
            assert session.era is Era.HANDSHAKE and session.transport.kind == "sse"
            assert "ok" in (await session.call_tool("echo", {"message": "ok"})).text
        assert events(session, "fallback")
