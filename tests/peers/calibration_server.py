"""Servers built on the official MCP Python SDK the way deployments build them, for the
checkup's calibration (tests/test_check_calibration.py, docs/checkup.md "Calibration").

Each mode is one way a real server answers that the checkup must judge rightly: the
protocol code is the SDK's, only the deployment around it is written here.

``python calibration_server.py MODE [OPTIONS]``, MODE one of:

- ``mounted``: the SDK's Streamable HTTP app mounted at ``/mcp`` inside a Starlette
  app, as FastAPI's ``app.mount("/mcp", …)`` does: ``/mcp`` answers ``307`` to ``/mcp/``.
- ``host-allowlist --guard sdk|starlette|forbid``: a server that serves only the Host
  name ``localhost`` (the DNS-rebinding defence): the SDK's own guard (``421``),
  Starlette's ``TrustedHostMiddleware`` (``400``), or a middleware answering ``403``.
- ``api-key --key KEY``: every request needs ``X-API-Key: KEY``; without it ``401`` and
  no OAuth metadata (a plain API key, no authorization server).
- ``replay`` / ``replay-wrong-stream``: an event store, so streams can be resumed with
  ``Last-Event-ID``; the second replays *other* streams' messages on the resumed one,
  which the SDK then keeps open for the stream's later messages.
- ``exit-on-unknown`` (stdio): a server that knows the 2025-11-25 methods only and exits
  on any other request (``server/discover`` among them), as older servers crash.

The HTTP modes listen on 127.0.0.1 on a port the OS picks and say where on stderr
(uvicorn's ``Uvicorn running on http://127.0.0.1:PORT``).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http import EventCallback, EventMessage, EventStore
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import JSONRPCRequest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Mount
from starlette.types import ASGIApp, Receive, Scope, Send

#: The methods of 2025-11-25 a server may be asked (``exit-on-unknown`` exits on any other).
KNOWN_METHODS = {
    "initialize", "ping", "tools/list", "tools/call", "resources/list", "resources/read",
    "resources/templates/list", "resources/subscribe", "resources/unsubscribe",
    "prompts/list", "prompts/get", "completion/complete", "logging/setLevel",
}


def make_server() -> MCPServer:
    server = MCPServer("calibration-peer", instructions="A server for the checkup's calibration.")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.resource("note://welcome", mime_type="text/plain")
    def welcome() -> str:
        """A short note."""
        return "welcome"

    @server.prompt()
    def summarize(topic: str) -> str:
        """Ask for a summary of a topic."""
        return f"Summarize {topic} in one line."

    return server


class SessionEventStore(EventStore):
    """One session's SSE events, kept so a stream can be resumed; a resumed stream replays
    its own later events.

    The SDK keys a stream by its request's JSON-RPC id, and hands every session's transport
    the one ``session_manager.event_store``: a store keyed by stream id alone would mix two
    sessions' streams for the same id. So each transport gets a store of its own (see
    :func:`events_per_session`), as fastmcp's ``SessionScopedEventStore`` does.

    ``wrong_stream``: the replay sends the session's *other* streams' messages instead (the
    fault the spec forbids: the server "MUST NOT replay messages that would have been
    delivered on a different stream"), and names the resumed stream, so the SDK keeps the
    resumed stream open for more.
    """

    def __init__(self, ids: Iterator[int], *, wrong_stream: bool) -> None:
        self.events: list[tuple[str, str, Any]] = []  # (event id, stream id, message)
        self.ids, self.wrong_stream = ids, wrong_stream

    async def store_event(self, stream_id: str, message: Any) -> str:
        event_id = f"evt-{next(self.ids)}"
        self.events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id: str, send_callback: EventCallback
                                  ) -> str | None:
        position = next((n for n, e in enumerate(self.events) if e[0] == last_event_id), None)
        if position is None:
            return None
        stream = self.events[position][1]
        if self.wrong_stream:
            chosen = [e for e in self.events if e[1] != stream]
        else:
            chosen = [e for e in self.events[position + 1:] if e[1] == stream]
        for event_id, _stream, message in chosen:
            if message is not None:  # a priming event carries no message
                await send_callback(EventMessage(message, event_id))
        return stream


def events_per_session(server: MCPServer, *, wrong_stream: bool) -> None:
    """Give each new session's transport a :class:`SessionEventStore` of its own.

    The SDK's session manager reads its ``event_store`` attribute once per new transport;
    a property answering a fresh store each time makes the stores per session (event ids
    stay unique across them, from one counter)."""
    manager = server.session_manager
    ids = itertools.count(1)
    manager.__class__ = type("PerSessionEvents", (type(manager),), {"event_store": property(
        lambda self: SessionEventStore(ids, wrong_stream=wrong_stream))})


class RequireApiKey:
    """ASGI middleware: ``X-API-Key`` must be the key; else 401 with a JSON body and no
    ``WWW-Authenticate`` (an API key is not OAuth: there is no metadata to discover)."""

    def __init__(self, app: ASGIApp, key: str) -> None:
        self.app, self.key = app, key.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"x-api-key") != self.key:
            response = JSONResponse({"error": "missing or wrong API key"}, status_code=401)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


class ForbidOtherHosts:
    """ASGI middleware: any Host but ``localhost:PORT`` is refused with 403."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        host = dict(scope.get("headers", [])).get(b"host", b"").decode("latin-1")
        if scope["type"] == "http" and host.rsplit(":", 1)[0] != "localhost":
            response = PlainTextResponse(f"Forbidden: unknown host {host}", status_code=403)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def http_app(mode: str, options: argparse.Namespace) -> Starlette:
    server = make_server()
    if mode == "mounted":
        inner = server.streamable_http_app(streamable_http_path="/")

        @contextlib.asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            # A mounted app's own lifespan is not run by its parent: start the SDK's
            # session manager here, as the SDK's documentation tells a mounting app to.
            async with server.session_manager.run():
                yield

        return Starlette(routes=[Mount("/mcp", app=inner)], lifespan=lifespan)
    security = None
    middleware: list[Middleware] = []
    if mode == "host-allowlist":
        if options.guard == "sdk":
            security = TransportSecuritySettings(
                enable_dns_rebinding_protection=True, allowed_hosts=["localhost:*"],
                allowed_origins=["http://localhost:*"])
        elif options.guard == "starlette":
            middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=["localhost"])]
        else:
            middleware = [Middleware(ForbidOtherHosts)]
    elif mode == "api-key":
        middleware = [Middleware(RequireApiKey, key=options.key)]
    replay = mode in ("replay", "replay-wrong-stream")
    # An event store turns resumability on; the per-session stores replace it below.
    app = server.streamable_http_app(event_store=SessionEventStore(iter(()), wrong_stream=False)
                                     if replay else None, transport_security=security)
    if replay:
        events_per_session(server, wrong_stream=mode == "replay-wrong-stream")
    app.user_middleware[:0] = middleware
    return app


