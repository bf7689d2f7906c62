"""Run the checkup against a target: a URL, a stdio command, or an open ClientSession.

This module runs the phases and assembles the report; each phase's checks live in
a module of their own (:mod:`~mcp_nb.check.lifecycle`, :mod:`~mcp_nb.check.features`,
:mod:`~mcp_nb.check.http_rules`, :mod:`~mcp_nb.check.apps_rules`, …).

The main session settles its era with ``connect(era="auto")``.  Lifecycle checks
need the handshake: they use the main session when it speaks it, else a second
session that initializes (a stateless-only server makes them not applicable).
An unknown version is offered on a session of its own, and the Streamable HTTP
rules are probed with raw requests (a client that obeys the rules cannot break
them on purpose).  These groups run concurrently; within the main session the
list requests run concurrently too, as JSON-RPC allows.

Nothing here calls a tool unless ``call_tools`` names it (or is ``"all"``):
tools can have side effects.

Example::

    report = await run_checkup("http://127.0.0.1:8000/mcp")
    report = await run_checkup([sys.executable, "-m", "mcp_nb.lab"], call_tools="all")
    print(text_summary(report))
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence

import anyio

from ..client import ClientSession
from ..protocol.errors import McpError
from .apps_rules import check_apps
from .features import FeatureChecks
from .jsonrpc_rules import judge_jsonrpc
from .lifecycle import LifecycleChecks
from .model import CHECKS, Report, Result
from .sessions import Target, describe, is_url
from .stateless_rules import judge_stateless

# Target is named from here by the %mcp check magic (mcp_nb.notebook.magics.check).
__all__ = ["Target", "run_checkup"]


class _Checkup(LifecycleChecks, FeatureChecks):
    """Every check of the checkup, run against one target: the phases and the report."""

    async def run(self) -> Report:
        started = time.monotonic()
        async with contextlib.AsyncExitStack() as stack:
            main = self.target if isinstance(self.target, ClientSession) else None
            connect_error: Exception | None = None
            if main is None:
                assert self.new_session is not None
                main = self.new_session()
                try:
                    await stack.enter_async_context(main)
                    await main.connect(era="auto")
                except McpError as exc:
                    connect_error = exc
            self.sessions.append(("main", main))
            async with anyio.create_task_group() as group:
                if connect_error is None:
                    group.start_soon(self.features, main)
                group.start_soon(self.lifecycle, main, connect_error)
                if is_url(self.target):
                    from .http_rules import check_http  # httpx and authorization: URLs only

                    group.start_soon(check_http, self, self.target)
                if connect_error is None:
                    group.start_soon(check_apps, self, self.new_apps_session, main)
            judge_jsonrpc(self, self.sessions)
            self.list_changed()
            if connect_error is None:
                judge_stateless(self, main)
        # Every session is closed now: how each stdio server took its stdin closing is known.
        self.shutdown()
        return self.report(main, connect_error, started)

    def report(self, main: ClientSession, connect_error: Exception | None,
               started: float) -> Report:
        """The report: every check's result, in CHECKS' order, after what overrules them."""
        if self.authorization_required:
            # The sessions were refused at the door: what they saw (the 401's error body, a
            # failed handshake) says nothing about the protocol behind it.
            for check_id in CHECKS:
                if not check_id.startswith(("auth.", "http.")):
                    self.results[check_id] = Result.make(
                        CHECKS[check_id], "not-applicable", "the server asks for "
                        "authorization (401) and the checkup holds no token: only the "
                        "authorization metadata was checked")
        if connect_error is not None:
            self.skip(list(CHECKS), f"the session could not connect: {connect_error}")
        if not is_url(self.target):
            self.skip([c for c in CHECKS if c.startswith("http.")],
                      "not a Streamable HTTP target (these rules are HTTP's)")
        server = main.server_info
        return Report(
            target=describe(self.target),
            era=main.era.value if connect_error is None and main.era is not None else None,
            version=main.negotiated_version if connect_error is None else None,
            server=server.model_dump(exclude_none=True) if server is not None else None,
            results=[self.results.get(c) or Result.make(CHECKS[c], "not-applicable",
                                                        "not reached") for c in CHECKS],
            seconds=time.monotonic() - started,
            allowed_tools=["all"] if self.call_all else self.allowed,
        )


async def run_checkup(target: Target, *, call_tools: str | Sequence[str] = (),
                      timeout: float = 10.0, env: Mapping[str, str] | None = None,
                      cwd: str | None = None) -> Report:
    """Run every check against ``target`` and return the :class:`Report`.

    ``call_tools``: the tools the checkup may call (names, a comma-separated
    string, or ``"all"``); none by default.  ``timeout`` bounds each request.
    ``env`` and ``cwd``: the environment and working directory a stdio server
    is started with (an ``mcpServers`` entry's), else the kernel's.
    """
    return await _Checkup(target, call_tools, timeout, env=env, cwd=cwd).run()
