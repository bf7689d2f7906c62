"""The lab server over HTTP: Streamable HTTP at ``/mcp``; with ``--sse``, legacy HTTP+SSE too.

h11 (a sans-I/O HTTP/1.1 state machine, the model for this kit's protocol core)
parses and frames; anyio sockets move the bytes; the event loop is asyncio's,
shared with the :class:`~mcp_nb.lab.server.LabSession` objects it serves, one
per ``Mcp-Session-Id``.

How a message finds its stream.  Every POSTed request is answered on an SSE
stream of its own.  LabSession knows nothing of streams, but asyncio copies the
current context into each task it creates: the POST handler sets a context
variable to the request's stream while LabSession reads the message, so the task
serving that request, and everything it sends (progress, log messages, requests
to the client, the response), carries its stream along.  Whatever is sent
outside a request goes to the session's GET stream.

Streams keep their events, numbered ``<stream>-<n>``, so a client whose
connection broke can fetch the rest with GET + ``Last-Event-ID``; a request's
stream is forgotten once its response has been written in full.

The stateless era (2026-07-28) shares the POST endpoint.  A POST is routed to
it when its body's ``_meta`` names a protocol version, its method exists only in
that era (``server/discover``, ``subscriptions/listen``) or its
``MCP-Protocol-Version`` header names a stateless version (with ``--era
stateless``: always).  No session is needed or minted, the ``MCP-Protocol-Version``,
``Mcp-Method`` and ``Mcp-Name`` headers must agree with the body (-32020
otherwise), and one server-wide LabSession serves every such request, so that a
``bump`` on one connection reaches a ``subscriptions/listen`` stream on another.
Its answers are JSON with the status its error code calls for (400, or 404 for
an unknown method) unless something is sent before the response (progress, a
log message, a subscription's acknowledgement): then an SSE stream, without
event ids, since this era has no resumption.  Closing that stream cancels the
request.  With ``--era stateless``, GET and DELETE (the GET stream, sessions)
are 405.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import contextvars
import itertools
import json
import re
import secrets
import signal
import traceback
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import anyio
import h11
from anyio.abc import ByteStream, SocketAttribute

from mcp_nb.lab.eras import MODERN_ONLY_METHODS
from mcp_nb.lab.knobs import HttpOptions, Knobs
from mcp_nb.lab.server import (
    LabSession,
    Message,
    arrange_exits,
    crash_if_due,
    diag,
    encode_message,
    prepare_process,
)
from mcp_nb.protocol.errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from mcp_nb.protocol.stateless import (
    META_PROTOCOL_VERSION,
    is_stateless_request,
    missing_request_meta,
)

MCP_PATH = "/mcp"
SSE_PATH = "/sse"
MESSAGES_PATH = "/messages"
#: The ``retry`` advice (ms) sent just before --drop-stream-after cuts a connection.
DROP_RETRY_MS = 250
MAX_BODY_BYTES = 4 * 1024 * 1024
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})

Headers = Sequence[tuple[str, str]]

_READ_CHUNK = 65536
_SERVER_ERROR = -32000
#: The HTTP status a stateless-era error answer carries (anything else: 200).
STATUS_FOR_ERROR = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
#: Seconds the shutdown waits for stateless answers (final listen results) to be written.
_FLUSH_TIMEOUT = 1.0
#: The body field each name-bearing method mirrors into ``Mcp-Name``.
NAME_PARAMS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_BASE64_SENTINEL = re.compile(r"=\?base64\?(?P<payload>[A-Za-z0-9+/=]*)\?=")

_current_stream: contextvars.ContextVar[EventStream | None] = contextvars.ContextVar(
    "lab_current_stream", default=None
)


def _is_request_id(value: object) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def _error_body(message: str, code: int = _SERVER_ERROR,
                request_id: str | int | None = None) -> bytes:
    """A JSON-RPC error (without an id, how the spec lets a server explain an HTTP refusal)."""
    error = {"code": code, "message": message}
    return encode_message({"jsonrpc": "2.0", "id": request_id, "error": error})


def decode_header_value(value: str) -> str | None:
    """A header value with the ``=?base64?…?=`` sentinel decoded; None if that is malformed."""
    match = _BASE64_SENTINEL.fullmatch(value)
    if match is None:
        return value
    try:
        return base64.b64decode(match["payload"], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def header_mismatch(headers: dict[str, str], message: Message) -> str | None:
    """Why the request's mirrored headers disagree with its body (2026-07-28), or None.

    ``MCP-Protocol-Version`` must equal the ``_meta`` version, ``Mcp-Method``
    the method, and for tools/call, prompts/get and resources/read,
    ``Mcp-Name`` the name or uri (decoded first if base64-encoded).  A missing
    header is a mismatch too.
    """
    method, params = message.get("method"), message.get("params")
    params = params if isinstance(params, dict) else {}
    meta = params.get("_meta")
    mirrored = [
        ("MCP-Protocol-Version", meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict)
         else None),
        ("Mcp-Method", method),
    ]
    name_key = NAME_PARAMS.get(method) if isinstance(method, str) else None
    if name_key is not None and isinstance(params.get(name_key), str):
        mirrored.append(("Mcp-Name", params[name_key]))
    for header, expected in mirrored:
        got = headers.get(header.lower())
        if got is None:
            return f"Header mismatch: the {header} header is missing (the body says {expected!r})"
        if (decode_header_value(got) if header == "Mcp-Name" else got) != expected:
            return (f"Header mismatch: {header} header value {got!r} does not match the body's "
                    f"{expected!r}")
    return None


def http_status(response: Message) -> int:
    """The status for a stateless-era JSON answer: by error code, else 200."""
    error = response.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return STATUS_FOR_ERROR.get(code, 200) if isinstance(code, int) else 200


@dataclass(frozen=True)
class HttpRequest:
    """One complete request; header names lower-cased (a repeated header keeps its last value)."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes


