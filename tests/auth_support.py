"""Using the lab as an OAuth-protected MCP server: connect, list the tools, call ``add``."""

from __future__ import annotations

from typing import Any

import anyio
from http_support import lab_server

from mcp_nb.auth import OAuth
from mcp_nb.client import ClientSession
from mcp_nb.transports import http_transport


async def use(url: str, auth: OAuth | None, *, era: str = "handshake", calls: int = 1
              ) -> list[str]:
    """Connect, list the tools, call ``add`` ``calls`` times; the tool names."""
    transport = http_transport(url, "streamable-http", auth=auth)
    async with ClientSession(transport, timeout=30) as session:
        if era == "handshake":
            await session.connect()
        else:
            await session.connect(era=era)
        names = [tool.name for tool in await session.list_tools()]
        for _ in range(calls):
            result = await session.call_tool("add", {"a": 1, "b": 2})
            assert "3" in str(result.content)
        return names


def run_lab(flags: tuple[str, ...], auth: OAuth | None, **options: Any) -> list[str]:
    """:func:`use` against a lab started with ``--auth`` and ``flags``."""
    with lab_server("--auth", *flags) as lab:
        return anyio.run(lambda: use(lab.ready_text, auth, **options))
