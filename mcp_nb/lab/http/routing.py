"""The lab's HTTP server: guards, then routes each request to the handshake era's sessions,
the stateless era's endpoint, or the legacy HTTP+SSE transport.

Guards are the seam for access control.  Before any route runs, each
:data:`Guard` in turn may refuse the request with a :class:`Refusal` (status,
message, extra headers such as ``WWW-Authenticate``).  The lab's own guards
refuse a foreign ``Origin`` (403, DNS rebinding) and, with --require-header,
a request without that header (401); an authorization server's protected
resource is one more guard passed to :class:`LabHttpServer` (or appended to
its ``guards``).
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio
import h11
from anyio.abc import ByteStream

from mcp_nb.lab.eras import MODERN_ONLY_METHODS
from mcp_nb.lab.http.sessions import LegacySession, McpSession
from mcp_nb.lab.http.stateless import StatelessEndpoint
from mcp_nb.lab.http.streams import current_stream, write_stream
from mcp_nb.lab.http.wire import Connection, Headers, HttpRequest, RequestTooLarge, error_body
from mcp_nb.lab.knobs import HttpOptions, Knobs
from mcp_nb.lab.process import crash_if_due
from mcp_nb.lab.rpc import Message, diag, is_request_id
from mcp_nb.protocol.errors import PARSE_ERROR
from mcp_nb.protocol.stateless import is_stateless_request

MCP_PATH = "/mcp"
SSE_PATH = "/sse"
MESSAGES_PATH = "/messages"
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


@dataclass(frozen=True)
class Refusal:
    """A guard's answer instead of the route's: an HTTP status with a JSON-RPC error body.

    A guard that answers with a body of its own gives ``body`` (and ``content_type``): the
    lab authorization server's 2025-03-26 layout serves its endpoints on this origin so.
    """

    status: int
    message: str
    headers: Headers = ()
    body: bytes | None = None
    content_type: str = "application/json"


#: Looks at a request before it is routed; a :class:`Refusal` answers it instead.
Guard = Callable[[HttpRequest], Awaitable[Refusal | None]]


def origin_guard() -> Guard:
    """403 for a request whose ``Origin`` is not this machine (DNS rebinding)."""

    async def guard(request: HttpRequest) -> Refusal | None:
        origin = request.headers.get("origin")
        if origin is not None and urlsplit(origin).hostname not in LOCAL_HOSTS:
            diag(f"refused a request from Origin {origin!r} (403)")
            return Refusal(403, f"Forbidden: Origin {origin} is not allowed")
        return None

    return guard


def header_guard(name: str, value: str) -> Guard:
    """--require-header: 401 for a request without exactly ``name: value``."""

    async def guard(request: HttpRequest) -> Refusal | None:
        if request.headers.get(name.lower()) == value:
            return None
        diag(f"refused a request without the required {name} header (401)")
        challenge = [("www-authenticate", "Bearer")] if name.lower() == "authorization" else []
        return Refusal(401, f"Unauthorized: send the {name} header", challenge)

    return guard


class LabHttpServer:
    """Routes HTTP requests to lab sessions and applies the HTTP fault knobs.

    ``guards`` run after the lab's own (:func:`origin_guard`, --require-header)
    and before any route.
    """

    def __init__(self, knobs: Knobs, options: HttpOptions, guards: Sequence[Guard] = ()) -> None:
        self.knobs = knobs
        self.options = options
        # --no-origin-check leaves the door open to DNS rebinding, on purpose.
        self.guards: list[Guard] = [] if knobs.no_origin_check else [origin_guard()]
        if knobs.require_header is not None:
            self.guards.append(header_guard(*knobs.require_header))
        self.guards.extend(guards)
        self.sessions: dict[str, McpSession] = {}
        self.legacy: dict[str, LegacySession] = {}
        self._received = 0
        #: Serves every stateless-era request: they share the server's state, not a session.
        self.stateless = StatelessEndpoint(knobs) if knobs.serves_stateless else None

    async def serve_connection(self, stream: ByteStream) -> None:
        """Serve one client connection; nothing that goes wrong in it may reach the listener."""
        async with stream:
            try:
                await self._converse(Connection(stream))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass  # the client went away mid-response
            except Exception:  # one bad exchange must not take the server down
                diag(f"error serving a connection:\n{traceback.format_exc()}")

    async def _converse(self, connection: Connection) -> None:
        """Requests and responses on one connection, until either side ends it."""
        try:
            while (request := await connection.next_request()) is not None:
                await self._handle(connection, request)
                if not connection.start_next_cycle():
                    return
        except RequestTooLarge:
            await connection.respond(413, error_body("Request body too large"))
        except h11.RemoteProtocolError as exc:
            if connection.can_respond:
                await connection.respond(400, error_body(f"Bad HTTP request: {exc}"))

    async def end_subscriptions(self) -> None:
        """Let open subscriptions/listen streams end with their final result, written out."""
        if self.stateless is not None:
            await self.stateless.end_subscriptions()

    async def close(self) -> None:
        for session in [*self.sessions.values(), *self.legacy.values()]:
            await session.close()
        self.sessions.clear()
        self.legacy.clear()
        if self.stateless is not None:
            await self.stateless.close()

    # -- routing ------------------------------------------------------------------------------

    async def _handle(self, connection: Connection, request: HttpRequest) -> None:
        for guard in self.guards:
            refusal = await guard(request)
            if refusal is not None:
                body = error_body(refusal.message) if refusal.body is None else refusal.body
                await connection.respond(refusal.status, body, headers=refusal.headers,
                                         content_type=refusal.content_type)
                return
        routes = {MCP_PATH: {"POST": self._post, "GET": self._get, "DELETE": self._delete}
                  if self.knobs.serves_handshake else {"POST": self._post}}
        if self.options.legacy_sse:
            routes[SSE_PATH] = {"GET": self._legacy_get}
            routes[MESSAGES_PATH] = {"POST": self._legacy_post}
        methods = routes.get(request.path)
        if methods is None:
            await connection.respond(404, error_body(f"Not Found: nothing at {request.path}"))
        elif request.method not in methods:
            why = "" if self.knobs.serves_handshake or request.path != MCP_PATH else (
                " (the stateless era has no GET stream and no sessions; POST a "
                "subscriptions/listen request to hear about changes)")
            await connection.respond(
                405, error_body(f"Method Not Allowed: {request.method} {request.path}{why}"),
                headers=[("allow", ", ".join(methods))])
        else:
            await methods[request.method](connection, request)

    async def _session(self, connection: Connection, request: HttpRequest) -> McpSession | None:
        """The session ``Mcp-Session-Id`` names; None once the refusal has been answered."""
        session_id = request.headers.get("mcp-session-id")
        if session_id is None:
            await connection.respond(400, error_body("Bad Request: no Mcp-Session-Id header "
                                                     "(initialize first)"))
            return None
        session = self.sessions.get(session_id)
        if session is None:
            await connection.respond(404, error_body("Not Found: no such session (it expired "
                                                     "or was deleted)"))
        return session

    def _count_message(self) -> None:
        self._received += 1
        crash_if_due(self.knobs, self._received)

    # -- Streamable HTTP -------------------------------------------------------------------------

    async def _post(self, connection: Connection, request: HttpRequest) -> None:
        try:
            message = json.loads(request.body)
        except ValueError as exc:
            await connection.respond(400, error_body(f"Parse error: {exc}", PARSE_ERROR))
            return
        if not isinstance(message, dict):
            await connection.respond(400, error_body("Bad Request: POST one JSON-RPC object"))
            return
        if self.stateless is not None and self._is_stateless(request, message):
            self._count_message()
            await self.stateless.post(connection, request, message)
            return
        headers: list[tuple[str, str]] = []
        if "mcp-session-id" not in request.headers and message.get("method") == "initialize":
            session = McpSession(self.knobs)
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
                400, error_body(f"Bad Request: unsupported MCP-Protocol-Version {version}"))
            return
        session.posts += 1
        limit = self.knobs.expire_session_after
        if limit is not None and session.posts > limit:
            await self._forget(session, f"expired after {limit} POSTs (--expire-session-after)")
            await connection.respond(404, error_body("Not Found: the session has expired"))
            return
        self._count_message()
        if not ("method" in message and is_request_id(message.get("id"))):
            session.lab.receive(message)  # notifications and responses: accepted, nothing to say
            if self.knobs.notifications_200:
                await connection.respond(200, b"{}")  # 202 with no body, the rule says
            else:
                await connection.respond(202)
            return
        if self.knobs.html_for_json_accept and "text/event-stream" not in request.headers.get(
                "accept", ""):
            # An error page where JSON or an SSE stream is due (as a proxy in front might).
            await connection.respond(200, b"<html><body>Use an MCP client</body></html>",
                                     content_type="text/html")
            return
        stream = session.streams.open(message["id"])
        token = current_stream.set(stream)
        try:
            session.lab.receive(message)
        finally:
            current_stream.reset(token)
        await write_stream(connection, stream, 0, first=stream.priming(0), headers=headers,
                           drop_after=self.knobs.drop_stream_after)

    def _is_stateless(self, request: HttpRequest, message: Message) -> bool:
        """Whether a POST belongs to the stateless era (see :mod:`.stateless`)."""
        if self.knobs.era != "both":
            return self.knobs.era == "stateless"
        params = message.get("params")
        if is_stateless_request(params if isinstance(params, dict) else None):
            return True
        if message.get("method") in MODERN_ONLY_METHODS:
            return True
        # A header naming a stateless version: a modern client whose body lacks the _meta.
        return request.headers.get("mcp-protocol-version") in self.knobs.stateless_versions

    async def _get(self, connection: Connection, request: HttpRequest) -> None:
        if "text/event-stream" not in request.headers.get("accept", ""):
            await connection.respond(406, error_body("Not Acceptable: GET serves "
                                                     "text/event-stream only"))
            return
        session = await self._session(connection, request)
        if session is None:
            return
        last_event_id = request.headers.get("last-event-id")
        if last_event_id is None and self.knobs.no_get_stream:
            diag("refusing the GET stream (--no-get-stream)")
            await connection.respond(405, error_body("Method Not Allowed: this server only "
                                                     "talks on POST responses (--no-get-stream)"),
                                     headers=[("allow", "POST, DELETE")])
            return
        standalone = session.streams.standalone
        if last_event_id is None:
            stream, after = standalone, standalone.delivered
        elif (found := session.streams.find(last_event_id)) is not None:
            stream, after = found
            diag(f"resuming stream {stream.index} after event {last_event_id}")
        else:
            await connection.respond(404, error_body(
                f"Not Found: no stream holds Last-Event-ID {last_event_id} (unknown, or "
                "forgotten: a session keeps its most recent streams only)"))
            return
        if stream is not standalone:
            await write_stream(connection, stream, after, first=stream.priming(after),
                               drop_after=self.knobs.drop_stream_after,
                               hold_open=self.knobs.keep_resumed_open)
            return
        if session.listening:
            await connection.respond(409, error_body("Conflict: this session's GET stream is "
                                                     "already open"))
            return
        session.listening = True
        try:
            await write_stream(connection, stream, after, first=stream.priming(after))
        finally:
            session.listening = False

    async def _delete(self, connection: Connection, request: HttpRequest) -> None:
        session = await self._session(connection, request)
        if session is None:
            return
        if self.knobs.no_delete:
            diag("refusing DELETE (--no-delete)")
            await connection.respond(405, error_body("Method Not Allowed: sessions end when "
                                                     "the server says so (--no-delete)"),
                                     headers=[("allow", "GET, POST")])
            return
        await self._forget(session, "deleted by the client")
        await connection.respond(200)

    async def _forget(self, session: McpSession, why: str) -> None:
        self.sessions.pop(session.id, None)
        diag(f"session {session.id[:8]}… {why}")
        await session.close()

    # -- legacy HTTP+SSE ---------------------------------------------------------------------------

    async def _legacy_get(self, connection: Connection, request: HttpRequest) -> None:
        session = LegacySession(self.knobs)
        self.legacy[session.id] = session
        diag(f"new legacy HTTP+SSE session {session.id[:8]}…")
        endpoint = f"event: endpoint\ndata: {MESSAGES_PATH}?session_id={session.id}\n\n"
        try:
            await write_stream(connection, session.stream, 0, first=endpoint.encode())
        finally:
            # The stream is the session: when it ends, so does the session.
            self.legacy.pop(session.id, None)
            await session.close()
            diag(f"legacy session {session.id[:8]}… ended with its stream")

    async def _legacy_post(self, connection: Connection, request: HttpRequest) -> None:
        session = self.legacy.get(request.query.get("session_id", ""))
        if session is None:
            await connection.respond(404, error_body("Not Found: no such session"))
            return
        try:
            message = json.loads(request.body)
        except ValueError as exc:
            await connection.respond(400, error_body(f"Parse error: {exc}", PARSE_ERROR))
            return
        self._count_message()
        session.lab.receive(message)
        await connection.respond(202, b"Accepted", content_type="text/plain")