class _RequestTooLarge(Exception):
    pass


class _Connection:
    """One HTTP/1.1 connection: h11 keeps the protocol, an anyio byte stream moves the bytes."""

    def __init__(self, stream: ByteStream) -> None:
        self._stream = stream
        self._h11 = h11.Connection(h11.SERVER)

    async def next_request(self) -> HttpRequest | None:
        """The next complete request, or None once the client is done with the connection."""
        request: h11.Request | None = None
        body = bytearray()
        while True:
            event = self._h11.next_event()
            if event is h11.NEED_DATA:
                try:
                    data = await self._stream.receive(_READ_CHUNK)
                except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    data = b""  # h11's way of saying end of file
                self._h11.receive_data(data)
            elif isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > MAX_BODY_BYTES:
                    raise _RequestTooLarge
            elif isinstance(event, h11.EndOfMessage):
                assert request is not None
                target = urlsplit(request.target.decode("ascii", "replace"))
                return HttpRequest(
                    method=request.method.decode("ascii"),
                    path=target.path,
                    query=dict(parse_qsl(target.query)),
                    headers={name.decode("latin-1").lower(): value.decode("latin-1")
                             for name, value in request.headers},
                    body=bytes(body),
                )
            else:  # ConnectionClosed, or PAUSED after a response that ends the connection
                return None

    async def respond(self, status: int, body: bytes = b"", *, headers: Headers = (),
                      content_type: str = "application/json") -> None:
        """A complete response with a body (or none: 202, 405 …)."""
        fields = [("content-length", str(len(body))), *headers]
        if body:
            fields.append(("content-type", content_type))
        await self._send(h11.Response(status_code=status, headers=fields,
                                      reason=HTTPStatus(status).phrase))
        if body:
            await self._send(h11.Data(data=body))
        await self._send(h11.EndOfMessage())

    async def open_stream(self, headers: Headers = ()) -> None:
        """Start a chunked ``text/event-stream`` response (h11 picks chunked: no length given)."""
        fields = [("content-type", "text/event-stream"), ("cache-control", "no-cache"), *headers]
        await self._send(h11.Response(status_code=200, headers=fields, reason=b"OK"))

    async def write(self, data: bytes) -> None:
        await self._send(h11.Data(data=data))

    async def finish(self) -> None:
        await self._send(h11.EndOfMessage())

    async def abort(self) -> None:
        """Close the socket mid-response, as a network failure would."""
        await self._stream.aclose()

    async def until_client_leaves(self) -> None:
        """Return when the client closes the connection (a streaming response may outlive it)."""
        while True:
            try:
                data = await self._stream.receive(_READ_CHUNK)
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                return
            self._h11.receive_data(data)  # a next request, kept until this response is done

    def start_next_cycle(self) -> bool:
        """Get ready for the next request on this connection; False if it must close instead."""
        if self._h11.our_state is h11.DONE and self._h11.their_state is h11.DONE:
            self._h11.start_next_cycle()
            return True
        return False

    @property
    def can_respond(self) -> bool:
        return self._h11.our_state in (h11.IDLE, h11.SEND_RESPONSE)

    async def _send(self, event: Any) -> None:
        data = self._h11.send(event)
        if data:
            await self._stream.send(data)


