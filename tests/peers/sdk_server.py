"""A tiny server built on the official MCP Python SDK (``mcp`` on PyPI), for interop tests.

It is a peer no one here wrote the protocol code of: if mcp_nb and the SDK
disagree about the wire, these tests say so.

``python sdk_server.py`` serves stdio; ``python sdk_server.py streamable-http
[--json-response]`` and ``python sdk_server.py sse`` serve HTTP on 127.0.0.1, on a
free port that uvicorn announces on stderr ("Uvicorn running on http://…").
"""

from __future__ import annotations

import sys
from typing import Annotated

import anyio
from mcp.server.mcpserver import Context, Elicit, ListRoots, MCPServer, Resolve
from pydantic import BaseModel

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


class Person(BaseModel):
    name: str


def ask_name() -> Elicit[Person]:
    return Elicit("What is your name?", Person)


def ask_roots() -> ListRoots:
    return ListRoots()


@server.tool()
def greet(person: Annotated[Person, Resolve(ask_name)]) -> str:
    """Greet the user, asking for their name first (elicitation; input_required when stateless)."""
    return f"Hello, {person.name}!"


@server.tool()
def count_roots(roots: Annotated[object, Resolve(ask_roots)]) -> str:
    """How many roots the client has (roots/list; input_required when stateless)."""
    return f"{len(roots.roots)} roots"  # type: ignore[attr-defined]


if __name__ == "__main__":
    transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if transport == "streamable-http":
        server.run(transport, host="127.0.0.1", port=0, json_response="--json-response" in sys.argv)
    elif transport == "sse":
        server.run(transport, host="127.0.0.1", port=0)
    else:
        server.run("stdio")
