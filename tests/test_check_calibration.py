"""The checkup on servers built as deployments build them (the official SDK inside a web app,
behind a Host allow-list, behind an API key, with an event store, crashing on an unknown
method): each gets the verdict docs/checkup.md ("Calibration: the failure classes") gives it.

The servers are tests/peers/calibration_server.py, each a real subprocess on 127.0.0.1.
Everything the SDK's Streamable HTTP transport does wrong itself is the same on all of them
(``stateless.header-mismatch``, documented under "Servers nobody here wrote"): a verdict set
equal to :data:`SDK_VERDICTS` means "as the bare SDK server, nothing added by the deployment".
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from http_support import PEERS, ROOT, ServerProcess

from mcp_nb.check import run_checkup, text_summary, to_json
from mcp_nb.check.model import Report

pytestmark = pytest.mark.anyio

TIMEOUT = 10.0
PEER = PEERS / "calibration_server.py"
UVICORN_READY = re.compile(r"Uvicorn running on (http://\S+)")
#: The SDK's own finding over HTTP, whatever is built around it (docs/checkup.md).
SDK_VERDICTS = {"stateless.header-mismatch": "fail"}
KEY = "calibration-key"


def verdicts(report: Report) -> dict[str, str]:
    """The checks that failed or warned: id → outcome."""
    return {r.check.id: r.outcome for r in report.results if r.outcome in ("fail", "warn")}


def outcomes(report: Report) -> set[str]:
    return {r.outcome for r in report.results}


@contextlib.contextmanager
def peer(*args: str) -> Iterator[str]:
    """The calibration server in MODE ``args``; yields its origin (http://127.0.0.1:PORT)."""
    server = ServerProcess([sys.executable, str(PEER), *args], UVICORN_READY)
    try:
        yield server.ready_text.rstrip("/")
    finally:
        server.stop()


def assert_as_the_bare_sdk(report: Report) -> None:
    assert verdicts(report) == SDK_VERDICTS, text_summary(report)
    assert report.exit_status == 1
    for check in ("lifecycle.initialize-result", "lifecycle.ping", "lifecycle.discover-probe",
                  "http.origin", "http.session-404", "capabilities.tools"):
        assert report.result(check).outcome == "pass", check


async def test_a_mounted_app_redirects_and_the_checkup_follows_to_the_slash() -> None:
    with peer("mounted") as origin:
        report = await run_checkup(origin + "/mcp", timeout=TIMEOUT)
    # Starlette's Mount answers /mcp with 307 to /mcp/; the checkup went on there and says so.
    assert report.target == origin + "/mcp/"
    assert f"307 {origin}/mcp → {origin}/mcp/" in (report.connection or "")
    assert_as_the_bare_sdk(report)
    preflight = [r["http"] for r in report.requests_sent if r["via"] == "pre-flight"]
    assert preflight[:2] == [f"POST {origin}/mcp", f"POST {origin}/mcp/"]


#: How each Host guard refuses a Host it does not serve.
GUARDS = {"sdk": 421, "starlette": 400, "forbid": 403}


@pytest.mark.parametrize("guard", list(GUARDS))
async def test_a_host_allow_list_is_could_not_check_until_pointed_right(guard: str) -> None:
    with peer("host-allowlist", "--guard", guard) as origin:
        port = origin.rsplit(":", 1)[1]
        refused = await run_checkup(origin + "/mcp", timeout=TIMEOUT)
        by_name = await run_checkup(f"http://localhost:{port}/mcp", timeout=TIMEOUT)
        by_header = await run_checkup(origin + "/mcp", timeout=TIMEOUT,
                                      headers={"Host": f"localhost:{port}"})
    # Refused at the door: no verdict on the server, exit 2, and how to point the checkup.
    assert outcomes(refused) == {"could-not-check"}, text_summary(refused)
    assert refused.exit_status == 2
    connection = refused.connection or ""
    assert f"answered HTTP {GUARDS[guard]}" in connection and "--header" in connection
    # Pointed by the name it serves, or given that Host: the bare SDK's verdicts.
    assert_as_the_bare_sdk(by_name)
    assert_as_the_bare_sdk(by_header)
    assert by_header.target.endswith("(headers Host: values not shown)")


async def test_an_api_key_server_warns_on_discovery_and_is_checked_with_the_key() -> None:
    with peer("api-key", "--key", KEY) as origin:
        bare = await run_checkup(origin + "/mcp", timeout=TIMEOUT)
        keyed = await run_checkup(origin + "/mcp", timeout=TIMEOUT, headers={"X-API-Key": KEY})
    # 401 with no Protected Resource Metadata: authorization is optional, so a warning, and
    # nothing else can be judged.
    assert verdicts(bare) == {"auth.discovery": "warn"}, text_summary(bare)
    assert outcomes(bare) == {"could-not-check", "warn"} and bare.exit_status == 2
    assert "401" in (bare.connection or "")
    assert_as_the_bare_sdk(keyed)
    # The key went on every request (the raw probes' too: they passed), never into the report.
    assert keyed.result("http.notification-202").outcome == "pass"
    assert KEY not in to_json(keyed) and KEY not in text_summary(keyed, show_requests=True)


def test_the_command_line_takes_header_and_exits_2_without_it(tmp_path: Path) -> None:
    with peer("api-key", "--key", KEY) as origin:
        runs = {}
        for name, extra in (("bare", []), ("keyed", ["--header", f"X-API-Key: {KEY}"])):
            saved = tmp_path / f"{name}.json"
            done = subprocess.run([sys.executable, "-m", "mcp_nb.check", "--timeout", "10",
                                   "--json", str(saved), *extra, origin + "/mcp"],
                                  capture_output=True, text=True, cwd=ROOT, timeout=120)
            runs[name] = (done.returncode, json.loads(saved.read_text()), done.stdout)
    assert runs["bare"][0] == 2, runs["bare"][2]
    status, report, text = runs["keyed"]
    assert status == 1, text  # the SDK's own finding, and only it
    assert {r["id"] for r in report["results"] if r["outcome"] == "fail"} == set(SDK_VERDICTS)
    assert KEY not in text and KEY not in json.dumps(report)
    bad = subprocess.run([sys.executable, "-m", "mcp_nb.check", "--header", "no-colon",
                          "http://127.0.0.1:9/mcp"], capture_output=True, text=True, cwd=ROOT,
                         timeout=60)
    assert bad.returncode == 2 and "NAME: VALUE" in bad.stderr


async def test_a_correct_event_store_passes_resumption() -> None:
    with peer("replay") as origin:
        report = await run_checkup(origin + "/mcp", timeout=TIMEOUT)
    assert_as_the_bare_sdk(report)
    resumption = report.result("http.resumption")
    assert resumption.outcome == "pass", resumption.detail
    ping, resumed = (e["http"] for e in resumption.evidence)
    assert resumed["request"]["headers"]["Last-Event-ID"] in ping["response"]["body"]
    assert '"id":3' in resumed["response"]["body"]
    assert report.result("http.event-ids").outcome == "pass"


async def test_a_replay_of_another_stream_on_a_stream_that_stays_open_fails() -> None:
    with peer("replay-wrong-stream") as origin:
        report = await run_checkup(origin + "/mcp", timeout=TIMEOUT)
    assert verdicts(report) == {**SDK_VERDICTS, "http.resumption": "fail"}, text_summary(report)
    resumption = report.result("http.resumption")
    # The probe session's initialize (id 1) came back on ping's (id 3) resumed stream.
    assert "replayed the response to id 1, another stream's" in resumption.detail
    resumed = resumption.evidence[1]["http"]
    assert resumed["response"]["status"] == 200 and '"id":1' in resumed["response"]["body"]


async def test_a_server_exiting_on_an_unknown_method_is_checked_on_a_fresh_process() -> None:
    # A long timeout: had the checkup waited for the dead process, the report would take it.
    long = 30.0
    report = await run_checkup([sys.executable, str(PEER), "exit-on-unknown"],
                               call_tools="all", timeout=long)
    probe = report.result("lifecycle.discover-probe")
    assert probe.outcome == "warn" and "was left unanswered" in probe.detail
    assert "exit code 3" in probe.detail
    sent = [e["message"] for e in probe.evidence if e.get("message")]
    assert sent[0]["method"] == "server/discover"
    assert report.result("jsonrpc.ids").outcome == "pass"  # the rest was answered, each once
    # The handshake was judged on a fresh process, in the handshake era, and so were the rest.
    assert report.era == "handshake"
    for check in ("lifecycle.initialize-result", "lifecycle.ping", "lifecycle.unknown-version",
                  "lifecycle.shutdown", "capabilities.tools", "tools.input-schema"):
        assert report.result(check).outcome == "pass", check
    assert verdicts(report) == {"lifecycle.discover-probe": "warn",
                                "tools.unknown-tool": "warn"}, text_summary(report)
    assert report.exit_status == 0
    # The Apps session spoke the era the main session settled: it listed, it did not die.
    assert "no MCP App offered" in report.result("apps.resource").detail
    assert report.seconds < long
