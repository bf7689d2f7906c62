"""The session's own record: findings, notes of its reasoning, the callbacks told of findings."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..protocol.findings import Finding, Side, make_finding

if TYPE_CHECKING:
    from .session import ClientSession

FindingCallback = Callable[[Finding], Any]


class Recorder:
    """Writes findings and notes into the session's transcript and findings list."""

    def __init__(self, session: ClientSession) -> None:
        self._lifecycle = session.lifecycle
        self._transcript = session.transcript
        self._findings = session.findings
        self.finding_callbacks: list[FindingCallback] = []

    def finding(self, rule_id: str, side: Side, detail: str, evidence: Any) -> Finding:
        """Record that ``side`` broke rule ``rule_id`` (see :mod:`mcp_nb.protocol.findings`)."""
        finding = make_finding(rule_id, side, detail, evidence, self._lifecycle.elapsed())
        self._findings.append(finding)
        self._transcript.add(finding.time, "event", "finding", self._lifecycle.state.value,
                             text=detail, note=rule_id)
        for callback in list(self.finding_callbacks):
            callback(finding)
        return finding

    def note(self, kind: str, text: str) -> None:
        """A line of the client's own reasoning in the transcript (era, input rounds)."""
        self._transcript.add(self._lifecycle.elapsed(), "event", kind,
                             self._lifecycle.state.value, text=text)
