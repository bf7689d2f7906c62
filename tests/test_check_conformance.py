"""The server checkup and the official conformance suite agree where their rules overlap.

Each pair in ``OVERLAPS`` is one rule both referees judge: a check of one of the
suite's server scenarios and a check of the checkup. On the lab (over Streamable
HTTP, serving the suite's fixtures) both pass; under each lab knob that breaks an
overlapping rule (``KNOBS``) both fail, and nothing else fails in the checkup.
``CHECKUP_ONLY`` pins the knobs whose rule the suite's nearest scenario does not
check (its scenario passes; the checkup fails), and the peer tests show the
failing side of two rules on servers nobody here wrote. docs/checkup.md has the
same tables ("The conformance suite's server scenarios").

One suite version, the one with the 2026-07-28 scenarios and the session and
header scenarios: 0.1.16's server scenarios are a subset of its, by name.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conformance_support import CACHE
from http_support import PEERS, ROOT, ServerProcess, everything_http, install_everything, lab_server

from mcp_nb.check import run_checkup, text_summary
from mcp_nb.check.model import Report
from mcp_nb.conformance.suite import Outcome, Suite

pytestmark = pytest.mark.anyio

SUITE_VERSION = "0.2.0-alpha.12"
#: The lab profile serving the fixture tools, resources and prompts the scenarios ask for.
LAB_FIXTURES = ("--fixtures", "conformance")
#: The one fixture tool the checkup may call: tools.progress needs a call that reports
#: progress. (Not "all": 35 tools called at once on two busy cores can finish the
#: progress tool before its cancellation lands, which the cancellation check warns about.)
CALLED = ["test_tool_with_progress"]
TIMEOUT = 3.0
UVICORN_READY = re.compile(r"Uvicorn running on (http://\S+)")
#: Worst first: a check id the suite reports more than once takes its worst status.
_SEVERITY = ("FAILURE", "WARNING", "SUCCESS", "INFO", "SKIPPED")


@dataclass(frozen=True)
class Overlap:
    """A rule both judge: the suite's ``suite_check`` in ``run`` (scenario@wire), and
    the checkup's ``checkup_check``."""

    run: str
    suite_check: str
    checkup_check: str


OVERLAPS = (
    Overlap("server-initialize@2025-11-25", "server-initialize", "lifecycle.initialize-result"),
    Overlap("server-initialize@2025-11-25", "server-initialize", "lifecycle.version-answer"),
    Overlap("server-initialize@2025-11-25", "server-session-id-visible-ascii", "http.session-id"),
    Overlap("ping@2025-11-25", "ping", "lifecycle.ping"),
    Overlap("logging-set-level@2025-11-25", "logging-set-level", "capabilities.logging-served"),
    Overlap("tools-list@2025-11-25", "tools-name-format", "tools.names"),
    Overlap("json-schema-2020-12@2025-11-25", "json-schema-2020-12-tool-found",
            "tools.input-schema"),
    Overlap("tools-call-with-progress@2025-11-25", "tools-call-with-progress", "tools.progress"),
    Overlap("resources-read-text@2025-11-25", "resources-read-text", "resources.read"),
    Overlap("resources-subscribe@2025-11-25", "resources-subscribe", "resources.subscribe"),
    Overlap("resources-unsubscribe@2025-11-25", "resources-unsubscribe", "resources.subscribe"),
    Overlap("prompts-get-simple@2025-11-25", "prompts-get-simple", "prompts.get"),
    Overlap("completion-complete@2025-11-25", "completion-complete", "completion.result"),
    Overlap("server-session-lifecycle@2025-11-25", "server-session-terminated-returns-404",
            "http.session-404"),
    Overlap("dns-rebinding-protection@2025-11-25", "localhost-host-rebinding-rejected",
            "http.origin"),
    Overlap("server-sse-polling@2025-11-25", "server-sse-disconnect-resume", "http.event-ids"),
    Overlap("server-sse-polling@2025-11-25", "server-sse-disconnect-resume", "http.resumption"),
    Overlap("tools-list@2026-07-28", "wire-schema-valid", "stateless.result-type"),
    Overlap("server-stateless@2026-07-28", "sep-2575-server-unsupported-version-error",
            "stateless.unsupported-version"),
    Overlap("server-stateless@2026-07-28", "sep-2575-server-implements-discover",
            "stateless.discover"),
    Overlap("server-stateless@2026-07-28", "sep-2575-server-identifies-in-result-meta",
            "stateless.discover-server-info"),
    Overlap("server-stateless@2026-07-28",
            "sep-2575-request-meta-invalid-missing-client-capabilities", "stateless.request-meta"),
    Overlap("server-stateless@2026-07-28", "sep-2575-http-server-header-mismatch-400",
            "stateless.header-mismatch"),
    Overlap("http-header-validation@2026-07-28", "sep-2243-server-reject-invalid-headers",
            "stateless.header-mismatch"),
)


