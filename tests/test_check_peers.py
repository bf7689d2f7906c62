"""The server checkup on more servers nobody here wrote: no false failure.

fastmcp (PyPI, pinned in the test extra) over stdio and Streamable HTTP, and npm's
reference ``@modelcontextprotocol/server-filesystem``, ``server-memory`` and
``server-sequential-thinking`` (pinned, stdio only: none speaks HTTP), and the MCP Apps
example ``server-basic-vanillajs`` (on the TypeScript SDK's 2.0, over stdio). Every failed
MUST here is a real violation, asserted with its evidence and documented in
docs/checkup.md, never silenced.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from http_support import PEERS, ROOT, ServerProcess, install_npm_package

from mcp_nb.check import run_checkup, text_summary
from mcp_nb.check.model import Report

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

#: Longer than tests/test_check.py's 3 s: the checkup starts several processes of each
#: stdio server, and fastmcp alone takes 2-4 s to import on two busy cores. A healthy
#: server answers long before it; only a request left unanswered would cost it.
TIMEOUT = 10.0
UVICORN_READY = re.compile(r"Uvicorn running on (http://\S+)")
FASTMCP_VERSION = "4.1.6"
REFERENCE_VERSION = "2026.8.31"


def verdicts(report: Report) -> dict[str, str]:
    """The checks that failed or warned: id → outcome."""
    return {r.check.id: r.outcome for r in report.results if r.outcome in ("fail", "warn")}


def fastmcp_peer(*args: str) -> list[str]:
    fastmcp = pytest.importorskip("fastmcp", reason="fastmcp (in mcp_nb's test extra)")
    assert fastmcp.__version__ == FASTMCP_VERSION, "the pin in pyproject's test extra"
    return [sys.executable, str(PEERS / "fastmcp_server.py"), *args]


@contextlib.contextmanager
def fastmcp_http(*flags: str) -> Iterator[str]:
    """The fastmcp peer over Streamable HTTP on 127.0.0.1; yields its /mcp URL."""
    server = ServerProcess(fastmcp_peer("http", *flags), UVICORN_READY)
    try:
        yield server.ready_text.rstrip("/") + "/mcp"
    finally:
        server.stop()


def reference_server(name: str, version: str = REFERENCE_VERSION) -> list[str]:
    """``node`` and the entry point of ``@modelcontextprotocol/server-NAME`` (installed pinned)."""
    package = install_npm_package(f"@modelcontextprotocol/server-{name}", version,
                                  ROOT / ".cache" / f"server-{name}")
    node = shutil.which("node")
    assert node is not None  # install_npm_package skipped the test without it
    return [node, str(package / "dist" / "index.js")]


#: What every TypeScript-SDK and Python-SDK server here does for a tool it does not list:
#: a result with isError, where the spec's example is a JSON-RPC error (a SHOULD: a warning).
UNKNOWN_TOOL_AS_RESULT = {"tools.unknown-tool": "warn"}


def assert_unknown_tool_answered_with_a_result(report: Report) -> None:
    """tools.unknown-tool's evidence: a call of a tool no list has, answered isError."""
    sent, answered = (e["message"] for e in report.result("tools.unknown-tool").evidence[-2:])
    assert sent["method"] == "tools/call" and sent["params"]["name"] == "checkup-no-such-tool"
    assert answered["id"] == sent["id"] and answered["result"]["isError"] is True


def called_tools(report: Report) -> set[str]:
    """The tools the checkup called, from the evidence of tools.output-schema."""
    return {e["message"]["params"]["name"] for e in report.result("tools.output-schema").evidence
            if e["message"].get("method") == "tools/call"}


async def test_fastmcp_over_stdio_gets_no_false_failure() -> None:
    report = await run_checkup(fastmcp_peer(), call_tools="all", timeout=TIMEOUT)
    assert verdicts(report) == UNKNOWN_TOOL_AS_RESULT, text_summary(report)
    assert_unknown_tool_answered_with_a_result(report)
    assert (report.server or {}).get("name") == "fastmcp-peer"
    # fastmcp 4 (on the SDK 2) speaks both eras; every list the peer serves was checked.
    assert report.era == "stateless"
    for check in ("capabilities.tools", "capabilities.resources", "capabilities.prompts",
                  "lifecycle.ping", "stateless.unsupported-version"):
        assert report.result(check).outcome == "pass", check
    assert called_tools(report) == {"add"}
    assert report.result("tools.output-schema").detail == (
        "schemas valid; structuredContent of 1 call(s) conforms")


#: The official SDK's dual-era HTTP transport, under fastmcp: a legacy MCP-Protocol-Version
#: over a body whose _meta names 2026-07-28 is routed to the legacy era (docs/checkup.md).
SDK_HEADER_MISMATCH = {"stateless.header-mismatch": "fail"}
#: fastmcp's real violations over HTTP, as it serves by default (docs/checkup.md).
FASTMCP_HTTP_VIOLATIONS = {"http.origin": "fail", **SDK_HEADER_MISMATCH, **UNKNOWN_TOOL_AS_RESULT}


