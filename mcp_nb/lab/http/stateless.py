"""The lab's stateless era over HTTP (2026-07-28): header checks, statuses, and the POST exchange.

A POST is routed here when its body's ``_meta`` names a protocol version, its
method exists only in that era (``server/discover``, ``subscriptions/listen``)
or its ``MCP-Protocol-Version`` header names a stateless version (with ``--era
stateless``: always).  No session is needed or minted, the
``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` headers must agree
with the body (-32020 otherwise), and one server-wide LabSession serves every
such request, so that a ``bump`` on one connection reaches a
``subscriptions/listen`` stream on another.  Its answers are JSON with the
status its error code calls for (400, or 404 for an unknown method) unless
something is sent before the response (progress, a log message, a
subscription's acknowledgement): then an SSE stream, without event ids, since
this era has no resumption.  Closing that stream cancels the request.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import itertools
import json
import re

import anyio

from mcp_nb.lab.http.streams import EventStream, current_stream, write_stream
from mcp_nb.lab.http.wire import Connection, HttpRequest, error_body
from mcp_nb.lab.knobs import Knobs
from mcp_nb.lab.menus import open_session
from mcp_nb.lab.rpc import Message, diag, encode_message, is_request_id
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
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    missing_request_meta,
)

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
NAME_PARAMS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
               # The tasks extension (SEP-2663) names the task.
               "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}
_BASE64_SENTINEL = re.compile(r"=\?base64\?(?P<payload>[A-Za-z0-9+/=]*)\?=")


def decode_header_value(value: str) -> str | None:
    """A header value with the ``=?base64?…?=`` sentinel decoded; None if that is malformed."""
    match = _BASE64_SENTINEL.fullmatch(value)
    if match is None:
        return value
    try:
        return base64.b64decode(match["payload"], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def header_text(value: object) -> str:
    """How an argument is written in its ``Mcp-Param-*`` header (SEP-2243)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def header_mismatch(headers: dict[str, str], message: Message,
                    param_headers: dict[str, str] | None = None) -> str | None:
    """Why the request's mirrored headers disagree with its body (2026-07-28), or None.

    ``MCP-Protocol-Version`` must equal the ``_meta`` version, ``Mcp-Method``
    the method, and for tools/call, prompts/get and resources/read,
    ``Mcp-Name`` the name or uri; each tool argument annotated ``x-mcp-header``
    (``param_headers``: argument → header name) must be mirrored in
    ``Mcp-Param-<name>``.  ``Mcp-Name`` and ``Mcp-Param-*`` values are decoded
    first if base64-encoded.  A missing header is a mismatch too.
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
    arguments = params.get("arguments")
    if method == "tools/call" and isinstance(arguments, dict):
        mirrored += [(f"Mcp-Param-{header}", header_text(arguments[name]))
                     for name, header in (param_headers or {}).items()
                     if arguments.get(name) is not None]
    for header, expected in mirrored:
        got = headers.get(header.lower())
        if got is None:
            return f"Header mismatch: the {header} header is missing (the body says {expected!r})"
        encodable = header == "Mcp-Name" or header.startswith("Mcp-Param-")
        if (decode_header_value(got) if encodable else got) != expected:
            return (f"Header mismatch: {header} header value {got!r} does not match the body's "
                    f"{expected!r}")
    return None


def http_status(response: Message) -> int:
    """The status for a stateless-era JSON answer: by error code, else 200."""
    error = response.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return STATUS_FOR_ERROR.get(code, 200) if isinstance(code, int) else 200


class StatelessEndpoint:
    """Serves every stateless-era POST with one server-wide LabSession."""

    def __init__(self, knobs: Knobs) -> None:
        self.knobs = knobs
        self.lab = open_session(knobs, self._route, era="stateless")
        self._indices = itertools.count(1)
        #: Set when each exchange still under way is done (the shutdown waits).
        self._exchanges: set[asyncio.Event] = set()

    def _route(self, message: Message) -> None:
        """Where the session's messages go: the stream of the request they belong to (the
        context says which); nothing is sent outside a request."""
        stream = current_stream.get()
        if stream is None or stream.finished:
            what = message.get("method") or f"the response to {message.get('id')!r}"
            diag(f"dropping {what}: its request's response stream has ended")
            return
        stream.push(message)

    async def post(self, connection: Connection, request: HttpRequest, message: Message) -> None:
        """One stateless-era POST: no session; headers checked; JSON or SSE answer."""
        if "method" not in message:
            await connection.respond(400, error_body(
                "Bad Request: a client POSTs requests (and notifications), never responses, in "
                "the stateless era: there are no server requests to answer", INVALID_REQUEST))
            return
        if "id" not in message:
            # The core protocol has no client notification on this transport (closing a
            # response stream is how a client cancels): accepted, and nothing to do.
            diag(f"ignoring notification {message['method']!r} in the stateless era")
            await connection.respond(202)
            return
        if not is_request_id(message["id"]):
            await connection.respond(400, error_body(
                "Invalid Request: id must be a string or an integer", INVALID_REQUEST))
            return
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        if self.knobs.lenient_meta and isinstance(meta, dict):
            meta.setdefault(META_CLIENT_CAPABILITIES, {})  # served as if declared (a fault)
        if (isinstance(params, dict) and not missing_request_meta(params)
                and not self.knobs.skip_header_check):
            tool = params.get("name") if message["method"] == "tools/call" else None
            mirrored = self.lab.param_headers(tool) if isinstance(tool, str) else {}
            mismatch = header_mismatch(request.headers, message, mirrored)
            if mismatch is not None:
                diag(f"{mismatch} (400)")
                await connection.respond(400, error_body(mismatch, HEADER_MISMATCH,
                                                         message.get("id")))
                return
        stream = EventStream(next(self._indices), message.get("id"), resumable=False)
        token = current_stream.set(stream)
        try:
            task = self.lab.receive(message)
        finally:
            current_stream.reset(token)
        done = asyncio.Event()
        self._exchanges.add(done)
        try:
            await self._answer(connection, stream)
        finally:
            self._exchanges.discard(done)
            done.set()
            if task is not None and not stream.finished:
                self.lab.abandon(task, "its client closed the response stream")

    async def _answer(self, connection: Connection, stream: EventStream) -> None:
        """Wait for the first message: a lone response goes out as JSON with its status;
        anything sent before the response makes the answer an SSE stream."""
        async with anyio.create_task_group() as watch:

            async def hang_up_when_client_leaves() -> None:
                await connection.until_client_leaves()
                watch.cancel_scope.cancel()

            watch.start_soon(hang_up_when_client_leaves)
            await stream.wait_for_first()
            watch.cancel_scope.cancel()
        if not stream.pushed:
            return  # the client left first
        if stream.finished and stream.pushed == 1:
            response = stream.messages[0]
            if self.knobs.discover_without_cache_hints and isinstance(
                    response.get("result"), dict) and "supportedVersions" in response["result"]:
                # server/discover's result, its required ttlMs and cacheScope left out (a fault).
                response = {**response, "result": {k: v for k, v in response["result"].items()
                                                   if k not in ("ttlMs", "cacheScope")}}
            await connection.respond(http_status(response), encode_message(response))
            return
        await write_stream(connection, stream, 0, first=b"",
                           headers=[("x-accel-buffering", "no")])

    async def end_subscriptions(self) -> None:
        """Let open subscriptions/listen streams end with their final result, written out."""
        await self.lab.end_subscriptions()
        with anyio.move_on_after(_FLUSH_TIMEOUT):
            for done in list(self._exchanges):
                await done.wait()

    async def close(self) -> None:
        await self.lab.close()
