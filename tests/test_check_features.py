"""The checkup's protocol-feature checks (the feature areas of mcp_nb.check), calibrated both ways.

Each lab fault knob that breaks a feature rule is caught by that rule's check and
by nothing else (FEATURE_KNOB_MATRIX, run with every tool allowed, since progress,
cancellation and tool errors are only looked at on allowed calls); the healthy lab
passes them with the exchanges as evidence; the validators behind resources.uris
and resources.templates are held to the RFCs' own examples.
"""

from __future__ import annotations

import re

import pytest

from mcp_nb.check import CHECKS, run_checkup, text_summary
from mcp_nb.check.handshake_features import HANDSHAKE_FEATURE_CHECKS
from mcp_nb.check.model import Report
from mcp_nb.check.tool_calls import TOOL_CALL_CHECKS
from mcp_nb.check.uris import template_problem, template_variables, uri_problem
from mcp_nb.client import ClientSession, lab_command
from mcp_nb.transports import StdioTransport

pytestmark = pytest.mark.anyio

TIMEOUT = 3.0
#: The checks this file calibrates (the rest are tests/test_check.py's).
FEATURE_CHECKS = ("lifecycle.shutdown", "capabilities.completions",
                  "capabilities.completions-served", "capabilities.logging",
                  "capabilities.logging-served",
                  *TOOL_CALL_CHECKS, "resources.uris", "resources.read", "resources.templates",
                  "resources.subscribe", "prompts.arguments", "prompts.get", "completion.result",
                  "logging.invalid-level", "jsonrpc.batch", "lists.list-changed")


def verdicts(report: Report) -> dict[str, str]:
    return {r.check.id: r.outcome for r in report.results if r.outcome in ("fail", "warn")}


def test_every_feature_check_exists_and_keeps_its_level() -> None:
    for check_id in FEATURE_CHECKS:
        assert check_id in CHECKS, check_id
    levels = {c: CHECKS[c].rule.level for c in FEATURE_CHECKS if CHECKS[c].rule.level != "MUST"}
    # No sentence makes these a MUST said to the server: they can only warn.
    assert levels == {
        "lifecycle.shutdown": "inferred", "capabilities.completions-served": "inferred",
        "capabilities.logging-served": "inferred", "tools.input-errors": "inferred",
        "tools.unknown-tool": "inferred", "tools.cancellation": "SHOULD",
        "logging.invalid-level": "SHOULD", "resources.read": "MUST (schema)",
        "resources.templates": "MUST (schema)", "resources.subscribe": "inferred",
        "prompts.arguments": "MUST (schema)", "prompts.get": "MUST (schema)",
        "completion.result": "MUST (schema)"}


async def test_the_healthy_dual_era_lab_passes_every_feature_check() -> None:
    report = await run_checkup(lab_command(), call_tools="all", timeout=TIMEOUT)
    assert verdicts(report) == {}, text_summary(report)
    for check_id in set(FEATURE_CHECKS) - {"lists.list-changed"}:
        assert report.result(check_id).outcome == "pass", (check_id, report.result(check_id))
    # Declared, but nothing changed a list: the checkup says so rather than pass it.
    unchanged = report.result("lists.list-changed")
    assert unchanged.outcome == "not-applicable" and "no list changed" in unchanged.detail
    # The stateless main session could not set a log level or subscribe (2026-07-28 has
    # neither): those ran on the handshake session.
    for check_id in ("capabilities.logging", "capabilities.logging-served",
                     "resources.subscribe", "jsonrpc.batch"):
        assert {e["session"] for e in report.result(check_id).evidence} == {"handshake"}
    levels = [e["message"]["params"]["level"] for e in report.result(
        "capabilities.logging-served").evidence if e["message"].get("method") == "logging/setLevel"]
    # Most severe first: the session ends at debug, hearing everything rather than nothing.
    assert levels == ["emergency", "alert", "critical", "error", "warning", "notice", "info",
                      "debug"]
    # slow reported progress under the call's own token; the call was cancelled at its second
    # notification and nothing answered it afterwards.
    cancelled = report.result("tools.cancellation")
    assert "'slow' cancelled at its second progress" in cancelled.detail
    sent = [e["message"] for e in cancelled.evidence if e["message"].get("method")]
    assert sent[0]["method"] == "tools/call" and sent[0]["params"]["name"] == "slow"
    token = sent[0]["params"]["_meta"]["progressToken"]
    progress = [m["params"] for m in sent if m["method"] == "notifications/progress"]
    assert [p["progressToken"] for p in progress] == [token, token]
    assert not any("result" in e["message"] for e in cancelled.evidence)
    shutdown = report.result("lifecycle.shutdown")
    assert {e["finding"] for e in shutdown.evidence} == {"transport: stdin closed",
                                                         "transport: exited"}