def assert_legacy_header_routes_a_modern_request(report: Report) -> None:
    """stateless.header-mismatch's evidence: a legacy header on a modern body got -32600."""
    probe = next(e["http"] for e in report.result("stateless.header-mismatch").evidence
                 if e["http"]["request"]["headers"].get("MCP-Protocol-Version") == "2025-11-25")
    meta = probe["request"]["body"]["params"]["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert probe["response"]["status"] == 400
    assert '"code":-32600' in probe["response"]["body"]  # the rule: -32020 (HeaderMismatch)


async def test_fastmcp_over_http_fails_only_the_rules_it_breaks() -> None:
    with fastmcp_http() as url:
        report = await run_checkup(url, call_tools="all", timeout=TIMEOUT)
    assert verdicts(report) == FASTMCP_HTTP_VIOLATIONS, text_summary(report)
    assert_unknown_tool_answered_with_a_result(report)
    assert report.exit_status == 1
    origin = report.result("http.origin").evidence[0]["http"]
    assert origin["request"]["headers"]["Origin"] == "http://dns-rebinding.invalid"
    assert origin["request"]["body"]["method"] == "initialize"
    # The foreign page got a session and the InitializeResult.
    assert origin["response"]["status"] == 200
    assert origin["response"]["headers"].get("mcp-session-id")
    assert '"serverInfo":{"name":"fastmcp-peer"' in origin["response"]["body"]
    assert_legacy_header_routes_a_modern_request(report)
    for check in ("http.protocol-version-header", "http.session-404", "http.session-id",
                  "stateless.request-meta", "stateless.discover"):
        assert report.result(check).outcome == "pass", check


async def test_fastmcp_with_its_origin_guard_on_passes_the_origin_rule() -> None:
    # The other side of the verdict above: the same server, its opt-in guard on, refuses
    # the foreign Origin with 403 and the check passes.
    with fastmcp_http("--guard-origin") as url:
        report = await run_checkup(url, call_tools="all", timeout=TIMEOUT)
    assert verdicts(report) == {**SDK_HEADER_MISMATCH, **UNKNOWN_TOOL_AS_RESULT}, (
        text_summary(report))
    origin = report.result("http.origin")
    assert origin.outcome == "pass"
    assert origin.evidence[0]["http"]["response"]["status"] == 403


async def test_server_filesystem_gets_no_false_failure(tmp_path: Path) -> None:
    # Its root is a fresh directory: every tool may be called (write_file writes there).
    (tmp_path / "note.txt").write_text("hello\n")
    report = await run_checkup([*reference_server("filesystem"), str(tmp_path)],
                               call_tools="all", timeout=TIMEOUT)
    assert verdicts(report) == UNKNOWN_TOOL_AS_RESULT, text_summary(report)
    assert_unknown_tool_answered_with_a_result(report)
    assert report.era == "handshake"  # the 2026-07-28 checks are not applicable, with why
    assert report.result("stateless.result-type").outcome == "not-applicable"
    assert report.result("tools.annotations").outcome == "pass"
    assert report.result("tools.output-schema").outcome == "pass"
    assert {"list_allowed_directories", "write_file"} <= called_tools(report)
    # Nothing was written outside the root it was given.
    assert {p.name for p in tmp_path.iterdir()} <= {"note.txt", "checkup"}


async def test_server_memory_gets_no_false_failure(tmp_path: Path) -> None:
    graph = tmp_path / "memory.jsonl"
    env = shutil.which("env")
    assert env is not None
    report = await run_checkup([env, f"MEMORY_FILE_PATH={graph}", *reference_server("memory")],
                               call_tools="all", timeout=TIMEOUT)
    assert verdicts(report) == UNKNOWN_TOOL_AS_RESULT, text_summary(report)
    assert_unknown_tool_answered_with_a_result(report)
    assert report.era == "handshake"
    assert report.result("tools.input-schema").outcome == "pass"
    # The read-only tools the checkup could invent arguments for were called and compared.
    assert {"read_graph", "search_nodes"} <= called_tools(report)
    assert report.result("tools.output-schema").outcome == "pass"


#: The MCP Apps example server from ext-apps (on @modelcontextprotocol/server 2.0.0).
APPS_EXAMPLE_VERSION = "2.0.3"


async def test_server_sequential_thinking_gets_no_false_failure() -> None:
    report = await run_checkup(reference_server("sequential-thinking"), call_tools="all",
                               timeout=TIMEOUT)
    assert verdicts(report) == UNKNOWN_TOOL_AS_RESULT, text_summary(report)
    assert_unknown_tool_answered_with_a_result(report)
    assert report.era == "handshake"
    assert (report.server or {}).get("name") == "sequential-thinking-server"
    # Its one tool was called with invented arguments that fit its schema, and the result
    # conformed to its outputSchema; called bare, it answered with isError (a SHOULD kept).
    assert called_tools(report) == {"sequentialthinking"}
    assert report.result("tools.output-schema").detail == (
        "schemas valid; structuredContent of 1 call(s) conforms")
    for check in ("tools.input-errors", "tools.annotations", "capabilities.resources",
                  "capabilities.prompts", "capabilities.completions", "lifecycle.shutdown"):
        assert report.result(check).outcome == "pass", check


async def test_an_mcp_apps_example_on_the_typescript_sdk_2_passes_with_its_app() -> None:
    report = await run_checkup([*reference_server("basic-vanillajs", APPS_EXAMPLE_VERSION),
                                "--stdio"], call_tools="all", timeout=TIMEOUT)
    # No warning: the TypeScript SDK's 2.0 answers an unknown tool with -32602 (the fix its
    # maintainers announced, see docs/checkup.md), unlike the 1.x servers above.
    assert verdicts(report) == {}, text_summary(report)
    unknown = report.result("tools.unknown-tool")
    assert unknown.outcome == "pass" and "-32602" in unknown.detail
    # Its App: the tool's _meta.ui.resourceUri read as ui:// HTML with the profile's type.
    for check in ("apps.resource", "apps.mime-type"):
        assert report.result(check).outcome == "pass", check
    read = next(e["message"] for e in report.result("apps.resource").evidence
                if e["message"].get("method") == "resources/read")
    assert read["params"]["uri"].startswith("ui://")
    # It declares no CSP: hosts use the spec's restrictive default, nothing to judge.
    assert report.result("apps.csp").outcome == "not-applicable"
    assert called_tools(report) == {"get-time"}
