"""The session's own record: findings, notes of its reasoning, and contained observer errors."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..protocol.findings import Finding, Side, make_finding
from ..protocol.observers import Observers

if TYPE_CHECKING:
    from .session import ClientSession

FindingCallback = Callable[[Finding], Any]


class Recorder:
    """Writes findings and notes into the session's transcript and findings list.

    It is also where every observer's and callback's error ends up
    (:meth:`observer_failed`): the first error of each is recorded as an
    ``observer-failed`` finding, later ones are counted in
    :attr:`observer_errors`, and the session goes on.
    """

    def __init__(self, session: ClientSession) -> None:
        self._lifecycle = session.lifecycle
        self._transcript = session.transcript
        self._findings = session.findings
        self.finding_callbacks: Observers[Finding] = Observers()
        #: ``(where, observer name)`` → how many times it raised.
        self.observer_errors: Counter[tuple[str, str]] = Counter()
        self._reporting = False
        for observers, where in ((self.finding_callbacks, "on_finding callback"),
                                 (session.lifecycle.observers, "on_transition callback"),
                                 (session.transcript.observers, "transcript observer")):
            observers.on_error = self._contained(where)

    def _contained(self, where: str) -> Callable[[Callable[..., Any], Exception], None]:
        return lambda observer, error: self.observer_failed(where, observer, error)

    def finding(self, rule_id: str, side: Side, detail: str, evidence: Any) -> Finding:
        """Record that ``side`` broke rule ``rule_id`` (see :mod:`mcp_nb.protocol.findings`)."""
        finding = make_finding(rule_id, side, detail, evidence, self._lifecycle.elapsed())
        self._findings.append(finding)
        self._transcript.add(finding.time, "event", "finding", self._lifecycle.state.value,
                             text=detail, note=rule_id)
        if self.finding_callbacks:
            self.finding_callbacks.notify(finding)
        return finding

    def note(self, kind: str, text: str) -> None:
        """A line of the client's own reasoning in the transcript (era, input rounds)."""
        self._transcript.add(self._lifecycle.elapsed(), "event", kind,
                             self._lifecycle.state.value, text=text)

    def observer_failed(self, where: str, observer: Callable[..., Any],
                        error: BaseException) -> None:
        """An observer or callback raised: record it once, count it always, go on."""
        name = getattr(observer, "__qualname__", None) or type(observer).__name__
        key = (where, name)
        self.observer_errors[key] += 1
        # Once per observer, and never from inside this report (a finding callback or a
        # transcript observer that raises again would otherwise report itself forever).
        if self.observer_errors[key] > 1 or self._reporting:
            return
        self._reporting = True
        try:
            self.finding("observer-failed", "client",
                         f"{where} {name} raised {_describe(error)}; contained, the session "
                         f"goes on (further errors of this {where} are only counted)", None)
        finally:
            self._reporting = False


def _describe(error: BaseException) -> str:
    try:
        return f"{type(error).__name__}: {error}"
    except Exception:  # an exception whose __str__ fails too
        return type(error).__name__
