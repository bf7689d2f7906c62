"""The spec violations a session has seen, as a live widget (each linked to its rule)."""

from __future__ import annotations

import ipywidgets as w

from ..client.session import ClientSession
from ..i18n import _
from . import render
from .snapshots import NowLine, _SnapshotOnDisplay


class FindingsView(_SnapshotOnDisplay, w.HTML):
    """Spec violations seen so far, each linked to its section of the spec."""

    def __init__(self, session: ClientSession, now: NowLine | None = None) -> None:
        super().__init__()
        self._session = session
        self._now = now
        self._redraw()
        session.on_finding(lambda finding: self._redraw())

    def _redraw(self) -> None:
        self.value = render.findings_html(self._session.findings)

    def describe(self) -> str:
        rules = [f.rule.id for f in self._session.findings]
        return _("Findings: {count}").format(count=len(rules)) + (
            f" ({', '.join(rules)})" if rules else "")

    def frozen(self) -> w.HTML:
        return w.HTML(self.value)

    def static_html(self) -> str:
        return self.value
