"""A tiny server built on the official MCP Python SDK (``mcp`` on PyPI), for interop tests.

It is a peer no one here wrote the protocol code of: if mcp_nb and the SDK
disagree about the wire, these tests say so.
"""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("sdk-peer", instructions="Interop peer for mcp_nb's tests.")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Count up to `steps`, reporting progress at each step."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
        await anyio.sleep(0.01)
    return f"counted {steps}"


if __name__ == "__main__":
    server.run("stdio")
