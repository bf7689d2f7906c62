"""One URL, either HTTP transport: Streamable HTTP first, legacy HTTP+SSE if that is refused.

The spec's backwards-compatibility recipe for clients (basic/transports,
2025-03-26 on): POST the initialize request to the URL; if the server answers
400, 404 or 405, GET the same URL and expect an SSE stream whose first event is
``endpoint`` — an old HTTP+SSE server — and use that transport from then on.
:class:`AutoHttpTransport` does exactly that, and each step shows in the
transcript (the refused POST, a ``fallback`` event, the GET, the ``endpoint``).
"""

from __future__ import annotations

from typing import Any, Literal

from anyio.abc import TaskGroup

from .base import Emit, Transport, TransportClosed, TransportEvent, TransportWrapper
from .http_base import HttpTransportBase
from .sse import SseTransport
from .streamable_http import StreamableHttpTransport

HttpTransportName = Literal["auto", "streamable-http", "sse"]


class AutoHttpTransport(TransportWrapper):
    """Streamable HTTP, switching to :class:`SseTransport` when the initialize POST is refused.

    Takes the options of both transports (``headers``, ``verify``, …).  Until the
    server has answered the initialize request, :attr:`kind` is
    ``"streamable-http"``; after a fallback it is ``"sse"``.  Everything else of
    the transport contract is the active transport's (:class:`TransportWrapper`).
    """

    def __init__(self, url: str, *, default_retry: float = 1.0, max_idle_reconnects: int = 3,
                 endpoint_timeout: float = 10.0, **options: Any) -> None:
        self.url = url
        self._options = options
        self._endpoint_timeout = endpoint_timeout
        self._task_group: TaskGroup | None = None
        self._emit: Emit = lambda event: None
        #: The transport in use.
        self.active: HttpTransportBase = StreamableHttpTransport(
            url, default_retry=default_retry, max_idle_reconnects=max_idle_reconnects,
            on_initialize_rejected=self._fall_back, **options)

    @property
    def inner(self) -> Transport:
        return self.active

    async def start(self, task_group: TaskGroup, emit: Emit) -> None:
        self._task_group, self._emit = task_group, emit
        await self.active.start(task_group, emit)

    async def receive(self) -> bytes:
        while True:
            reading = self.active
            try:
                return await reading.receive()
            except TransportClosed:
                if reading is self.active:
                    raise
                # The Streamable HTTP attempt was retired by a fallback: read the new one.

    async def _fall_back(self, frame: bytes, status: int) -> None:
        """Open the legacy transport on the same URL and send it the initialize frame.

        Runs inside the Streamable HTTP transport's POST task, so that transport is
        closed from a task of its own (its close waits for this task to finish).
        """
        assert self._task_group is not None
        self._emit(TransportEvent(
            "fallback", f"POST initialize was answered {status}: not a Streamable HTTP "
            f"endpoint, so trying the legacy HTTP+SSE transport (GET {self.url})",
            {"status": status}))
        legacy = SseTransport(self.url, endpoint_timeout=self._endpoint_timeout, **self._options)
        await legacy.start(self._task_group, self._emit)
        retired, self.active = self.active, legacy
        await legacy.send(frame)
        self._task_group.start_soon(retired.close)


def http_transport(url: str, transport: HttpTransportName = "auto", **options: Any) -> Transport:
    """A transport for an MCP server at ``url``: ``"auto"``, ``"streamable-http"`` or ``"sse"``.

    Example::

        transport = http_transport("http://127.0.0.1:8000/mcp",
                                   headers={"Authorization": "Bearer s3cret"})
        async with ClientSession(transport) as session:
            await session.connect()

    Options go to the transport (see :class:`StreamableHttpTransport` and
    :class:`SseTransport`).
    """
    factories: dict[str, Any] = {
        "auto": AutoHttpTransport,
        "streamable-http": StreamableHttpTransport,
        "sse": SseTransport,
    }
    try:
        factory = factories[transport]
    except KeyError:
        raise ValueError(f"unknown HTTP transport {transport!r}; choose one of "
                         f"{', '.join(factories)}") from None
    return factory(url, **options)  # type: ignore[no-any-return]
