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
"""

from __future__ import annotations

import contextlib
import json
import math
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any

import anyio
import httpx
from anyio.abc import TaskGroup, TaskStatus
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ..auth.errors import AuthorizationFailed
from ..i18n import _
from ..protocol.envelope import DEFAULT_MAX_MESSAGE_BYTES
from ..protocol.tool_headers import HeaderAnnotation, param_headers
from ..protocol.versions import VERSIONS
from .base import Emit, Transport, TransportClosed, TransportEvent
from .http_messages import (
    Outgoing,
    content_type,
    excerpt,
    json_rpc_message,
    path_of,
    shown_headers,
)
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


class HttpTransportBase(Transport):
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
        self.url = str(parsed)
        self.headers = dict(headers or {})
        self.verify = verify
        self.timeout = timeout
        self.close_grace = close_grace
        self.max_message_bytes = max_message_bytes
        self.auth = auth
        self._reader = ResponseReader(max_message_bytes, self._event)  # start() makes its own
        self._client = client
        self._owns_client = client is None
        self._custom_header_names = {name.lower() for name in self.headers}
        self._emit: Emit = lambda event: None
        self._protocol_version: str | None = None
        #: Set by Streamable HTTP once the server assigns one.
        self.session_id: str | None = None
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
        # Tool name → its x-mcp-header annotations (set_param_headers).
        self._param_annotations: dict[str, tuple[HeaderAnnotation, ...]] = {}

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

    def set_param_headers(self, tool: str, annotations: Sequence[HeaderAnnotation]) -> None:
        """Told by the session which arguments of ``tool`` travel as ``Mcp-Param-*`` headers.

        2026-07-28 (SEP-2243): each stateless ``tools/call`` of ``tool`` then
        mirrors those arguments (see :mod:`mcp_nb.protocol.tool_headers`).
        """
        if annotations:
            self._param_annotations[tool] = tuple(annotations)
        else:
            self._param_annotations.pop(tool, None)

    def _param_headers(self, outgoing: Outgoing) -> dict[str, str]:
        annotations = (self._param_annotations.get(outgoing.name or "")
                       if outgoing.method == "tools/call" else None)
        if not annotations:
            return {}
        params = json.loads(outgoing.frame).get("params") or {}
        return param_headers(annotations, params.get("arguments"))

    def set_protocol_version(self, version: str) -> None:
        """Remember the negotiated version for the ``MCP-Protocol-Version`` header.

        Only revisions that define the header (2025-06-18 on) send it; older
        servers never heard of it.
        """
        info = VERSIONS.get(version)
        self._protocol_version = version if info is not None and info.http_version_header else None

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

    def _headers(self) -> dict[str, str]:
        """Headers every request carries: the caller's, then the session's."""
        headers = dict(self.headers)
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self._protocol_version is not None:
            headers["MCP-Protocol-Version"] = self._protocol_version
        return headers

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

    def _unreachable(self, method: str, url: str, exc: httpx.HTTPError) -> None:
        """The server cannot be reached at all: the transport ends."""
        if isinstance(exc, httpx.ConnectError):
            text = _("could not connect to {url}: {reason}").format(url=url, reason=exc)
        else:
            text = _("{method} {url} failed: {error}").format(
                method=method, url=url, error=f"{type(exc).__name__}: {exc}")
        self._event("http failed", text)
        error = TransportClosed(text)
        error.__cause__ = exc
        self._fail(error)

    def _post_failed(self, outgoing: Outgoing, url: str, exc: httpx.HTTPError) -> None:
        """A POST broke: unreachable ends the transport, anything else fails its request only."""
        if isinstance(exc, httpx.ConnectError) or outgoing.kind != "request":
            self._unreachable("POST", url, exc)
            return
        if isinstance(exc, AuthorizationFailed):  # a refusal, not a broken exchange
            self._request_failed(outgoing.id, _("authorization failed: {error}").format(
                error=exc))
            return
        self._request_failed(outgoing.id, _("POST {path} broke before the answer: {error}").format(
            path=path_of(url), error=f"{type(exc).__name__}: {exc}"))

    def _request_failed(self, request_id: str | int | None, detail: str, *,
                        status: int | None = None) -> None:
        """One request's exchange failed at the HTTP level: the session fails that request."""
        self._event("request failed", detail, request_id=request_id, cause="http-error",
                    status=status, limit=None, option=None, size=None)

    def _stream_opened(self, label: str, detail: str, kind: str = "stream opened") -> None:
        self._open_streams.add(label)
        self._event(kind, f"{label}: {detail}")

    def _stream_ended(self, label: str, detail: str) -> None:
        if label in self._open_streams and not self._closing:
            self._open_streams.discard(label)
            self._event("stream closed", f"{label}: {detail}")

    async def _refuse_stateless(self, outgoing: Outgoing, response: httpx.Response) -> None:
        """An error status for a stateless-era request: hand the server's answer on.

        A stateless server explains a 4xx with a JSON-RPC error (-32022, -32020,
        -32601 …), which the session judges like any answer.  A body that does
        not answer the request (an old server's plain 400, say) is reported as a
        ``request refused`` event for the session to fail that one request with:
        the era probe must see it as an answer, not as a broken connection.
        """
        body = await self._reader.body(response, outgoing) or b""
        status = f"{response.status_code} {response.reason_phrase}"
        self._event("rejected", f"{outgoing.label}: {status}: {excerpt(body) or '(empty body)'}",
                    status=response.status_code)
        message = json_rpc_message(body)
        if outgoing.is_answered_by(message):
            self._deliver(body)
            return
        error = message.get("error") if message is not None else None
        self._event("request refused", f"{outgoing.label} got no JSON-RPC answer ({status})",
                    id=outgoing.id, status=response.status_code,
                    error=error if isinstance(error, dict) else None, body=excerpt(body))

    async def _reject(self, outgoing: Outgoing, response: httpx.Response) -> None:
        """An error status: show the server's words, and fail a request left unanswered.

        The body is passed on when it is a JSON-RPC message (the spec lets a server
        explain a refusal with an error response that has no id), so the transcript
        shows what the server said.  A request whose refusal did not answer it
        fails at once, with the status; the session goes on.
        """
        body = await self._reader.body(response, None) or b""
        status = f"{response.status_code} {response.reason_phrase}"
        self._event("rejected", f"{outgoing.label}: {status}: {excerpt(body) or '(empty body)'}",
                    status=response.status_code)
        message = json_rpc_message(body)
        if message is not None:
            self._deliver(body)
        if outgoing.kind != "request" or outgoing.is_answered_by(message):
            return
        hint = ""
        if response.status_code == 401:
            hint = (" The server wants authorization: connect with an OAuth client, "
                    "auth=mcp_nb.auth.OAuth() (docs/authorization.md), or pass a token you "
                    "hold as headers={'Authorization': 'Bearer …'}.")
        elif response.status_code == 403:
            hint = " The server refused this client: check the credentials and the Origin."
        self._request_failed(outgoing.id, f"the server answered {outgoing.label} with HTTP "
                             f"{status}: {excerpt(body) or '(empty body)'}.{hint}",
                             status=response.status_code)


def _body_sent_tracer(on_the_wire: anyio.Event) -> Callable[[str, dict[str, Any]], Awaitable[None]]:
    """An httpcore ``trace`` hook that reports when the request body has been sent."""

    async def trace(name: str, info: dict[str, Any]) -> None:
        if name.endswith("send_request_body.complete"):
            on_the_wire.set()

    return trace
