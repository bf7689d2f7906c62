"""What a group of checks needs from the checkup: where its verdicts go, and the time allowed.

The rule modules (HTTP, authorization, MCP Apps, the stateless era) are functions
that take the checkup typed as one of these protocols, never the runner's class:
they depend on this small surface only, so none of them imports the runner.

Example::

    async def check_something(checkup: SessionRecorder, session: ClientSession) -> None:
        answer, evidence = await checkup.exchange(session, "main", "ping")
        checkup.put("lifecycle.ping", "pass" if answer == {} else "fail", "…", evidence)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..client import ClientSession
from .model import Outcome

#: One request's outcome: its result (or the exception it raised), and its transcript
#: entries as evidence.
Exchange = tuple[Any, list[dict[str, Any]]]


class Recorder(Protocol):
    """What the probes need from the checkup: where verdicts go, and the time allowed."""

    timeout: float
    authorization_required: bool

    def put(self, check_id: str, outcome: Outcome, detail: str,
            evidence: list[dict[str, Any]] | None = None) -> None: ...

    def skip(self, check_ids: Sequence[str], reason: str) -> None: ...


class SessionRecorder(Recorder, Protocol):
    """A recorder that also sends requests on a session, keeping each as evidence."""

    async def exchange(self, session: ClientSession, name: str, method: str,
                       params: dict[str, Any] | None = None, *,
                       force: bool = False) -> Exchange: ...