@dataclass(frozen=True)
class KnobCase:
    """A lab knob, the suite runs that face it, and what each referee must say."""

    runs: tuple[str, ...]
    #: The suite's checks that fail (FAILURE or WARNING) across ``runs``, no more.
    suite_fails: frozenset[str]
    #: The checkup's failed and warned checks, no more.
    checkup: dict[str, str]


KNOBS = {
    ("--answer-version", "1999-01-01"): KnobCase(
        ("server-initialize@2025-11-25",), frozenset({"server-initialize"}),
        {"lifecycle.version-answer": "fail"}),
    ("--never-answer", "ping"): KnobCase(
        # The suite waits for the ping until its scenario times out (30 s).
        ("ping@2025-11-25",), frozenset({"scenario-timeout"}), {"lifecycle.ping": "fail"}),
    ("--no-origin-check",): KnobCase(
        ("dns-rebinding-protection@2025-11-25",),
        frozenset({"localhost-host-rebinding-rejected"}), {"http.origin": "fail"}),
    ("--repeat-event-ids",): KnobCase(
        ("server-sse-polling@2025-11-25",), frozenset({"server-sse-disconnect-resume"}),
        {"http.event-ids": "fail"}),
    ("--resume-wrong-stream",): KnobCase(
        ("server-sse-polling@2025-11-25",), frozenset({"server-sse-disconnect-resume"}),
        {"http.resumption": "fail"}),
    ("--omit-result-type",): KnobCase(
        ("tools-list@2026-07-28",), frozenset({"wire-schema-valid"}),
        {"stateless.result-type": "fail"}),
    ("--lenient-meta",): KnobCase(
        ("server-stateless@2026-07-28",),
        frozenset({"sep-2575-request-meta-invalid-missing-client-capabilities",
                   "sep-2575-http-server-meta-invalid-400"}),
        {"stateless.request-meta": "fail"}),
    ("--skip-header-check",): KnobCase(
        ("server-stateless@2026-07-28", "http-header-validation@2026-07-28"),
        frozenset({"sep-2575-http-server-header-mismatch-400",
                   "sep-2243-server-reject-invalid-headers", "sep-2243-server-reject-error-code"}),
        {"stateless.header-mismatch": "fail"}),
}

#: Knobs whose rule the suite's nearest scenario does not check: it passes them.
CHECKUP_ONLY = {
    # tools-list lists the tools; it does not look for the capability that declares them.
    ("--omit-capability", "tools"): KnobCase(
        ("tools-list@2025-11-25",), frozenset(), {"capabilities.tools": "fail"}),
    # The suite takes any 2xx for notifications/initialized; the rule is 202, no body.
    ("--notifications-200",): KnobCase(
        ("server-session-lifecycle@2025-11-25",), frozenset(),
        {"http.notification-202": "fail"}),
}


@pytest.fixture(scope="module")
def referee() -> Suite:
    suite = Suite(SUITE_VERSION, CACHE)
    try:
        suite.install()
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        pytest.fail(f"conformance suite {SUITE_VERSION} is unavailable: {exc}", pytrace=False)
    return suite


def statuses(outcome: Outcome) -> dict[str, str]:
    """The suite's check id → its worst status in the run."""
    worst: dict[str, str] = {}
    for check in outcome.checks:
        status = str(check.get("status"))
        known = worst.get(check["id"])
        if known is None or _SEVERITY.index(status) < _SEVERITY.index(known):
            worst[check["id"]] = status
    return worst


def suite_failures(outcomes: list[Outcome]) -> set[str]:
    return {check for outcome in outcomes for check, status in statuses(outcome).items()
            if status in ("FAILURE", "WARNING")}


def verdicts(report: Report) -> dict[str, str]:
    return {r.check.id: r.outcome for r in report.results if r.outcome in ("fail", "warn")}


def run(suite: Suite, scenario_at_wire: str, url: str, results: Path) -> Outcome:
    scenario, wire = scenario_at_wire.split("@")
    return suite.run_server(scenario, wire, results, url)


async def test_both_pass_every_overlapping_rule_on_the_healthy_lab(
        referee: Suite, tmp_path: Path) -> None:
    with lab_server(*LAB_FIXTURES) as lab:
        outcomes = {name: run(referee, name, lab.ready_text, tmp_path)
                    for name in dict.fromkeys(o.run for o in OVERLAPS)}
        report = await run_checkup(lab.ready_text, call_tools=CALLED, timeout=TIMEOUT)
    for name, outcome in outcomes.items():
        assert outcome.ok, f"{name}: {outcome.failure_text()}"
    assert verdicts(report) == {}, text_summary(report)
    for overlap in OVERLAPS:
        assert statuses(outcomes[overlap.run]).get(overlap.suite_check) == "SUCCESS", overlap
        assert report.result(overlap.checkup_check).outcome == "pass", overlap