class EventStream:
    """One logical SSE stream: its events, kept for replay, and followers waiting for more.

    Events of a ``resumable`` stream (handshake era) carry ids for ``Last-Event-ID``;
    the stateless era has no resumption, so its events have none.
    """

    def __init__(self, index: int, request_id: str | int | None = None,
                 resumable: bool = True) -> None:
        self.index = index
        #: The request this stream answers; it finishes with that request's response.
        self.request_id = request_id
        self.resumable = resumable
        self.events: list[bytes] = []
        #: The messages behind :attr:`events` (a lone response may go out as plain JSON).
        self.messages: list[Message] = []
        self.finished = False
        #: How many events were written to some connection (where a fresh GET starts).
        self.delivered = 0
        self._changed = asyncio.Event()

    def event_id(self, position: int) -> str:
        return f"{self.index}-{position}"

    def push(self, message: Message) -> None:
        position = len(self.events) + 1
        event_id = f"id: {self.event_id(position)}\n" if self.resumable else ""
        self.events.append(
            f"{event_id}event: message\ndata: ".encode() + encode_message(message) + b"\n\n"
        )
        self.messages.append(message)
        if (self.request_id is not None and "method" not in message
                and message.get("id") == self.request_id):
            self.finished = True
        self._wake()

    def finish(self) -> None:
        self.finished = True
        self._wake()

    def priming(self, position: int) -> bytes:
        """An event with an id and empty data, so the client can resume from here."""
        return f"id: {self.event_id(position)}\ndata:\n\n".encode()

    async def wait_for_first(self) -> None:
        """Return once the stream has an event."""
        while not self.events:
            await self._changed.wait()

    def is_last(self, position: int) -> bool:
        return self.finished and position == len(self.events)

    async def follow(self, after: int) -> AsyncIterator[tuple[int, bytes]]:
        """Events after position ``after`` (1-based), waiting for new ones until finished."""
        position = after
        while True:
            if position < len(self.events):
                position += 1
                yield position, self.events[position - 1]
            elif self.finished:
                return
            else:
                await self._changed.wait()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()


class _McpSession:
    """One Streamable HTTP session: a LabSession plus its streams."""

    def __init__(self, knobs: Knobs) -> None:
        self.id = secrets.token_hex(16)
        self.lab = LabSession(knobs, self._route, era="handshake")
        self.posts = 0
        self.standalone = EventStream(0)
        self.streams: dict[int, EventStream] = {0: self.standalone}
        #: True while a client holds the GET stream (one at a time).
        self.listening = False
        self._indices = itertools.count(1)

    def _route(self, message: Message) -> None:
        stream = _current_stream.get()
        if stream is None or stream.finished:
            stream = self.standalone
        stream.push(message)

    def open_stream(self, request_id: str | int) -> EventStream:
        stream = EventStream(next(self._indices), request_id)
        self.streams[stream.index] = stream
        return stream

    def find(self, last_event_id: str) -> tuple[EventStream, int] | None:
        """The stream a ``Last-Event-ID`` belongs to and the position after which to resume."""
        index, _, position = last_event_id.partition("-")
        try:
            stream, after = self.streams[int(index)], int(position)
        except (KeyError, ValueError):
            return None
        return (stream, after) if 0 <= after <= len(stream.events) else None

    async def close(self) -> None:
        for stream in self.streams.values():
            stream.finish()
        await self.lab.close()


