"""The checkup speaks Chinese in a zh kernel: every detail and reason it writes, on every rule.

The checkup writes one line per check (what it observed, or why the check did not apply);
chapter 17's zh edition shows those lines, and once about 170 of them (the features, HTTP,
stateless, authorization and MCP Apps rules, the runner's reasons) were still English. These
tests run the checkup in Chinese on the lab, healthy and with faults, over stdio and HTTP, so
that most lines it can write are written, and look for English left in them: the server's
own words (anything found in the evidence, anything quoted) and code (method, field and
header names, URLs, numbers, names) are taken out first, and what remains must hold no two
lowercase English words in a row. The same detector, run on the English reports, finds English
in nearly every line: it can fail.
"""

# ruff: noqa: RUF001  (Chinese punctuation in the expected texts is meant)

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from http_support import lab_server

from mcp_nb import i18n
from mcp_nb.check import run_checkup
from mcp_nb.check.model import Report
from mcp_nb.check.output import level_legend
from mcp_nb.client import lab_command

pytestmark = pytest.mark.anyio

TIMEOUT = 3.0
#: Feature faults of the lab that make the feature checks write their failure details.
FEATURE_FAULTS = ("bad-progress", "bad-resource-uri", "bad-uri-template", "no-subscribe",
                  "bad-prompt-arguments", "bad-prompt-role", "bad-completion",
                  "loose-log-level", "answer-batches", "undeclared-list-changed")
#: Lab flags (with --http) whose checkups between them write the HTTP, stateless,
#: authorization and Apps rules' details, passing and failing.
HTTP_LABS = (
    ("--apps",),
    ("--era", "stateless"),
    ("--auth",),
    ("--auth", "--auth-fault", "no-s256"),
    ("--no-origin-check", "--notifications-200", "--repeat-event-ids",
     "--counter-session-ids"),
    ("--era", "stateless", "--lenient-meta", "--skip-header-check",
     "--discover-without-cache-hints", "--omit-result-type"),
)

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_URL = re.compile(r"\w+://\S+")
#: What makes a token code, not prose: a digit or a character words do not hold (method
#: names, field paths, versions, header names), camelCase, or a capital (names, MUST).
_CODE = re.compile(r"[0-9/._=<>{}\[\]@#$%+*'\"-]|[a-z][A-Z]|^[A-Z]")
#: English words this many in a row (no punctuation between) make a phrase.
PHRASE = 2


