"""The checkup's report features: --diff of two real reports, mcpServers entries as targets,
and the widget %mcp check shows (filters, evidence into the transcript, escaping)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_nb.check import diff_html, diff_reports, diff_text, run_checkup, to_json
from mcp_nb.check.model import Report
from mcp_nb.check.targets import ConfigError, load_config, run_entry_checkup, server_entry
from mcp_nb.client import lab_command
from mcp_nb.notebook.check_view import CheckView

#: As in test_check.py: a knob that never answers costs little; long enough for 2 busy cores.
TIMEOUT = 3.0


@pytest.fixture(scope="module")
def before_and_after() -> tuple[Report, Report]:
    """Real reports of the healthy handshake-era lab and of the same lab with a MUST broken."""
    import anyio

    async def both() -> tuple[Report, Report]:
        healthy = await run_checkup(lab_command("--era", "handshake"), timeout=TIMEOUT)
        broken = await run_checkup(lab_command("--era", "handshake", "--reject-version"),
                                   timeout=TIMEOUT)
        return healthy, broken

    return anyio.run(both)


def test_a_broken_must_is_a_regression_and_its_repair_a_fix(
        before_and_after: tuple[Report, Report]) -> None:
    healthy, broken = before_and_after
    assert healthy.exit_status == 0 and broken.exit_status == 1
    worse = diff_reports(healthy, broken)
    # Refusing the unknown version also leaves no session sitting initialized short of
    # notifications/initialized: with nothing watched, early requests are not applicable.
    assert [(c.check_id, c.status, c.before, c.after) for c in worse.changes] == [
        ("lifecycle.unknown-version", "regressed", "pass", "fail"),
        ("lifecycle.requests-before-initialized", "changed", "pass", "not-applicable")]
    assert worse.exit_status == 1
    assert worse.counts["unchanged"] == len(healthy.results) - 2
    better = diff_reports(broken, healthy)
    assert [(c.check_id, c.status) for c in better.changes] == [
        ("lifecycle.unknown-version", "fixed"),
        ("lifecycle.requests-before-initialized", "changed")]
    assert better.exit_status == 0
    # The saved JSON compares exactly as the reports do (what --save / --json keep).
    saved = [json.loads(to_json(report)) for report in (healthy, broken)]
    assert diff_reports(*saved).changes == worse.changes
    text = diff_text(worse)
    assert "REGRESSED lifecycle.unknown-version [MUST] pass → fail" in text
    assert text.endswith("a MUST regressed: exit status 1")


def test_new_gone_and_should_changes_do_not_fail_the_diff(
        before_and_after: tuple[Report, Report]) -> None:
    healthy, _broken = before_and_after
    earlier, later = json.loads(to_json(healthy)), json.loads(to_json(healthy))
    # A checkup that grew a check and lost another; a SHOULD that now warns.
    gone = earlier["results"][0]["id"]
    later["results"] = [r for r in later["results"] if r["id"] != gone]
    later["results"].append({**later["results"][0], "id": "future.check", "outcome": "fail"})
    names = next(r for r in later["results"] if r["id"] == "tools.names")
    names["outcome"], names["detail"] = "warn", "a tool is named <b>bad</b>"
    diff = diff_reports(earlier, later)
    assert {c.check_id: c.status for c in diff.changes} == {
        "tools.names": "regressed", gone: "gone", "future.check": "new"}
    assert diff.exit_status == 0  # a SHOULD only warns; a new check is the checkup's growth
    markup = diff_html(diff)
    assert "<b>bad</b>" not in markup and "&lt;b&gt;bad&lt;/b&gt;" in markup
    with pytest.raises(ValueError, match="results"):
        diff_reports({"target": "x"}, later)


def test_the_command_line_diff_exits_1_only_when_a_must_regressed(
        before_and_after: tuple[Report, Report], tmp_path: Path) -> None:
    healthy, broken = before_and_after
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(to_json(healthy))
    bad.write_text(to_json(broken))

    def diff(*paths: Path, html: Path | None = None) -> subprocess.CompletedProcess[str]:
        extra = ["--html", str(html)] if html else []
        return subprocess.run([sys.executable, "-m", "mcp_nb.check", "--diff",
                               *map(str, paths), *extra],
                              capture_output=True, text=True, timeout=60)

    page = tmp_path / "diff.html"
    regressed = diff(good, bad, html=page)
    assert regressed.returncode == 1, regressed.stdout + regressed.stderr
    assert "REGRESSED lifecycle.unknown-version" in regressed.stdout
    assert '<tr class="regressed">' in page.read_text()
    fixed = diff(bad, good)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "FIXED     lifecycle.unknown-version" in fixed.stdout
    assert diff(good, good).returncode == 0
    unreadable = diff(good, tmp_path / "missing.json")
    assert unreadable.returncode not in (0, 1) and "cannot read the report" in unreadable.stderr


LAUNCHER = """\
import os, runpy, sys
# Run from the entry's cwd (a relative path), with its knobs from the entry's env.
sys.argv = ["mcp_nb.lab", *os.environ["CHECKUP_LAB_FLAGS"].split()]
runpy.run_module("mcp_nb.lab", run_name="__main__")
"""


def write_config(tmp_path: Path) -> Path:
    (tmp_path / "launch_lab.py").write_text(LAUNCHER)
    config = {"mcpServers": {
        "lab": {"command": sys.executable, "args": ["-m", "mcp_nb.lab", "--era", "handshake"]},
        "flawed": {"command": sys.executable, "args": ["launch_lab.py"], "cwd": str(tmp_path),
                   "env": {"CHECKUP_LAB_FLAGS": "--era handshake --reject-version"}},
        "remote": {"url": "https://mcp.example.com/mcp", "auth": {"client_id": "x"}},
    }}
    path = tmp_path / "servers.json"
    path.write_text(json.dumps(config))
    return path


@pytest.mark.anyio
async def test_an_mcpservers_entry_is_checked_with_its_env_and_cwd(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path))
    healthy = await run_entry_checkup(server_entry(config, "lab"), timeout=TIMEOUT)
    assert healthy.exit_status == 0
    assert healthy.target.startswith("lab: ") and healthy.target.endswith("--era handshake")
    # The launcher runs only from the entry's cwd, and its knob only comes from the env.
    flawed = await run_entry_checkup(server_entry(config, "flawed"), timeout=TIMEOUT)
    assert flawed.result("lifecycle.unknown-version").outcome == "fail"
    assert flawed.exit_status == 1
    # The env's names are shown, never their values (often secrets).
    assert flawed.target.endswith("launch_lab.py (env CHECKUP_LAB_FLAGS)")
    assert "--reject-version" not in to_json(flawed).split('"results"')[0]
    with pytest.raises(ConfigError, match="no authorization flow"):
        server_entry(config, "remote")
    with pytest.raises(ConfigError, match="no server 'nope'; it has lab, flawed, remote"):
        server_entry(config, "nope")
    with pytest.raises(ConfigError, match="name one"):
        server_entry(config, None)


def test_the_command_line_checks_an_mcpservers_entry(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "mcp_nb.check", "--config", str(config), "flawed",
         "--timeout", str(TIMEOUT), "--json", str(tmp_path / "flawed.json")],
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL lifecycle.unknown-version [MUST]" in done.stdout
    assert json.loads((tmp_path / "flawed.json").read_text())["target"].startswith("flawed: ")
    missing = subprocess.run(
        [sys.executable, "-m", "mcp_nb.check", "--config", str(config), "nope"],
        capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "no server 'nope'" in missing.stderr


def test_mcp_check_widget_filters_rows_and_keeps_the_html_fallback(mcp) -> None:
    view = mcp("check --lab=--era --lab=handshake --lab=--reject-version --timeout 3")
    assert isinstance(view, CheckView)
    total = len(view.report.results)
    # Failures and warnings come first; everything is shown until a filter says otherwise.
    assert view.shown[0].check.id == "lifecycle.unknown-version"
    assert len(view.rows.children) == total
    assert view.rows.titles[0].startswith("FAIL  lifecycle.unknown-version [MUST]")
    view.outcome.value = "problems"
    assert [r.check.id for r in view.shown] == ["lifecycle.unknown-version"]
    assert len(view.rows.children) == 1 and view.position.value == f"1 of {total} checks shown"
    view.outcome.value = "not-applicable"
    view.area.value = "http"
    assert view.shown and {r.check.area for r in view.shown} == {"http"}
    assert all(r.outcome == "not-applicable" for r in view.shown)
    view.outcome.value = "fail"
    assert [r.check.id for r in view.shown] == []  # nothing of HTTP's runs over stdio
    assert len(view.rows.children) == 0 and view.position.value == f"0 of {total} checks shown"
    view.area.value = "lifecycle"
    assert [r.check.id for r in view.shown] == ["lifecycle.unknown-version"]
    view.outcome.value, view.area.value = "all", ""
    assert len(view.rows.children) == total
    # A row opens to its rule, the fix and the evidence (this lab's sessions are gone: JSON).
    view.rows.selected_index = 0
    row = view.rows.children[0]
    detail = row.children[0].value
    assert "MUST" in detail and "basic/lifecycle#version-negotiation" in detail
    assert "Otherwise, the server MUST respond" in detail and "fix:" in detail
    assert row.evidence and all(item.button is None for item in row.evidence)
    assert "&quot;initialize&quot;" in row.evidence[0].json.value
    # The saved notebook keeps the static table and a short, stable text.
    assert view._repr_mimebundle_()["text/html"].count('<tr class="fail">') == 1
    plain = repr(view).splitlines()
    assert plain[0].startswith("checkup of python -m mcp_nb.lab --era handshake --reject-version")
    assert plain[1].startswith("FAIL lifecycle.unknown-version [MUST]")
    assert plain[-1].startswith(f"{total - view.report.counts['not-applicable'] - 1} passed, "
                                "1 failed (MUST)")
    assert sys.executable not in repr(view) + view._repr_html_()


def test_evidence_of_an_open_session_opens_its_transcript_at_the_entry(mcp, capsys) -> None:
    hosted = mcp("connect --era handshake")
    view = mcp("check --session --timeout 3")
    for _ in range(60):  # later traffic: the checkup's entries are no longer on the last page
        mcp("ping")
    ping = view.row("lifecycle.ping").evidence[0]
    seq = ping.item["seq"]
    assert ping.item["session"] == "main"
    assert ping.button is not None
    ping.button.click()
    transcript = ping.transcript
    assert transcript is not None and transcript._session is hosted.session
    assert f"<td>{seq}</td>" in transcript.table.value  # its page, not the last one
    assert transcript.page < len(hosted.session.transcript.entries) // transcript.page_size
    transcript.page = -1  # the person pages away; the button brings the entry back
    transcript.flush()
    assert f"<td>{seq}</td>" not in transcript.table.value
    ping.button.click()
    assert ping.transcript is transcript and f"<td>{seq}</td>" in transcript.table.value


def test_a_hostile_server_stays_escaped_in_the_widget(mcp) -> None:
    view = mcp("check --lab=--hostile-strings --timeout 3")
    names = view.row("tools.names")
    assert names.result.outcome == "warn"
    shown = names.children[0].value + "".join(item.json.value for item in names.evidence)
    shown += view.summary.value
    assert "<script" not in shown and "<img" not in shown and "\x1b" not in shown
    assert "\u202e" not in shown
    assert "&lt;" in shown  # the markup is there, as text
    assert "\x1b" not in repr(view) and "\u202e" not in repr(view)


def test_mcp_check_saves_reports_and_diffs_them(mcp, tmp_path: Path) -> None:
    broken, healthy = tmp_path / "broken.json", tmp_path / "healthy.json"
    mcp(f"check --lab=--reject-version --timeout 3 --save {broken}")
    fixed_view = mcp(f"check --timeout 3 --json {healthy}")
    assert json.loads(broken.read_text())["exitStatus"] == 1
    shown = mcp(f"check --diff {broken} {healthy}")
    assert [(c.check_id, c.status) for c in shown.diff.changes] == [
        ("lifecycle.unknown-version", "fixed"),
        ("lifecycle.requests-before-initialized", "changed")]
    assert "FIXED" in repr(shown) and '<tr class="fixed">' in shown._repr_html_()
    # Reports kept in the notebook's variables compare the same way.
    mcp.shell.user_ns.update(before=json.loads(broken.read_text()), after=fixed_view)
    again = mcp("check --diff {before} {after}")
    assert again.diff.changes == shown.diff.changes
    with pytest.raises(Exception, match="give no target"):
        mcp(f"check --diff {broken} {healthy} -- python -m mcp_nb.lab")


def sanitized(text: str) -> str:
    """``text`` as nbval compares it, through notebooks/sanitize.cfg's own patterns."""
    lines = (Path(__file__).resolve().parent.parent / "notebooks" / "sanitize.cfg").read_text()
    pairs = re.findall(r"^regex: (.*)\nreplace: (.*)$", lines, flags=re.MULTILINE)
    for pattern, replacement in pairs:
        text = re.sub(pattern, replacement, text)
    return text


