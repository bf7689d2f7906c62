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
from ..i18n import _
from ..protocol.errors import McpError
from ..transports.stdio import StdioTransport
from .apps_rules import check_apps
from .catalogue import CHECKS
from .features import FeatureChecks
from .guard import CheckGuard
from .guard import now as _now
from .handshake_features import HANDSHAKE_FEATURE_CHECKS
from .headers import shown_names
from .jsonrpc_rules import judge_jsonrpc
from .lifecycle import LifecycleChecks
from .model import Report, Result, transcript_evidence
from .sent import session_requests
from .sessions import CONNECT_BUDGET, SILENT_GRACE, Target, describe, is_url, session_factory
from .stateless_rules import judge_stateless

# Target is named from here by the %mcp check magic (mcp_nb.notebook.magics.check).
__all__ = ["Target", "run_checkup"]


#: The checks (ids or id prefixes) each group owns: a crash is their error (see guard.py).
_FEATURES = ("capabilities.", "tools.", "lists.pagination", "resources.", "prompts.",
             "completion.", "logging.", "stateless.")
_JSONRPC = ("jsonrpc.ids", "jsonrpc.error-codes", "jsonrpc.messages")


class _Checkup(CheckGuard, LifecycleChecks, FeatureChecks):
    """Every check of the checkup, run against one target: the phases and the report."""

    #: The first main session, when its server exited on the server/discover probe.
    discover_exit: ClientSession | None = None

    async def run(self) -> Report:
        started = time.monotonic()
        if is_url(self.target):
            from .preflight import preflight_http  # httpx: URLs only

            reach = await preflight_http(self.target, self.timeout, self.headers)
            self.http_requests += reach.sent
            self.connection = reach.connection
            if reach.url != self.target:  # a same-origin redirect followed: check there
                self.target = reach.url
                self.new_session = session_factory(reach.url, self.timeout,
                                                   headers=self.headers)
                self.new_apps_session = session_factory(reach.url, self.timeout, apps=True,
                                                        headers=self.headers)
            if reach.problem is not None:
                return self.unreached(reach.problem, started, reach.evidence,
                                      reach.unauthorized)
        async with contextlib.AsyncExitStack() as stack:
            main, connect_error = await self.open_main(stack)
            if connect_error is not None and not is_url(self.target) and not _reached(main):
                # Nothing MCP ever answered: the process could not start, or exited first (a
                # URL's first answer was classified by the pre-flight: a 401 is MCP's).
                problem = _silence(main, connect_error, self.timeout)
                if isinstance(main.transport, StdioTransport):
                    # Nothing to judge in its shutdown: no polite wait for a silent server.
                    main.transport.stdin_close_grace = SILENT_GRACE
                self.connection = problem
                return self.unreached(problem, started, [], None)
            async with anyio.create_task_group() as group:
                if connect_error is None:
                    group.start_soon(self.guarded, _FEATURES, self.features, main)
                group.start_soon(self.guarded, ("lifecycle.", *HANDSHAKE_FEATURE_CHECKS),
                                 self.lifecycle, main, connect_error)
                if is_url(self.target):
                    from .http_rules import check_http  # httpx and authorization: URLs only

                    group.start_soon(self.guarded, ("http.", "auth.", "stateless.request-meta",
                                                    "stateless.header-mismatch"),
                                     check_http, self, self.target)
                if connect_error is None:
                    group.start_soon(self.guarded, ("apps.",), check_apps, self,
                                     self.new_apps_session, main)
            for owns, judge in (
                    (_JSONRPC, lambda: judge_jsonrpc(self, self.sessions)),
                    (("lists.list-changed",), self.list_changed),
                    (("stateless.",),
                     lambda: connect_error is None and judge_stateless(self, main))):
                await self.guarded(owns, _now, judge)
            self.discover_probe(main, connect_error)
        # Every session is closed now: how each stdio server took its stdin closing is known.
        await self.guarded(("lifecycle.shutdown",), _now, self.shutdown)
        return self.report(main, connect_error, started)

    async def open_main(self, stack: contextlib.AsyncExitStack
                        ) -> tuple[ClientSession, Exception | None]:
        """The main session, connected (or why not).  A stdio server that exits on the
        ``server/discover`` probe is started again and spoken to in the handshake era: the
        handshake checks then judge the handshake, and :meth:`left_unanswered` the exit."""
        if isinstance(self.target, ClientSession):
            # An open session: what it sent before the checkup is not the checkup's.
            self.since[id(self.target)] = self.target.transcript.next_seq
            self.sessions.append(("main", self.target))
            return self.target, None
        connect_error: Exception | None = None
        for era in ("auto", "handshake"):
            assert self.new_session is not None
            main = self.new_session()
            try:
                await stack.enter_async_context(main)
                await main.connect(era=era,  # type: ignore[arg-type]
                                   within=CONNECT_BUDGET * self.timeout)
            except McpError as exc:
                connect_error = exc
            else:
                connect_error = None
            if era == "auto" and connect_error is not None and _exited_on_discover(main):
                self.discover_exit = main
                continue
            break
        self.sessions.append(("main", main))
        return main, connect_error

    def discover_probe(self, main: ClientSession, connect_error: Exception | None) -> None:
        """lifecycle.discover-probe: how the server took the server/discover probe sent before
        anything else (2026-07-28's backward compatibility): answered or silent and still
        there (pass), or exited (a warning: the spec expects legacy servers to answer with an
        error or not at all, and obliges none of them)."""
        if self.discover_exit is not None:
            exited = next(e for e in self.discover_exit.transport_events if e.kind == "exited")
            self.put("lifecycle.discover-probe", "warn", _(
                "server/discover, sent before initialize, was left unanswered: the server "
                "process exited ({detail}), so a client probing first must start it again; a "
                "server that does not know a method answers -32601").format(
                detail=exited.detail),
                [transcript_evidence("discover", e) for e in self.discover_exit.transcript][:5])
            return
        probe = [e for e in main.transcript if e.direction == "send" and e.kind == "request"
                 and e.method == "server/discover" and e.seq >= self.since.get(id(main), 0)][:1]
        if connect_error is not None or not probe:
            self.skip(["lifecycle.discover-probe"], _(
                "no server/discover probe opened a connection (an open session is used as it "
                "is)"))
            return
        answer = [e for e in main.transcript if e.id == probe[0].id and e.direction == "recv"
                  and e.kind in ("response", "error")][:1]
        self.put("lifecycle.discover-probe", "pass", _(
            "server/discover, sent first, was answered ({answer}) and the session went on").format(
            answer=answer[0].kind) if answer else _(
            "server/discover, sent first, was not answered (legacy servers may stay silent); "
            "the handshake that followed on the same process worked"),
            [transcript_evidence("main", e) for e in [*probe, *answer]])

    def report(self, main: ClientSession, connect_error: Exception | None,
               started: float) -> Report:
        """The report: every check's result, in CHECKS' order, after what overrules them."""
        if self.authorization_required:
            # The sessions were refused at the door: what they saw (the 401's error body, a
            # failed handshake) says nothing about the protocol behind it.
            for check_id in CHECKS:
                if not check_id.startswith(("auth.", "http.")):
                    self.results[check_id] = Result.make(
                        CHECKS[check_id], "not-applicable", _("the server asks for "
                        "authorization (401) and the checkup holds no token: only the "
                        "authorization metadata was checked"))
        if connect_error is not None:
            self.skip(list(CHECKS), _("the session could not connect: {error}").format(
                error=connect_error))
        if not is_url(self.target):
            # Every check of the raw HTTP probes (http_rules: the transport's, authorization's,
            # the stateless era's over HTTP), named here without importing httpx for stdio.
            self.skip([c for c in CHECKS if c.startswith(("http.", "auth."))
                       or c in ("stateless.request-meta", "stateless.header-mismatch")],
                      _("not a Streamable HTTP target (these rules are HTTP's)"))
        server = main.server_info
        return Report(
            target=describe(self.target) + (_(" (headers {names}: values not shown)").format(
                names=shown_names(self.headers)) if self.headers else ""),
            era=main.era.value if connect_error is None and main.era is not None else None,
            version=main.negotiated_version if connect_error is None else None,
            server=server.model_dump(exclude_none=True) if server is not None else None,
            results=[self.results.get(c) or self.unfinished(c) for c in CHECKS],
            seconds=time.monotonic() - started,
            allowed_tools=["all"] if self.call_all else self.allowed,
            connection=self.connection,
            requests_sent=[*session_requests([*self.sessions, *self.side_sessions], self.since),
                           *self.http_requests],
        )


