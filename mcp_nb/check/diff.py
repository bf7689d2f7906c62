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

from ..i18n import N_, _
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
    #: What differs in what was checked: (setting, earlier, later), e.g. the target or the
    #: tools allowed; the checks are compared all the same.
    differences: tuple[tuple[str, str, str], ...] = ()

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


#: How a JSON value is named in a report's problems.
_KINDS = ((bool, N_("a boolean")), ((int, float), N_("a number")), (str, N_("a string")),
          (list, N_("an array")), (Mapping, N_("an object")), (type(None), N_("null")))
#: A report's top-level fields besides results: each a type, or None when absent.
_FIELDS: tuple[tuple[str, type | tuple[type, ...]], ...] = (
    ("target", str), ("era", str), ("version", str), ("server", Mapping),
    ("allowedTools", list))


def _kind(value: Any) -> str:
    return next((_(name) for kind, name in _KINDS if isinstance(value, kind)),
                type(value).__name__)


def _entry_problem(index: int, entry: Any, seen: set[str]) -> str | None:
    if not isinstance(entry, Mapping):
        return _("results[{index}] is {kind}, not an object").format(index=index,
                                                                      kind=_kind(entry))
    for key in ("id", "outcome"):
        if key not in entry:
            return _('results[{index}] has no "{key}"').format(index=index, key=key)
    for key in ("id", "outcome", "title", "detail"):
        if key in entry and not isinstance(entry[key], str):
            return _("results[{index}].{key} is {kind}, not a string").format(
                index=index, key=key, kind=_kind(entry[key]))
    rule = entry.get("rule")
    if rule is not None and not (isinstance(rule, Mapping)
                                 and isinstance(rule.get("level", ""), str)):
        return _("results[{index}].rule is not an object with a string level").format(
            index=index)
    if entry["id"] in seen:
        return _("results[{index}]: the check {id} is listed twice").format(index=index,
                                                                            id=entry["id"])
    seen.add(entry["id"])
    return None


def report_problem(report: Any) -> str | None:
    """Why ``report`` (a parsed JSON document) is not a checkup report ``--diff`` can
    compare, in a sentence; None when it is one."""
    if not isinstance(report, Mapping):
        return _("its top level is {kind}, not an object").format(kind=_kind(report))
    if "results" not in report:
        return _('it has no "results" (write a report with --json)')
    if not isinstance(report["results"], list):
        return _('"results" is {kind}, not an array').format(kind=_kind(report["results"]))
    for key, kind in _FIELDS:
        if report.get(key) is not None and not isinstance(report[key], kind):
            return _('"{key}" is {kind}').format(key=key, kind=_kind(report[key]))
    seen: set[str] = set()
    for index, entry in enumerate(report["results"]):
        if (problem := _entry_problem(index, entry, seen)) is not None:
            return problem
    return None


def _as_dict(report: Report | Mapping[str, Any]) -> Mapping[str, Any]:
    document = report.to_dict() if isinstance(report, Report) else report
    problem = report_problem(document)
    if problem is not None:
        raise ValueError(_("not a checkup report: {problem}").format(problem=problem))
    return document


def _results(report: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {r["id"]: r for r in report["results"]}


def _settings(report: Mapping[str, Any]) -> dict[str, str]:
    """What was checked, and how: the settings two compared reports should share."""
    server = report.get("server") or {}
    allowed = report.get("allowedTools") or []
    return {_("target"): str(report.get("target", "?")),
            _("server"): str(server.get("name", "?")),
            "--call-tools": ",".join(map(str, allowed)) or _("none"),
            _("era"): str(report.get("era") or "?"),
            _("protocol version"): str(report.get("version") or "?")}


def diff_reports(before: Report | Mapping[str, Any],
                 after: Report | Mapping[str, Any]) -> ReportDiff:
    """Compare two checkup reports (``to_json``'s documents or Reports), check by check.

    Raises ValueError (naming what is wrong) when either is not a checkup report."""
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
    settings = _settings(earlier), _settings(later)
    differences = tuple((key, value, settings[1][key]) for key, value in settings[0].items()
                        if settings[1][key] != value)
    return ReportDiff(str(earlier.get("target", "?")), str(later.get("target", "?")),
                      tuple(checks), differences)


def _differences_line(diff: ReportDiff) -> str | None:
    if not diff.differences:
        return None
    return _("note: the reports differ in what was checked (compared all the same): "
             "{differences}").format(differences="; ".join(
                 f"{key} {before} → {after}" for key, before, after in diff.differences))


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
    lines = [plain_text(_("checkup diff: {before} → {after}").format(
        before=diff.before_target, after=diff.after_target), one_line=True)]
    if (note := _differences_line(diff)) is not None:
        lines.append(plain_text(note, one_line=True))
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
            f"{html.escape(_(change.title))}</td><td>{html.escape(change.level)}</td>"
            f"<td>{html.escape(_outcome(change.before))}<br>"
            f"<small>{html.escape(change.before_detail)}</small></td>"
            f"<td>{html.escape(_outcome(change.after))}<br>"
            f"<small>{html.escape(change.after_detail)}</small></td></tr>")
    headings = "".join(f"<th>{html.escape(h)}</th>" for h in
                       ("", _("check"), _("level"), _("before"), _("after")))
    title = html.escape(_("checkup diff: {before} → {after}").format(
        before=diff.before_target, after=diff.after_target))
    summary = html.escape(f"{_counts_line(diff)} — {_verdict(diff)}")
    if (note := _differences_line(diff)) is not None:
        summary += f"<br><i>{html.escape(note)}</i>"
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