def test_a_saved_checkup_output_is_the_same_run_after_run(mcp) -> None:
    """What nbval compares (text/plain, text/html) does not change between runs, though the
    checkup's concurrent requests take their ids and transcript positions in varying order."""
    outputs = []
    for _ in range(3):
        bundle = mcp("check --timeout 3")._repr_mimebundle_()
        outputs.append((sanitized(bundle["text/plain"]), sanitized(bundle["text/html"])))
    assert outputs[1] == outputs[0] and outputs[2] == outputs[0]
    plain, markup = outputs[0]
    assert "&quot;seq&quot;" not in markup and sys.executable not in plain + markup
    assert "<details><summary>" in markup  # the evidence is still there, to read on GitHub


def test_the_widget_in_a_real_kernel_carries_its_static_fallback() -> None:
    from test_kernel import Kernel

    kernel = Kernel()
    try:
        assert kernel.execute("%load_ext mcp_nb")["status"] == "ok"
        shown = kernel.execute("%mcp check --lab=--reject-version --timeout 5")
        assert shown["status"] == "ok", shown
        data = next(o["data"] for o in shown["outputs"] if o["type"] == "execute_result")
        # A live widget where widgets run; the static table where they do not (GitHub).
        assert "application/vnd.jupyter.widget-view+json" in data
        assert data["text/html"].count('<tr class="fail">') == 1
        assert "FAIL lifecycle.unknown-version [MUST]" in data["text/plain"]
        assert kernel.execute("view = _")["status"] == "ok"
        assert kernel.value("len(view.rows.children) == len(view.report.results)") == "True"
        kernel.execute("view.outcome.value = 'problems'")
        assert kernel.value("[r.check.id for r in view.shown], len(view.rows.children)") == \
            "['lifecycle.unknown-version'] 1"  # print(a, b)
    finally:
        kernel.shutdown()