async def test_without_call_tools_no_tool_is_called_and_the_call_checks_say_why() -> None:
    report = await run_checkup(lab_command("--era", "handshake"), timeout=TIMEOUT)
    assert verdicts(report) == {}, text_summary(report)
    for check_id in TOOL_CALL_CHECKS:
        result = report.result(check_id)
        assert result.outcome == "not-applicable" and "--call-tools" in result.detail
    assert "tools/call" not in repr(report.to_dict())
    # The handshake-only checks ran on the main session (it speaks the handshake era).
    assert report.result("resources.subscribe").evidence[0]["session"] == "main"


async def test_a_stateless_only_server_gets_the_handshake_feature_checks_not_applicable() -> None:
    report = await run_checkup(lab_command("--era", "stateless"), timeout=TIMEOUT)
    assert verdicts(report) == {}, text_summary(report)
    for check_id in HANDSHAKE_FEATURE_CHECKS:
        result = report.result(check_id)
        assert result.outcome == "not-applicable" and "stateless era" in result.detail
    # Resources, prompts and completion are the stateless era's too: judged on the main session.
    assert report.result("resources.read").outcome == "pass"
    assert report.result("completion.result").outcome == "pass"


async def test_an_open_session_gets_its_log_level_back() -> None:
    async with ClientSession(StdioTransport(lab_command("--era", "handshake"))) as session:
        await session.connect()
        await session.set_logging_level("warning")
        report = await run_checkup(session, timeout=TIMEOUT)
        levels = [e.message["params"]["level"] for e in session.transcript
                  if e.direction == "send" and e.method == "logging/setLevel"]
    assert verdicts(report) == {}, text_summary(report)
    assert levels[0] == "warning" and levels[-1] == "warning" and len(levels) == 11
    # The user's session was not closed by the checkup: shutdown is not its to judge.
    assert report.result("lifecycle.shutdown").outcome == "not-applicable"


#: knob → the one check it must trip (fail for a MUST, warn for a SHOULD), every tool allowed.
FEATURE_KNOB_MATRIX = {
    ("--ignore-stdin-close",): {"lifecycle.shutdown": "warn"},
    ("--omit-capability", "completions"): {"capabilities.completions": "fail"},
    # Undeclared logging/setLevel answered, but no log sent: what the MUST forbids (emitting
    # undeclared logs) was not seen, so a warning.
    ("--omit-capability", "logging"): {"capabilities.logging": "warn"},
    ("--ignore-cancel",): {"tools.cancellation": "warn"},
    ("--feature-fault", "arguments-as-protocol-error"): {"tools.input-errors": "warn"},
    ("--feature-fault", "unknown-tool-result"): {"tools.unknown-tool": "warn"},
    ("--feature-fault", "bad-progress"): {"tools.progress": "fail"},
    ("--feature-fault", "bad-resource-uri"): {"resources.uris": "fail"},
    ("--feature-fault", "wrong-read-uri"): {"resources.read": "warn"},
    ("--feature-fault", "bad-uri-template"): {"resources.templates": "warn"},
    ("--feature-fault", "no-subscribe"): {"resources.subscribe": "warn"},
    ("--feature-fault", "bad-prompt-arguments"): {"prompts.arguments": "warn"},
    ("--feature-fault", "bad-prompt-role"): {"prompts.get": "warn"},
    ("--feature-fault", "bad-completion"): {"completion.result": "warn"},
    ("--feature-fault", "loose-log-level"): {"logging.invalid-level": "warn"},
    ("--feature-fault", "answer-batches"): {"jsonrpc.batch": "fail"},
    ("--feature-fault", "undeclared-list-changed"): {"lists.list-changed": "fail"},
}


@pytest.mark.parametrize("knob", list(FEATURE_KNOB_MATRIX), ids=" ".join)
async def test_each_feature_knob_is_caught_by_its_check_and_nothing_else(
        knob: tuple[str, ...]) -> None:
    report = await run_checkup(lab_command(*knob), call_tools="all", timeout=TIMEOUT)
    assert verdicts(report) == FEATURE_KNOB_MATRIX[knob], text_summary(report)
    assert report.exit_status == (1 if "fail" in FEATURE_KNOB_MATRIX[knob].values() else 0)
    assert report.result(next(iter(FEATURE_KNOB_MATRIX[knob]))).evidence, "no evidence"


