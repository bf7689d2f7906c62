"""The checkup's report as a widget: a summary by area, filters, a row per check that opens.

``%mcp check`` returns a :class:`CheckView`.  Above, the counts of pass / fail /
warn / not applicable per area; then two filters (outcome, area); then one row
per check, failures and warnings first.  A row opens to its rule (level, the
spec's words, a link), what was observed, the one-line fix and the evidence.
Evidence from a session the notebook holds (``%mcp check --session NAME``) opens
that session's transcript at the entry; other evidence (the checkup's own
sessions, HTTP probes) shows the message as JSON.

Everything the server said (details, names, messages) is escaped.  Saved
notebooks keep the static HTML of :func:`~mcp_nb.check.output.html_report` (what
GitHub shows; its evidence without the transcript positions, times and session
ids that change from run to run) and a short text/plain: the header, one line
per failure or warning, and the counts (no duration, so nbval compares it as is).

Example::

    view = CheckView(report, sessions={"main": hosted.session})
    view.outcome.value = "problems"     # only failures and warnings
    view.area.value = "lifecycle"
    [r.check.id for r in view.shown]
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import ipywidgets as w

from ..check.model import LEVEL_LEGEND, OUTCOMES, UNJUDGED, Report, Result
from ..check.output import MARKS, html_report, level_legend, report_header, unjudged_counts
from ..check.sent import sent_html
from ..client.session import ClientSession
from ..i18n import N_, _
from . import render
from .described import _Described
from .transcript_view import TranscriptView

#: The order rows are listed in: what needs attention first.
_ORDER = {"fail": 0, "error": 1, "could-not-check": 2, "warn": 3, "pass": 4,
          "not-applicable": 5}
OUTCOME_LABELS = {"pass": N_("pass"), "fail": N_("fail"), "warn": N_("warn"),
                  "not-applicable": N_("not applicable"), "error": N_("error"),
                  "could-not-check": N_("could not check")}
#: What the "problems" filter lets through: failures, warnings, and what was not judged.
_PROBLEMS = ("fail", "warn", *UNJUDGED)


def _counts(report: Report) -> str:
    counts = report.counts
    text = _("{passed} passed, {failed} failed (MUST), {warned} warned, {skipped} not "
             "applicable").format(passed=counts["pass"], failed=counts["fail"],
                                  warned=counts["warn"], skipped=counts["not-applicable"])
    unjudged = unjudged_counts(report)
    return f"{text}; {unjudged}" if unjudged else text


def summary_html(report: Report) -> str:
    """Counts of each outcome per area, and the totals."""
    rows = [(area, *(sum(r.outcome == o for r in results) for o in OUTCOMES))
            for area, results in report.by_area().items()]
    rows.append((_("all"), *(report.counts.get(o, 0) for o in OUTCOMES)))
    header = (_("area"), *(_(OUTCOME_LABELS[o]) for o in OUTCOMES))
    legend = "<br>".join(render.esc(line) for line in level_legend(report))
    return (f"{render.STYLE}<div class=\"mcpnb\"><p><b>{render.esc(report_header(report))}</b><br>"
            f"{render.esc(_counts(report))}{_connection(report)}</p>"
            f"{sent_html(report.requests_sent)}</div>"
            + render.table_html(header, rows)
            + f'<div class="mcpnb"><p><small>{legend}</small></p></div>')


def _connection(report: Report) -> str:
    if not report.connection:
        return ""
    return f"<br>{render.esc(_('connection:'))} {render.esc(report.connection)}"


def _evidence_label(item: Mapping[str, Any]) -> str:
    if "http" in item:
        exchange = item["http"]
        return f"HTTP {exchange['request']['method']} → {exchange['response']['status']}"
    if "seq" in item:
        return f"{item['session']} #{item['seq']} {item['label']}"
    if "traceback" in item:  # a check that crashed: its error's evidence
        return _("traceback")
    return f"{item.get('session')} {_('finding')} {item.get('finding')}"


def _json_html(item: Mapping[str, Any]) -> str:
    text = json.dumps(item, indent=1, ensure_ascii=False, default=repr)
    return f"<pre>{render.esc(text)}</pre>"


class EvidenceItem(w.VBox):
    """One piece of evidence: the message as JSON, or a button opening the transcript there."""

    def __init__(self, item: Mapping[str, Any], session: ClientSession | None) -> None:
        super().__init__()
        self.item = item
        self._session = session
        label = render.esc(_evidence_label(item))
        self.json = w.HTML(f"<details><summary>{label}</summary>{_json_html(item)}</details>")
        self.transcript: TranscriptView | None = None
        #: "open in the transcript", for an entry of a session the notebook holds.
        self.button: w.Button | None = None
        if session is None or "seq" not in item:
            self.children = [self.json]
            return
        self.button = w.Button(description=_("open in the transcript (#{seq})").format(
            seq=item["seq"]), layout=w.Layout(width="auto"))
        self.button.on_click(lambda button: self.show_transcript())
        self.children = [w.HBox([self.button]), self.json]

    def show_transcript(self) -> None:
        """The session's transcript, on the page that holds this entry."""
        assert self._session is not None
        seqs = [e.seq for e in self._session.transcript.entries]
        if self.item["seq"] not in seqs:
            note = _("entry #{seq} is no longer in the transcript (it keeps the most recent "
                     "entries only)").format(seq=self.item["seq"])
            self.children = [w.HTML(f"<p>{render.esc(note)}</p>"), self.json]
            return
        # One view per entry (each view follows the live transcript): a second click
        # turns it back to the entry's page.
        view = self.transcript = self.transcript or TranscriptView(self._session)
        view.direction.value, view.method.value = "", ""
        view.page = seqs.index(self.item["seq"]) // view.page_size
        view.flush()
        self.children = [self.json, view]


