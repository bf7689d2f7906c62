"""What the two HTTP transports share: one httpx client, ordered POSTs, one inbox, honest events.

Streamable HTTP (:mod:`.streamable_http`) and the legacy HTTP+SSE transport
(:mod:`.sse`) differ in where messages go and where they come from, not in how a
message leaves, how a frame reaches the session, or what the transcript says
about the HTTP underneath.  Those parts live here:

* **Order.**  :meth:`HttpTransportBase.send` only queues the frame.  One sender
  task POSTs the frames in the order the session sent them, each as soon as the
  previous POST's body is on the wire (httpcore's ``trace`` extension says when),
  while the responses are read by separate tasks.  So ``notifications/cancelled``
  never overtakes the request it cancels, and a long SSE response never holds up
  the next message.
* **One inbox.**  Frames from every response and stream go into one memory
  stream, so the session's single reader sees them in arrival order.  A fatal
  error travels the same queue, behind the frames that came before it.
* **Events.**  Every HTTP exchange becomes one transcript event: method, path,
  the headers that matter, status.  Headers the caller supplied are shown as
  ``Name: <redacted>``: transcripts are made to be shared, credentials are not.

Two more shared parts have modules of their own, mixed into
:class:`HttpTransportBase` (so a request's round trip calls them directly):
the headers every request carries (:mod:`.http_headers`), and what an
exchange that went wrong means for the session (:mod:`.http_failures`).
"""

from __future__ import annotations

import contextlib
import math
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import anyio
import httpx
from anyio.abc import TaskGroup, TaskStatus
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ..i18n import _
from ..protocol.envelope import DEFAULT_MAX_MESSAGE_BYTES
from .base import Emit, Transport, TransportClosed, TransportEvent
from .http_failures import ExchangeFailures
from .http_headers import RequestHeaders
from .http_messages import Outgoing, content_type, path_of, shown_headers
from .http_reading import ResponseReader

JSON = "application/json"
EVENT_STREAM = "text/event-stream"

#: ``read=None``: an SSE stream may stay quiet for minutes, and how long to wait
#: for an answer is the session's decision (request timeouts), not the socket's.
DEFAULT_HTTP_TIMEOUT = httpx.Timeout(10.0, read=None)


