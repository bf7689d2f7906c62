"""A checkup report as text, JSON, JUnit XML and static HTML.

Everything a server says (names, details, messages) is hostile: the text summary
passes it through :func:`plain_text` (no terminal escapes), the HTML through
:func:`html.escape`, and the JUnit XML through ElementTree (which escapes markup;
control characters XML cannot hold are replaced first).
"""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from typing import Any

from ..i18n import N_, _
from ..protocol.plaintext import plain_text
from .model import LEVEL_LEGEND, LEVELS, UNJUDGED, Report, Result
from .sent import sent_count, sent_html, sent_label

MARKS = {"pass": "PASS", "fail": "FAIL", "warn": "WARN", "not-applicable": "N/A ",
         "error": "ERR ", "could-not-check": "CNC "}
# XML 1.0 cannot carry most C0 controls, lone surrogates, U+FFFE/U+FFFF at all, even escaped.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def level_legend(report: Report) -> list[str]:
    """One line per level the report's checks carry: what it means for a verdict (only a
    MUST of the spec can fail), in the kit's language."""
    used = {r.check.rule.level for r in report.results}
    return [f"[{level}] {_(LEVEL_LEGEND[level])}" for level in LEVELS if level in used]


def text_summary(report: Report, *, show_requests: bool = False) -> str:
    """The report as text; ``show_requests`` lists every request sent (else it is counted)."""
    counts = report.counts
    server = report.server or {}
    lines = [plain_text(
        f"mcp_nb checkup of {report.target}: {server.get('name', '?')} "
        f"{server.get('version', '')} — era {report.era}, version {report.version}, "
        f"{report.seconds:.2f} s", one_line=True)]
    if report.connection:
        lines.append(plain_text(f"connection: {report.connection}", one_line=True))
    for result in report.results:
        rule = result.check.rule
        lines.append(plain_text(f"{MARKS[result.outcome]} {result.check.id} [{rule.level}] "
                                f"{result.detail}", one_line=True))
        if result.outcome in ("fail", "warn"):
            lines.append(f"     fix: {result.check.shown_fix}")
            lines.append(f"     rule: {rule.url}")
    lines.append(f"{counts['pass']} passed, {counts['fail']} failed (MUST), {counts['warn']} "
                 f"warned, {counts['not-applicable']} not applicable"
                 + "".join(f", {part}" for part in [unjudged_counts(report, translated=False)]
                           if part))
    if not report.allowed_tools:
        lines.append(_("no tool was called (allow some with --call-tools NAME,… or all)"))
    lines.append(sent_count(report.requests_sent) + (
        "" if show_requests or not report.requests_sent
        else _(" (list them with --show-requests)")))
    if show_requests:
        lines += [plain_text("  " + sent_label(i), one_line=True) for i in report.requests_sent]
    lines += level_legend(report)
    return "\n".join(lines)


def unjudged_counts(report: Report, *, translated: bool = True) -> str:
    """"1 error, 56 could not check": the checks the checkup could not judge, or "" when
    there is none (``translated``: in the kit's language; the text summary stays English)."""
    counts = report.counts
    words = {"error": N_("{count} error"), "could-not-check": N_("{count} could not check")}
    return ", ".join((_(words[o]) if translated else words[o]).format(count=counts[o])
                     for o in UNJUDGED if counts[o])


def to_json(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False, default=repr)


def _xml_text(value: Any) -> str:
    return _NOT_XML.sub("\ufffd", str(value))


def junit_xml(report: Report) -> str:
    """One testsuite per area, one testcase per check; a failed MUST is a <failure>, a check
    that crashed or could not check is an <error> (CI tells "broken" from "down")."""
    counts = report.counts
    root = ET.Element("testsuites", name="mcp_nb checkup", tests=str(len(report.results)),
                      failures=str(counts["fail"]),
                      errors=str(sum(counts[o] for o in UNJUDGED)), time=f"{report.seconds:.3f}")
    for area, results in report.by_area().items():
        suite = ET.SubElement(root, "testsuite", name=f"checkup.{area}",
                              tests=str(len(results)),
                              failures=str(sum(r.outcome == "fail" for r in results)),
                              errors=str(sum(r.outcome in UNJUDGED for r in results)),
                              skipped=str(sum(r.outcome == "not-applicable" for r in results)))
        for result in results:
            case = ET.SubElement(suite, "testcase", classname=f"checkup.{area}",
                                 name=result.check.id)
            message = _xml_text(result.detail)
            body = _xml_text(f"{result.check.rule.level} {result.check.rule.url}\n"
                             f"{result.check.rule.quote}\nfix: {result.check.fix}\nevidence: "
                             + json.dumps(result.evidence, ensure_ascii=False, default=repr)
                             [:4000])
            if result.outcome == "fail":
                ET.SubElement(case, "failure", message=message, type="MUST").text = body
            elif result.outcome in UNJUDGED:
                ET.SubElement(case, "error", message=message, type=result.outcome).text = body
            elif result.outcome == "not-applicable":
                ET.SubElement(case, "skipped", message=message)
            elif result.outcome == "warn":
                ET.SubElement(case, "system-out").text = f"WARN ({result.check.rule.level}): " \
                    + body
    return ET.tostring(root, encoding="unicode")


#: Evidence fields that differ from run to run: transcript positions (they shift with every
#: stderr line and with concurrent requests), event times, random session ids.
_VOLATILE_KEYS = frozenset({"seq", "elapsed", "time"})
_SESSION_ID_HEADER = "mcp-session-id"
#: The request id at the end of a transcript label ("→ request ping #3").
_LABEL_ID = re.compile(r" #\S+$")


