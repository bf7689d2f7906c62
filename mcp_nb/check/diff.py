"""Two checkup reports compared, sans I/O: what a change to the server fixed and what it broke.

The reports are the JSON documents :func:`~mcp_nb.check.output.to_json` writes (or
:class:`~mcp_nb.check.model.Report` objects).  Each check is matched by its id:

- **fixed**: it failed or warned before, and now passes (or only warns where it failed);
- **regressed**: it fails or warns now, where before it passed, was not applicable, or
  only warned;
- **new** / **gone**: the check is only in the later / earlier report (a newer checkup);
- **changed**: any other change of outcome (to or from not applicable, say);
- **unchanged**.

A regression of a MUST (the later outcome is ``fail``) makes :attr:`ReportDiff.exit_status`
1, so CI can refuse a change that breaks a rule; a new check failing does not (that is the
checkup growing, not the server regressing), and the text says so.

Example::

    >>> before = {"target": "a", "results": [{"id": "lifecycle.ping", "outcome": "pass",
    ...           "title": "ping answered", "detail": "ok", "rule": {"level": "MUST"}}]}
    >>> after = {"target": "a", "results": [{"id": "lifecycle.ping", "outcome": "fail",
    ...          "title": "ping answered", "detail": "not answered", "rule": {"level": "MUST"}}]}
    >>> diff = diff_reports(before, after)
    >>> [(c.check_id, c.status) for c in diff.changes], diff.exit_status
    ([('lifecycle.ping', 'regressed')], 1)
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..i18n import _
from ..protocol.plaintext import plain_text
from .model import Report

Status = Literal["fixed", "regressed", "new", "gone", "changed", "unchanged"]
#: The order changes are listed in: what needs attention first.
STATUSES: tuple[Status, ...] = ("regressed", "fixed", "new", "gone", "changed", "unchanged")
#: How bad an outcome is; not-applicable is absent: it is no verdict either way.
_SEVERITY = {"pass": 0, "warn": 1, "fail": 2}


@dataclass(frozen=True)
class Change:
    """One check's outcome in the earlier report and the later one (None where absent)."""

    check_id: str
    title: str
    level: str
    before: str | None
    after: str | None
    before_detail: str
    after_detail: str

    @property
    def status(self) -> Status:
        before, after = self.before, self.after
        if before is None:
            return "new"
        if after is None:
            return "gone"
        if before == after:
            return "unchanged"
        worse, better = _SEVERITY.get(after, 0), _SEVERITY.get(before, 0)
        if after in ("fail", "warn") and worse > better:
            return "regressed"
        if before in ("fail", "warn") and after in _SEVERITY and worse < better:
            return "fixed"
        return "changed"

    @property
    def must_regressed(self) -> bool:
        return self.status == "regressed" and self.after == "fail"


@dataclass(frozen=True)
class ReportDiff:
    before_target: str
    after_target: str
    #: Every check of either report, earlier report's order first, then the new ones.
    checks: tuple[Change, ...]

    @property
    def changes(self) -> list[Change]:
        """The checks whose outcome differs, regressions first."""
        moved = [c for c in self.checks if c.status != "unchanged"]
        return sorted(moved, key=lambda c: STATUSES.index(c.status))

    @property
    def counts(self) -> Counter[str]:
        return Counter(c.status for c in self.checks)

    @property
    def exit_status(self) -> int:
        """1 when a MUST regressed (now fails), else 0."""
        return 1 if any(c.must_regressed for c in self.checks) else 0


def _as_dict(report: Report | Mapping[str, Any]) -> Mapping[str, Any]:
    return report.to_dict() if isinstance(report, Report) else report


