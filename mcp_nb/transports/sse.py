"""The legacy HTTP+SSE transport (MCP 2024-11-05): a GET stream in, POSTs out.

Rules this module carries out (MCP spec 2024-11-05, basic/transports#http-with-sse):

* the client GETs the SSE endpoint; the server's first event is ``endpoint``,
  whose data is the URI to POST messages to;
* every client message is a POST to that URI; every server message arrives as a
  ``message`` event on the GET stream.

There is no session header, no resumption and no DELETE: the stream *is* the
session, so when it ends the session is over, and closing it is the shutdown.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import anyio
import httpx
from anyio.abc import TaskStatus

from ..i18n import _
from .base import TransportClosed
from .http_base import EVENT_STREAM, JSON, HttpStatusError, HttpTransportBase
from .http_messages import Outgoing, content_type, excerpt, path_of
from .sse_events import SseEvent

_STREAM = "SSE stream"


class SseTransport(HttpTransportBase):
    """An MCP client transport for servers that still speak HTTP+SSE (2024-11-05).

    Example::

        async with ClientSession(SseTransport("http://127.0.0.1:3001/sse")) as session:
            await session.connect()

    ``endpoint_timeout`` bounds the wait for the ``endpoint`` event.  The other
    options are those of :class:`~mcp_nb.transports.http_base.HttpTransportBase`.
    """

    kind = "sse"

    def __init__(self, url: str, *, endpoint_timeout: float = 10.0, **options: Any) -> None:
        super().__init__(url, **options)
        self.endpoint_timeout = endpoint_timeout
        #: Where messages are POSTed, as the server's ``endpoint`` event said.
        self.endpoint: str | None = None

    async def _connect(self) -> None:
        assert self._tasks is not None
        await self._tasks.start(self._listen)

    async def _listen(self, *, task_status: TaskStatus[None]) -> None:
        """GET the stream, wait for ``endpoint``, then deliver ``message`` events until it ends.

        A failure before the endpoint is known raises out of :meth:`start`; after
        that, the end of the stream ends the transport.
        """
        headers = {**self._headers(), "Accept": EVENT_STREAM}
        connected = False
        try:
            async with (self._exchange("GET", self.url, headers, label=_STREAM) as response,
                        contextlib.aclosing(self._events(response)) as events):
                await self._await_endpoint(events)
                task_status.started()
                connected = True
                ending = await self._deliver_messages(events)
                self._stream_ended(_STREAM, ending)
                self._fail(TransportClosed(_("the {ending}; HTTP+SSE cannot resume a stream, "
                                             "so the session is over").format(ending=ending)))
        except Exception as exc:
            if isinstance(exc, TransportClosed):
                error = exc
            elif isinstance(exc, TimeoutError):
                error = TransportClosed(_("GET {url} sent no endpoint event within {seconds}s: "
                                          "not an HTTP+SSE server?").format(
                    url=self.url, seconds=f"{self.endpoint_timeout:g}"))
            elif isinstance(exc, httpx.ConnectError):
                error = TransportClosed(_("could not connect to {url}: {reason}").format(
                    url=self.url, reason=exc))
                error.__cause__ = exc
            else:
                error = TransportClosed(_("{method} {url} failed: {error}").format(
                    method="GET", url=self.url, error=f"{type(exc).__name__}: {exc}"))
                error.__cause__ = exc
            if not connected:
                raise error from None
            self._fail(error)

    async def _events(self, response: httpx.Response) -> AsyncGenerator[SseEvent, None]:
        """The stream's events, once the response is known to be an SSE stream."""
        if not response.is_success or content_type(response) != EVENT_STREAM:
            body = excerpt(await self._reader.body(response, None) or b"")
            raise HttpStatusError(
                _("GET {url} answered {status} {reason} ({kind}), not an SSE stream: "
                  "{body}").format(url=self.url, status=response.status_code,
                                   reason=response.reason_phrase,
                                   kind=content_type(response) or _("no content type"),
                                   body=body or _("(empty body)")),
                status_code=response.status_code)
        async with contextlib.aclosing(self._reader.events(response)) as events:
            async for event in events:
                yield event

    async def _await_endpoint(self, events: AsyncIterator[SseEvent]) -> None:
        """Read the stream up to the ``endpoint`` event, which says where to POST."""
        with anyio.fail_after(self.endpoint_timeout):
            self.endpoint = self._endpoint_from(await self._first_endpoint(events))
        self._event("endpoint", f"the server said to POST messages to {path_of(self.endpoint)}")
        self._stream_opened(_STREAM, f"opened (GET {path_of(self.url)})")

    async def _first_endpoint(self, events: AsyncIterator[SseEvent]) -> str:
        async for event in events:
            if event.event == "endpoint":
                return event.data.decode("utf-8", "replace")
            self._ignored(event)
        raise TransportClosed(f"the stream at {self.url} ended without an endpoint event")

    def _endpoint_from(self, data: str) -> str:
        """The POST URL, resolved against the stream's URL and kept on the same origin.

        The transport sends the caller's headers (credentials) with every POST; an
        endpoint on another origin would hand them to a third party.
        """
        origin = httpx.URL(self.url)
        endpoint = origin.join(data.strip())
        if (endpoint.scheme, endpoint.host, endpoint.port) != (
                origin.scheme, origin.host, origin.port):
            raise TransportClosed(
                f"the endpoint event points to another origin ({endpoint}); refusing to send "
                f"messages, and their headers, anywhere but {origin.copy_with(path='/')}")
        return str(endpoint)

    async def _deliver_messages(self, events: AsyncIterator[SseEvent]) -> str:
        """Pass ``message`` events to the session; returns how the stream ended."""
        try:
            async for event in events:
                if event.event == "message" and event.data:
                    self._deliver(event.data)
                else:
                    self._ignored(event)
        except httpx.TransportError as exc:
            return f"SSE stream broke ({type(exc).__name__}: {exc})"
        return "server closed the SSE stream"

    def _ignored(self, event: SseEvent) -> None:
        self._event("sse event", f"{_STREAM}: ignored an event of type {event.event!r}")

    async def _post(self, outgoing: Outgoing, on_the_wire: anyio.Event) -> None:
        assert self.endpoint is not None
        headers = {**self._headers(), "Content-Type": JSON}
        try:
            async with self._exchange("POST", self.endpoint, headers, label=outgoing.label,
                                      content=outgoing.frame, on_the_wire=on_the_wire) as response:
                # The answer comes on the stream; the POST's own response only says "accepted".
                if not response.is_success:
                    await self._reject(outgoing, response)
        except httpx.HTTPError as exc:
            self._post_failed(outgoing, self.endpoint, exc)
