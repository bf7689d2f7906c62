"""The lab server over HTTP: Streamable HTTP at ``/mcp``; with ``--sse``, legacy HTTP+SSE too.

h11 (a sans-I/O HTTP/1.1 state machine, the model for this kit's protocol core)
parses and frames; anyio sockets move the bytes; the event loop is asyncio's,
shared with the :class:`~mcp_nb.lab.menus.LabSession` objects it serves.
The parts, one concern each:

* :mod:`.wire`: one HTTP/1.1 connection (requests in, responses and SSE out);
* :mod:`.routing`: :class:`LabHttpServer`: guards (Origin, credentials: the seam
  for access control), then routes by path, method and era;
* :mod:`.sessions`: handshake-era sessions, one per ``Mcp-Session-Id``, and
  legacy HTTP+SSE sessions;
* :mod:`.streams`: SSE streams, how a message finds its stream, and replay with
  ``Last-Event-ID`` under a bounded policy;
* :mod:`.stateless`: the stateless era (2026-07-28): header checks, statuses,
  JSON-or-SSE answers, one server-wide session.

With ``--era stateless``, GET and DELETE (the GET stream, sessions) are 405.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Sequence

import anyio
from anyio.abc import SocketAttribute

from mcp_nb.lab.http.routing import (
    LOCAL_HOSTS,
    MCP_PATH,
    SSE_PATH,
    Guard,
    LabHttpServer,
    Refusal,
)
from mcp_nb.lab.knobs import HttpOptions, Knobs
from mcp_nb.lab.process import arrange_exits, prepare_process
from mcp_nb.lab.rpc import diag

__all__ = ["Guard", "LabHttpServer", "Refusal", "serve_http"]


def _url(host: str, port: int, path: str) -> str:
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{path}"


async def _serve_http(knobs: Knobs, options: HttpOptions, guards: Sequence[Guard]) -> int:
    server = LabHttpServer(knobs, options, guards)
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


def serve_http(knobs: Knobs, options: HttpOptions, guards: Sequence[Guard] = ()) -> int:
    """Serve HTTP until SIGTERM, Ctrl-C or --exit-after; returns the exit code.

    ``guards`` may refuse requests before they are routed (see :mod:`.routing`).
    """
    prepare_process(knobs)
    return asyncio.run(_serve_http(knobs, options, guards))
