"""A replay server over Streamable HTTP, in the era the session was recorded in.

POST ``/mcp`` takes one message.  A request whose recorded exchange is just
the response gets it as JSON; one with more to say (progress, log lines, its
own requests to the client) gets an SSE stream that ends with the response.
Notifications and the client's answers get 202.  In the handshake era the
``initialize`` answer assigns an ``Mcp-Session-Id``, GET opens the stream for
what the server said outside any request, and DELETE ends the session; in the
stateless era there is no session, GET and DELETE are 405, and an error answer
carries the status its code calls for.

h11 (sans-I/O HTTP/1.1) keeps the protocol, asyncio streams move the bytes.

Example::

    python -m mcp_nb.replay session.jsonl --http --port 8123
    # mcp_nb replay listening on http://127.0.0.1:8123/mcp
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections.abc import Callable, Sequence
from typing import Any

import h11

from ..protocol.errors import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR
from .replayer import Replayer
from .script import Exchange

MCP_PATH = "/mcp"
_READ_CHUNK = 65536
#: The status of a stateless-era error answer, by JSON-RPC code (others: 200).
STATELESS_ERROR_STATUS = {PARSE_ERROR: 400, INVALID_REQUEST: 400, INVALID_PARAMS: 400,
                          METHOD_NOT_FOUND: 404}

_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
Headers = Sequence[tuple[str, str]]


class _Connection:
    """One HTTP/1.1 connection: requests in, responses (whole or streamed) out."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.h11 = h11.Connection(h11.SERVER)

    async def next_request(self) -> tuple[h11.Request, bytes] | None:
        request: h11.Request | None = None
        body = bytearray()
        while True:
            event = self.h11.next_event()
            if event is h11.NEED_DATA:
                data = await self.reader.read(_READ_CHUNK)
                self.h11.receive_data(data)
                if not data and self.h11.their_state is not h11.DONE:
                    return None
                continue
            if isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                assert request is not None
                return request, bytes(body)
            elif isinstance(event, h11.ConnectionClosed):
                return None

    async def send(self, event: Any) -> None:
        data = self.h11.send(event)
        if data:
            self.writer.write(data)
            await self.writer.drain()

    async def respond(self, status: int, body: bytes = b"", headers: Headers = ()) -> None:
        all_headers = [*headers, ("content-length", str(len(body)))]
        await self.send(h11.Response(status_code=status, headers=all_headers))
        if body:
            await self.send(h11.Data(data=body))
        await self.send(h11.EndOfMessage())

    async def open_stream(self, headers: Headers = ()) -> None:
        await self.send(h11.Response(status_code=200, headers=[
            ("content-type", "text/event-stream"), ("cache-control", "no-cache"), *headers]))

    async def event(self, message: dict[str, Any]) -> None:
        await self.send(h11.Data(data=f"event: message\ndata: {_ENCODE(message)}\n\n".encode()))

    def next_cycle(self) -> bool:
        if self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE:
            self.h11.start_next_cycle()
            return True
        return False


def _headers_of(request: h11.Request) -> dict[str, str]:
    return {name.decode().lower(): value.decode("latin-1") for name, value in request.headers}


