"""The checkup's HTTP, stateless-era HTTP and authorization checks, calibrated both ways.

Each lab knob that breaks one of these rules trips that check and nothing else
(fail for a MUST, warn for a SHOULD); the healthy lab over HTTP (both eras,
stateless only, legacy /sse, with authorization, the conformance fixtures) gets
no failure and no warning; server-everything over Streamable HTTP gets no
failure beyond the two real ones docs/checkup.md documents.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from http_support import everything_http, install_everything, lab_server

from mcp_nb.check import CHECKS, run_checkup, text_summary
from mcp_nb.check.http_rules import FOREIGN_ORIGIN, session_id_bits
from mcp_nb.check.model import Report
from mcp_nb.check.stateless_rules import x_mcp_header_problems
from mcp_nb.client import lab_command

pytestmark = pytest.mark.anyio

TIMEOUT = 3.0


def verdicts(report: Report) -> dict[str, str]:
    return {r.check.id: r.outcome for r in report.results if r.outcome in ("fail", "warn")}


async def checkup(*flags: str, path: str = "/mcp") -> Report:
    with lab_server(*flags) as server:
        return await run_checkup(server.ready_text.replace("/mcp", path), timeout=TIMEOUT)


#: lab knob (with --http) → the one check it must trip.
HTTP_KNOBS = {
    ("--no-origin-check",): {"http.origin": "fail"},
    ("--notifications-200",): {"http.notification-202": "fail"},
    ("--html-for-json-accept",): {"http.request-answer": "fail"},
    ("--counter-session-ids",): {"http.session-id-unguessable": "warn"},  # a SHOULD
    ("--repeat-event-ids",): {"http.event-ids": "fail"},
    ("--resume-wrong-stream",): {"http.resumption": "fail"},
    # The wrong replay on a stream that stays open (as real servers' do): judged on what came.
    ("--resume-wrong-stream", "--keep-resumed-open"): {"http.resumption": "fail"},
    ("--skip-header-check",): {"stateless.header-mismatch": "fail"},
    ("--lenient-meta",): {"stateless.request-meta": "fail"},
    ("--discover-without-cache-hints",): {"stateless.discover": "fail"},
    # Conforming to the authorization page is a SHOULD (authorization is OPTIONAL).
    ("--auth", "--auth-fault", "legacy-layout"): {"auth.discovery": "warn"},
    ("--auth", "--auth-fault", "resource-mismatch"): {"auth.resource-metadata": "fail"},
    ("--auth", "--auth-fault", "wrong-issuer"): {"auth.server-metadata": "fail"},
    ("--auth", "--auth-fault", "html-metadata"): {"auth.server-metadata": "fail"},
    # The S256 MUSTs are the client's: a server without it only warns (inferred).
    ("--auth", "--auth-fault", "no-s256"): {"auth.pkce-s256": "warn"},
    ("--auth", "--auth-fault", "pre-registered-only"): {"auth.client-registration": "warn"},
}


@pytest.mark.parametrize("knob", list(HTTP_KNOBS), ids=" ".join)
async def test_each_http_knob_is_caught_by_its_check_and_nothing_else(
        knob: tuple[str, ...]) -> None:
    report = await checkup(*knob)
    expected = HTTP_KNOBS[knob]
    assert verdicts(report) == expected, text_summary(report)
    assert report.exit_status == (1 if "fail" in expected.values() else 0)
    tripped = report.result(next(iter(expected)))
    assert tripped.evidence
    # Raw probes show the HTTP exchange; stateless.discover shows the main session's own.
    wire = "seq" if tripped.check.id == "stateless.discover" else "http"
    assert all(wire in e for e in tripped.evidence)


async def test_a_resumed_stream_that_stays_open_is_judged_on_what_it_replayed() -> None:
    report = await checkup("--keep-resumed-open")
    assert verdicts(report) == {}, text_summary(report)
    resumption = report.result("http.resumption")
    assert resumption.outcome == "pass" and "replayed 1 message(s)" in resumption.detail
    replay = resumption.evidence[-1]["http"]
    assert replay["request"]["method"] == "GET" and replay["request"]["headers"]["Last-Event-ID"]
    assert '"id":3' in replay["response"]["body"].replace(" ", "")


async def test_the_origin_knob_shows_the_foreign_origin_served() -> None:
    report = await checkup("--no-origin-check")
    exchange = report.result("http.origin").evidence[0]["http"]
    assert exchange["request"]["headers"]["Origin"] == FOREIGN_ORIGIN
    assert exchange["response"]["status"] == 200


async def test_the_healthy_dual_era_lab_passes_every_transport_rule() -> None:
    report = await checkup()
    assert verdicts(report) == {}, text_summary(report)
    for check in ("http.origin", "http.notification-202", "http.request-answer",
                  "http.session-id-unguessable", "http.event-ids", "http.resumption",
                  "stateless.discover", "stateless.discover-server-info",
                  "stateless.request-meta", "stateless.header-mismatch"):
        assert report.result(check).outcome == "pass", check
    # The resumption was a GET with the ping stream's first event id, and only ping came back.
    resumed = report.result("http.resumption").evidence[1]["http"]
    assert resumed["request"]["method"] == "GET"
    assert resumed["request"]["headers"]["Last-Event-ID"] == "2-0"
    refused = report.result("stateless.header-mismatch").evidence[1]["http"]
    assert refused["request"]["headers"]["Mcp-Method"] == "tools/list"
    assert refused["response"]["status"] == 400 and "-32020" in refused["response"]["body"]
    # Mcp-Name was probed on a read of a listed resource, not on a tool call.
    named = [e["http"]["request"] for e in report.result("stateless.header-mismatch").evidence
             if e["http"]["request"]["headers"].get("Mcp-Name") == "checkup-other"]
    assert [r["body"]["method"] for r in named] == ["resources/read"]
    for check in ("auth.discovery", "auth.pkce-s256"):
        assert report.result(check).outcome == "not-applicable"
        assert "did not ask for authorization" in report.result(check).detail


async def test_stateless_only_and_legacy_sse_and_conformance_fixtures_get_no_false_failure(
        ) -> None:
    modern = await checkup("--era", "stateless")
    assert verdicts(modern) == {}, text_summary(modern)
    # No handshake over HTTP, but the Origin rule holds for server/discover too.
    assert modern.result("http.origin").outcome == "pass"
    assert modern.result("http.notification-202").outcome == "not-applicable"
    assert modern.result("stateless.header-mismatch").outcome == "pass"
    legacy = await checkup("--sse", path="/sse")
    assert verdicts(legacy) == {}, text_summary(legacy)
    assert {r.outcome for r in legacy.results if r.check.area in ("http", "auth")} == {
        "not-applicable"}
    fixtures = await checkup("--fixtures", "conformance")
    assert verdicts(fixtures) == {}, text_summary(fixtures)
    assert fixtures.result("stateless.x-mcp-header").outcome == "pass"


async def test_a_lab_behind_authorization_gets_its_metadata_checked_and_nothing_failed() -> None:
    report = await checkup("--auth")
    assert verdicts(report) == {}, text_summary(report)
    assert {r.check.id for r in report.results if r.outcome == "pass"} == {
        c for c in CHECKS if c.startswith("auth.")}
    discovery = report.result("auth.discovery")
    assert "named in WWW-Authenticate" in discovery.detail
    assert [e["http"]["request"]["method"] for e in discovery.evidence] == ["POST", "GET"]
    assert "www-authenticate" in discovery.evidence[0]["http"]["response"]["headers"]
    # Only metadata was read: no registration, no authorization request, no token request.
    urls = [e["http"]["request"]["url"] for r in report.results for e in r.evidence
            if "http" in e]
    assert not [u for u in urls if u.endswith(("/register", "/token", "/authorize"))]
    ping = report.result("lifecycle.ping")
    assert ping.outcome == "not-applicable" and "401" in ping.detail
    well_known = await checkup("--auth", "--auth-prm-discovery", "well-known-root")
    assert verdicts(well_known) == {}, text_summary(well_known)
    assert "at a well-known URI" in well_known.result("auth.discovery").detail


def test_x_mcp_header_rules() -> None:
    assert x_mcp_header_problems({"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "shard": {"type": "object", "properties": {
            "id": {"type": "integer", "x-mcp-header": "Shard-Id"}}}}}) == []
    problems = x_mcp_header_problems({"type": "object", "properties": {
        "a": {"type": "string", "x-mcp-header": "Same"},
        "b": {"type": "boolean", "x-mcp-header": "same"},
        "c": {"type": "number", "x-mcp-header": "C"},
        "d": {"type": "string", "x-mcp-header": "has space"},
        "e": {"type": "string", "x-mcp-header": ""},
        "f": {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}},
        "g": {"anyOf": [{"type": "string", "x-mcp-header": "G"}]}}})
    assert problems == [
        "b: x-mcp-header 'same' repeats a's",
        "c: x-mcp-header on a number parameter (only integer, string, boolean)",
        "d: x-mcp-header 'has space' is not an HTTP field-name token",
        "e: x-mcp-header '' is empty or not a string",
        "f/items: x-mcp-header not reachable through properties alone",
        "g/anyOf: x-mcp-header not reachable through properties alone",
    ]


def test_session_id_randomness_estimate() -> None:
    assert session_id_bits(["session-1", "session-2", "session-3"]) < 64
    assert session_id_bits(["1", "2", "3"]) < 64
    uuids = ["3f1c9a52-7b7e-4b1e-9a51-0f6c2d1e8b47", "a9d0e6c1-2f4b-4f0e-8c7a-5e3b9d2a1c60",
             "5b2e8f14-c3d9-47a6-b0e2-9f7c1a4d6e38"]
    assert session_id_bits(uuids) >= 122
    # A clock-based prefix shared by all three does not count as randomness.
    timed = ["1764100000-aa", "1764100000-bb", "1764100000-cc"]
    assert session_id_bits(timed) < 64


#: lab knob (stdio) → the MCP Apps check it must trip.
APPS_KNOBS = {
    ("--apps", "--app-fault", "wrong-mime"): {"apps.mime-type": "fail"},
    ("--apps", "--app-fault", "missing-resource"): {"apps.resource": "fail"},
    # The CSP's types are the interface's; its MUSTs are the host's: a warning.
    ("--apps", "--app-fault", "bad-csp"): {"apps.csp": "warn"},
}


@pytest.mark.parametrize("knob", list(APPS_KNOBS), ids=" ".join)
async def test_each_app_fault_is_caught_by_its_check_and_nothing_else(
        knob: tuple[str, ...]) -> None:
    report = await run_checkup(lab_command(*knob), timeout=TIMEOUT)
    expected = APPS_KNOBS[knob]
    assert verdicts(report) == expected, text_summary(report)
    tripped = report.result(next(iter(expected)))
    # The evidence is the resources/read exchange, on the session that declared the extension.
    assert [e["message"].get("method") for e in tripped.evidence][:1] == ["resources/read"]
    assert {e["session"] for e in tripped.evidence} == {"apps"}


async def test_the_lab_app_passes_over_stdio_and_http_and_no_app_is_not_applicable() -> None:
    stdio = await run_checkup(lab_command("--apps"), timeout=TIMEOUT)
    assert verdicts(stdio) == {}, text_summary(stdio)
    assert stdio.result("apps.mime-type").outcome == "pass"
    assert stdio.result("apps.resource").detail == "1 UI resource(s) read as ui:// HTML"
    assert "restrictive default" in stdio.result("apps.csp").detail  # it declares no CSP
    http = await checkup("--apps")
    assert verdicts(http) == {}, text_summary(http)
    assert http.result("apps.mime-type").outcome == "pass"
    # An App that declares a CSP of origins passes it (what it then fetches is the host's
    # business: the undeclared fetch is blocked in the browser, not seen here).
    declared = await run_checkup(lab_command("--apps", "--app-fault", "undeclared-fetch"),
                                 timeout=TIMEOUT)
    assert declared.result("apps.csp").outcome == "pass"
    plain = await run_checkup(lab_command(), timeout=TIMEOUT)
    assert plain.result("apps.resource").outcome == "not-applicable"
    assert "io.modelcontextprotocol/ui" in plain.result("apps.resource").detail


@pytest.mark.interop
async def test_a_certified_authorization_server_behind_sdk_servers(tmp_path: Path) -> None:
    """oidc-provider (a certified OpenID provider, npm) in front of the official SDK's
    resource servers: the well-configured one passes every auth check, and each server
    misconfigured on purpose is caught by the one check for its mistake."""
    pytest.importorskip("mcp.server.mcpserver", reason="the official MCP SDK (mcp>=2)")
    from oidc_support import dead_origin, oidc_provider, protected_servers

    with oidc_provider("default", tmp_path, []) as provider, protected_servers(
            {"name": "default", "issuer": provider.issuer},
            {"name": "other-resource", "issuer": provider.issuer, "resource_path": "/api"},
            {"name": "issuer-alias", "issuer": provider.issuer,
             "advertised_issuer": provider.issuer.replace("127.0.0.1", "localhost")},
            {"name": "server-down", "issuer": provider.issuer,
             "advertised_issuer": dead_origin()}) as servers:
        reports = {name: await run_checkup(servers[name], timeout=TIMEOUT)
                   for name in ("default", "other-resource", "issuer-alias", "server-down")}
    assert verdicts(reports["default"]) == {}, text_summary(reports["default"])
    assert {r.check.id for r in reports["default"].results if r.outcome == "pass"} == {
        c for c in CHECKS if c.startswith("auth.")}
    assert verdicts(reports["other-resource"]) == {"auth.resource-metadata": "fail"}
    assert verdicts(reports["issuer-alias"]) == {"auth.server-metadata": "fail"}
    assert verdicts(reports["server-down"]) == {"auth.server-metadata": "fail"}


#: server-everything's real violations over Streamable HTTP (tests/test_check.py, docs).
EVERYTHING_HTTP_VIOLATIONS = {"http.origin": "fail", "http.session-404": "fail"}


@pytest.mark.interop
async def test_server_everything_gets_no_new_false_failure_from_these_checks() -> None:
    entry = install_everything()
    with contextlib.contextmanager(everything_http)(entry, "streamableHttp") as base:
        report = await run_checkup(f"{base}/mcp", timeout=TIMEOUT)
    mine = {c for c in CHECKS if c.startswith(("http.", "auth.")) or c in (
        "stateless.discover", "stateless.discover-server-info", "stateless.request-meta",
        "stateless.header-mismatch", "stateless.x-mcp-header")}
    assert {c: o for c, o in verdicts(report).items() if c in mine} == \
        EVERYTHING_HTTP_VIOLATIONS, text_summary(report)
    for check in ("http.notification-202", "http.request-answer",
                  "http.session-id-unguessable", "http.event-ids", "http.resumption"):
        assert report.result(check).outcome == "pass", check
    # It refuses a POST whose Accept lacks text/event-stream (406): allowed, and recorded.
    assert "refused with 406" in report.result("http.request-answer").detail


def test_docs_list_these_checks_and_knobs() -> None:
    page = (Path(__file__).resolve().parent.parent / "docs" / "checkup.md").read_text()
    for check_id in {c for k in HTTP_KNOBS.values() for c in k}:
        check = CHECKS[check_id]
        assert f"| `{check.id}` | {check.title} | {check.rule.level} |" in page, check.id
    for check_id in {c for k in APPS_KNOBS.values() for c in k}:
        check = CHECKS[check_id]
        assert f"| `{check.id}` | {check.title} | {check.rule.level} |" in page, check.id
    for knob, expected in {**HTTP_KNOBS, **APPS_KNOBS}.items():
        assert f"| `{' '.join(knob)}` | `{next(iter(expected))}` |" in page, knob


async def test_a_bogus_answered_version_is_charged_to_its_own_check_only() -> None:
    # The lab answers version 1999-01-01; sending that back in MCP-Protocol-Version would
    # rightly get 400, which is not the notification rule's fault (it once failed here).
    report = await checkup("--answer-version", "1999-01-01")
    assert verdicts(report) == {"lifecycle.version-answer": "fail"}, text_summary(report)
    assert report.result("http.notification-202").outcome == "pass"


@pytest.mark.parametrize("era", ["both", "handshake"])
async def test_a_cancelled_answer_that_crossed_the_cancel_is_not_a_late_answer(era: str) -> None:
    # The conformance fixtures' progress tool ends 50 ms after its second progress; with
    # every tool called at once the answer can be on the wire before the cancel arrives,
    # which the spec allows. A ping sent behind the cancel tells the two apart; in the
    # stateless era over HTTP closing the stream is the cancel, so nothing can be late.
    with lab_server("--fixtures", "conformance", "--era", era) as server:
        report = await run_checkup(server.ready_text, timeout=TIMEOUT, call_tools="all")
    cancellation = report.result("tools.cancellation")
    assert cancellation.outcome in ("pass", "not-applicable"), text_summary(report)
    if era == "both":
        assert "closing the request's response stream" in cancellation.detail
    assert "jsonrpc.ids" not in verdicts(report)  # the ping's answer was waited for
