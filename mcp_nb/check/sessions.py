"""How the checkup reaches its target: the kinds of target, and new sessions to one.

A target is a Streamable HTTP URL, a stdio command (a string or an argv), or a
:class:`~mcp_nb.client.ClientSession` the caller already opened.  Several checks
need a connection of their own (the unknown version, the handshake beside a
stateless main session, the MCP Apps session), so the target becomes a factory of
sessions; an open session has none, since only it is ours to use.

Example::

    >>> describe(["python", "-m", "mcp_nb.lab"])
    'python -m mcp_nb.lab'
    >>> is_url("http://127.0.0.1:8000/mcp"), is_url("python server.py")
    (True, False)
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from typing import TypeGuard

from ..client import ClientSession
from ..transports.stdio import StdioTransport

Target = str | Sequence[str] | ClientSession

#: How long a stdio server may take to exit after its stdin closes before it is judged
#: to need SIGTERM: the spec's "reasonable time".  Generous, since a server that imports
#: a large framework can take seconds to notice end-of-file on a busy machine (fastmcp
#: took 2.5 s at a load of 9); only a server that ignores it pays the wait.
SHUTDOWN_GRACE = 5.0
#: The same wait for a server that never said anything: it gets no verdict on its shutdown
#: (it could not be checked), and a silent server should cost one --timeout, not two.
SILENT_GRACE = 0.25
#: The main session's era probe and the initialize it falls back to share this many
#: --timeouts: a server that says nothing is noticed once (the probe waits one --timeout,
#: initialize what is left; a server up by then that ignored the probe answers at once).
CONNECT_BUDGET = 1.5


def describe(target: Target) -> str:
    if isinstance(target, ClientSession):
        return "open session"
    if isinstance(target, str):
        return target
    return shlex.join(target)


def is_url(target: Target) -> TypeGuard[str]:
    return isinstance(target, str) and target.startswith(("http://", "https://"))


def session_factory(target: Target, timeout: float, *, apps: bool = False,
                    env: Mapping[str, str] | None = None, cwd: str | None = None,
                    headers: Mapping[str, str] | None = None
                    ) -> Callable[[], ClientSession] | None:
    """Sessions to new connections to the target (None for an open session: only it is ours);
    ``apps`` declares the MCP Apps extension (servers offer Apps only to clients that do);
    ``env`` and ``cwd`` are a stdio server's environment and working directory, ``headers``
    what an HTTP session sends with every request (``--header``)."""
    if isinstance(target, ClientSession):
        return None
    if is_url(target):
        from ..transports.auto import http_transport  # httpx and authorization: URLs only

        url = target
        return lambda: ClientSession(http_transport(url, headers=headers), timeout=timeout,
                                     probe_timeout=timeout, apps=apps)
    argv = shlex.split(target) if isinstance(target, str) else list(target)
    return lambda: ClientSession(
        StdioTransport(argv, env=env, cwd=cwd,
                       stdin_close_grace=SHUTDOWN_GRACE),
        timeout=timeout, probe_timeout=timeout, apps=apps)