def test_mcp_check_names_an_mcpservers_entry(mcp, tmp_path: Path) -> None:
    config = write_config(tmp_path)
    flawed = mcp(f"check flawed --config {config} --timeout 3")
    assert flawed.report.exit_status == 1
    assert flawed.report.target.startswith("flawed: ")
    # The notebook's own dict of the same shape (--config {servers}) works as the file does.
    mcp.shell.user_ns["servers"] = json.loads(config.read_text())
    healthy = mcp("check lab --config {servers} --timeout 3")
    assert healthy.report.exit_status == 0
    with pytest.raises(Exception, match="no authorization flow"):
        mcp("check remote --config {servers}")
    with pytest.raises(Exception, match="one mcpServers entry's name"):
        mcp("check --config {servers}")


def test_mcp_check_takes_header_for_a_url(mcp) -> None:
    from http_support import lab_server

    with lab_server("--require-header", "Authorization: Bearer s3cret") as server:
        view = mcp(f"check {server.ready_text} --header 'Authorization: Bearer s3cret' "
                   "--timeout 3")
    assert view.report.exit_status == 0, view.report.failed
    assert view.report.result("http.origin").outcome == "pass"
    assert view.report.target.endswith("(headers Authorization: values not shown)")
    assert "s3cret" not in to_json(view.report)
    with pytest.raises(Exception, match="NAME: VALUE"):
        mcp("check http://127.0.0.1:9/mcp --header no-colon")
    with pytest.raises(Exception, match="for a URL target"):
        mcp("check --header 'X-A: b' -- python -m mcp_nb.lab")


@pytest.mark.anyio
async def test_an_http_entry_with_headers_is_checked_with_them_on_every_request() -> None:
    from http_support import lab_server

    with lab_server("--require-header", "Authorization: Bearer s3cret") as server:
        entry = server_entry({"mcpServers": {"web": {
            "url": server.ready_text, "headers": {"Authorization": "Bearer s3cret"}}}}, "web")
        report = await run_entry_checkup(entry, timeout=TIMEOUT)
        bare = await run_checkup(server.ready_text, timeout=TIMEOUT)
    # With the header the session gets in and its checks run; without it only the 401's
    # authorization metadata could be looked at.
    assert report.result("tools.input-schema").outcome == "pass"
    assert bare.result("tools.input-schema").outcome != "pass"
    assert report.exit_status == 0, report.failed
    # The raw HTTP probes and the extra sessions carry the header too: they ran.
    assert report.result("http.origin").outcome == "pass"
    assert report.result("lifecycle.unknown-version").outcome == "pass"
    assert report.target.endswith("(headers Authorization: values not shown)")
    assert "s3cret" not in to_json(report)
