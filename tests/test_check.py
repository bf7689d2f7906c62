"""The server checkup (mcp_nb.check), calibrated both ways against real servers.

Each lab fault knob that breaks a rule the checkup checks must be caught by that
check and by nothing else; the healthy lab, the official SDK's server and
@modelcontextprotocol/server-everything must get no false failure (the failures
server-everything does get are real, and docs/checkup.md shows their evidence).
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from http_support import PEERS, ServerProcess, everything_http, install_everything, lab_server

from mcp_nb.check import CHECKS, Result, html_report, junit_xml, run_checkup, text_summary
from mcp_nb.check.catalogue import APPS_SPEC
from mcp_nb.check.model import LEVELS, SPEC_LEVELS, Report
from mcp_nb.client import ClientSession, lab_command
from mcp_nb.transports import StdioTransport

pytestmark = pytest.mark.anyio

#: Short enough that a knob which never answers costs little; long enough for 2 busy cores.
TIMEOUT = 3.0
UVICORN_READY = re.compile(r"Uvicorn running on (http://\S+)")


def verdicts(report: Report) -> dict[str, str]:
    """The checks that did not pass or were not applicable: id → outcome."""
    return {r.check.id: r.outcome for r in report.results
            if r.outcome in ("fail", "warn")}


def test_a_should_can_only_warn() -> None:
    should = CHECKS["tools.names"]
    must = CHECKS["tools.input-schema"]
    assert should.rule.level == "SHOULD" and must.rule.level == "MUST"
    assert Result.make(should, "fail", "x").outcome == "warn"
    assert Result.make(must, "fail", "x").outcome == "fail"
    # Neither the schema's types nor the kit's inference can fail a server.
    for level in ("MUST (schema)", "inferred"):
        check = next(c for c in CHECKS.values() if c.rule.level == level)
        assert Result.make(check, "fail", "x").outcome == "warn"


#: A party other than the server: a sentence whose keyword follows only these binds them.
_OTHER_PARTY = re.compile(r"\b(clients?|hosts?)\b", re.IGNORECASE)
_SERVER = re.compile(r"\b(servers?|receivers?|both parties)\b", re.IGNORECASE)


def _says_to_the_server(quote: str, keyword: str) -> bool:
    """Whether some sentence of ``quote`` carries ``keyword`` in capitals (RFC 2119) without
    addressing it to the client or the host alone."""
    for sentence in re.split(r"(?<=[.;…])\s+|\s+…\s+", quote):
        found = re.search(rf"\b{keyword}\b", sentence)
        if found:
            head = sentence[:found.start()]
            if not _OTHER_PARTY.search(head) or _SERVER.search(head):
                return True
    return False


def test_every_level_is_the_specs_word_for_the_server() -> None:
    # No exemption: every check's level is one of the kinds, and a spec level is the keyword
    # its quote says, in capitals, to the server; what the schema's types or the kit infers is
    # labelled so (with a note saying what it rests on) and can only warn.
    for check in CHECKS.values():
        rule = check.rule
        assert rule.level in LEVELS, check.id
        assert rule.url.startswith(("https://modelcontextprotocol.io/specification/",
                                    APPS_SPEC)), check.id
        assert check.fix and rule.quote, check.id
        if rule.level in SPEC_LEVELS:
            assert _says_to_the_server(rule.quote, rule.level), (check.id, rule.quote)
        else:
            assert rule.note, f"{check.id}: a {rule.level} rule says what it rests on"
        if rule.level == "MUST (schema)":
            # The quote is the schema's (or the extension's interface's) type.
            assert re.match(r"[A-Za-z]\w*( extends \w+)?: ", rule.quote), (check.id, rule.quote)
        assert (Result.make(check, "fail", "x").outcome == "fail") == (rule.level == "MUST")
        if rule.level in SPEC_LEVELS:
            # A sentence's rule quotes no schema types: what only the schema says is a check
            # of its own, at MUST (schema), so it cannot fail beside the sentence's MUST.
            assert "(schema" not in rule.quote and "DiscoverResult" not in rule.quote, check.id
    # Authorization is OPTIONAL and conforming to its page a SHOULD (2025-11-25 and
    # 2026-07-28, Protocol Requirements): a 401 that leads to no metadata can only warn.
    discovery = CHECKS["auth.discovery"].rule
    assert discovery.level == "SHOULD" and "Authorization is OPTIONAL" in discovery.quote
    # The test itself tells the parties apart.
    assert not _says_to_the_server("MCP clients MUST use the S256 code challenge method", "MUST")
    assert not _says_to_the_server("the client SHOULD initiate shutdown", "SHOULD")
    assert _says_to_the_server("Authorization servers and MCP clients SHOULD support", "SHOULD")
    assert not _says_to_the_server("no sentence says Must here", "MUST")


async def test_the_healthy_lab_passes_over_stdio_with_calls_allowed() -> None:
    report = await run_checkup(lab_command(), call_tools="all", timeout=TIMEOUT)
    assert verdicts(report) == {}
    assert report.exit_status == 0
    assert report.era == "stateless"  # the lab speaks both eras; auto picks 2026-07-28
    # Lifecycle was checked on a handshake session of its own, with the exchange as evidence.
    ping = report.result("lifecycle.ping")
    assert ping.outcome == "pass"
    assert [e["message"].get("method") for e in ping.evidence][:1] == ["ping"]
    assert {e["session"] for e in ping.evidence} == {"handshake"}
    # The call was allowed, so structuredContent was compared with add's outputSchema.
    output = report.result("tools.output-schema")
    assert output.detail == "schemas valid; structuredContent of 1 call(s) conforms"
    assert any(e["message"].get("method") == "tools/call" for e in output.evidence)
    # HTTP's rules are not applicable to stdio, and the report says why.
    origin = report.result("http.origin")
    assert origin.outcome == "not-applicable" and "HTTP" in origin.detail


async def test_no_tool_is_called_unless_allowed() -> None:
    report = await run_checkup(lab_command("--era", "handshake"), timeout=TIMEOUT)
    assert verdicts(report) == {}
    assert report.era == "handshake"
    assert "no call allowed (--call-tools)" in report.result("tools.output-schema").detail
    assert "tools/call" not in report.to_dict().__repr__()
    assert "no tool was called" in text_summary(report)


#: knob → the one check it must trip (fail for a MUST, warn for a SHOULD).
KNOB_MATRIX = {
    ("--reject-version",): {"lifecycle.unknown-version": "fail"},
    ("--answer-version", "1999-01-01"): {"lifecycle.version-answer": "fail"},
    ("--omit-capability", "tools"): {"capabilities.tools": "fail"},
    ("--omit-capability", "prompts"): {"capabilities.prompts": "fail"},
    ("--never-answer", "ping"): {"lifecycle.ping": "fail"},
    ("--reuse-response-id",): {"jsonrpc.ids": "fail"},
    ("--garbage-stdout",): {"jsonrpc.messages": "fail"},
    ("--request-before-initialized",): {"lifecycle.requests-before-initialized": "warn"},
    ("--hostile-strings",): {"tools.names": "warn"},
    ("--omit-result-type",): {"stateless.result-type": "fail"},
}


@pytest.mark.parametrize("knob", list(KNOB_MATRIX), ids=" ".join)
async def test_each_fault_knob_is_caught_by_its_check_and_nothing_else(
        knob: tuple[str, ...]) -> None:
    report = await run_checkup(lab_command(*knob), timeout=TIMEOUT)
    assert verdicts(report) == KNOB_MATRIX[knob], text_summary(report)
    assert report.exit_status == (1 if "fail" in KNOB_MATRIX[knob].values() else 0)
    tripped = report.result(next(iter(KNOB_MATRIX[knob])))
    assert tripped.evidence, "a verdict without evidence"


async def test_a_stateless_only_server_gets_not_applicable_lifecycle_checks() -> None:
    report = await run_checkup(lab_command("--era", "stateless"), timeout=TIMEOUT)
    assert verdicts(report) == {}
    ping = report.result("lifecycle.ping")
    assert ping.outcome == "not-applicable" and "-32022" in ping.detail


async def test_an_open_session_is_checked_without_new_connections() -> None:
    async with ClientSession(StdioTransport(lab_command("--era", "handshake"))) as session:
        await session.connect()
        report = await run_checkup(session, timeout=TIMEOUT)
    assert verdicts(report) == {}
    assert report.target == "open session"
    assert report.result("lifecycle.ping").outcome == "pass"
    assert report.result("lifecycle.unknown-version").outcome == "not-applicable"


async def test_hostile_strings_are_escaped_in_html_and_plain_in_text() -> None:
    report = await run_checkup(lab_command("--hostile-strings"), timeout=TIMEOUT)
    markup = html_report(report)
    assert "<script>" not in markup and "<img" not in markup
    assert "&lt;script&gt;" in markup
    assert "\x1b" not in text_summary(report) and "\u202e" not in text_summary(report)
    ET.fromstring(junit_xml(report))  # control characters did not break the XML


def test_the_command_line_writes_junit_that_ci_reads(tmp_path: Path) -> None:
    junit, html, data = tmp_path / "checkup.xml", tmp_path / "checkup.html", tmp_path / "c.json"
    done = subprocess.run(
        [sys.executable, "-m", "mcp_nb.check", "--junit", str(junit), "--html", str(html),
         "--json", str(data), "--timeout", str(TIMEOUT), "--", *lab_command("--reject-version")],
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr  # a failed MUST fails the CI job
    assert "FAIL lifecycle.unknown-version [MUST]" in done.stdout
    root = ET.parse(junit).getroot()
    cases = root.findall(".//testcase")
    assert len(cases) == len(CHECKS)
    failed = [case.get("name") for case in cases if case.find("failure") is not None]
    assert failed == ["lifecycle.unknown-version"]
    assert root.get("failures") == "1"
    failure = root.find(".//testcase[@name='lifecycle.unknown-version']/failure")
    assert failure is not None and "-32602" in (failure.get("message") or "")
    skipped = [case.get("name") for case in cases if case.find("skipped") is not None]
    assert "http.origin" in skipped
    assert "lifecycle.unknown-version" in html.read_text()
    healthy = subprocess.run(
        [sys.executable, "-m", "mcp_nb.check", "--timeout", str(TIMEOUT), "--",
         *lab_command("--era", "handshake")], capture_output=True, text=True, timeout=60)
    assert healthy.returncode == 0, healthy.stdout


async def test_the_healthy_lab_passes_over_http_including_the_transport_rules() -> None:
    with lab_server() as server:
        report = await run_checkup(server.ready_text, timeout=TIMEOUT)
    assert verdicts(report) == {}
    for check in ("http.origin", "http.protocol-version-header", "http.session-404",
                  "http.session-id"):
        assert report.result(check).outcome == "pass", check
    origin = report.result("http.origin").evidence[0]["http"]
    assert origin["request"]["headers"]["Origin"] == "http://dns-rebinding.invalid"
    assert origin["response"]["status"] == 403


@contextlib.contextmanager
def sdk_http() -> Iterator[str]:
    server = ServerProcess([sys.executable, str(PEERS / "sdk_server.py"), "streamable-http"],
                           UVICORN_READY)
    try:
        yield server.ready_text.rstrip("/") + "/mcp"
    finally:
        server.stop()


@pytest.mark.interop
async def test_the_official_sdk_server_gets_no_false_failure() -> None:
    pytest.importorskip("mcp.server.mcpserver", reason="the official MCP SDK (mcp>=2)")
    stdio = await run_checkup([sys.executable, str(PEERS / "sdk_server.py")],
                              call_tools="all", timeout=TIMEOUT)
    assert verdicts(stdio) == SDK_DEVIATIONS, text_summary(stdio)
    with sdk_http() as url:
        http = await run_checkup(url, call_tools="all", timeout=TIMEOUT)
    assert verdicts(http) == {**SDK_DEVIATIONS, **SDK_HTTP_VIOLATIONS}, text_summary(http)
    assert http.result("http.origin").outcome == "pass"
    # A legacy MCP-Protocol-Version over a body whose _meta names 2026-07-28: legacy -32600.
    legacy = http.result("stateless.header-mismatch").evidence[-1]["http"]
    assert legacy["request"]["headers"]["MCP-Protocol-Version"] == "2025-11-25"
    assert legacy["response"]["status"] == 400 and "-32600" in legacy["response"]["body"]
    # An unknown tool's call is answered with a result, where the spec lists a protocol error.
    unknown = stdio.result("tools.unknown-tool").evidence[-1]["message"]
    assert unknown["result"]["isError"] is True and "error" not in unknown


#: The SDK's real deviation (a warning: the spec's sentence has no keyword), in docs/checkup.md.
SDK_DEVIATIONS = {"tools.unknown-tool": "warn"}
#: Its dual-era HTTP transport's real violation (the header's era over the body's _meta), ditto.
SDK_HTTP_VIOLATIONS = {"stateless.header-mismatch": "fail"}


#: server-everything's real violations, documented in docs/checkup.md with the evidence.
EVERYTHING_HTTP_VIOLATIONS = {"http.origin": "fail", "http.session-404": "fail",
                              "logging.invalid-level": "warn"}
#: An invalid log level gets -32603, not the -32602 the spec says it SHOULD (every transport).
EVERYTHING_DEVIATIONS = {"logging.invalid-level": "warn"}


@pytest.mark.interop
async def test_server_everything_gets_no_false_failure() -> None:
    entry = install_everything()
    stdio = await run_checkup(["node", str(entry), "stdio"], timeout=TIMEOUT)
    assert verdicts(stdio) == EVERYTHING_DEVIATIONS, text_summary(stdio)
    level = stdio.result("logging.invalid-level").evidence[-1]["message"]
    assert level["error"]["code"] == -32603
    with contextlib.contextmanager(everything_http)(entry, "streamableHttp") as base:
        http = await run_checkup(f"{base}/mcp", timeout=TIMEOUT)
    assert verdicts(http) == EVERYTHING_HTTP_VIOLATIONS, text_summary(http)
    origin = http.result("http.origin").evidence[0]["http"]
    assert origin["response"]["status"] == 200  # a foreign Origin was served
    ended = http.result("http.session-404").evidence
    assert [e["http"]["request"]["method"] for e in ended] == ["DELETE", "POST"]
    assert ended[1]["http"]["response"]["status"] == 400  # the spec says 404
    with contextlib.contextmanager(everything_http)(entry, "sse") as base:
        legacy = await run_checkup(f"{base}/sse", timeout=TIMEOUT)
    assert verdicts(legacy) == EVERYTHING_DEVIATIONS, text_summary(legacy)


def test_mcp_check_in_a_cell_shows_a_table_by_area_with_evidence(mcp) -> None:
    from mcp_nb.i18n import set_language

    shown = mcp("check --lab=--reject-version --timeout 3")
    assert shown.report.exit_status == 1
    markup = shown._repr_html_()
    assert markup.count('<tr class="fail">') == 1
    assert "<details><summary>unknown-version #" in markup  # the exchange, by transcript entry
    assert "FAIL lifecycle.unknown-version [MUST]" in repr(shown)
    mcp("connect --era handshake")
    current = mcp("check --session --timeout 3")
    assert current.report.target == "open session" and current.report.exit_status == 0
    # The checkup's requests are in the session's own transcript, where the evidence points.
    ping = current.report.result("lifecycle.ping").evidence[0]
    assert ping["session"] == "main" and ping["message"]["method"] == "ping"
    set_language("zh")
    try:
        assert "证据" in current._repr_html_()
    finally:
        set_language("en")
    with pytest.raises(Exception, match="not both"):
        mcp("check --session -- python -m mcp_nb.lab")


def test_docs_checkup_lists_every_check_with_its_level() -> None:
    page = (Path(__file__).resolve().parent.parent / "docs" / "checkup.md").read_text()
    for check in CHECKS.values():
        assert f"| `{check.id}` | {check.title} | {check.rule.level} |" in page, check.id
    for knob, expected in KNOB_MATRIX.items():
        assert f"| `{' '.join(knob)}` | `{next(iter(expected))}` |" in page, knob


#: checkup_peer.py flag → the one check it must trip: rules the lab has no knob for.
PEER_MATRIX = {
    "--broken-cursor": {"lists.pagination": "warn"},  # a SHOULD: never a failure
    "--bad-output": {"tools.output-schema": "fail"},
    "--bad-input-schema": {"tools.input-schema": "fail"},
    # The schema's types, no sentence with a keyword: a warning (docs/checkup.md, Levels).
    "--bad-annotations": {"tools.annotations": "warn"},
    # The sentence's MUST and the schema's types are two checks: only the types are broken.
    "--untyped-output-schema": {"tools.output-schema-type": "warn"},
    "--untyped-server-info": {"lifecycle.initialize-result-types": "warn"},
}


def checkup_peer(*flags: str) -> list[str]:
    return [sys.executable, str(PEERS / "checkup_peer.py"), *flags]


async def test_the_healthy_checkup_peer_passes_with_every_page_and_call_checked() -> None:
    report = await run_checkup(checkup_peer(), call_tools="measure", timeout=TIMEOUT)
    assert verdicts(report) == {}
    paging = report.result("lists.pagination")
    assert paging.detail == "2 further page(s) fetched by cursor"
    cursors = [e["message"]["params"]["cursor"] for e in paging.evidence
               if e["message"].get("method") == "tools/list"]
    assert cursors == ["c1", "c2"]
    # Every page's tools were checked, and undeclared lists were refused with -32601.
    assert report.result("tools.names").detail == "7 tool name(s) follow the rules"
    assert report.result("tools.annotations").outcome == "pass"
    assert "-32601" in report.result("capabilities.prompts").detail
    output = report.result("tools.output-schema")
    assert output.detail == "schemas valid; structuredContent of 1 call(s) conforms"


@pytest.mark.parametrize("flag", list(PEER_MATRIX))
async def test_each_flaw_of_the_checkup_peer_is_caught_by_its_check_and_nothing_else(
        flag: str) -> None:
    report = await run_checkup(checkup_peer(flag), call_tools="all", timeout=TIMEOUT)
    assert verdicts(report) == PEER_MATRIX[flag], text_summary(report)
    assert report.exit_status == (1 if "fail" in PEER_MATRIX[flag].values() else 0)
    assert report.result(next(iter(PEER_MATRIX[flag]))).evidence


#: discover_peer.py flag → what it trips: the caching page's MUST fails, the schema's type warns.
DISCOVER_MATRIX = {
    "": {},
    "--shared-cache-scope": {"stateless.discover-result": "warn"},
    "--no-cache-scope": {"stateless.discover": "fail"},
}


@pytest.mark.parametrize("flag", list(DISCOVER_MATRIX))
async def test_a_discover_result_is_judged_by_the_sentence_and_by_the_schema_apart(
        flag: str) -> None:
    report = await run_checkup([sys.executable, str(PEERS / "discover_peer.py"),
                                *([flag] if flag else [])], timeout=TIMEOUT)
    assert report.era == "stateless"
    assert verdicts(report) == DISCOVER_MATRIX[flag], text_summary(report)
    for check in ("stateless.discover", "stateless.discover-result"):
        assert report.result(check).outcome in ("pass", "fail", "warn"), check
        assert report.result(check).evidence, check


async def test_a_flawed_output_is_not_seen_unless_the_call_is_allowed() -> None:
    report = await run_checkup(checkup_peer("--bad-output"), timeout=TIMEOUT)
    assert verdicts(report) == {}
    assert "no call allowed" in report.result("tools.output-schema").detail


async def test_no_pass_without_an_exchange_that_could_have_failed() -> None:
    # Every call of the only typed tool failed: no structuredContent was compared.
    failing = await run_checkup(checkup_peer("--failing-measure"), call_tools="measure",
                                timeout=TIMEOUT)
    assert verdicts(failing) == {}, text_summary(failing)
    output = failing.result("tools.output-schema")
    assert output.outcome == "not-applicable"
    assert "no structuredContent was compared" in output.detail
    assert "'measure' called, but it answered a result with isError: true" in output.detail
    # Resources declared, none listed: no URI to judge.
    empty = await run_checkup(checkup_peer("--empty-resources"), timeout=TIMEOUT)
    assert verdicts(empty) == {}, text_summary(empty)
    for check, reason in (("resources.uris", "no resources listed"),
                          ("resources.read", "no listed resource"),
                          ("resources.templates", "no resource templates")):
        assert empty.result(check).outcome == "not-applicable", check
        assert reason in empty.result(check).detail
    # The peer answers no request with an error it is not asked to: -32601s only, judged.
    assert empty.result("jsonrpc.error-codes").outcome == "pass"


async def test_legacy_sse_and_stateless_only_http_get_no_false_failure() -> None:
    with lab_server("--sse") as server:
        legacy = await run_checkup(server.ready_text.replace("/mcp", "/sse"), timeout=TIMEOUT)
    assert verdicts(legacy) == {}, text_summary(legacy)
    origin = legacy.result("http.origin")
    assert origin.outcome == "not-applicable" and "legacy HTTP+SSE" in origin.detail
    # Each reason says what was observed: the 405 and its Allow, the transport spoken.
    assert "answered 405" in origin.detail and "(Allow: GET" in origin.detail
    assert "the session speaks legacy HTTP+SSE" in legacy.result("jsonrpc.batch").detail
    with lab_server("--era", "stateless") as server:
        modern = await run_checkup(server.ready_text, timeout=TIMEOUT)
    assert verdicts(modern) == {}, text_summary(modern)
    assert modern.era == "stateless"
    assert "server/discover with 2026-07-28 _meta was served: a stateless-only server" in \
        modern.result("http.session-id").detail
    assert modern.result("stateless.unsupported-version").outcome == "pass"