def _reached(session: ClientSession) -> bool:
    """Whether anything MCP came back on the session (a message, even an error)."""
    return any(e.direction == "recv" for e in session.transcript)


def _exited_on_discover(session: ClientSession) -> bool:
    """The stdio server exited with server/discover sent and nothing answered."""
    return (session.transport.kind == "stdio" and not _reached(session)
            and any(e.direction == "send" and e.method == "server/discover"
                    for e in session.transcript)
            and any(e.kind == "exited" for e in session.transport_events))


def _silence(main: ClientSession, error: Exception, timeout: float) -> str:
    """Why a stdio server could not be checked: it exited, or it said nothing in time."""
    unanswered = [e.method for e in main.transcript if e.direction == "send"
                  and e.kind == "request" and e.method]
    exited = any(e.kind == "exited" for e in main.transport_events)
    if unanswered and not exited:
        return _("the server answered nothing: {requests} went unanswered within "
                 "{budget:g} s (--timeout {timeout:g}); {how}").format(
            requests=", ".join(dict.fromkeys(unanswered)), budget=CONNECT_BUDGET * timeout,
            timeout=timeout, how=_stdio_hint())
    return _("the server never answered ({error}); {how}").format(error=error,
                                                                   how=_stdio_hint())


def _stdio_hint() -> str:
    return _("check that the command starts the server by hand (its path, its arguments, "
             "the environment and working directory it needs: --config FILE NAME gives "
             "them)")


async def run_checkup(target: Target, *, call_tools: str | Sequence[str] = (),
                      timeout: float = 10.0, env: Mapping[str, str] | None = None,
                      cwd: str | None = None, prompts_get: bool = True,
                      template_reads: bool = True,
                      headers: Mapping[str, str] | None = None) -> Report:
    """Run every check against ``target`` and return the :class:`Report`.

    ``call_tools``: the tools the checkup may call (names, a comma-separated
    string, or ``"all"``); none by default.  ``timeout`` bounds each request.
    ``env`` and ``cwd``: the environment and working directory a stdio server
    is started with (an ``mcpServers`` entry's), else the kernel's.
    ``prompts_get=False`` sends no ``prompts/get`` and ``template_reads=False``
    no request built from a resource template: reads by the spec, in which a
    server may still do I/O.  The report lists every request sent
    (``Report.requests_sent``).  ``headers`` go on every request to an HTTP
    target's origin (an API key, a Host name the server accepts); the report
    names them, never their values.
    """
    return await _Checkup(target, call_tools, timeout, env=env, cwd=cwd,
                          prompts_get=prompts_get, template_reads=template_reads,
                          headers=headers).run()