class HttpStatusError(TransportClosed):
    """The server refused the connection itself at the HTTP level (the legacy SSE stream's GET).

    An error status for one request fails only that request (a ``request failed``
    event, :class:`~mcp_nb.client.HttpRequestFailed` in the session).
    """

    def __init__(self, message: str, *, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


class HttpTransportBase(RequestHeaders, ExchangeFailures, Transport):
    """Common machinery of :class:`StreamableHttpTransport` and :class:`SseTransport`.

    ``headers`` are sent with every request (e.g. ``{"Authorization": "Bearer …"}``)
    and shown redacted in the transcript.  ``verify`` is httpx's TLS setting: on by
    default; an :class:`ssl.SSLContext` trusts a private CA.
    ``client`` lets you bring a configured :class:`httpx.AsyncClient` (proxies,
    mounts); the transport then leaves it open.  ``close_grace`` bounds how long
    :meth:`close` waits for messages already queued to be accepted.
    ``auth`` is an :class:`httpx.Auth` applied to every request, e.g.
    :class:`mcp_nb.auth.OAuth` (docs/authorization.md).
    ``max_message_bytes`` bounds one incoming message: a response body or an SSE
    event is read no further (docs/transports.md).
    """

    kind = "http"
    #: No pipe to read frames in place of, and no stderr to show.
    lacks = frozenset({"take_frames_inline", "stderr_tail"})
    #: Set per instance; a plain attribute here so that it can be (the contract's is read-only).
    auth: httpx.Auth | None = None

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        verify: bool | ssl.SSLContext = True,
        timeout: httpx.Timeout | float | None = DEFAULT_HTTP_TIMEOUT,
        client: httpx.AsyncClient | None = None,
        close_grace: float = 2.0,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        auth: httpx.Auth | None = None,
    ) -> None:
        parsed = httpx.URL(url)
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise ValueError(f"not an http(s) URL: {url!r} (e.g. http://127.0.0.1:8000/mcp)")
        super().__init__(headers)
        self.url = str(parsed)
        self.verify = verify
        self.timeout = timeout
        self.close_grace = close_grace
        self.max_message_bytes = max_message_bytes
        self.auth = auth
        self._reader = ResponseReader(max_message_bytes, self._event)  # start() makes its own
        self._client = client
        self._owns_client = client is None
        self._emit: Emit = lambda event: None
        self._failure: TransportClosed | None = None
        self._closing = False
        self._open_streams: set[str] = set()
        # One event per notification/response POST still waiting for its status.
        self._unsettled: set[anyio.Event] = set()
        # Created in start(): anyio objects belong to a running event loop.
        self._inbox_in: MemoryObjectSendStream[bytes | TransportClosed] | None = None
        self._inbox_out: MemoryObjectReceiveStream[bytes | TransportClosed] | None = None
        self._outbox_in: MemoryObjectSendStream[bytes] | None = None
        self._tasks: TaskGroup | None = None
        self._tasks_done: anyio.Event | None = None
        self._sender_done: anyio.Event | None = None
        self._closed: anyio.Event | None = None

    # -- the Transport protocol ------------------------------------------------------------

    async def start(self, task_group: TaskGroup, emit: Emit) -> None:
        self._emit = emit
        self._reader = ResponseReader(self.max_message_bytes, self._event)
        self._closed = anyio.Event()
        self._tasks_done = anyio.Event()
        self._sender_done = anyio.Event()
        if self._client is None:
            self._client = httpx.AsyncClient(verify=self.verify, timeout=self.timeout)
        self._inbox_in, self._inbox_out = anyio.create_memory_object_stream[
            "bytes | TransportClosed"](math.inf)
        self._outbox_in, outbox_out = anyio.create_memory_object_stream[bytes](math.inf)
        # A task group of our own inside the session's, so close() can stop every
        # stream at once (and wait for them) without touching the session's tasks.
        self._tasks = await task_group.start(self._own_tasks)
        self._tasks.start_soon(self._send_in_order, outbox_out)
        try:
            await self._connect()
        except BaseException:
            await self.close()  # no task or connection may outlive a failed start
            raise

    async def send(self, frame: bytes) -> None:
        self.send_nowait(frame)

    def send_nowait(self, frame: bytes) -> bool:
        """Queue ``frame`` for the sender task: never waits (the outbox is unbounded)."""
        if self._failure is not None:
            raise self._failure
        if self._outbox_in is None or self._closing:
            raise TransportClosed(_("the {kind} transport to {url} is closed").format(
                kind=self.kind, url=self.url))
        self._outbox_in.send_nowait(frame)
        return True

    async def receive(self) -> bytes:
        if self._inbox_out is None:
            raise TransportClosed(_("the transport was not started"))
        try:
            item = await self._inbox_out.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._inbox_out.close()  # drained and ended: nothing more can come
            raise self.describe_exit() from None
        if isinstance(item, TransportClosed):
            raise item
        return item

    def describe_exit(self) -> TransportClosed:
        return self._failure or TransportClosed(
            _("the {kind} transport to {url} is closed").format(kind=self.kind, url=self.url))

    def describe_target(self) -> dict[str, Any]:
        return {"kind": self.kind, "url": self.url, "headers": dict(self.headers)}

    async def close(self) -> None:
        """Let queued messages go out, end the session the transport's way, close connections.

        Shielded from cancellation: a half-closed transport would leave the server
        holding a session and streams nobody reads.
        """
        if self._closing:
            if self._closed is not None:
                await self._closed.wait()
            return
        self._closing = True
        if self._tasks is None or self._closed is None:
            return
        assert self._outbox_in is not None and self._inbox_in is not None
        with anyio.CancelScope(shield=True):
            try:
                self._outbox_in.close()
                with anyio.move_on_after(self.close_grace):
                    assert self._sender_done is not None
                    await self._sender_done.wait()
                    for settled in list(self._unsettled):
                        await settled.wait()
                await self._end_session()
                # Reported here, not by the stream tasks: once the session is ending, which
                # side happened to close a stream first is a race, not news.
                for label in sorted(self._open_streams):
                    self._event("stream closed", _("{stream}: closed with the session").format(
                        stream=label))
                self._open_streams.clear()
                self._tasks.cancel_scope.cancel()
                assert self._tasks_done is not None
                await self._tasks_done.wait()
                if self._owns_client and self._client is not None:
                    await self._client.aclose()
                    self._event("connections closed",
                                _("closed the {kind} transport's HTTP connections").format(
                                    kind=self.kind))
            finally:
                self._inbox_in.close()
                assert self._inbox_out is not None
                if not self._inbox_out.statistics().current_buffer_used:
                    # Nothing left for the session to read: the receiving end goes too
                    # (else a reader drains what is left and closes it in receive()).
                    self._inbox_out.close()
                self._closed.set()

    # -- hooks for the concrete transports -------------------------------------------------

    async def _connect(self) -> None:
        """Open whatever must exist before the first message can be sent."""

    async def _post(self, outgoing: Outgoing, on_the_wire: anyio.Event) -> None:
        """POST one message; set ``on_the_wire`` once its body has been sent."""
        raise NotImplementedError

    async def _end_session(self) -> None:
        """Tell the server the session is over, if the transport has a way to."""

    async def _before_next(self, outgoing: Outgoing) -> None:
        """Wait, once ``outgoing`` is on the wire, until the next message may go."""

    # -- machinery ---------------------------------------------------------------------------

    async def _own_tasks(self, *, task_status: TaskStatus[TaskGroup]) -> None:
        assert self._tasks_done is not None
        try:
            async with anyio.create_task_group() as tasks:
                task_status.started(tasks)
                await anyio.sleep_forever()
        finally:
            self._tasks_done.set()

    def _spawn(self, func: Callable[..., Awaitable[None]], *args: Any) -> None:
        """Run ``func`` as one of the transport's tasks; a failure ends the transport, not
        the session's task group."""
        assert self._tasks is not None
        self._tasks.start_soon(self._guarded, func, *args)

    async def _guarded(self, func: Callable[..., Awaitable[None]], *args: Any) -> None:
        try:
            await func(*args)
        except Exception as exc:
            error = TransportClosed(_("the {kind} transport failed: {error}").format(
                kind=self.kind, error=f"{type(exc).__name__}: {exc}"))
            error.__cause__ = exc
            self._fail(error)

    async def _send_in_order(self, outbox: MemoryObjectReceiveStream[bytes]) -> None:
        """POST queued frames one after another, each once the previous one is on the wire."""
        assert self._sender_done is not None
        try:
            async with outbox:
                async for frame in outbox:
                    outgoing = Outgoing.read(frame)
                    on_the_wire = anyio.Event()
                    self._spawn(self._post_and_settle, outgoing, on_the_wire)
                    await on_the_wire.wait()
                    await self._before_next(outgoing)
        finally:
            self._sender_done.set()

    async def _post_and_settle(self, outgoing: Outgoing, on_the_wire: anyio.Event) -> None:
        # Notifications and responses are settled by their status (202): close() waits
        # for those so a last notifications/cancelled still reaches the server.
        # Requests settle when answered, which close() does not wait for.
        settled = anyio.Event()
        if outgoing.kind != "request":
            self._unsettled.add(settled)
        try:
            await self._post(outgoing, on_the_wire)
        finally:
            on_the_wire.set()
            settled.set()
            self._unsettled.discard(settled)

    @contextlib.asynccontextmanager
    async def _exchange(self, method: str, url: str, headers: dict[str, str], *,
                        label: str = "", content: bytes | None = None,
                        on_the_wire: anyio.Event | None = None) -> AsyncIterator[httpx.Response]:
        """One HTTP request with a streamed response, reported as an ``http`` event."""
        assert self._client is not None
        extensions = {"trace": _body_sent_tracer(on_the_wire)} if on_the_wire else None
        async with self._client.stream(method, url, headers=headers, content=content,
                                       extensions=extensions,
                                       auth=self.auth or httpx.USE_CLIENT_DEFAULT) as response:
            parts = [method, path_of(url)]
            if label:
                parts.append(label)
            shown = shown_headers(headers, self._custom_header_names)
            if shown:
                parts.append("[" + ", ".join(shown) + "]")
            outcome = f"{response.status_code} {response.reason_phrase}"
            if response.is_success and content_type(response):
                outcome += f", {content_type(response)}"
            self._event("http", f"{' '.join(parts)} → {outcome}", method=method, url=url,
                        status=response.status_code, headers=shown)
            yield response

    def _event(self, kind: str, detail: str, **data: Any) -> None:
        self._emit(TransportEvent(kind, detail, data))

    def _deliver(self, frame: bytes) -> None:
        """Hand one incoming message to the session's reader."""
        assert self._inbox_in is not None
        # After close() nobody reads any more: a late frame is simply dropped.
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._inbox_in.send_nowait(frame)

    def _fail(self, error: TransportClosed) -> None:
        """End the transport with ``error``; the reader raises it after the frames before it."""
        if self._failure is not None or self._closing or self._inbox_in is None:
            return
        self._failure = error
        self._inbox_in.send_nowait(error)

    def _stream_opened(self, label: str, detail: str, kind: str = "stream opened") -> None:
        self._open_streams.add(label)
        self._event(kind, f"{label}: {detail}")

    def _stream_ended(self, label: str, detail: str) -> None:
        if label in self._open_streams and not self._closing:
            self._open_streams.discard(label)
            self._event("stream closed", f"{label}: {detail}")


def _body_sent_tracer(on_the_wire: anyio.Event) -> Callable[[str, dict[str, Any]], Awaitable[None]]:
    """An httpcore ``trace`` hook that reports when the request body has been sent."""

    async def trace(name: str, info: dict[str, Any]) -> None:
        if name.endswith("send_request_body.complete"):
            on_the_wire.set()

    return trace