class _LegacySession:
    """One HTTP+SSE session: a LabSession whose every message goes down one GET stream."""

    def __init__(self, knobs: Knobs) -> None:
        self.id = secrets.token_hex(16)
        self.stream = EventStream(0)
        self.lab = LabSession(knobs, self.stream.push, era="handshake")

    async def close(self) -> None:
        self.stream.finish()
        await self.lab.close()


class LabHttpServer:
    """Routes HTTP requests to lab sessions and applies the HTTP fault knobs."""

    def __init__(self, knobs: Knobs, options: HttpOptions) -> None:
        self.knobs = knobs
        self.options = options
        self.sessions: dict[str, _McpSession] = {}
        self.legacy: dict[str, _LegacySession] = {}
        self._received = 0
        #: Serves every stateless-era request: they share the server's state, not a session.
        self.stateless = (LabSession(knobs, self._route_stateless, era="stateless")
                          if knobs.serves_stateless else None)
        self._stateless_streams = itertools.count(1)
        #: Set when each stateless exchange still under way is done (the shutdown waits).
        self._exchanges: set[asyncio.Event] = set()

    async def serve_connection(self, stream: ByteStream) -> None:
        """Serve one client connection; nothing that goes wrong in it may reach the listener."""
        async with stream:
            try:
                await self._converse(_Connection(stream))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass  # the client went away mid-response
            except Exception:  # one bad exchange must not take the server down
                diag(f"error serving a connection:\n{traceback.format_exc()}")

    async def _converse(self, connection: _Connection) -> None:
        """Requests and responses on one connection, until either side ends it."""
        try:
            while (request := await connection.next_request()) is not None:
                await self._handle(connection, request)
                if not connection.start_next_cycle():
                    return
        except _RequestTooLarge:
            await connection.respond(413, _error_body("Request body too large"))
        except h11.RemoteProtocolError as exc:
            if connection.can_respond:
                await connection.respond(400, _error_body(f"Bad HTTP request: {exc}"))

    async def end_subscriptions(self) -> None:
        """Let open subscriptions/listen streams end with their final result, written out."""
        if self.stateless is None:
            return
        await self.stateless.end_subscriptions()
        with anyio.move_on_after(_FLUSH_TIMEOUT):
            for done in list(self._exchanges):
                await done.wait()

    async def close(self) -> None:
        for session in [*self.sessions.values(), *self.legacy.values()]:
            await session.close()
        self.sessions.clear()
        self.legacy.clear()
        if self.stateless is not None:
            await self.stateless.close()

    # -- routing ------------------------------------------------------------------------------

    async def _handle(self, connection: _Connection, request: HttpRequest) -> None:
        refusal = self._refusal(request)
        if refusal is not None:
            status, message, headers = refusal
            await connection.respond(status, _error_body(message), headers=headers)
            return
        routes = {MCP_PATH: {"POST": self._post, "GET": self._get, "DELETE": self._delete}
                  if self.knobs.serves_handshake else {"POST": self._post}}
        if self.options.legacy_sse:
            routes[SSE_PATH] = {"GET": self._legacy_get}
            routes[MESSAGES_PATH] = {"POST": self._legacy_post}
        methods = routes.get(request.path)
        if methods is None:
            await connection.respond(404, _error_body(f"Not Found: nothing at {request.path}"))
        elif request.method not in methods:
            why = "" if self.knobs.serves_handshake or request.path != MCP_PATH else (
                " (the stateless era has no GET stream and no sessions; POST a "
                "subscriptions/listen request to hear about changes)")
            await connection.respond(
                405, _error_body(f"Method Not Allowed: {request.method} {request.path}{why}"),
                headers=[("allow", ", ".join(methods))])
        else:
            await methods[request.method](connection, request)

    def _refusal(self, request: HttpRequest) -> tuple[int, str, Headers] | None:
        """403 for a foreign Origin (DNS rebinding), 401 without --require-header's header."""
        origin = request.headers.get("origin")
        if origin is not None and urlsplit(origin).hostname not in LOCAL_HOSTS:
            diag(f"refused a request from Origin {origin!r} (403)")
            return 403, f"Forbidden: Origin {origin} is not allowed", ()
        required = self.knobs.require_header
        if required is not None and request.headers.get(required[0].lower()) != required[1]:
            diag(f"refused a request without the required {required[0]} header (401)")
            challenge = [("www-authenticate", "Bearer")] if required[0].lower() == (
                "authorization") else []
            return 401, f"Unauthorized: send the {required[0]} header", challenge
        return None

    async def _session(self, connection: _Connection, request: HttpRequest) -> _McpSession | None:
        """The session ``Mcp-Session-Id`` names; None once the refusal has been answered."""
        session_id = request.headers.get("mcp-session-id")
        if session_id is None:
            await connection.respond(400, _error_body("Bad Request: no Mcp-Session-Id header "
                                                      "(initialize first)"))
            return None
        session = self.sessions.get(session_id)
        if session is None:
            await connection.respond(404, _error_body("Not Found: no such session (it expired "
                                                      "or was deleted)"))
        return session

    def _count_message(self) -> None:
        self._received += 1
        crash_if_due(self.knobs, self._received)

    # -- Streamable HTTP -------------------------------------------------------------------------

    async def _post(self, connection: _Connection, request: HttpRequest) -> None:
        try:
            message = json.loads(request.body)
        except ValueError as exc:
            await connection.respond(400, _error_body(f"Parse error: {exc}", PARSE_ERROR))
            return
        if not isinstance(message, dict):
            await connection.respond(400, _error_body("Bad Request: POST one JSON-RPC object"))
            return
        if self._is_stateless(request, message):
            await self._post_stateless(connection, request, message)
            return
        headers: list[tuple[str, str]] = []
        if "mcp-session-id" not in request.headers and message.get("method") == "initialize":
            session = _McpSession(self.knobs)
            self.sessions[session.id] = session
            headers.append(("mcp-session-id", session.id))
            diag(f"new session {session.id[:8]}…")
        elif (found := await self._session(connection, request)) is not None:
            session = found
        else:
            return
        version = request.headers.get("mcp-protocol-version")
        if version is not None and version not in self.knobs.supported_versions:
            await connection.respond(
                400, _error_body(f"Bad Request: unsupported MCP-Protocol-Version {version}"))
            return
        session.posts += 1
        limit = self.knobs.expire_session_after
        if limit is not None and session.posts > limit:
            await self._forget(session, f"expired after {limit} POSTs (--expire-session-after)")
            await connection.respond(404, _error_body("Not Found: the session has expired"))
            return
        self._count_message()
        if not ("method" in message and _is_request_id(message.get("id"))):
            session.lab.receive(message)  # notifications and responses: accepted, nothing to say
            await connection.respond(202)
            return
        stream = session.open_stream(message["id"])
        token = _current_stream.set(stream)
        try:
            session.lab.receive(message)
        finally:
            _current_stream.reset(token)
        await self._stream(connection, stream, 0, first=stream.priming(0), headers=headers,
                           drop_after=self.knobs.drop_stream_after)
        if stream.finished and stream.delivered == len(stream.events):
            del session.streams[stream.index]

    def _is_stateless(self, request: HttpRequest, message: Message) -> bool:
        """Whether a POST belongs to the stateless era (see the module docstring)."""
        if self.knobs.era != "both":
            return self.knobs.era == "stateless"
        params = message.get("params")
        if is_stateless_request(params if isinstance(params, dict) else None):
            return True
        if message.get("method") in MODERN_ONLY_METHODS:
            return True
        # A header naming a stateless version: a modern client whose body lacks the _meta.
        return request.headers.get("mcp-protocol-version") in self.knobs.stateless_versions

    def _route_stateless(self, message: Message) -> None:
        """Where the stateless LabSession's messages go: the stream of the request they
        belong to (the context says which); nothing is sent outside a request."""
        stream = _current_stream.get()
        if stream is None or stream.finished:
            what = message.get("method") or f"the response to {message.get('id')!r}"
            diag(f"dropping {what}: its request's response stream has ended")
            return
        stream.push(message)

    async def _post_stateless(self, connection: _Connection, request: HttpRequest,
                              message: Message) -> None:
        """One stateless-era POST: no session; headers checked; JSON or SSE answer."""
        assert self.stateless is not None
        self._count_message()
        if "method" not in message:
            await connection.respond(400, _error_body(
                "Bad Request: a client POSTs requests (and notifications), never responses, in "
                "the stateless era: there are no server requests to answer", INVALID_REQUEST))
            return
        if "id" not in message:
            # The core protocol has no client notification on this transport (closing a
            # response stream is how a client cancels): accepted, and nothing to do.
            diag(f"ignoring notification {message['method']!r} in the stateless era")
            await connection.respond(202)
            return
        if not _is_request_id(message["id"]):
            await connection.respond(400, _error_body(
                "Invalid Request: id must be a string or an integer", INVALID_REQUEST))
            return
        params = message.get("params")
        if isinstance(params, dict) and not missing_request_meta(params):
            mismatch = header_mismatch(request.headers, message)
            if mismatch is not None:
                diag(f"{mismatch} (400)")
                await connection.respond(400, _error_body(mismatch, HEADER_MISMATCH,
                                                          message.get("id")))
                return
        stream = EventStream(next(self._stateless_streams), message.get("id"), resumable=False)
        token = _current_stream.set(stream)
        try:
            task = self.stateless.receive(message)
        finally:
            _current_stream.reset(token)
        done = asyncio.Event()
        self._exchanges.add(done)
        try:
            await self._answer_stateless(connection, stream)
        finally:
            self._exchanges.discard(done)
            done.set()
            if task is not None and not stream.finished:
                self.stateless.abandon(task, "its client closed the response stream")

    async def _answer_stateless(self, connection: _Connection, stream: EventStream) -> None:
        """Wait for the first message: a lone response goes out as JSON with its status;
        anything sent before the response makes the answer an SSE stream."""
        async with anyio.create_task_group() as watch:

            async def hang_up_when_client_leaves() -> None:
                await connection.until_client_leaves()
                watch.cancel_scope.cancel()

            watch.start_soon(hang_up_when_client_leaves)
            await stream.wait_for_first()
            watch.cancel_scope.cancel()
        if not stream.events:
            return  # the client left first
        if stream.finished and len(stream.events) == 1:
            response = stream.messages[0]
            await connection.respond(http_status(response), encode_message(response))
            return
        await self._stream(connection, stream, 0, first=b"",
                           headers=[("x-accel-buffering", "no")])

    async def _get(self, connection: _Connection, request: HttpRequest) -> None:
        if "text/event-stream" not in request.headers.get("accept", ""):
            await connection.respond(406, _error_body("Not Acceptable: GET serves "
                                                      "text/event-stream only"))
            return
        session = await self._session(connection, request)
        if session is None:
            return
        last_event_id = request.headers.get("last-event-id")
        if last_event_id is None and self.knobs.no_get_stream:
            diag("refusing the GET stream (--no-get-stream)")
            await connection.respond(405, _error_body("Method Not Allowed: this server only "
                                                      "talks on POST responses (--no-get-stream)"),
                                     headers=[("allow", "POST, DELETE")])
            return
        if last_event_id is None:
            stream, after = session.standalone, session.standalone.delivered
        elif (found := session.find(last_event_id)) is not None:
            stream, after = found
            diag(f"resuming stream {stream.index} after event {last_event_id}")
        else:
            await connection.respond(400, _error_body(
                f"Bad Request: unknown Last-Event-ID {last_event_id}"))
            return
        if stream is not session.standalone:
            await self._stream(connection, stream, after, first=stream.priming(after),
                               drop_after=self.knobs.drop_stream_after)
            return
        if session.listening:
            await connection.respond(409, _error_body("Conflict: this session's GET stream is "
                                                      "already open"))
            return
        session.listening = True
        try:
            await self._stream(connection, stream, after, first=stream.priming(after))
        finally:
            session.listening = False

    async def _delete(self, connection: _Connection, request: HttpRequest) -> None:
        session = await self._session(connection, request)
        if session is None:
            return
        if self.knobs.no_delete:
            diag("refusing DELETE (--no-delete)")
            await connection.respond(405, _error_body("Method Not Allowed: sessions end when "
                                                      "the server says so (--no-delete)"),
                                     headers=[("allow", "GET, POST")])
            return
        await self._forget(session, "deleted by the client")
        await connection.respond(200)

    async def _forget(self, session: _McpSession, why: str) -> None:
        self.sessions.pop(session.id, None)
        diag(f"session {session.id[:8]}… {why}")
        await session.close()

    async def _stream(self, connection: _Connection, stream: EventStream, after: int, *,
                      first: bytes, headers: Headers = (), drop_after: int | None = None) -> None:
        """Write ``stream`` from position ``after`` as one SSE response, until it finishes.

        Ends early when the client leaves, or when --drop-stream-after cuts it.
        """
        await connection.open_stream(headers)
        if first:
            await connection.write(first)
        async with anyio.create_task_group() as watch:

            async def hang_up_when_client_leaves() -> None:
                await connection.until_client_leaves()
                watch.cancel_scope.cancel()

            watch.start_soon(hang_up_when_client_leaves)
            # A client leaving mid-write ends this response, not the connection handler
            # with an exception group.
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await self._write_events(connection, stream, after, drop_after)
            watch.cancel_scope.cancel()

    async def _write_events(self, connection: _Connection, stream: EventStream, after: int,
                            drop_after: int | None) -> None:
        written = 0
        async with contextlib.aclosing(stream.follow(after)) as events:
            async for position, event in events:
                await connection.write(event)
                stream.delivered = max(stream.delivered, position)
                written += 1
                if drop_after is not None and written >= drop_after and not stream.is_last(
                        position):
                    diag(f"dropping the connection of stream {stream.index} after event "
                         f"{stream.event_id(position)} (--drop-stream-after)")
                    await connection.write(f"retry: {DROP_RETRY_MS}\n\n".encode())
                    await connection.abort()
                    return
        await connection.finish()

    # -- legacy HTTP+SSE ---------------------------------------------------------------------------

    async def _legacy_get(self, connection: _Connection, request: HttpRequest) -> None:
        session = _LegacySession(self.knobs)
        self.legacy[session.id] = session
        diag(f"new legacy HTTP+SSE session {session.id[:8]}…")
        endpoint = f"event: endpoint\ndata: {MESSAGES_PATH}?session_id={session.id}\n\n"
        try:
            await self._stream(connection, session.stream, 0, first=endpoint.encode())
        finally:
            # The stream is the session: when it ends, so does the session.
            self.legacy.pop(session.id, None)
            await session.close()
            diag(f"legacy session {session.id[:8]}… ended with its stream")

    async def _legacy_post(self, connection: _Connection, request: HttpRequest) -> None:
        session = self.legacy.get(request.query.get("session_id", ""))
        if session is None:
            await connection.respond(404, _error_body("Not Found: no such session"))
            return
        try:
            message = json.loads(request.body)
        except ValueError as exc:
            await connection.respond(400, _error_body(f"Parse error: {exc}", PARSE_ERROR))
            return
        self._count_message()
        session.lab.receive(message)
        await connection.respond(202, b"Accepted", content_type="text/plain")