class CheckRow(w.VBox):
    """A check's rule, what was observed, the fix, and the evidence (built when opened)."""

    def __init__(self, result: Result, sessions: Mapping[str, ClientSession]) -> None:
        super().__init__()
        self.result = result
        self._sessions = sessions
        self.evidence: list[EvidenceItem] = []

    def fill(self) -> None:
        if self.children:
            return
        result, rule = self.result, self.result.check.rule
        parts = [f"<p><b>{render.esc(_('rule'))}</b>: {render.esc(rule.level)} "
                 f'<a href="{render.esc(rule.url)}" target="_blank">{render.esc(rule.section)} '
                 f"({render.esc(rule.revision)})</a><br><i>{render.esc(rule.quote)}</i>"
                 + (f"<br>{render.esc(rule.note)}" if rule.note else "")
                 + f"<br><small>{render.esc(_(LEVEL_LEGEND[rule.level]))}</small></p>",
                 f"<p><b>{render.esc(_('observed'))}</b>: {render.esc(result.detail)}</p>"]
        if result.outcome in ("fail", "warn"):
            parts.append(f"<p><b>{render.esc(_('fix:'))}</b> "
                         f"{render.esc(result.check.shown_fix)}</p>")
        if not result.evidence:
            parts.append(f"<p>{render.esc(_('no evidence recorded'))}</p>")
        self.evidence = [EvidenceItem(item, self._sessions.get(str(item.get("session"))))
                         for item in result.evidence]
        self.children = [w.HTML(render.STYLE + '<div class="mcpnb">' + "".join(parts)
                                + "</div>"), *self.evidence]


class CheckView(_Described, w.VBox):
    """A checkup report: summary by area, filters by outcome and area, rows that open.

    ``sessions`` maps the report's session names to sessions the notebook holds
    (``{"main": hosted.session}`` when an open session was checked): their evidence
    opens their transcript.
    """

    def __init__(self, report: Report,
                 sessions: Mapping[str, ClientSession] | None = None) -> None:
        super().__init__()
        self.report = report
        self._sessions = dict(sessions or {})
        self.summary = w.HTML(summary_html(report))
        self.outcome = w.ToggleButtons(
            options=[(_("all"), "all"), (_("problems"), "problems"),
                     *((_(OUTCOME_LABELS[o]), o) for o in OUTCOMES)],
            value="all", description=_("outcome"))
        self.area = w.Dropdown(options=[(_("all areas"), ""),
                                        *((a, a) for a in report.by_area())],
                               value="", description=_("area"))
        self.position = w.Label()
        self.rows = w.Accordion()
        self._row_cache: dict[str, CheckRow] = {}
        self.outcome.observe(lambda change: self._refresh(), names="value")
        self.area.observe(lambda change: self._refresh(), names="value")
        self.rows.observe(self._on_open, names="selected_index")
        self.children = [self.summary, w.HBox([self.outcome]), w.HBox([self.area, self.position]),
                         self.rows]
        self._refresh()

    @property
    def shown(self) -> list[Result]:
        """The results the filters let through, failures and warnings first."""
        outcome, area = self.outcome.value, self.area.value
        chosen = [r for r in self.report.results
                  if (outcome == "all" or r.outcome == outcome
                      or (outcome == "problems" and r.outcome in _PROBLEMS))
                  and (not area or r.check.area == area)]
        return sorted(chosen, key=lambda r: _ORDER[r.outcome])  # stable: report order kept

    def row(self, check_id: str) -> CheckRow:
        """The row of a check (opened: its detail built)."""
        row = self._row_cache.setdefault(check_id, CheckRow(self.report.result(check_id),
                                                            self._sessions))
        row.fill()
        return row

    def _refresh(self) -> None:
        shown = self.shown
        self.rows.selected_index = None
        self.rows.children = [self._row_cache.setdefault(
            r.check.id, CheckRow(r, self._sessions)) for r in shown]
        self.rows.titles = tuple(f"{MARKS[r.outcome].strip()}  {r.check.id} "
                                 f"[{r.check.rule.level}] — {r.check.shown_title}" for r in shown)
        self.position.value = _("{shown} of {total} checks shown").format(
            shown=len(shown), total=len(self.report.results))

    def _on_open(self, change: dict[str, Any]) -> None:
        if change["new"] is not None:
            self.rows.children[change["new"]].fill()

    def describe(self) -> str:
        """The header, one line per failure or warning, the counts (each line one line: a
        server's newline cannot forge another)."""
        lines = [report_header(self.report)]
        if self.report.connection:
            lines.append(f"{_('connection:')} {self.report.connection}")
        lines += [f"{MARKS[r.outcome]} {r.check.id} [{r.check.rule.level}] {r.detail}"
                  for r in self.report.results if r.outcome in _PROBLEMS]
        lines.append(_counts(self.report))
        return "\n".join(render.plain(line, one_line=True) for line in lines)

    def __repr__(self) -> str:
        return self.describe()

    def static_html(self) -> str:
        """What a saved notebook keeps (nbval compares it): the table, evidence reproducible."""
        return html_report(self.report, stable=True)

    def _repr_html_(self) -> str:
        """The full table, transcript positions included (as ``--html`` writes it)."""
        return html_report(self.report)
