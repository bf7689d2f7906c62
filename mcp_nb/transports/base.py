"""What a transport is: a mover of framed messages plus a stream of transport events.

A transport knows nothing of JSON-RPC.  It delivers one message frame (bytes)
at a time and reports what happens to the connection itself (process spawned,
stdin closed, SIGTERM, stderr lines …) through an ``emit`` callback, which the
session writes into the transcript.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from anyio.abc import TaskGroup

from ..protocol.errors import McpError


@dataclass(slots=True)
class TransportEvent:
    """Something that happened to the connection rather than a message on it."""

    #: Short machine-readable kind: "spawned", "stdin closed", "SIGTERM", "SIGKILL",
    #: "exited", "group swept", "stderr", "oversized line", "stdout closed"; over HTTP
    #: "http", "stream opened" … and "reissued".  "request failed" fails one request
    #: (``data``: request_id, cause, status, limit, option, size); the session goes on.
    kind: str
    #: Human-readable detail for transcripts and widgets.
    detail: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    #: monotonic clock reading when it happened
    at: float = field(default_factory=time.monotonic)


Emit = Callable[[TransportEvent], None]


class TransportClosed(McpError):
    """The transport cannot carry messages any more (peer gone or closed by us)."""

    def __init__(self, message: str, *, exit_code: int | None = None,
                 stderr_tail: list[str] | None = None) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail or []


class Transport(Protocol):
    """The interface every transport implements."""

    #: Short name for transcripts: "stdio", "memory", "streamable-http", "sse".
    kind: str

    async def start(self, task_group: TaskGroup, emit: Emit) -> None:
        """Connect (spawn, open streams). Background readers run in ``task_group``."""

    async def send(self, frame: bytes) -> None:
        """Send one encoded message. Raises :class:`TransportClosed` if that is impossible."""

    async def receive(self) -> bytes:
        """Next incoming frame. Raises :class:`TransportClosed` when no more will come."""

    async def close(self) -> None:
        """Shut the connection down the transport's proper way. Idempotent."""

    def set_protocol_version(self, version: str) -> None:
        """Told by the session once a version is negotiated (HTTP sends it as a header)."""

    def describe_exit(self) -> TransportClosed:
        """Why the peer is gone (exit code, last stderr lines) as an exception to raise."""
