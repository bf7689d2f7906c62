"""What the checkup could not judge: a check that crashed, and a target it never reached.

DESIGN.md's taxonomy keeps the checkup's own trouble apart from the server's: an
exception inside a phase (:meth:`~mcp_nb.check.recorder.CheckupCore.guarded`, at the
start of each) is *error* for each check that phase left without a verdict (its
traceback is the evidence), and the phases beside it run on; a connection
that never reached MCP makes every check *could not check*.  Either makes the exit
status 2 (unless a MUST failed: 1), so CI tells "down" or "checkup bug" from "broken".

Example (what the runner does with it)::

    group.start_soon(self.guarded, ("lifecycle.",), self.lifecycle, main, connect_error)
    ...
    results = [self.results.get(c) or self.unfinished(c) for c in CHECKS]
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..i18n import _
from .catalogue import CHECKS
from .model import Report, Result
from .recorder import CheckupCore
from .sent import session_requests
from .sessions import describe


async def now(judge: Callable[[], Any]) -> None:
    """A synchronous judge as an awaitable (so :meth:`CheckupCore.guarded` can run it)."""
    judge()


class CheckGuard(CheckupCore):
    """What a crash leaves: its checks' *error* (:meth:`CheckupCore.guarded` keeps each
    phase's crash to itself), and the report of a target never reached."""

    def unfinished(self, check_id: str) -> Result:
        """A check left without a verdict: *error* when the group owning it crashed."""
        crashed = [t for owns, t in self.crashes if check_id.startswith(owns)]
        if crashed:
            last = crashed[-1].strip().splitlines()[-1]
            return Result.make(CHECKS[check_id], "error", _(
                "the checkup crashed before this check had a verdict: {error}").format(
                error=last), [{"traceback": t} for t in crashed])
        return Result.make(CHECKS[check_id], "not-applicable", _("not reached"))

    def unreached(self, problem: str, started: float, evidence: list[dict[str, Any]],
                  unauthorized: str | None) -> Report:
        """The report when the connection never reached MCP: every check could not check
        (a 401 without Protected Resource Metadata is auth.discovery's warning: authorization
        is optional, so it is never a failed MUST)."""
        self.connection = problem if self.connection is None else self.connection
        results = [Result.make(check, "could-not-check", problem, evidence)
                   for check in CHECKS.values()]
        if unauthorized is not None:
            # Its level (a SHOULD: authorization is optional) makes this a warning.
            results = [Result.make(r.check, "fail", unauthorized, evidence)
                       if r.check.id == "auth.discovery" else r for r in results]
        return Report(target=describe(self.target), era=None, version=None, server=None,
                      results=results, seconds=time.monotonic() - started,
                      allowed_tools=["all"] if self.call_all else self.allowed,
                      connection=self.connection, requests_sent=[
                          *session_requests([*self.sessions, *self.side_sessions], self.since),
                          *self.http_requests])