class ReplayHttpServer:
    """Serves one recording to any number of HTTP clients."""

    def __init__(self, replayer: Replayer) -> None:
        self.replayer = replayer
        self.stateless = replayer.script.recording.header.era == "stateless"
        self._session_ids: set[str] = set()
        # What the server said outside any request goes to the open GET streams.
        self._get_streams: set[asyncio.Queue[dict[str, Any]]] = set()

    def _loose(self, message: dict[str, Any]) -> None:
        if not self._get_streams:
            self.replayer.log(f"replay: no GET stream open for {message.get('method')!r}; "
                              "dropped")
        for queue in self._get_streams:
            queue.put_nowait(message)

    async def serve_connection(self, reader: asyncio.StreamReader,
                               writer: asyncio.StreamWriter) -> None:
        connection = _Connection(reader, writer)
        try:
            while (incoming := await connection.next_request()) is not None:
                await self._handle(connection, *incoming)
                if not connection.next_cycle():
                    break
        except (h11.RemoteProtocolError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _handle(self, connection: _Connection, request: h11.Request, body: bytes) -> None:
        path = request.target.decode().split("?", 1)[0]
        if path != MCP_PATH:
            await connection.respond(404, b"replay serves MCP at /mcp only")
            return
        method = request.method.decode()
        if method == "POST":
            await self._post(connection, body)
        elif method in ("GET", "DELETE") and self.stateless:
            await connection.respond(405, headers=[("allow", "POST")])
        elif method == "GET":
            await self._get(connection)
        elif method == "DELETE":
            self._session_ids.discard(_headers_of(request).get("mcp-session-id", ""))
            await connection.respond(200)
        else:
            await connection.respond(405, headers=[("allow", "GET, POST, DELETE")])

    async def _post(self, connection: _Connection, body: bytes) -> None:
        try:
            message = json.loads(body)
        except ValueError as exc:
            await self._json(connection, {"jsonrpc": "2.0", "id": None, "error": {
                "code": PARSE_ERROR, "message": f"Parse error: {exc}"}})
            return
        if isinstance(message, list):
            await connection.respond(200, _ENCODE(self.replayer.refuse_batch(message)).encode(),
                                     [("content-type", "application/json")])
            return
        if not isinstance(message, dict):
            await self._json(connection, {"jsonrpc": "2.0", "id": None, "error": {
                "code": INVALID_REQUEST, "message": "replay: not a JSON-RPC message"}})
            return
        if "id" not in message or "method" not in message:
            self.replayer.handle(message, self._loose)
            await connection.respond(202)
            return
        answers: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        found = self.replayer.handle(message, answers.put_nowait)
        headers: list[tuple[str, str]] = []
        if message["method"] == "initialize" and not self.stateless:
            session_id = secrets.token_hex(16)
            self._session_ids.add(session_id)
            headers.append(("mcp-session-id", session_id))
        if not isinstance(found, Exchange) or len(found.steps) <= 1:
            await self._json(connection, await answers.get(), headers)
            return
        await connection.open_stream(headers)
        while True:
            answer = await answers.get()
            await connection.event(answer)
            if "method" not in answer and answer.get("id") == message["id"]:
                break
        await connection.send(h11.EndOfMessage())

    async def _json(self, connection: _Connection, answer: dict[str, Any],
                    headers: Headers = ()) -> None:
        status = 200
        if self.stateless and "error" in answer:
            status = STATELESS_ERROR_STATUS.get(answer["error"].get("code"), 200)
        await connection.respond(status, _ENCODE(answer).encode(),
                                 [("content-type", "application/json"), *headers])

    async def _get(self, connection: _Connection) -> None:
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._get_streams.add(queue)
        await connection.open_stream()
        gone = asyncio.ensure_future(connection.reader.read(1))  # b"": the client hung up
        try:
            while True:
                take = asyncio.ensure_future(queue.get())
                await asyncio.wait({take, gone}, return_when=asyncio.FIRST_COMPLETED)
                if not take.done():
                    take.cancel()
                    return
                await connection.event(take.result())
        finally:
            self._get_streams.discard(queue)
            gone.cancel()
            connection.writer.close()


async def serve_http(replayer: Replayer, host: str = "127.0.0.1", port: int = 0, *,
                     ready: Callable[[str], None] = print) -> int:
    """Serve until cancelled; ``ready`` is told the URL once the socket listens."""
    server = ReplayHttpServer(replayer)
    listener = await asyncio.start_server(server.serve_connection, host, port)
    bound = listener.sockets[0].getsockname()
    ready(f"mcp_nb replay listening on http://{host}:{bound[1]}{MCP_PATH}")
    try:
        async with listener:
            await listener.serve_forever()
    finally:
        await replayer.aclose()
    return 0
