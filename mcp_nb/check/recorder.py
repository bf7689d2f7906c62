"""What every group of checks shares: where verdicts go, the time allowed, one request as evidence.

The rule modules (HTTP, authorization, MCP Apps, the stateless era) are functions
that take the checkup typed as one of the protocols here, never the runner's class:
they depend on this small surface only, so none of them imports the runner.  The
checks that are methods (lifecycle, lists, resources, prompts, tools, …) are
classes built on :class:`CheckupCore`, the one implementation of that surface,
and the runner's ``_Checkup`` combines them.

Example::

    async def check_something(checkup: SessionRecorder, session: ClientSession) -> None:
        answer, evidence = await checkup.exchange(session, "main", "ping")
        checkup.put("lifecycle.ping", "pass" if answer == {} else "fail", "…", evidence)
"""

from __future__ import annotations

import traceback
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

from ..client import ClientSession
from ..protocol.errors import McpError
from .catalogue import CHECKS
from .model import Outcome, Result
from .model import transcript_evidence as _entry
from .sessions import Target, session_factory

#: At most this many listed resources are read, and prompts got (each is one request).
SAMPLE = 3
#: One request's outcome: its result (or the exception it raised), and its transcript
#: entries as evidence.
Exchange = tuple[Any, list[dict[str, Any]]]


class Recorder(Protocol):
    """What the probes need from the checkup: where verdicts go, and the time allowed."""

    timeout: float
    authorization_required: bool
    #: Headers the person gave for the target's origin (--header), e.g. an API key.
    headers: dict[str, str]
    #: The raw HTTP requests the probes sent (see :mod:`mcp_nb.check.sent`).
    http_requests: list[dict[str, Any]]

    def put(self, check_id: str, outcome: Outcome, detail: str,
            evidence: list[dict[str, Any]] | None = None) -> None: ...

    def skip(self, check_ids: Sequence[str], reason: str) -> None: ...

    async def guarded(self, owns: tuple[str, ...], run: Callable[..., Awaitable[Any]],
                      *args: Any) -> None: ...


class SessionRecorder(Recorder, Protocol):
    """A recorder that also sends requests on a session, keeping each as evidence."""

    #: Sessions a rule module opened for itself (named): listed in what was sent, not judged
    #: by the session-wide checks (jsonrpc.*, lists.list-changed).
    side_sessions: list[tuple[str, ClientSession]]

    async def exchange(self, session: ClientSession, name: str, method: str,
                       params: dict[str, Any] | None = None, *,
                       force: bool = False) -> Exchange: ...


def exchange_entries(session: ClientSession, name: str, ids: list[int]) -> list[dict[str, Any]]:
    """The request(s) this client sent with ``ids`` and what the server answered to them."""
    wanted = set(ids)
    return [_entry(name, e) for e in session.transcript
            if e.id in wanted and ((e.direction == "send" and e.kind == "request")
                                   or (e.direction == "recv" and e.kind in ("response", "error")))]


class CheckupCore:
    """The checkup's state, which every group of checks reads and adds to: the results by
    check id, the sessions opened (named, for the evidence), and what may be called."""

    def __init__(self, target: Target, call_tools: str | Sequence[str], timeout: float, *,
                 env: Mapping[str, str] | None = None, cwd: str | None = None,
                 prompts_get: bool = True, template_reads: bool = True,
                 headers: Mapping[str, str] | None = None) -> None:
        self.target = target
        #: Headers the person gave for every request to an HTTP target (--header).
        self.headers = dict(headers or {})
        self.new_session = session_factory(target, timeout, env=env, cwd=cwd,
                                           headers=self.headers)
        self.new_apps_session = session_factory(target, timeout, apps=True, env=env, cwd=cwd,
                                                headers=self.headers)
        self.timeout = timeout
        self.call_all = call_tools == "all"
        self.allowed = [] if isinstance(call_tools, str) else list(call_tools)
        if isinstance(call_tools, str) and call_tools not in ("", "all"):
            self.allowed = [n for n in call_tools.split(",") if n]
        self.results: dict[str, Result] = {}
        self.sessions: list[tuple[str, ClientSession]] = []
        #: Set by the HTTP probes on a 401: only the authorization metadata can be judged.
        self.authorization_required = False
        #: Reads the spec calls side-effect free but servers may do I/O in (the person's
        #: choice): prompts/get, and requests built from a resource template.
        self.prompts_get, self.template_reads = prompts_get, template_reads
        self.http_requests: list[dict[str, Any]] = []
        self.side_sessions: list[tuple[str, ClientSession]] = []
        #: id(session) → its first transcript position that is the checkup's own.
        self.since: dict[int, int] = {}
        #: What the connection did that the report must say (a redirect; why MCP was not
        #: reached).
        self.connection: str | None = None
        #: The groups of checks that raised: the check ids (or id prefixes) each owns, and
        #: its traceback, in order (mcp_nb.check.guard).
        self.crashes: list[tuple[tuple[str, ...], str]] = []

    def put(self, check_id: str, outcome: Outcome, detail: str,
            evidence: list[dict[str, Any]] | None = None) -> None:
        self.results[check_id] = Result.make(CHECKS[check_id], outcome, detail, evidence)

    async def guarded(self, owns: tuple[str, ...], run: Callable[..., Awaitable[Any]],
                      *args: Any) -> None:
        """``await run(*args)``, a phase owning the check ids (or id prefixes) ``owns``: an
        exception is kept for them (mcp_nb.check.guard makes it their *error*) and goes no
        further, so the phases beside it run on (cancellation is no exception: it passes).
        Each phase is guarded where it starts, so a crash costs only the checks it owns."""
        try:
            await run(*args)
        except Exception:
            self.crashes.append((owns, traceback.format_exc()))

    def skip(self, check_ids: Sequence[str], reason: str) -> None:
        for check_id in check_ids:
            self.results.setdefault(check_id, Result.make(CHECKS[check_id], "not-applicable",
                                                          reason))

    async def exchange(self, session: ClientSession, name: str, method: str,
                       params: dict[str, Any] | None = None, *, force: bool = False) -> Exchange:
        """One request: its result or the exception, and the transcript entries of it."""
        ids: list[int] = []
        try:
            answer: Any = await session.request(method, params, force=force,
                                                timeout=self.timeout, on_sent=ids.append)
        except McpError as exc:
            answer = exc
        return answer, exchange_entries(session, name, ids)