def _server_strings(value: Any) -> Iterator[str]:
    """Every string in the evidence: what the server said (and what was sent to it)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _server_strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _server_strings(item)


def english_left(line: str, evidence: Any = ()) -> str | None:
    """The English phrase ``line`` still holds once the server's words and code are taken
    out (``PHRASE`` lowercase words in a row, no punctuation between them), or None."""
    for said in sorted({s for s in _server_strings(evidence) if len(s) >= 4}, key=len,
                       reverse=True):
        line = line.replace(said, " | ")
    line = _URL.sub(" | ", _QUOTED.sub(" | ", line.replace("(s)", "").replace("'s ", " ")))
    runs: list[list[str]] = [[]]
    for token in line.split():
        word = token.strip("()[],;:.!?")
        if token[0] in "([" or not re.fullmatch(r"[a-z]+", word) or _CODE.search(word):
            runs.append([])
        if re.fullmatch(r"[a-z]+", word) and not _CODE.search(word):
            runs[-1].append(word)
        if token[-1] in ",;:)]":
            runs.append([])
    longest = max(runs, key=len)
    return " ".join(longest) if len(longest) >= PHRASE else None


def english_lines(report: Report) -> list[str]:
    """Each detail (or reason) of the report, and its legend lines, left in English."""
    lines = [(f"{r.check.id}: {r.detail}", r.detail, r.evidence) for r in report.results]
    lines += [(f"legend: {line}", line, ()) for line in level_legend(report)]
    if report.connection:
        lines.append((f"connection: {report.connection}", report.connection, ()))
    return [shown for shown, text, evidence in lines if english_left(text, evidence)]


@pytest.fixture
def chinese() -> Iterator[None]:
    i18n.set_language("zh")
    try:
        yield
    finally:
        i18n.set_language("en")


def test_the_detector_finds_english_and_lets_code_and_the_servers_words_through() -> None:
    assert english_left("the server lists no tools") == "the server lists no tools"
    assert english_left("1 prompt(s) got, messages well-formed") == "prompt got"
    assert english_left("name 'word count' breaks the naming rules") is not None
    # Code, quoted server values, URLs and the server's own words are not the kit's English.
    assert english_left("服务器没有列出工具") is None
    assert english_left("调用 'echo' 时没有给出必填的 text：得到带 isError: true 的结果") is None
    assert english_left("为 prompts, resources, tools 声明了 listChanged") is None
    assert english_left("Origin http://dns-rebinding.invalid 被以 403 拒绝") is None
    assert english_left("提供 Client ID Metadata Documents 和 Dynamic Client Registration") is None
    assert english_left("服务器回答了错误 -32601 Method not found at all",
                        {"error": {"message": "Method not found at all"}}) is None


async def _stdio_reports() -> list[Report]:
    faults = [flag for fault in FEATURE_FAULTS for flag in ("--feature-fault", fault)]
    return [await run_checkup(lab_command("--apps"), call_tools="all", timeout=TIMEOUT),
            await run_checkup(lab_command("--hostile-strings", *faults), call_tools="all",
                              timeout=TIMEOUT),
            await run_checkup(lab_command(), timeout=TIMEOUT)]


async def _http_reports() -> list[Report]:
    reports = []
    for flags in HTTP_LABS:
        with lab_server(*flags) as server:
            reports.append(await run_checkup(server.ready_text, call_tools="all",
                                             timeout=TIMEOUT))
    return reports


def _judge(reports: list[Report]) -> None:
    left = [line for report in reports for line in english_lines(report)]
    assert not left, "\n".join(left)
    written = {r.check.id for report in reports for r in report.results}
    assert len(written) == len(reports[0].results)  # every check wrote a line somewhere


async def test_a_zh_checkup_over_stdio_writes_every_detail_in_chinese(chinese) -> None:
    reports = await _stdio_reports()
    _judge(reports)
    # Its words, not only its absence of English: a reason, a pass and a failure.
    faulty = reports[1]
    assert reports[2].result("tools.output-schema").detail.startswith("1 个 outputSchema 有效")
    assert (faulty.result("resources.templates").detail
            == "'lab://echo/{text' 含有一个没有闭合的表达式")
    assert faulty.result("jsonrpc.batch").detail.startswith("在 2025-11-25 下发送的批量请求")
    assert reports[0].result("apps.csp").detail.startswith("没有 UI 资源声明 _meta.ui.csp")


async def test_a_zh_checkup_over_http_writes_every_detail_in_chinese(chinese) -> None:
    reports = await _http_reports()
    _judge(reports)
    healthy, auth = reports[0], reports[2]
    assert (healthy.result("http.origin").detail
            == "Origin http://dns-rebinding.invalid 被以 403 拒绝")
    assert auth.result("auth.discovery").detail.startswith(
        "Bearer 质询；资源元数据由 WWW-Authenticate 指明")
    assert auth.result("lifecycle.ping").detail == ("服务器要求授权（401），而体检没有令牌："
                                                    "只检查了授权元数据")


async def test_the_english_checkup_is_found_english_by_the_same_detector() -> None:
    # The detector's power: on the English reports nearly every line is English to it (86 %
    # measured over stdio and HTTP; what it misses is mostly numbers and names, such as
    # "offered 2025-11-25, answered 2025-11-25").
    reports = await _stdio_reports()
    results = [r for report in reports for r in report.results]
    found = [r for r in results if english_left(r.detail, r.evidence)]
    assert len(found) >= 0.8 * len(results), [
        r.detail for r in results if not english_left(r.detail, r.evidence)]


def test_the_command_line_helps_in_the_language_of_its_environment() -> None:
    run = subprocess.run([sys.executable, "-m", "mcp_nb.check", "--help"], capture_output=True,
                         text=True, timeout=60, env={**os.environ, "MCP_NB_LANG": "zh"})
    assert run.returncode == 0, run.stderr
    assert "按规范检查一个 MCP 服务器" in run.stdout
    assert "体检可以调用的工具（默认一个也不调：工具可能有副作用）" in run.stdout
    assert not english_left(run.stdout.split("options:", 1)[1].replace("show this help "
                                                                        "message and exit", ""))
