"""What a person sees of the checkup's own trouble and of the levels that only warn.

The widget (:class:`~mcp_nb.notebook.check_view.CheckView`) and the static HTML a saved
notebook keeps render every outcome — *error* (a check crashed: its traceback),
*could not check* (never reached MCP) — and every level, ``MUST (schema)`` and
``inferred`` included: labelled, counted in the summary, listed where a person looks
first, explained by the legend, and escaped (a server's text and a crash's message are
both someone else's words).
"""

from __future__ import annotations

import html
import re
import socket

import pytest

from mcp_nb.check import CHECKS, Result, html_report, run_checkup
from mcp_nb.check.model import LEVEL_LEGEND, Report
from mcp_nb.i18n import _, set_language
from mcp_nb.notebook.check_view import CheckView

pytestmark = pytest.mark.anyio

#: What a hostile server (or a crash quoting one) might put in a detail: markup, a newline
#: that would forge a line of its own, a terminal escape.
HOSTILE = "<script>alert(1)</script>\nFAIL forged.check [MUST] \x1b[31mred"
CRASH = ("Traceback (most recent call last):\n  File \"rules.py\", line 1, in read\n"
         "RuntimeError: <img src=x onerror=alert(1)>\n")
#: The checks this report gives an outcome of their own (the rest are not applicable).
SHOWN = {"lifecycle.ping": "fail", "resources.read": "error", "http.origin": "could-not-check",
         "tools.output-schema-type": "warn", "lifecycle.shutdown": "warn",
         "lifecycle.initialize-result": "pass"}


def mixed_report() -> Report:
    """A report holding each outcome and each level that only warns, made as the runner
    makes them (Result.make: a schema's type or an inference asked to fail only warns)."""
    made = {
        "lifecycle.initialize-result": Result.make(
            CHECKS["lifecycle.initialize-result"], "pass",
            "the result carries capabilities and serverInfo"),
        "lifecycle.ping": Result.make(CHECKS["lifecycle.ping"], "fail",
                                      "ping not answered: " + HOSTILE),
        "resources.read": Result.make(
            CHECKS["resources.read"], "error", "the checkup crashed before this check had a "
            "verdict: RuntimeError: <img src=x onerror=alert(1)>", [{"traceback": CRASH}]),
        "http.origin": Result.make(
            CHECKS["http.origin"], "could-not-check", "nothing answered at "
            "http://127.0.0.1:9/<b>mcp</b> (ConnectError)"),
        "tools.output-schema-type": Result.make(
            CHECKS["tools.output-schema-type"], "fail",
            "'m<i>': outputSchema has type 'array', not 'object'"),
        "lifecycle.shutdown": Result.make(
            CHECKS["lifecycle.shutdown"], "fail",
            "1 of 1 server(s) did not exit within 5 s of their stdin closing"),
    }
    results = [made.get(c) or Result.make(check, "not-applicable", "not part of this report")
               for c, check in CHECKS.items()]
    return Report(target="python server.py", era="handshake", version="2025-11-25",
                  server={"name": "<b>srv</b>", "version": "1"}, results=results,
                  seconds=1.0, connection=None)


def test_each_outcome_and_level_is_labelled_counted_and_listed_first() -> None:
    report = mixed_report()
    assert {c: report.result(c).outcome for c in SHOWN} == SHOWN  # only a MUST fails
    view = CheckView(report)
    # The summary counts the checkup's own trouble apart, by name, per area and in all.
    summary = view.summary.value
    for label in ("error", "could not check", "not applicable"):
        assert f"<th>{label}</th>" in summary
    skipped = len(CHECKS) - len(SHOWN)
    assert (f"1 passed, 1 failed (MUST), 2 warned, {skipped} not applicable; 1 error, "
            "1 could not check") in summary
    all_row = re.search(r"<tr><td>all</td>(.*?)</tr>", summary)
    assert all_row is not None
    assert re.findall(r"<td>(\d+)</td>", all_row.group(1)) == [
        "1", "1", "2", str(skipped), "1", "1"]  # pass fail warn n/a error could-not-check
    # Rows: what needs attention first, each with its outcome and level in its title.
    assert [t.split(" — ")[0] for t in view.rows.titles[:5]] == [
        "FAIL  lifecycle.ping [MUST]", "ERR  resources.read [MUST (schema)]",
        "CNC  http.origin [MUST]", "WARN  lifecycle.shutdown [inferred]",
        "WARN  tools.output-schema-type [MUST (schema)]"]
    # The filters reach them: each outcome alone, and "problems" with all five.
    for outcome in ("error", "could-not-check"):
        view.outcome.value = outcome
        assert [r.check.id for r in view.shown] == [
            c for c, o in SHOWN.items() if o == outcome]
    view.outcome.value = "problems"
    assert len(view.shown) == 5
    assert view.outcome.options[-2:] == (("error", "error"),
                                         ("could not check", "could-not-check"))
    # The legend explains each level shown, the two that only warn among them.
    legend = summary.split("<small>")[-1]
    for level in ("MUST", "SHOULD", "MUST (schema)", "inferred"):
        assert html.escape(f"[{level}] {LEVEL_LEGEND[level]}") in legend, level