def _results(report: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    results = report.get("results")
    if not isinstance(results, list):
        raise ValueError("not a checkup report: no \"results\" list (write one with --json)")
    return {str(r["id"]): r for r in results if isinstance(r, Mapping) and "id" in r}


def diff_reports(before: Report | Mapping[str, Any],
                 after: Report | Mapping[str, Any]) -> ReportDiff:
    """Compare two checkup reports (``to_json``'s documents or Reports), check by check."""
    earlier, later = _as_dict(before), _as_dict(after)
    old, new = _results(earlier), _results(later)
    checks = []
    for check_id in [*old, *(c for c in new if c not in old)]:
        a, b = old.get(check_id), new.get(check_id)
        either = b or a or {}
        rule = either.get("rule") if isinstance(either.get("rule"), Mapping) else {}
        checks.append(Change(
            check_id, str(either.get("title", "")), str(rule.get("level", "")),
            None if a is None else str(a.get("outcome")),
            None if b is None else str(b.get("outcome")),
            "" if a is None else str(a.get("detail", "")),
            "" if b is None else str(b.get("detail", ""))))
    return ReportDiff(str(earlier.get("target", "?")), str(later.get("target", "?")),
                      tuple(checks))


def _counts_line(diff: ReportDiff) -> str:
    counts = diff.counts
    return _("{regressed} regressed, {fixed} fixed, {new} new, {gone} gone, {changed} changed, "
             "{unchanged} unchanged").format(**{s: counts.get(s, 0) for s in STATUSES})


def _verdict(diff: ReportDiff) -> str:
    if diff.exit_status:
        return _("a MUST regressed: exit status 1")
    return _("no MUST regressed")


def _outcome(value: str | None) -> str:
    return "—" if value is None else value


def diff_text(diff: ReportDiff) -> str:
    """The comparison as plain text: one line per changed check, the server's words sanitized."""
    lines = [plain_text(f"checkup diff: {diff.before_target} → {diff.after_target}",
                        one_line=True)]
    for change in diff.changes:
        lines.append(plain_text(
            f"{change.status.upper():9} {change.check_id} [{change.level}] "
            f"{_outcome(change.before)} → {_outcome(change.after)}", one_line=True))
        detail = change.after_detail if change.after is not None else change.before_detail
        if detail:
            lines.append(plain_text(f"          {detail}", one_line=True))
    lines.append(_counts_line(diff))
    lines.append(_verdict(diff))
    return "\n".join(lines)


def diff_html(diff: ReportDiff) -> str:
    """The comparison as a static HTML table (reads on GitHub); every string escaped."""
    rows = []
    for change in diff.changes:
        rows.append(
            f'<tr class="{change.status}"><td>{html.escape(change.status)}</td>'
            f"<td><code>{html.escape(change.check_id)}</code><br>"
            f"{html.escape(change.title)}</td><td>{html.escape(change.level)}</td>"
            f"<td>{html.escape(_outcome(change.before))}<br>"
            f"<small>{html.escape(change.before_detail)}</small></td>"
            f"<td>{html.escape(_outcome(change.after))}<br>"
            f"<small>{html.escape(change.after_detail)}</small></td></tr>")
    headings = "".join(f"<th>{html.escape(h)}</th>" for h in
                       ("", _("check"), _("level"), _("before"), _("after")))
    title = html.escape(_("checkup diff: {before} → {after}").format(
        before=diff.before_target, after=diff.after_target))
    summary = html.escape(f"{_counts_line(diff)} — {_verdict(diff)}")
    table = (f"<table><tr>{headings}</tr>{''.join(rows)}</table>" if rows
             else f"<p>{html.escape(_('no check changed its outcome'))}</p>")
    return (f'<div class="mcp-nb-checkup-diff"><p><b>{title}</b><br>{summary}</p>'
            f"{table}</div>")


class DisplayedDiff:
    """A diff as a notebook shows it: the HTML table, or the text as text/plain."""

    def __init__(self, diff: ReportDiff) -> None:
        self.diff = diff

    def _repr_html_(self) -> str:
        return diff_html(self.diff)

    def __repr__(self) -> str:
        return diff_text(self.diff)
