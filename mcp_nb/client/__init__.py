"""The async MCP client: sessions, their errors and their transcript.

Example (against the bundled lab server)::

    import anyio
    from mcp_nb.client import ClientSession, lab_command
    from mcp_nb.transports import StdioTransport

    async def main():
        async with ClientSession(StdioTransport(lab_command())) as session:
            await session.connect()
            result = await session.call_tool("add", {"a": 1, "b": 2})
            print(result.text)

    anyio.run(main)
"""

from __future__ import annotations

import sys

from .errors import (
    EraProbeFailed,
    HttpRequestFailed,
    InputRequestFailed,
    InvalidResult,
    RequestCancelled,
    RequestFailed,
    RequestRefused,
    RequestTimeout,
    ResponseRejected,
    ServerError,
    ServerExited,
    SessionClosed,
)
from .session import DEFAULT_MAX_TIMEOUT, DEFAULT_TIMEOUT, ClientSession, EraStep, Subscription
from .tasks import Task, TaskCancelled, TaskFailed
from .transcript import DEFAULT_TRANSCRIPT_LIMIT, Transcript, TranscriptEntry


def lab_command(*flags: str) -> list[str]:
    """argv that starts the bundled lab server with the given fault-knob flags."""
    return [sys.executable, "-m", "mcp_nb.lab", *flags]


__all__ = [
    "DEFAULT_MAX_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "DEFAULT_TRANSCRIPT_LIMIT",
    "ClientSession",
    "EraProbeFailed",
    "EraStep",
    "HttpRequestFailed",
    "InputRequestFailed",
    "InvalidResult",
    "RequestCancelled",
    "RequestFailed",
    "RequestRefused",
    "RequestTimeout",
    "ResponseRejected",
    "ServerError",
    "ServerExited",
    "SessionClosed",
    "Subscription",
    "Task",
    "TaskCancelled",
    "TaskFailed",
    "Transcript",
    "TranscriptEntry",
    "lab_command",
]
