"""What the checkup could not judge: a check that crashed, and a target it never reached.

DESIGN.md's taxonomy keeps the checkup's own trouble apart from the server's: an
exception inside a group of checks is *error* for each check that group left without
a verdict (its traceback is the evidence), and the other groups run on; a connection
that never reached MCP makes every check *could not check*.  Either makes the exit
status 2 (unless a MUST failed: 1), so CI tells "down" or "checkup bug" from "broken".

Example (what the runner does with it)::

    group.start_soon(self.guarded, self.lifecycle, main, connect_error)
    ...
    results = [self.results.get(c) or self.unfinished(c) for c in CHECKS]
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

from ..i18n import _
from .model import CHECKS, Report, Result
from .recorder import CheckupCore
from .sessions import describe


async def now(judge: Callable[[], Any]) -> None:
    """A synchronous judge as an awaitable (so :meth:`CheckGuard.guarded` can run it)."""
    judge()


class CheckGuard(CheckupCore):
    """Runs groups of checks so one's crash is its checks' *error*, not the checkup's end."""

    #: What the connection did that the report must say (a redirect; why MCP was not reached).
    connection: str | None = None

    @property
    def crashes(self) -> list[str]:
        """The tracebacks of the groups of checks that raised, in order."""
        return self.__dict__.setdefault("_crashes", [])

    async def guarded(self, run: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """``await run(*args)``; an exception is kept (cancellation is not an exception)."""
        try:
            await run(*args)
        except Exception:
            self.crashes.append(traceback.format_exc())

    def unfinished(self, check_id: str) -> Result:
        """A check no group gave a verdict: *error* when a group crashed, else not reached."""
        if self.crashes:
            last = self.crashes[-1].strip().splitlines()[-1]
            return Result.make(CHECKS[check_id], "error", _(
                "the checkup crashed before this check had a verdict: {error}").format(
                error=last), [{"traceback": t} for t in self.crashes])
        return Result.make(CHECKS[check_id], "not-applicable", "not reached")

    def unreached(self, problem: str, started: float, evidence: list[dict[str, Any]],
                  unauthorized: str | None) -> Report:
        """The report when the connection never reached MCP: every check could not check
        (a 401 without Protected Resource Metadata is auth.discovery's warning: authorization
        is optional, so it is never a failed MUST)."""
        self.connection = problem if self.connection is None else self.connection
        results = [Result.make(check, "could-not-check", problem, evidence)
                   for check in CHECKS.values()]
        if unauthorized is not None:
            results = [Result(r.check, "warn", unauthorized, evidence)
                       if r.check.id == "auth.discovery" else r for r in results]
        return Report(target=describe(self.target), era=None, version=None, server=None,
                      results=results, seconds=time.monotonic() - started,
                      allowed_tools=["all"] if self.call_all else self.allowed,
                      connection=self.connection)
