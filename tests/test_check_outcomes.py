"""The checkup's own trouble kept apart from the server's: *error* (a check crashed) and
*could not check* (the connection never reached MCP), through the CLI's exit status 2.

The HTTP cases are a stdlib server on loopback answering each way a URL can fail to be
MCP (a web page, a 5xx, a 403, a 401 without metadata, a redirect), and proxying
``/mcp`` to a real lab server for the same-origin redirect the checkup follows.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from http_support import ROOT, lab_server

from mcp_nb.check import __main__ as cli
from mcp_nb.check.catalogue import CHECKS
from mcp_nb.check.diff import diff_reports
from mcp_nb.client import lab_command

TIMEOUT = "3"


class _Stub(BaseHTTPRequestHandler):
    lab: str = ""  # the lab's /mcp URL, proxied at /mcp

    def log_message(self, *args: object) -> None:
        pass

    def _answer(self, status: int, kind: str, body: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.send_header("content-length", str(len(body.encode())))
        self.end_headers()
        self.wfile.write(body.encode())

    def _proxy(self) -> None:
        lab = urlsplit(self.lab)
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else None
        upstream = http.client.HTTPConnection(lab.hostname, lab.port, timeout=30)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host",)}
        upstream.request(self.command, lab.path, body=body, headers=headers)
        answer = upstream.getresponse()
        self.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(name, value)
        self.send_header("connection", "close")
        self.end_headers()
        while chunk := answer.read1(65536):
            self.wfile.write(chunk)
            self.wfile.flush()
        self.close_connection = True

    def _route(self) -> None:
        path = self.path
        if path == "/mcp":
            return self._proxy()
        if path == "/html":
            return self._answer(200, "text/html", "<html><body>Welcome</body></html>")
        if path == "/500":
            return self._answer(500, "text/plain", "Internal Server Error")
        if path == "/403":
            return self._answer(403, "text/plain", "Forbidden: bad Host")
        if path == "/401":
            return self._answer(401, "text/plain", "Unauthorized",
                                www_authenticate='Basic realm="x"')
        if path == "/same":
            return self._answer(307, "text/plain", "", location="/mcp")
        if path == "/away":
            return self._answer(307, "text/plain", "", location="http://localhost:9/mcp")
        return self._answer(404, "text/plain", "not found")

    do_GET = do_POST = do_DELETE = _route


@pytest.fixture(scope="module")
def stub() -> Iterator[str]:
    with lab_server() as lab:
        _Stub.lab = lab.ready_text
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()


def checkup(*argv: str, tmp_path: Path) -> tuple[int, dict, str]:
    """The CLI in a subprocess: its exit status, the --json report, the text."""
    saved = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "mcp_nb.check", "--timeout", TIMEOUT,
                           "--json", str(saved), *argv], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    return done.returncode, json.loads(saved.read_text()), done.stdout


def outcomes(report: dict) -> set[str]:
    return {r["outcome"] for r in report["results"]}


@pytest.mark.parametrize("path, said", [
    ("/html", "not JSON-RPC"), ("/500", "server error"), ("/403", "refused"),
    ("/401", "Protected Resource Metadata"), ("/away", "does not follow")])
def test_an_http_answer_that_is_not_mcp_could_not_be_checked(stub: str, path: str, said: str,
                                                            tmp_path: Path) -> None:
    status, report, text = checkup(stub + path, tmp_path=tmp_path)
    assert status == 2, text
    assert said in report["connection"] and "connection: " in text
    expected = {"could-not-check", "warn"} if path == "/401" else {"could-not-check"}
    assert outcomes(report) == expected
    if path == "/401":  # authorization is optional: no metadata is at most a warning
        assert next(r for r in report["results"]
                    if r["id"] == "auth.discovery")["outcome"] == "warn"
    # What the pre-flight sent is listed too: the one initialize POST (and, after a 401, the
    # metadata it looked for).
    first = report["requestsSent"][0]
    assert (first["via"], first["method"]) == ("pre-flight", "initialize")
    assert first["http"] == f"POST {stub}{path}"


def test_nothing_listening_could_not_be_checked(tmp_path: Path) -> None:
    status, report, text = checkup("http://127.0.0.1:9/mcp", tmp_path=tmp_path)
    assert status == 2 and outcomes(report) == {"could-not-check"}, text
    assert "nothing answered" in report["connection"]


def test_a_missing_command_could_not_be_checked_and_junit_shows_errors(tmp_path: Path) -> None:
    junit = tmp_path / "report.xml"
    status, report, text = checkup("--junit", str(junit), "--", "no-such-mcp-server-xyz",
                                   tmp_path=tmp_path)
    assert status == 2 and outcomes(report) == {"could-not-check"}, text
    counts = next(line for line in text.splitlines() if line.startswith("0 passed"))
    assert "could not check" in counts
    root = ET.fromstring(junit.read_text())
    assert root.get("errors") == str(len(CHECKS)) and root.get("failures") == "0"
    assert len(root.findall(".//error")) == len(CHECKS) and not root.findall(".//failure")


def test_a_same_origin_redirect_is_followed_and_named(stub: str, tmp_path: Path) -> None:
    status, report, text = checkup(stub + "/same", tmp_path=tmp_path)
    assert report["target"] == stub + "/mcp"
    assert f"307 {stub}/same → {stub}/mcp" in report["connection"]
    assert "could-not-check" not in outcomes(report) and "error" not in outcomes(report)
    assert next(r for r in report["results"]
                if r["id"] == "lifecycle.initialize-result")["outcome"] == "pass"
    assert status == 0, text


def test_a_server_exiting_on_discover_is_checked_on_a_fresh_process(tmp_path: Path) -> None:
    script = tmp_path / "exits_on_discover.py"
    script.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if isinstance(m, dict) and m.get('method') == 'server/discover':\n"
        "        sys.exit(0)\n"
        "    if isinstance(m, dict) and m.get('method') == 'initialize':\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {\n"
        "            'protocolVersion': '2025-11-25', 'capabilities': {},\n"
        "            'serverInfo': {'name': 'exiter', 'version': '1'}}}), flush=True)\n"
        "    elif isinstance(m, dict) and 'id' in m and 'method' in m:\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'error': {\n"
        "            'code': -32601, 'message': 'no'}}), flush=True)\n")
    status, report, text = checkup("--", sys.executable, str(script), tmp_path=tmp_path)
    by_id = {r["id"]: r for r in report["results"]}
    assert by_id["lifecycle.initialize-result"]["outcome"] == "pass", text
    # Its own finding, a warning (inferred: the spec expects legacy servers to answer an
    # unknown pre-initialize request with an error or not at all, and obliges none).
    probe = by_id["lifecycle.discover-probe"]
    assert probe["outcome"] == "warn" and "left unanswered" in probe["detail"]
    assert by_id["jsonrpc.ids"]["outcome"] == "pass"
    assert report["seconds"] < 2 * float(TIMEOUT)
    # It refuses ping too (-32601): that, a real MUST, is the only failure.
    assert [r["id"] for r in report["results"] if r["outcome"] == "fail"] == ["lifecycle.ping"]
    assert status == 1


def test_a_crash_inside_one_check_is_its_error_and_the_rest_still_runs(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mcp_nb.check.lifecycle import LifecycleChecks

    def broken(self: object) -> None:
        raise RuntimeError("injected into lifecycle.shutdown")

    monkeypatch.setattr(LifecycleChecks, "shutdown", broken)
    saved, junit = tmp_path / "report.json", tmp_path / "report.xml"
    status = cli.main(["--timeout", TIMEOUT, "--json", str(saved), "--junit", str(junit),
                       "--", *lab_command()])
    report = json.loads(saved.read_text())
    by_id = {r["id"]: r for r in report["results"]}
    assert by_id["lifecycle.shutdown"]["outcome"] == "error"
    assert "injected" in by_id["lifecycle.shutdown"]["evidence"][0]["traceback"]
    assert [r["id"] for r in report["results"] if r["outcome"] == "error"] == \
        ["lifecycle.shutdown"]
    assert by_id["lifecycle.initialize-result"]["outcome"] == "pass"
    assert status == 2 and report["exitStatus"] == 2
    assert "ERR  lifecycle.shutdown" in capsys.readouterr().out
    assert ET.fromstring(junit.read_text()).find(".//error") is not None
    # --diff takes the new outcomes as outcomes.
    before = json.loads(saved.read_text())
    before["results"] = [{**r, "outcome": "pass"} if r["id"] == "lifecycle.shutdown" else r
                         for r in before["results"]]
    changed = {c.check_id: c.status for c in diff_reports(before, report).changes}
    assert changed == {"lifecycle.shutdown": "changed"}


def test_a_silent_stdio_server_could_not_be_checked_and_says_why(tmp_path: Path) -> None:
    # Reads nothing, writes nothing, and ignores its stdin closing: silence, once noticed, is
    # the whole verdict (the time it costs is benchmarks/checkup_silent.py's, not a test's).
    script = tmp_path / "silent.py"
    script.write_text("import time\nwhile True:\n    time.sleep(60)\n")
    status, report, text = checkup("--", sys.executable, str(script), tmp_path=tmp_path)
    assert status == 2 and outcomes(report) == {"could-not-check"}, text
    assert "answered nothing: server/discover, initialize went unanswered" in \
        report["connection"]
    # Nothing else was asked of it: the probe and its fallback, then no more requests.
    assert [r["method"] for r in report["requestsSent"]] == ["server/discover", "initialize"]


def test_a_silent_http_server_could_not_be_checked_and_says_why(tmp_path: Path) -> None:
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)  # the kernel accepts; nobody ever reads or answers
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
        status, report, text = checkup(url, tmp_path=tmp_path)
    finally:
        listener.close()
    assert status == 2 and outcomes(report) == {"could-not-check"}, text
    assert "took the connection but answered nothing" in report["connection"]
    assert [r["via"] for r in report["requestsSent"]] == ["pre-flight"]


def _raises(*args: object, **kwargs: object) -> None:
    raise RuntimeError("injected: a rule that crashed")


#: Where a crash is injected → the checks it may cost, no more: each phase is guarded where it
#: starts, so the phases beside it still give their verdicts.
CRASHES = {
    "mcp_nb.check.resources.contents_problems": {"resources.read"},
    "mcp_nb.check.tools.object_type_problem": {"tools.output-schema",
                                               "tools.output-schema-type"},
    "mcp_nb.check.handshake_features.HandshakeFeatureChecks.batch": {"jsonrpc.batch"},
}


@pytest.mark.parametrize("where", list(CRASHES), ids=lambda w: w.rsplit(".", 1)[1])
def test_a_crash_in_one_phase_is_that_phases_error_only(
        where: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(where, _raises)
    saved, junit = tmp_path / "report.json", tmp_path / "report.xml"
    status = cli.main(["--timeout", TIMEOUT, "--call-tools", "all", "--json", str(saved),
                       "--junit", str(junit), "--", *lab_command("--era", "handshake")])
    report = json.loads(saved.read_text())
    by_id = {r["id"]: r for r in report["results"]}
    errors = {i for i, r in by_id.items() if r["outcome"] == "error"}
    assert errors and errors <= CRASHES[where], errors
    for check in errors:
        assert "injected: a rule that crashed" in by_id[check]["evidence"][0]["traceback"]
    # Every other phase still judged the server: the rest of the report is as healthy.
    assert not {r["outcome"] for i, r in by_id.items() if i not in errors} & {
        "fail", "warn", "error", "could-not-check"}
    for check in ("lifecycle.ping", "resources.templates", "prompts.get", "tools.progress",
                  "capabilities.logging-served", "jsonrpc.ids"):
        assert check in errors or by_id[check]["outcome"] == "pass", check
    # The report is written in every form, and says what crashed: exit 2, JUnit <error>s.
    assert status == 2 and report["exitStatus"] == 2
    out = capsys.readouterr().out
    assert all(f"ERR  {check}" in out for check in errors)
    root = ET.fromstring(junit.read_text())
    assert root.get("errors") == str(len(errors)) and root.get("failures") == "0"
