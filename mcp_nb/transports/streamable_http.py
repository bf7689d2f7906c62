"""Streamable HTTP transport (MCP 2025-03-26 and later): one endpoint, POST and GET.

Rules this module carries out (MCP spec, basic/transports#streamable-http):

* every message is its own POST, accepting ``application/json`` and
  ``text/event-stream``; a request is answered by one JSON body or by an SSE
  stream that may carry requests and notifications before the response;
  notifications and responses get 202;
* the ``Mcp-Session-Id`` the initialize response carries goes on every later
  request, and so does ``MCP-Protocol-Version`` (from 2025-06-18);
* a GET opens a stream for messages the server starts itself (405: it has none);
  it is opened as soon as the session is established (``notifications/initialized``
  accepted), and the next message waits until it is open, so a server never
  sees the client's first request before the stream it may want to use for it;
* a stream that breaks before its response is resumed with a GET carrying
  ``Last-Event-ID``, after waiting as long as the server's ``retry`` field says;
* 404 to a request carrying the session id means the server ended the session:
  the client must start a new one;
* shutdown: DELETE with the session id (405: the server doesn't allow it), then
  close the connections.

Stateless-era requests (2026-07-28; their ``_meta`` names the version) follow
that revision instead: no session id, ``MCP-Protocol-Version``, ``Mcp-Method``
and ``Mcp-Name`` mirrored from the body, a 4xx explained by a JSON-RPC error in
the body, cancellation by closing the request's response stream rather than by
POSTing ``notifications/cancelled``, and no stream resumption: a response
stream that breaks before its response loses the request, which is re-issued
as a new request with a new id (changelog of 2026-07-28, SEP-2575).

Each HTTP step becomes a transcript event (see :mod:`.http_base`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.lowlevel
import httpx

from ..auth.errors import AuthorizationFailed
from ..i18n import _
from .base import TransportClosed
from .http_base import EVENT_STREAM, JSON, HttpTransportBase
from .http_messages import Outgoing, abbreviate, content_type, json_rpc_message, path_of

#: Statuses of the initialize POST that, per the spec's backwards-compatibility
#: section, suggest an old HTTP+SSE server rather than an error.
LEGACY_STATUSES = frozenset({400, 404, 405})

#: ``(frame, status)`` → retry the initialize frame elsewhere (see :class:`AutoHttpTransport`).
InitializeRejected = Callable[[bytes, int], Awaitable[None]]


class SessionExpired(TransportClosed):
    """HTTP 404 for a request carrying our ``Mcp-Session-Id``: the server ended the session."""

    def __init__(self, session_id: str, method: str) -> None:
        super().__init__(_(
            "the server expired the session: {method} with Mcp-Session-Id {session_id} was "
            "answered 404 Not Found. Open a new session (a new ClientSession with a new "
            "transport to the same URL): it starts over with initialize.").format(
            method=method, session_id=abbreviate(session_id)))
        self.session_id = session_id
        self.status_code = 404


class _SseStream:
    """One logical SSE stream, which may span several connections (resumption)."""

    def __init__(self, label: str, answers: Outgoing | None, retry: float,
                 original: Outgoing | None = None) -> None:
        self.label = label
        #: The request whose response ends the stream; None for the GET stream.
        self.answers = answers
        #: The request as the session sent it, if ``answers`` re-issues it.
        self.original = original or answers
        self.retry = retry
        self.last_event_id: str | None = None
        self.answered = False
        self.connections = 0
        #: Consecutive connections that brought no message; bounds reconnecting.
        self.idle_connections = 0
        #: Why the last connection ended: an error text, or None for a clean end.
        self.broke: str | None = None


class StreamableHttpTransport(HttpTransportBase):
    """An MCP client transport speaking Streamable HTTP to one endpoint URL.

    Example::

        transport = StreamableHttpTransport(
            "http://127.0.0.1:8000/mcp", headers={"Authorization": "Bearer s3cret"})
        async with ClientSession(transport) as session:
            await session.connect()

    ``default_retry`` (seconds) is the wait before resuming a broken stream when
    the server gave no ``retry`` field; ``max_idle_reconnects`` bounds how often in
    a row a stream is reopened without bringing any message.
    ``on_initialize_rejected`` is called instead of failing when the first POST
    gets 400, 404 or 405 (how :class:`AutoHttpTransport` falls back).
    ``get_stream_wait`` bounds how long the first request waits for the GET
    stream to open; ``max_reissues`` how often a stateless request whose stream
    broke is re-issued.  The other options are those of
    :class:`~mcp_nb.transports.http_base.HttpTransportBase`.
    """

    kind = "streamable-http"

    def __init__(self, url: str, *, default_retry: float = 1.0, max_idle_reconnects: int = 3,
                 get_stream_wait: float = 5.0, max_reissues: int = 2,
                 on_initialize_rejected: InitializeRejected | None = None,
                 **options: Any) -> None:
        super().__init__(url, **options)
        self.default_retry = default_retry
        self.max_idle_reconnects = max_idle_reconnects
        self.get_stream_wait = get_stream_wait
        self.max_reissues = max_reissues
        # Set once the GET stream opened, was refused or failed (or will not be tried).
        self._get_stream_settled: anyio.Event | None = None
        self._on_initialize_rejected = on_initialize_rejected
        self._first_post = True
        self._listening = False
        self._expired = False
        # Requests the session cancelled: their streams are not resumed.
        self._cancelled: set[str | int] = set()
        # Stateless requests still being answered: closing one's scope cancels it.
        self._stateless_exchanges: dict[str | int | None, anyio.CancelScope] = {}

    # -- POST ------------------------------------------------------------------------------

    async def _post(self, outgoing: Outgoing, on_the_wire: anyio.Event) -> None:
        if outgoing.cancels is not None:
            self._cancelled.add(outgoing.cancels)
            exchange = self._stateless_exchanges.get(outgoing.cancels)
            if exchange is not None:
                self._event("cancelled", f"closed the response of request #{outgoing.cancels}: "
                            "in the stateless era that is the cancellation, so no "
                            "notifications/cancelled is POSTed")
                exchange.cancel()
                return
        if outgoing.stateless_version is not None:
            await self._post_stateless(outgoing, on_the_wire)
            return
        headers = {**self._headers(), "Accept": f"{JSON}, {EVENT_STREAM}", "Content-Type": JSON}
        first, self._first_post = self._first_post, False
        try:
            async with self._exchange("POST", self.url, headers, label=outgoing.label,
                                      content=outgoing.frame, on_the_wire=on_the_wire) as response:
                await self._on_post_response(outgoing, response, headers, first=first)
        except httpx.HTTPError as exc:
            self._post_failed(outgoing, self.url, exc)
        finally:
            if outgoing.method == "notifications/initialized" and not self._listening:
                self._settle_get_stream()  # no GET stream comes: nothing to wait for

    async def _before_next(self, outgoing: Outgoing) -> None:
        """After ``notifications/initialized``: hold the next message until the GET stream is open.

        The session is established once the server accepted ``initialized``;
        from then on the server may use the GET stream, also for requests of its
        own made while answering the client's first request.  Opening the stream
        only after that request races the server (seen as timeouts and as
        "reconnections" in the conformance suite), so it is opened first.
        """
        if outgoing.method != "notifications/initialized" or outgoing.stateless_version:
            return
        if self._get_stream_settled is None:
            self._get_stream_settled = anyio.Event()
        with anyio.move_on_after(self.get_stream_wait):
            await self._get_stream_settled.wait()

    def _settle_get_stream(self) -> None:
        if self._get_stream_settled is None:
            self._get_stream_settled = anyio.Event()
        self._get_stream_settled.set()

    async def _on_post_response(self, outgoing: Outgoing, response: httpx.Response,
                                headers: dict[str, str], *, first: bool) -> None:
        status = response.status_code
        if status == 404 and "Mcp-Session-Id" in headers:
            self._session_expired("POST")
            return
        if first and status in LEGACY_STATUSES and self._on_initialize_rejected is not None:
            await response.aread()
            try:
                await self._on_initialize_rejected(outgoing.frame, status)
            except TransportClosed as exc:
                self._fail(TransportClosed(_(
                    "POST {url} was answered {status}, and the legacy HTTP+SSE transport did "
                    "not work either: {error}").format(
                    url=self.url, status=f"{status} {response.reason_phrase}", error=exc)))
            return
        if not response.is_success:
            await self._reject(outgoing, response)
            return
        self._adopt_session_id(response)
        if outgoing.kind != "request":
            if outgoing.method == "notifications/initialized" and not self._listening:
                # The session is operating: from now on the server may start messages itself.
                self._listening = True
                self._spawn(self._follow, _SseStream("GET stream", None, self.default_retry), None)
            return
        media = content_type(response)
        if media == EVENT_STREAM:
            stream = _SseStream(f"SSE stream of {outgoing.label}", outgoing, self.default_retry)
            await self._follow(stream, response)
        elif media == JSON:
            body = await self._reader.body(response, outgoing)
            if body is not None:
                self._deliver(body)
        else:
            await self._reject(outgoing, response)

    async def _post_stateless(self, outgoing: Outgoing, on_the_wire: anyio.Event) -> None:
        """POST a stateless-era request: its own headers, no session, one response.

        If its response stream breaks before the response, the request is lost
        (2026-07-28 streams are not resumed): it is re-issued as a new request
        with a new id, up to ``max_reissues`` times, and the answer is handed to
        the session under the id the session sent.
        """
        attempt = outgoing
        with anyio.CancelScope() as exchange:
            # Cancelling the session's request closes whichever attempt is running.
            self._stateless_exchanges[outgoing.id] = exchange
            try:
                for reissues in range(self.max_reissues + 1):
                    broke = await self._post_stateless_once(outgoing, attempt, on_the_wire)
                    if broke is None:
                        return
                    if reissues == self.max_reissues:
                        self._request_failed(outgoing.id, f"{attempt.label}: {broke}; re-issued "
                                             f"{reissues} times, giving up")
                        return
                    attempt = outgoing.reissued(reissues + 1)
                    self._event("reissued", f"{outgoing.label}: {broke}; a 2026-07-28 stream "
                                "cannot be resumed, so the request is sent again as a new "
                                f"request {attempt.label}", id=outgoing.id, new_id=attempt.id)
            finally:
                self._stateless_exchanges.pop(outgoing.id, None)
                if exchange.cancel_called:
                    self._stream_ended(f"SSE stream of {attempt.label}",
                                       "closed by the client (the request was cancelled)")

    async def _post_stateless_once(self, outgoing: Outgoing, attempt: Outgoing,
                                   on_the_wire: anyio.Event) -> str | None:
        """One POST of ``attempt``; why its stream broke before the response, or None."""
        headers = {**self.headers, **attempt.stateless_headers(),
                   **self._param_headers(attempt),
                   "Accept": f"{JSON}, {EVENT_STREAM}", "Content-Type": JSON}
        label = f"SSE stream of {attempt.label}"
        try:
            async with self._exchange("POST", self.url, headers, label=attempt.label,
                                      content=attempt.frame, on_the_wire=on_the_wire) as response:
                media = content_type(response)
                if not response.is_success or media not in (JSON, EVENT_STREAM):
                    await self._refuse_stateless(outgoing, response)
                    return None
                if media == JSON:
                    body = await self._reader.body(response, outgoing)
                    if body is not None:
                        self._deliver(attempt.answer_as(outgoing, body))
                    return None
                stream = _SseStream(label, attempt, self.default_retry, original=outgoing)
                self._stream_opened(label, "the server answers on an SSE stream")
                await self._read(stream, response)
        except httpx.ConnectError as exc:
            self._unreachable("POST", self.url, exc)
            return None
        except AuthorizationFailed as exc:  # a refusal, not a broken stream: never re-issued
            self._request_failed(outgoing.id, f"authorization failed: {exc}")
            return None
        except httpx.HTTPError as exc:
            return f"the POST broke before the response ({type(exc).__name__}: {exc})"
        if stream.answered:
            self._stream_ended(label, "ended after its response")
            return None
        how = f"broke ({stream.broke})" if stream.broke else "ended"
        self._stream_ended(label, f"{how} before its response")
        return f"the response stream {how} before the response"

    def _adopt_session_id(self, response: httpx.Response) -> None:
        session_id = response.headers.get("mcp-session-id")
        if session_id and self.session_id is None:
            self.session_id = session_id
            self._event("session id", _("the server assigned Mcp-Session-Id {session_id}; "
                                        "every later request carries it").format(
                session_id=abbreviate(session_id)))

    def _session_expired(self, method: str) -> None:
        assert self.session_id is not None
        self._expired = True
        self._event("session expired", _("{method} answered 404 for Mcp-Session-Id "
                                         "{session_id}: the server ended the session").format(
            method=method, session_id=abbreviate(self.session_id)))
        self._fail(SessionExpired(self.session_id, method))

    # -- SSE streams -------------------------------------------------------------------------

    async def _follow(self, stream: _SseStream, response: httpx.Response | None) -> None:
        """Read one logical stream to its end across as many connections as it takes.

        ``response`` is the POST's own response for a request's stream; the GET
        stream (``None``) starts with a plain GET.  Every later connection is a GET,
        with ``Last-Event-ID`` once the server has numbered its events.
        """
        if response is not None:
            self._stream_opened(stream.label, "the server answers on an SSE stream")
            await self._read(stream, response)
        while (reason := self._reason_to_stop(stream)) is None:
            if stream.connections:
                self._event("stream dropped", self._describe_drop(stream))
                await anyio.sleep(stream.retry)
            headers = {**self._headers(), "Accept": EVENT_STREAM}
            if stream.last_event_id is not None:
                headers["Last-Event-ID"] = stream.last_event_id
            try:
                async with self._exchange("GET", self.url, headers, label=stream.label) as response:
                    refusal = self._refusal(stream, response, headers)
                    if stream.answers is None:
                        self._settle_get_stream()
                    if refusal is not None:
                        reason = refusal
                        break
                    if not stream.connections:
                        self._stream_opened(stream.label, f"opened (GET {path_of(self.url)})")
                    elif stream.last_event_id is not None:
                        self._stream_opened(stream.label, f"resumed after event "
                                            f"{stream.last_event_id}", kind="stream resumed")
                    else:
                        self._stream_opened(stream.label, "reopened")
                    await self._read(stream, response)
            except httpx.HTTPError as exc:
                reason = f"GET failed: {type(exc).__name__}: {exc}"
                break
        if stream.answers is None:
            self._settle_get_stream()
        self._stream_ended(stream.label, reason)
        request = stream.answers
        if request is not None and not stream.answered and request.id not in self._cancelled \
                and not self._closing:
            # No answer can come any more: the request fails now, not at its timeout.
            self._request_failed(request.id, f"the SSE stream of {request.label} {reason}")

    async def _read(self, stream: _SseStream, response: httpx.Response) -> None:
        """Deliver the messages of one connection, noting ids, ``retry`` and the response."""
        stream.connections += 1
        stream.broke = None
        delivered = 0
        try:
            async with contextlib.aclosing(self._reader.events(response)) as events:
                async for event in events:
                    if event.retry is not None:
                        stream.retry = event.retry / 1000
                    if event.id:
                        stream.last_event_id = event.id
                    if not event.data:
                        continue  # a priming event: only an id (and maybe retry) to resume from
                    if event.event != "message":
                        self._event("sse event", f"{stream.label}: ignored an event of type "
                                    f"{event.event!r}")
                        continue
                    delivered += 1
                    frame = event.data
                    if stream.answers is not None and stream.answers.is_answered_by(
                            json_rpc_message(frame)):
                        stream.answered = True
                        assert stream.original is not None
                        frame = stream.answers.answer_as(stream.original, frame)
                    self._deliver(frame)
        except httpx.TransportError as exc:
            stream.broke = f"{type(exc).__name__}: {exc}"
        stream.idle_connections = 0 if delivered else stream.idle_connections + 1
        # Let the session's reader take the frames just delivered before this stream's
        # end is reported, so the transcript shows the response before "stream closed".
        await anyio.lowlevel.checkpoint()

    def _reason_to_stop(self, stream: _SseStream) -> str | None:
        """Why not to (re)connect ``stream`` now, or None to go on."""
        request = stream.answers
        if self._closing:
            return "the session is ending"
        if request is not None:
            if stream.answered:
                return "ended after its response"
            if request.id in self._cancelled:
                return f"ended before its response; not resumed: {request.label} was cancelled"
            if stream.last_event_id is None:
                return ("ended before its response and carried no event id, so it cannot be "
                        "resumed")
        if stream.idle_connections > self.max_idle_reconnects:
            return f"gave up after {stream.idle_connections} connections in a row with no message"
        return None

    def _describe_drop(self, stream: _SseStream) -> str:
        how = f"broke ({stream.broke})" if stream.broke else "was closed by the server"
        resume = (f"resuming from event {stream.last_event_id}" if stream.last_event_id
                  else "reconnecting")
        return f"{stream.label} {how}; {resume} in {stream.retry * 1000:.0f} ms"

    def _refusal(self, stream: _SseStream, response: httpx.Response,
                 headers: dict[str, str]) -> str | None:
        """Why a GET did not open (or resume) ``stream``, or None if it did."""
        status = response.status_code
        if response.is_success and content_type(response) == EVENT_STREAM:
            return None
        if status == 404 and "Mcp-Session-Id" in headers:
            self._session_expired("GET")
            return "the session expired"
        if status == 405 and stream.answers is None:
            self._event("no GET stream", "the server offers no stream at GET (405 Method Not "
                        "Allowed): it can only talk on POST responses")
            return "the server offers none"
        what = "resume" if stream.connections else "open"
        return f"could not {what} it: GET answered {status} {response.reason_phrase}"

    # -- shutdown ------------------------------------------------------------------------------

    async def _end_session(self) -> None:
        """DELETE the session, so the server can free it at once (405: it won't)."""
        if self.session_id is None or self._expired or self._client is None:
            return
        with anyio.move_on_after(self.close_grace):
            try:
                async with self._exchange("DELETE", self.url, self._headers()) as response:
                    if response.status_code == 405:
                        self._event("session kept", "the server does not let clients end "
                                    "sessions (405): it will expire the session on its own")
            except httpx.HTTPError as exc:
                self._event("http failed", f"DELETE failed: {type(exc).__name__}: {exc}")