async def test_the_evidence_shows_what_broke() -> None:
    batch = await run_checkup(lab_command("--feature-fault", "answer-batches"), timeout=TIMEOUT)
    # What was sent and the array that came back, as the wire carried them.
    texts = [e["text"] for e in batch.result("jsonrpc.batch").evidence]
    assert texts == ['[{"jsonrpc": "2.0", "id": "checkup-batch", "method": "ping"}]',
                     '[{"jsonrpc":"2.0","id":"checkup-batch","result":{}}]']
    healthy = await run_checkup(lab_command("--era", "handshake"), timeout=TIMEOUT)
    refusal = healthy.result("jsonrpc.batch")
    assert refusal.detail == "the batch was refused with error -32600"
    assert refusal.evidence[-1]["message"]["id"] is None  # JSON-RPC: the id could not be read
    stubborn = await run_checkup(lab_command("--ignore-stdin-close", "--era", "handshake"),
                                 timeout=TIMEOUT)
    events = [e["message"]["event"] for e in stubborn.result("lifecycle.shutdown").evidence]
    assert events[:2] == ["stdin closed", "SIGTERM"]
    assert stubborn.exit_status == 0  # a SHOULD: the CI job does not fail
    # The detail says what happened: SIGTERM, and how the server ended (no SIGKILL needed).
    detail = stubborn.result("lifecycle.shutdown").detail
    assert "did not exit within 5 s of their stdin closing" in detail
    assert "sent SIGTERM" in detail and "SIGKILL" not in detail
    # The lab ends on SIGTERM either way; whether its own handler or the signal ends it
    # depends on where the signal finds it, and the detail says which.
    assert re.search(r"killed by SIGTERM|server exit code \d+", detail)


async def test_a_list_change_a_tool_call_makes_is_observed() -> None:
    # toggle_bonus changes all three lists; the handshake-era main session hears of each.
    report = await run_checkup(lab_command("--list-changes", "--era", "handshake"),
                               call_tools="all", timeout=TIMEOUT)
    assert verdicts(report) == {}, text_summary(report)
    changed = report.result("lists.list-changed")
    assert changed.outcome == "pass"
    assert sorted(e["message"]["method"] for e in changed.evidence) == [
        "notifications/prompts/list_changed", "notifications/resources/list_changed",
        "notifications/tools/list_changed"]


def test_the_knob_table_in_the_docs_lists_every_feature_knob() -> None:
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / "docs" / "checkup.md").read_text()
    for knob, expected in FEATURE_KNOB_MATRIX.items():
        assert f"| `{' '.join(knob)}` | `{next(iter(expected))}` |" in page, knob


@pytest.mark.parametrize("uri", [
    "file:///project/src/main.rs", "https://example.com/a?b=c#d", "urn:isbn:0451450523",
    "lab://echo/hello%20world", "mailto:someone@example.com", "git://[::1]/repo",
])
def test_valid_uris_pass(uri: str) -> None:
    assert uri_problem(uri) is None


@pytest.mark.parametrize("uri, why", [
    ("lab://bad uri", "' '"), ("no-scheme/path", "no scheme"), ("1http://x", "no scheme"),
    ("file:///a%zz", "'%'"), ("file:///<script>", "'<'"), ("file:///ü", "'ü'"),
])
def test_invalid_uris_fail_with_the_reason(uri: str, why: str) -> None:
    problem = uri_problem(uri)
    assert problem is not None and why in problem


@pytest.mark.parametrize("template", [
    # RFC 6570's own examples (sections 1.2 and 3.2), and the spec's.
    "file:///{path}", "{var}", "{+path}/here", "{#x,hello,y}", "X{.var:3}", "{/list*}",
    "{;keys*}", "{?x,y,empty}", "?fixed=yes{&x}", "http://example.com/~{username}/",
    "{hello:5}", "lab://echo/{text}", "{var.name}", "{%41b}", "no-expressions/at/all",
])
def test_rfc_6570_templates_pass(template: str) -> None:
    assert template_problem(template) is None


@pytest.mark.parametrize("template, why", [
    ("lab://echo/{text", "never closed"), ("{}", "expression"), ("{a b}", "expression"),
    ("{=reserved}", "expression"), ("{x:0}", "expression"), ("{x:10000}", "expression"),
    ("a}b", "'}'"), ("a b{x}", "' '"), ("{x,}", "expression"), ("{..x}", "expression"),
])
def test_broken_templates_fail_with_the_reason(template: str, why: str) -> None:
    problem = template_problem(template)
    assert problem is not None and why in problem


def test_template_variables_are_read_in_order() -> None:
    assert template_variables("{+a,b*}/x{?c:3}") == ["a", "b", "c"]


async def test_a_tool_call_the_client_would_not_send_is_not_judged() -> None:
    # Without the tools capability our own client refuses tools/call: nothing reached the
    # server, so the unknown-tool and input-error checks have nothing to judge.
    report = await run_checkup(lab_command("--omit-capability", "tools"), timeout=TIMEOUT,
                               call_tools="all")
    assert verdicts(report) == {"capabilities.tools": "fail"}, text_summary(report)
    unknown = report.result("tools.unknown-tool")
    assert unknown.outcome == "not-applicable" and "was not sent" in unknown.detail


async def test_a_declared_list_that_fails_is_not_called_undeclared() -> None:
    report = await run_checkup(lab_command("--never-answer", "prompts/list"), timeout=1.0)
    # Declared and not answered: 2026-07-28's MUST (the lab's main session is stateless).
    assert report.result("capabilities.prompts-served").outcome == "fail", text_summary(report)
    assert report.result("capabilities.prompts").outcome == "not-applicable"
    why = report.result("prompts.get").detail
    assert why == "the server declares prompts but its list could not be read " \
                  "(see capabilities.prompts-served)"