async def stdio_exit_on_unknown() -> None:
    """The SDK's stdio server behind a filter that exits on a request it does not know."""
    server = make_server()
    lowlevel = server._lowlevel_server  # the SDK's own run loop, given filtered streams
    async with stdio_server() as (read_stream, write_stream):
        send, receive = anyio.create_memory_object_stream[Any](16)

        async def relay() -> None:
            async with send:
                async for item in read_stream:
                    message = getattr(item, "message", None)  # an Exception passes on
                    if isinstance(message, JSONRPCRequest) and message.method not in KNOWN_METHODS:
                        print(f"unknown method {message.method}: exiting", file=sys.stderr,
                              flush=True)
                        os._exit(3)
                    await send.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(relay)
            await lowlevel.run(receive, write_stream, lowlevel.create_initialization_options())
            group.cancel_scope.cancel()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["mounted", "host-allowlist", "api-key", "replay",
                                         "replay-wrong-stream", "exit-on-unknown"])
    parser.add_argument("--guard", choices=["sdk", "starlette", "forbid"], default="sdk")
    parser.add_argument("--key", default="calibration-key")
    options = parser.parse_args()
    if options.mode == "exit-on-unknown":
        anyio.run(stdio_exit_on_unknown)
        return
    uvicorn.run(http_app(options.mode, options), host="127.0.0.1", port=0, log_level="info")


if __name__ == "__main__":
    main()
