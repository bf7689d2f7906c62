"""HTTP transports against a server that fails on purpose (tests/peers/http_faults.py).

One error status, one broken or oversized answer fails that request at once,
with the real cause, and the session goes on; an unreachable server ends it.
Also: the GET stream is open before the first request, and a stateless request
whose stream breaks is re-issued as a new request.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import pytest
from http_support import PEERS, ServerProcess, events, http_lines, lab_server

from mcp_nb.client import ClientSession, HttpRequestFailed, ResponseRejected, ServerExited
from mcp_nb.transports import SseTransport, StreamableHttpTransport

pytestmark = pytest.mark.anyio

READY = re.compile(r"listening on (http://\S+)")
#: Far above any wait below: a request that waits for its timeout fails the test.
REQUEST_TIMEOUT = 120
WAIT = 20


@contextlib.contextmanager
def fault_server(era: str) -> Iterator[ServerProcess]:
    server = ServerProcess([sys.executable, str(PEERS / "http_faults.py"), era], READY)
    try:
        yield server
    finally:
        server.stop()


@contextlib.asynccontextmanager
async def session_to(server: ServerProcess, era: str = "handshake",
                     **options: Any) -> AsyncIterator[ClientSession]:
    transport = StreamableHttpTransport(server.ready_text, **options)
    async with ClientSession(transport, timeout=REQUEST_TIMEOUT,
                             max_timeout=REQUEST_TIMEOUT) as session:
        await session.connect(era="stateless" if era == "stateless" else "handshake")
        yield session


async def echo(session: ClientSession, text: str = "still here") -> str:
    return (await session.call_tool("echo", {"text": text})).text


@pytest.fixture(scope="module")
def handshake_server() -> Iterator[ServerProcess]:
    with fault_server("handshake") as server:
        yield server


@pytest.fixture(scope="module")
def stateless_server() -> Iterator[ServerProcess]:
    with fault_server("stateless") as server:
        yield server


async def test_the_get_stream_is_open_before_the_first_request(
        handshake_server: ServerProcess) -> None:
    async with session_to(handshake_server) as session:
        await echo(session)
        seen = json.loads((await session.call_tool("log")).text)
    mine = seen[seen.index("POST initialize"):]
    assert mine[:4] == ["POST initialize", "POST notifications/initialized", "GET",
                        "POST tools/call echo"]
    # And the transcript shows it in that order.
    kinds_and_texts = [(e.kind, e.text or "") for e in session.transcript.events()]
    opened = kinds_and_texts.index(("stream opened", "GET stream: opened (GET /mcp)"))
    first_call = next(i for i, (kind, text) in enumerate(kinds_and_texts)
                      if kind == "http" and "tools/call" in text)
    assert opened < first_call


async def test_an_http_500_fails_that_request_only(handshake_server: ServerProcess) -> None:
    async with session_to(handshake_server) as session:
        with anyio.fail_after(WAIT), pytest.raises(HttpRequestFailed) as info:
            await session.call_tool("http500")
        assert info.value.status == 500 and "HTTP 500" in str(info.value)
        assert "boom: the tool crashed" in str(info.value)
        assert await echo(session) == "still here"


@pytest.mark.parametrize("declared", [True, False])
async def test_a_json_body_over_the_limit_is_not_read_and_fails_its_request(
        handshake_server: ServerProcess, declared: bool) -> None:
    limit = 1 << 20
    async with session_to(handshake_server, max_message_bytes=limit) as session:
        with anyio.fail_after(WAIT), pytest.raises(ResponseRejected) as info:
            await session.call_tool("huge_json", {"bytes": 8 * limit, "declared": declared})
        assert info.value.cause == "too-large" and info.value.option == "max_message_bytes"
        assert info.value.limit == limit and info.value.size is not None
        assert info.value.size > limit if not declared else info.value.size > 8 * limit
        assert f"{limit:,}-byte limit" in str(info.value)
        assert await echo(session) == "still here"


async def test_an_sse_event_over_the_limit_fails_the_request_it_answers(
        handshake_server: ServerProcess) -> None:
    limit = 1 << 20
    async with session_to(handshake_server, max_message_bytes=limit) as session:
        with anyio.fail_after(WAIT), pytest.raises(ResponseRejected) as info:
            await session.call_tool("huge_event", {"bytes": 3 * limit})
        assert info.value.cause == "too-large" and info.value.size > 3 * limit  # type: ignore[operator]
        assert await echo(session) == "still here"


async def test_a_stream_cut_before_its_response_fails_the_request_at_once(
        handshake_server: ServerProcess) -> None:
    async with session_to(handshake_server) as session:
        with anyio.fail_after(WAIT), pytest.raises(HttpRequestFailed) as info:
            await session.call_tool("die")
        assert "before its response" in str(info.value) or "broke" in str(info.value)
        assert info.value.status is None
        assert await echo(session) == "still here"


async def test_a_server_that_dies_mid_stream_fails_the_waiting_request_at_once() -> None:
    with fault_server("handshake") as server:
        async with session_to(server) as session:
            async with anyio.create_task_group() as group:
                failures: list[BaseException] = []

                async def call_hang() -> None:
                    try:
                        await session.call_tool("hang")
                    except Exception as exc:
                        failures.append(exc)

                group.start_soon(call_hang)
                await _until(lambda: any("working" in str(m) for m in session.log_messages))
                server.process.kill()  # the whole server, mid-stream
                with anyio.fail_after(WAIT):
                    while not failures:
                        await anyio.sleep(0.01)
            assert isinstance(failures[0], HttpRequestFailed)
            # Then the next request cannot connect: the session is over, saying why.
            with anyio.fail_after(WAIT), pytest.raises(ServerExited, match="could not connect to"):
                await echo(session)


async def test_a_stateless_request_whose_stream_breaks_is_reissued_with_a_new_id(
        stateless_server: ServerProcess) -> None:
    async with session_to(stateless_server, era="stateless") as session:
        result = await session.call_tool("flaky", {"key": "first"})
        # The answer to the re-issued request, handed to the call under its own id.
        sent = [e for e in session.transcript.filter(direction="send", method="tools/call")]
        assert result.text == f"answered as {sent[-1].id}.reissue-1"
        reissued = events(session, "reissued")
        assert len(reissued) == 1 and f"#{sent[-1].id}.reissue-1" in reissued[0]
        assert await echo(session) == "still here"


async def test_a_stateless_request_that_keeps_breaking_fails_after_its_reissues(
        stateless_server: ServerProcess) -> None:
    async with session_to(stateless_server, era="stateless", max_reissues=2) as session:
        with anyio.fail_after(WAIT), pytest.raises(HttpRequestFailed, match="giving up"):
            await session.call_tool("die")
        assert len(events(session, "reissued")) == 2
        posts = [line for line in http_lines(session, "POST") if "tools/call" in line]
        assert len(posts) == 3


async def test_legacy_sse_caps_an_event_and_fails_the_request_it_answers() -> None:
    with lab_server("--sse") as server:
        url = server.ready_text.replace("/mcp", "/sse")
        async with ClientSession(SseTransport(url, max_message_bytes=2000),
                                 timeout=REQUEST_TIMEOUT) as session:
            await session.connect()
            with anyio.fail_after(WAIT), pytest.raises(ResponseRejected) as info:
                await session.call_tool("echo", {"text": "y" * 5000})
            assert info.value.cause == "too-large" and info.value.limit == 2000
            assert (await session.call_tool("echo", {"text": "short"})).text == "short"


async def _until(condition: Any, timeout: float = WAIT) -> None:
    with anyio.fail_after(timeout):
        while not condition():
            await anyio.sleep(0.01)