def disagreements(runs: tuple[str, ...], outcomes: dict[str, Outcome],
                  report: Report) -> list[str]:
    """The overlapping rules, among ``runs``, on which the two referees disagree.

    A suite check may stand for more than one checkup check (server-initialize fails
    for a bad InitializeResult and for a version no revision has) and a checkup check
    for more than one suite check, so each side's failure must be matched by a failure
    of one of its partners on the other side. A scenario that timed out failed all its
    checks.
    """
    ran = [o for o in OVERLAPS if o.run in runs]

    def suite_failed(o: Overlap) -> bool:
        seen = statuses(outcomes[o.run])
        return "FAILURE" in (seen.get(o.suite_check), seen.get("scenario-timeout")) or (
            seen.get(o.suite_check) == "WARNING")

    def checkup_failed(o: Overlap) -> bool:
        return report.result(o.checkup_check).outcome in ("fail", "warn")

    wrong = []
    for o in ran:
        suite_side = [p for p in ran if (p.run, p.suite_check) == (o.run, o.suite_check)]
        checkup_side = [p for p in ran if p.checkup_check == o.checkup_check]
        if suite_failed(o) and not any(checkup_failed(p) for p in suite_side):
            wrong.append(f"suite {o.run} {o.suite_check}: {statuses(outcomes[o.run])}")
        if checkup_failed(o) and not any(suite_failed(p) for p in checkup_side):
            wrong.append(f"checkup {o.checkup_check}: {report.result(o.checkup_check).detail}")
    return wrong


@pytest.mark.parametrize("knob", [*KNOBS, *CHECKUP_ONLY], ids=" ".join)
async def test_a_knob_that_breaks_an_overlapping_rule_fails_both(
        referee: Suite, tmp_path: Path, knob: tuple[str, ...]) -> None:
    case = KNOBS.get(knob) or CHECKUP_ONLY[knob]
    with lab_server(*LAB_FIXTURES, *knob) as lab:
        outcomes = {name: run(referee, name, lab.ready_text, tmp_path) for name in case.runs}
        report = await run_checkup(lab.ready_text, call_tools=CALLED, timeout=TIMEOUT)
    assert suite_failures(list(outcomes.values())) == case.suite_fails, "\n\n".join(
        o.failure_text() for o in outcomes.values())
    caught = verdicts(report)
    assert caught.items() >= case.checkup.items(), text_summary(report)
    assert disagreements(case.runs, outcomes, report) == []
    # "Caught by its check and nothing else" is tests/test_check.py's knob matrix (stdio);
    # here, over HTTP, no other overlapping check may fail beside the knob's own.
    overlapping = {o.checkup_check for o in OVERLAPS}
    assert {c for c in caught if c in overlapping} == set(case.checkup) & overlapping


@pytest.mark.interop
async def test_both_fail_the_origin_rule_on_fastmcp_and_pass_it_with_its_guard_on(
        referee: Suite, tmp_path: Path) -> None:
    pytest.importorskip("fastmcp", reason="fastmcp (in mcp_nb's test extra)")
    for flags, expected in (((), "FAILURE"), (("--guard-origin",), "SUCCESS")):
        server = ServerProcess([sys.executable, str(PEERS / "fastmcp_server.py"), "http", *flags],
                               UVICORN_READY)
        try:
            url = server.ready_text.rstrip("/") + "/mcp"
            outcome = run(referee, "dns-rebinding-protection@2025-11-25", url, tmp_path)
            report = await run_checkup(url, timeout=TIMEOUT)
        finally:
            server.stop()
        assert statuses(outcome)["localhost-host-rebinding-rejected"] == expected, flags
        assert report.result("http.origin").outcome == (
            "fail" if expected == "FAILURE" else "pass"), flags


@pytest.mark.interop
async def test_both_fail_the_session_404_rule_on_server_everything(
        referee: Suite, tmp_path: Path) -> None:
    entry = install_everything()
    with contextlib.contextmanager(everything_http)(entry, "streamableHttp") as base:
        outcome = run(referee, "server-session-lifecycle@2025-11-25", f"{base}/mcp", tmp_path)
        report = await run_checkup(f"{base}/mcp", timeout=TIMEOUT)
    ended = [c for c in outcome.checks if c["id"] == "server-session-terminated-returns-404"]
    assert [c["status"] for c in ended] == ["FAILURE"]
    assert ended[0]["details"]["statusCode"] == 400
    session_404 = report.result("http.session-404")
    assert session_404.outcome == "fail"
    assert session_404.evidence[-1]["http"]["response"]["status"] == 400


def test_docs_list_every_overlap_and_knob() -> None:
    page = (ROOT / "docs" / "checkup.md").read_text(encoding="utf-8")
    for overlap in OVERLAPS:
        scenario, wire = overlap.run.split("@")
        row = f"| `{scenario}` @ {wire} | `{overlap.suite_check}` | `{overlap.checkup_check}` |"
        assert row in page, row
    for knob in [*KNOBS, *CHECKUP_ONLY]:
        assert f"| `{' '.join(knob)}` |" in page, knob
