"""One limit on incoming messages: big answers pass, too-big ones fail their request at once."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from mcp_nb.client import ClientSession, ResponseRejected
from mcp_nb.protocol.envelope import DEFAULT_MAX_MESSAGE_BYTES
from mcp_nb.transports import StdioTransport

pytestmark = pytest.mark.anyio

BIG_ANSWERS = [sys.executable,
               str(Path(__file__).parent.parent / "benchmarks" / "limits_server.py")]


async def test_a_10_megabyte_tool_result_passes_with_the_default_settings() -> None:
    async with ClientSession(StdioTransport(BIG_ANSWERS)) as session:
        await session.connect()
        result = await session.call_tool("big", {"bytes": 10_000_000})
        assert len(result.text) == 10_000_000
        assert session.findings == []


@pytest.mark.parametrize("id_last", [False, True])
async def test_a_result_over_the_limit_fails_its_request_at_once_and_names_the_option(
        id_last: bool) -> None:
    limit = 1024 * 1024
    transport = StdioTransport(BIG_ANSWERS, max_message_bytes=limit)
    async with ClientSession(transport, timeout=60) as session:
        await session.connect()
        with anyio.fail_after(30):  # far below the request's own timeout
            with pytest.raises(ResponseRejected) as info:
                await session.call_tool("big", {"bytes": 3 * limit, "id_last": id_last})
        assert info.value.cause == "too-large" and info.value.request_id == 2
        assert info.value.limit == limit and info.value.option == "max_message_bytes"
        assert info.value.size is not None and info.value.size > 3 * limit
        message = str(info.value)
        assert f"{limit:,}-byte limit" in message and "max_message_bytes" in message
        # The session goes on.
        assert len((await session.call_tool("big", {"bytes": 10})).text) == 10
    assert [f.rule.id for f in session.findings] == ["message-too-large"]


def test_the_default_limit_is_one_the_docs_explain() -> None:
    guide = (Path(__file__).parent.parent / "docs" / "transports.md").read_text()
    assert f"{DEFAULT_MAX_MESSAGE_BYTES // 2**20} MiB" in guide and "max_message_bytes" in guide


async def test_a_stderr_flood_is_kept_bounded_and_counted() -> None:
    transport = StdioTransport(BIG_ANSWERS, stderr_lines=100, stderr_line_bytes=50)
    async with ClientSession(transport) as session:
        await session.connect()
        await session.call_tool("stderr", {"lines": 20_000, "line_bytes": 80})
        log = transport.stderr
        with anyio.fail_after(30):  # stderr is its own pipe: it may trail the answer
            while log.total_lines < 20_000:
                await anyio.sleep(0.01)
    assert len(log.lines) == 100 and log.evicted_lines == 19_900
    assert log.cut_lines == 20_000 and log.cut_bytes == 20_000 * (79 - 50)
    assert log.lines[-1] == "e" * 50 + " … (29 more bytes cut)"