# -------------------------------------------------------------------------- running


def _url(host: str, port: int, path: str) -> str:
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{path}"


async def _serve_http(knobs: Knobs, options: HttpOptions) -> int:
    server = LabHttpServer(knobs, options)
    stopped = asyncio.Event()
    reasons: list[str] = []

    def stop(reason: str) -> None:
        reasons.append(reason)
        stopped.set()

    arrange_exits(knobs, stop)
    with contextlib.suppress(NotImplementedError):
        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, stop, "interrupted; exiting")
    listener = await anyio.create_tcp_listener(local_host=options.host, local_port=options.port)
    port = listener.extra(SocketAttribute.local_port)
    # The first stdout line is the contract with whoever started us (tests read the port).
    print(f"mcp_nb lab server listening on {_url(options.host, port, MCP_PATH)}", flush=True)
    if options.legacy_sse:
        print(f"legacy HTTP+SSE endpoint: {_url(options.host, port, SSE_PATH)}", flush=True)
    if options.host not in LOCAL_HOSTS:
        diag(f"warning: listening on {options.host}, not only on this machine")
    async with listener, anyio.create_task_group() as tasks:
        tasks.start_soon(listener.serve, server.serve_connection)
        await stopped.wait()
        diag(reasons[0])
        await server.end_subscriptions()
        tasks.cancel_scope.cancel()
    await server.close()
    return 0


def serve_http(knobs: Knobs, options: HttpOptions) -> int:
    """Serve HTTP until SIGTERM, Ctrl-C or --exit-after; returns the exit code."""
    prepare_process(knobs)
    return asyncio.run(_serve_http(knobs, options))
