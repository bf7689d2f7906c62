"""HTTP/1.1 on one connection for the lab: h11 frames, anyio moves the bytes, SSE is written raw."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import anyio
import h11
from anyio.abc import ByteStream

from mcp_nb.lab.rpc import encode_message

MAX_BODY_BYTES = 4 * 1024 * 1024
Headers = Sequence[tuple[str, str]]

_READ_CHUNK = 65536
#: The JSON-RPC code of an HTTP-level refusal (no request to blame).
SERVER_ERROR = -32000


def error_body(message: str, code: int = SERVER_ERROR,
               request_id: str | int | None = None) -> bytes:
    """A JSON-RPC error (without an id, how the spec lets a server explain an HTTP refusal)."""
    error = {"code": code, "message": message}
    return encode_message({"jsonrpc": "2.0", "id": request_id, "error": error})


@dataclass(frozen=True)
class HttpRequest:
    """One complete request; header names lower-cased (a repeated header keeps its last value)."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes


class RequestTooLarge(Exception):
    pass


class Connection:
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
                    raise RequestTooLarge
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
