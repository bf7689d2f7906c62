"""``python -m mcp_nb.check --diff``: what is not a report exits 2, and reports of different
targets or options are compared with a note (issue 32).  Hand-made JSON files; no checkup runs.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_nb.check import diff_html, diff_reports
from mcp_nb.check.diff import report_problem

REPORT: dict[str, Any] = {
    "target": "python server.py", "era": "handshake", "version": "2025-11-25",
    "server": {"name": "demo", "version": "1.0"}, "allowedTools": [],
    "results": [
        {"id": "lifecycle.ping", "outcome": "pass", "title": "ping answered", "detail": "ok",
         "rule": {"level": "MUST"}},
        {"id": "tools.names", "outcome": "pass", "title": "tool names", "detail": "ok",
         "rule": {"level": "SHOULD"}}]}


def _with(change: Any) -> Any:
    document = copy.deepcopy(REPORT)
    change(document)
    return document


#: Unreadable shapes: (name, document or raw text, words the message must contain).
SHAPES: list[tuple[str, Any, str]] = [
    ("top-level-list", [REPORT], "top level is an array"),
    ("top-level-number", 5, "top level is a number"),
    ("top-level-null", None, "top level is null"),
    ("no-results", {"target": "x"}, 'no "results"'),
    ("results-object", _with(lambda d: d.update(results={})), '"results" is an object'),
    ("entry-string", _with(lambda d: d["results"].append("lifecycle.ping")),
     "results[2] is a string"),
    ("entry-without-id", _with(lambda d: d["results"][0].pop("id")), 'results[0] has no "id"'),
    ("entry-without-outcome", _with(lambda d: d["results"][1].pop("outcome")),
     'results[1] has no "outcome"'),
    ("outcome-number", _with(lambda d: d["results"][0].update(outcome=1)),
     "results[0].outcome is a number"),
    ("id-boolean", _with(lambda d: d["results"][0].update(id=True)),
     "results[0].id is a boolean"),
    ("detail-array", _with(lambda d: d["results"][1].update(detail=["x"])),
     "results[1].detail is an array"),
    ("rule-string", _with(lambda d: d["results"][0].update(rule="MUST")),
     "results[0].rule is not an object"),
    ("level-number", _with(lambda d: d["results"][0].update(rule={"level": 2})),
     "results[0].rule is not an object"),
    ("duplicate-id", _with(lambda d: d["results"].append(dict(d["results"][0]))),
     "listed twice"),
    ("target-number", _with(lambda d: d.update(target=3)), '"target" is a number'),
    ("server-array", _with(lambda d: d.update(server=["demo"])), '"server" is an array'),
    ("allowed-tools-string", _with(lambda d: d.update(allowedTools="all")),
     '"allowedTools" is a string'),
]


def run_diff(*paths: Path, html: Path | None = None) -> subprocess.CompletedProcess[str]:
    extra = ["--html", str(html)] if html else []
    return subprocess.run([sys.executable, "-m", "mcp_nb.check", "--diff", *map(str, paths),
                           *extra], capture_output=True, text=True, timeout=60, check=False)


def write(path: Path, document: Any) -> Path:
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.mark.parametrize(("name", "document", "words"), SHAPES, ids=[s[0] for s in SHAPES])
def test_a_file_that_is_not_a_report_exits_2_naming_the_file_and_why(
        tmp_path: Path, name: str, document: Any, words: str) -> None:
    good, bad = write(tmp_path / "good.json", REPORT), write(tmp_path / f"{name}.json", document)
    for paths in ((good, bad), (bad, good)):
        done = run_diff(*paths)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "Traceback" not in done.stderr
        assert f"{bad}: not a checkup report: " in done.stderr and words in done.stderr
    assert words in (report_problem(document) or "")
    with pytest.raises(ValueError, match="not a checkup report"):
        diff_reports(REPORT, document)


@pytest.mark.parametrize("text", ["", "{", "not json", "[1, 2"])
def test_a_file_that_is_not_json_exits_2(tmp_path: Path, text: str) -> None:
    good, bad = write(tmp_path / "good.json", REPORT), tmp_path / "bad.json"
    bad.write_text(text, encoding="utf-8")
    done = run_diff(good, bad)
    assert done.returncode == 2 and "cannot read the report" in done.stderr
    assert "Traceback" not in done.stderr


def test_reports_of_different_targets_and_options_are_compared_with_a_note(
        tmp_path: Path) -> None:
    later = _with(lambda d: d.update(target="python other.py", allowedTools=["all"],
                                     era="stateless", server={"name": "other"}))
    later["results"][0]["outcome"] = "fail"
    page = tmp_path / "diff.html"
    done = run_diff(write(tmp_path / "a.json", REPORT), write(tmp_path / "b.json", later),
                    html=page)
    assert done.returncode == 1, done.stdout + done.stderr  # still compared: a MUST regressed
    note = done.stdout.splitlines()[1]
    assert note.startswith("note: the reports differ in what was checked")
    for words in ("target python server.py → python other.py", "server demo → other",
                  "--call-tools none → all", "era handshake → stateless"):
        assert words in note
    assert "protocol version" not in note  # the same in both
    assert "REGRESSED lifecycle.ping" in done.stdout
    assert "note: the reports differ" in page.read_text(encoding="utf-8")


def test_reports_of_the_same_settings_get_no_note(tmp_path: Path) -> None:
    later = _with(lambda d: d["server"].update(version="2.0"))  # a new release of the server
    diff = diff_reports(REPORT, later)
    assert diff.differences == ()
    assert "note:" not in diff_html(diff)
    done = run_diff(write(tmp_path / "a.json", REPORT), write(tmp_path / "b.json", later))
    assert done.returncode == 0 and "note:" not in done.stdout
