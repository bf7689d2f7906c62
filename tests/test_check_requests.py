"""The checkup says what it sent: every request in the report (JSON, text, HTML), the reads a
person may turn off (prompts/get, template-built requests), and inert invented values.

Real lab servers, over stdio and Streamable HTTP, and the command line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from http_support import lab_server

from mcp_nb.check import html_report, run_checkup, text_summary, to_json
from mcp_nb.check.model import Report
from mcp_nb.check.sent import SAMPLE_VALUE, looks_like_location
from mcp_nb.client import lab_command

pytestmark = pytest.mark.anyio

TIMEOUT = 3.0


def strings(value: Any) -> Iterator[str]:
    """Every string inside ``value`` (a request's params), keys excepted."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def methods(report: Report, via: str | None = None) -> list[str]:
    return [r["method"] for r in report.requests_sent if via is None or r["via"] == via]


async def test_every_request_is_listed_with_its_arguments_and_none_names_a_location() -> None:
    report = await run_checkup(lab_command("--era", "handshake"), timeout=TIMEOUT)
    sent = report.requests_sent
    main = methods(report, "main")
    # connect(era="auto") asks server/discover first; a handshake-only server refuses it.
    assert main[:2] == ["server/discover", "initialize"] and "notifications/initialized" in main
    assert {"tools/list", "resources/list", "prompts/list", "resources/read", "prompts/get",
            "completion/complete", "logging/setLevel", "ping"} <= set(main)
    assert "tools/call" not in main  # no call allowed
    assert methods(report, "unknown-version")[0] == "initialize"
    assert "tools/list" in methods(report, "apps")  # the MCP Apps rules' own session
    # The prompts got were given the inert sample for their required arguments.
    got = [r["params"] for r in sent if r["method"] == "prompts/get"]
    assert got and any(p["arguments"] for p in got)
    assert all(v == SAMPLE_VALUE for p in got for v in p["arguments"].values())
    # What the checkup invents (arguments of prompts, tools, a completion) never reads as a
    # URL or a path; the URIs it sends back (reads, subscriptions) are the server's own.
    invented = [s for r in sent if isinstance(r["params"], dict)
                for key in ("arguments", "argument") for s in strings(r["params"].get(key))]
    assert invented and not any(looks_like_location(s) for s in invented)
    # JSON carries the list; the text counts it and lists it on demand; HTML folds it.
    assert json.loads(to_json(report))["requestsSent"] == json.loads(json.dumps(sent))
    summary = text_summary(report)
    assert f"{len(sent)} requests sent: " in summary and "--show-requests" in summary
    listed = text_summary(report, show_requests=True).splitlines()
    assert any(line.startswith("  main: prompts/get {") and SAMPLE_VALUE in line
               for line in listed)
    assert f"<details><summary>{len(sent)} requests sent: " in html_report(report)


async def test_prompts_get_and_template_requests_can_be_turned_off() -> None:
    report = await run_checkup(lab_command("--era", "handshake"), timeout=TIMEOUT,
                               prompts_get=False, template_reads=False)
    assert "prompts/get" not in methods(report)
    result = report.result("prompts.get")
    assert result.outcome == "not-applicable" and "--no-prompts-get" in result.detail
    assert not any((r["params"] or {}).get("ref", {}).get("type") == "ref/resource"
                   for r in report.requests_sent if r["method"] == "completion/complete")
    assert report.exit_status == 0


async def test_the_http_probes_list_their_raw_requests() -> None:
    with lab_server() as server:
        report = await run_checkup(server.ready_text, timeout=TIMEOUT)
    raw = [r for r in report.requests_sent if r["via"] == "http probe"]
    assert raw[0]["http"] == f"POST {server.ready_text}" and raw[0]["method"] == "initialize"
    assert f"GET {server.ready_text}" in {r["http"] for r in raw}  # the resumption probe
    assert f"DELETE {server.ready_text}" in {r["http"] for r in raw}
    assert "server/discover" in {r["method"] for r in raw}
    assert any(r["via"] == "main" for r in report.requests_sent)


def test_the_command_line_turns_reads_off_and_shows_the_requests() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcp_nb.check", "--no-prompts-get", "--no-template-reads",
         "--show-requests", "--timeout", str(TIMEOUT), "--",
         *lab_command("--era", "handshake")],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("  main: initialize {") for line in lines)
    assert not any("prompts/get" in line for line in lines if line.startswith("  "))
    assert ("N/A  prompts.get [MUST (schema)] prompts/get not sent: turned off "
            "(--no-prompts-get)") in done.stdout