def reproducible(value: Any) -> Any:
    """``value`` without what changes from run to run, for outputs a notebook saves (nbval
    compares them): volatile keys dropped, session ids masked.

    >>> reproducible({"seq": 7, "headers": {"Mcp-Session-Id": "f00d"}, "status": 404})
    {'headers': {'Mcp-Session-Id': '…'}, 'status': 404}
    """
    if isinstance(value, dict):
        return {k: "…" if str(k).lower() == _SESSION_ID_HEADER else reproducible(v)
                for k, v in value.items() if k not in _VOLATILE_KEYS}
    if isinstance(value, list):
        return [reproducible(v) for v in value]
    return value


def _stable_entry(item: dict[str, Any]) -> dict[str, Any]:
    """A transcript entry as a saved notebook shows it: the JSON-RPC id masked too, since a
    session's concurrent requests take their ids in whichever order they are sent."""
    shown = reproducible(item)
    message = shown.get("message")
    if "seq" in item and isinstance(message, dict) and "id" in message:
        shown["message"] = {**message, "id": "…"}
        shown["label"] = _LABEL_ID.sub("", str(shown.get("label", "")))
    return shown  # type: ignore[no-any-return]


def _evidence_html(result: Result, stable: bool, seen: dict[str, str]) -> str:
    """A row's evidence, each item folded; ``stable`` (a saved notebook): an item already
    shown under an earlier check (``seen``: its JSON → that check) points there instead of
    being repeated (a sentence's check and its schema's often share the exchange)."""
    if not result.evidence:
        return ""
    items = []
    for item in result.evidence:
        if "http" in item:
            exchange = item["http"]
            label = (f"{exchange['request']['method']} → {exchange['response']['status']}")
        elif "seq" in item:
            label = (f"{item['session']} {_LABEL_ID.sub('', str(item['label']))}" if stable
                     else f"{item['session']} #{item['seq']} {item['label']}")
        elif "traceback" in item:  # a check that crashed: its error's evidence
            label = _("traceback")
        else:
            label = f"{item.get('session')} {_('finding')} {item.get('finding')}"
        detail = json.dumps(_stable_entry(item) if stable else item, indent=1,
                            ensure_ascii=False, default=repr)[:4000]
        if stable and detail in seen:
            same = _("the same as under {check}").format(check=seen[detail])
            items.append(f"<details><summary>{html.escape(label)}</summary>"
                         f"<p>{html.escape(same)}</p></details>")
            continue
        seen.setdefault(detail, result.check.id)
        items.append(f"<details><summary>{html.escape(label)}</summary>"
                     f"<pre>{html.escape(detail)}</pre></details>")
    return "".join(items)


def report_header(report: Report) -> str:
    """The report's first line in the kit's language: target, server, era and version."""
    server = report.server or {}
    return _("checkup of {target}: {server}, era {era}, version {version}").format(
        target=report.target, server=f"{server.get('name', '?')} {server.get('version', '')}",
        era=report.era, version=report.version)


def html_report(report: Report, *, stable: bool = False) -> str:
    """A static HTML table by area; each row's evidence folds open. Every server string escaped.

    ``stable``: for a notebook's saved output, the evidence without transcript positions,
    event times and session ids (see :func:`reproducible`), each exchange written out once
    (where it comes again, the row names the check it is shown under).
    """
    counts = report.counts
    rows = []
    seen: dict[str, str] = {}
    fix_label = html.escape(_("fix:"))
    for area, results in report.by_area().items():
        rows.append(f'<tr><th colspan="5" style="text-align:left">{html.escape(area)}</th></tr>')
        for result in results:
            rule = result.check.rule
            fix = html.escape(result.check.shown_fix) if result.outcome in ("fail", "warn") else ""
            rows.append(
                f'<tr class="{result.outcome}"><td>{MARKS[result.outcome].strip()}</td>'
                f"<td><code>{html.escape(result.check.id)}</code><br>"
                f"{html.escape(result.check.shown_title)}</td>"
                f'<td><a href="{html.escape(rule.url)}">{rule.level} {html.escape(rule.section)}'
                f" ({rule.revision})</a></td><td>{html.escape(result.detail)}"
                f"{'<br><i>' + fix_label + '</i> ' + fix if fix else ''}</td>"
                f"<td>{_evidence_html(result, stable, seen)}</td></tr>")
    title = html.escape(report_header(report))
    summary = _("{passed} passed, {failed} failed (MUST), {warned} warned, {skipped} not "
                "applicable — {seconds} s").format(
        passed=counts["pass"], failed=counts["fail"], warned=counts["warn"],
        skipped=counts["not-applicable"], seconds=f"{report.seconds:.2f}")
    if unjudged_counts(report):
        summary += f"; {unjudged_counts(report)}"
    headings = "".join(f"<th>{html.escape(h)}</th>" for h in
                       ("", _("check"), _("rule"), _("observed"), _("evidence")))
    connection = (f"<br>{html.escape(_('connection:'))} {html.escape(report.connection)}"
                  if report.connection else "")
    legend = "<br>".join(html.escape(line) for line in level_legend(report))
    return (f'<div class="mcp-nb-checkup"><p><b>{title}</b><br>{html.escape(summary)}'
            f"{connection}</p>"
            f"<table><tr>{headings}</tr>{''.join(rows)}</table>"
            f'<p class="legend"><small>{legend}</small></p>'
            f"{sent_html(report.requests_sent, stable=stable)}</div>")


class DisplayedReport:
    """A report as a notebook shows it: HTML table, or the text summary as text/plain."""

    def __init__(self, report: Report) -> None:
        self.report = report

    def _repr_html_(self) -> str:
        return html_report(self.report)

    def __repr__(self) -> str:
        return text_summary(self.report)