def test_an_error_row_shows_its_traceback_escaped_and_a_warning_its_level() -> None:
    view = CheckView(mixed_report())
    error = view.row("resources.read")
    detail = error.children[0].value
    assert "<b>observed</b>: the checkup crashed before this check had a verdict: " \
        "RuntimeError: &lt;img src=x onerror=alert(1)&gt;" in detail
    assert "fix:" not in detail  # a crash is no fault of the server's: no fix to offer
    [evidence] = error.evidence
    assert "<summary>traceback</summary>" in evidence.json.value
    assert "&lt;img src=x onerror=alert(1)&gt;" in evidence.json.value
    assert evidence.button is None
    unreached = view.row("http.origin").children[0].value
    assert "http://127.0.0.1:9/&lt;b&gt;mcp&lt;/b&gt;" in unreached and "fix:" not in unreached
    schema = view.row("tools.output-schema-type").children[0].value
    assert "<b>rule</b>: MUST (schema) " in schema
    assert html.escape(LEVEL_LEGEND["MUST (schema)"]) in schema
    assert html.escape(CHECKS["tools.output-schema-type"].rule.note or "") in schema
    assert "fix:" in schema and "&#x27;m&lt;i&gt;&#x27;" in schema
    inferred = view.row("lifecycle.shutdown").children[0].value
    assert "<b>rule</b>: inferred " in inferred and "fix:" in inferred
    everything = (view.summary.value + "".join(
        view.row(c).children[0].value + "".join(i.json.value for i in view.row(c).evidence)
        for c in SHOWN))
    assert "<script" not in everything and "<img" not in everything and "\x1b" not in everything


def test_the_saved_forms_show_the_new_outcomes_one_line_each() -> None:
    view = CheckView(mixed_report())
    plain = repr(view).splitlines()
    assert plain[0] == "checkup of python server.py: <b>srv</b> 1, era handshake, version " \
                       "2025-11-25"  # text/plain: shown as text, never as markup
    # One line per problem, in the report's order, each with its outcome, id and level.
    assert [line.split(" [")[0] for line in plain[1:-1]] == [
        "FAIL lifecycle.ping", "WARN lifecycle.shutdown", "WARN tools.output-schema-type",
        "ERR  resources.read", "CNC  http.origin"]
    assert not any(line.startswith("FAIL forged") for line in plain)  # no forged line
    assert "\x1b" not in repr(view)
    assert plain[-1].endswith("; 1 error, 1 could not check")
    static = view.static_html()
    assert static.count('<tr class="error">') == 1
    assert static.count('<tr class="could-not-check">') == 1
    assert "<td>ERR</td>" in static and "<td>CNC</td>" in static
    assert "<summary>traceback</summary>" in static
    assert "MUST (schema) schema#tool" in static and "inferred basic/lifecycle#stdio" in static
    assert "1 error, 1 could not check" in static
    assert "<script" not in static and "<img" not in static and "<b>srv" not in static
    assert html_report(mixed_report()).count('<tr class="error">') == 1


def test_a_saved_report_writes_a_shared_exchange_out_once() -> None:
    # A sentence's check and its schema's judge the same initialize exchange.
    exchange = {"session": "main", "seq": 3, "label": "← response initialize #1",
                "message": {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 5}}}
    results = [Result.make(check, "pass" if c == "lifecycle.initialize-result" else
                           "warn" if c == "lifecycle.initialize-result-types" else
                           "not-applicable", "observed", [exchange] if c.startswith(
                               "lifecycle.initialize-result") else [])
               for c, check in CHECKS.items()]
    report = Report(target="t", era="handshake", version="2025-11-25", server=None,
                    results=results, seconds=0.1)
    static = html_report(report, stable=True)
    assert static.count("&quot;protocolVersion&quot;: 5") == 1
    assert "the same as under lifecycle.initialize-result" in static
    assert html_report(report).count("&quot;protocolVersion&quot;: 5") == 2  # live: in full


def test_the_new_outcomes_in_the_kits_other_language() -> None:
    set_language("zh")
    try:
        view = CheckView(mixed_report())
        labels = [label for label, _value in view.outcome.options]
        assert _("error") in labels and _("could not check") in labels
        assert _("could not check") != "could not check"  # translated, not left in English
        assert f"<th>{_('could not check')}</th>" in view.summary.value
        assert "<summary>" + _("traceback") + "</summary>" in \
            view.row("resources.read").evidence[0].json.value
    finally:
        set_language("en")


async def test_a_target_never_reached_is_shown_as_could_not_check_throughout() -> None:
    with socket.socket() as probe:  # a port nobody listens on: bound, then let go
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    report = await run_checkup(f"http://127.0.0.1:{port}/mcp", timeout=2)
    view = CheckView(report)
    assert {r.outcome for r in report.results} == {"could-not-check"}
    assert f"0 passed, 0 failed (MUST), 0 warned, 0 not applicable; {len(CHECKS)} could not " \
           "check" in view.summary.value
    assert "connection:" in view.summary.value and "nothing answered at" in view.summary.value
    assert all(title.startswith("CNC  ") for title in view.rows.titles)
    view.outcome.value = "problems"
    assert len(view.shown) == len(CHECKS)  # could-not-check is a problem to look at
    plain = repr(view).splitlines()
    assert plain[1].startswith("connection: nothing answered at")
    assert plain[-1].endswith(f"{len(CHECKS)} could not check")
