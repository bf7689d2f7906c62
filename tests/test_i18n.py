"""The kit speaks the notebook's language: every message has its Chinese; %mcp lang zh uses it."""

# ruff: noqa: RUF001  (Chinese punctuation in the expected texts is meant)

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcp_nb import i18n
from mcp_nb.notebook.magics import McpCellError

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import i18n as catalogs  # noqa: E402  (scripts/i18n.py, the catalogs' keeper)

sys.path.remove(str(ROOT / "scripts"))


@pytest.fixture
def chinese():
    i18n.set_language("zh")
    yield
    i18n.set_language("en")


def test_every_message_has_its_chinese_and_the_compiled_catalog_is_current() -> None:
    assert catalogs.problems() == []
    assert len(catalogs.extracted()) > 100  # the extraction found the kit's messages


def test_the_check_catches_a_missing_translation_and_a_lost_field(tmp_path, monkeypatch) -> None:
    catalog = catalogs.read_catalog("zh")
    catalog.get("Lifecycle").string = ""
    catalog.get("done in {time}").string = "用时完成"
    po = tmp_path / "zh" / "LC_MESSAGES" / "mcp_nb.po"
    po.parent.mkdir(parents=True)
    po.write_bytes(catalogs.po_bytes(catalog))
    monkeypatch.setattr(catalogs, "LOCALE", tmp_path)
    found = catalogs.problems()
    assert "zh: no translation of 'Lifecycle' (mcp_nb/notebook/widgets.py:" in "\n".join(found)
    assert ("zh: the translation of 'done in {time}' has the fields [], not ['time']"
            in found)
    assert any(line.endswith("is stale: run scripts/i18n.py") for line in found)


def test_a_language_without_a_catalog_is_refused() -> None:
    with pytest.raises(ValueError, match="no catalog for language 'fr'; the kit speaks en, zh"):
        i18n.set_language("fr")


def test_mcp_lang_zh_makes_the_widgets_tables_and_refusals_chinese(ip, mcp, capsys) -> None:
    mcp("lang zh")
    try:
        assert "本套件使用的语言：zh" in capsys.readouterr().out
        hosted = mcp(f"connect zh --step -- {sys.executable} -m mcp_nb.lab")
        view = hosted.view
        assert [view.get_title(i) for i in range(5)] == [
            "生命周期", "握手", "能力", "记录", "违规发现"]
        result = ip.run_cell("%mcp call echo text=hi")
        assert result.error_in_exec._render_traceback_() == [
            "McpCellError: [LifecycleError] 处于 Uninitialized 时不能发送 'tools/call'："
            "请先发送 initialize（加 --force 仍然发送）"]
        mcp("initialize")
        mcp("initialized")
        tools = mcp("tools")
        assert repr(tools).startswith("7 个工具：echo, ")
        assert "<th>名称</th><th>标题</th><th>描述</th>" in tools._repr_html_()
        assert repr(hosted).endswith("条消息，0 条违规发现")
        with pytest.raises(McpCellError, match="你是不是想用 connect？"):
            mcp("conect")
    finally:
        mcp("lang en")
    assert view.get_title(0) == "生命周期"  # drawn before: kept; what is drawn next is English
    assert repr(mcp("tools")).startswith("7 tools: echo, ")


def test_the_environment_chooses_the_language_of_a_new_kernel() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from mcp_nb.i18n import _, language; print(language(), "
         "_('Lifecycle'))"],
        env={**os.environ, "MCP_NB_LANG": "zh"}, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["zh", "生命周期"]


def test_a_translated_template_fills_its_fields(chinese) -> None:
    assert i18n._("done in {time}").format(time="3.1 ms") == "用时 3.1 ms 完成"


@pytest.fixture
def zh(mcp):
    """A zh notebook: ``%mcp lang zh`` first, English again after the test."""
    mcp("lang zh")
    yield mcp
    mcp("lang en")


def _wait_until(ready, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_a_zh_run_steps_an_app_and_its_explorer_tab_in_chinese(zh) -> None:
    zh(f"connect clock -- {sys.executable} -m mcp_nb.lab --apps")
    plan = zh("app clock label=Oslo --step")
    assert repr(plan) == ("App 步骤 plan：clock 渲染 ui://lab/clock.html；步骤：call → read → "
                          "csp → load → input → result → teardown（每次 %mcp app --next 做一步）")
    assert repr(zh("app --next")).startswith("App 步骤 call：tools/call clock 已回答：")
    assert "<b>App 步骤 read</b>" in zh("app --next")._repr_html_()
    assert "（从不加 allow-same-origin：框架的源保持不透明）" in repr(zh("app --next"))
    view = zh("app --next")  # load: the frame, its own words, the folded result and diagram
    assert view.frame.labels["back_inline"] == "回到单元格内"
    folded = view.children[-1]
    assert [folded.get_title(0), folded.get_title(1)] == ["工具结果", "App 生命周期"]
    assert f"MCP App 生命周期，当前状态 {view.lifecycle.state.value}" in view.diagram.value
    assert "虚线：被拒绝，或未经 ui/resource-teardown 就被移除" in view.diagram.value
    # Not initialized yet: held for the page to post when the View says initialized.
    assert repr(zh("app --next")).startswith("App 步骤 input：暂存，直到 View 说 "
                                              "ui/notifications/initialized")
    with pytest.raises(McpCellError, match="echo 不是 App 工具：它的 _meta 没有指明 ui:// 资源"):
        zh("app echo text=hi")
    explorer = zh("explore")
    assert explorer.tabs.get_title(len(explorer.tabs.children) - 1) == "应用"
    assert "<th>工具</th><th>ui:// 资源</th><th>可见性</th>" in explorer.apps.listing.value
    assert explorer.apps.render_button.description == "渲染"


def test_a_zh_run_answers_the_servers_question_in_a_chinese_form(zh) -> None:
    hosted = zh(f"connect people --sampling form --elicitation form -- {sys.executable} "
                "-m mcp_nb.lab")
    inbox = hosted.view.children[-1]
    assert hosted.view.get_title(len(hosted.view.children) - 1) == "请求"
    assert repr(inbox) == "收件箱：0 个等待回答，0 个已回答"
    call = zh("call ask_user message=name? --background")
    _wait_until(lambda: inbox.pending, "the server's request never reached the inbox")
    question = inbox.pending[0]
    buttons = question.children[-1].children
    assert [b.description for b in buttons[:3]] == ["接受", "拒绝", "取消"]
    assert question.status.value == "等待你的回答（发起请求的调用暂停中）"
    buttons[0].click()  # Accept with the required field empty: refused in the card
    assert question.status.value.startswith("未发送：")
    question.form.fields[0].widget.value = "Grace"
    buttons[0].click()
    assert "Grace" in call.result(timeout=10).text
    assert question.status.value == "发出"
    assert repr(inbox) == "收件箱：0 个等待回答，1 个已回答"
    # What went to the server stays as the spec spells it: the action, not its button.
    answer = hosted.session.transcript.filter(direction="send", kind="response")[-1].message
    assert answer["result"]["action"] == "accept"


def test_a_zh_run_shows_a_task_and_its_cancel_in_chinese(zh) -> None:
    from mcp_nb.client.tasks import TaskCancelled

    hosted = zh(f"connect --tasks -- {sys.executable} -m mcp_nb.lab --fixtures conformance")
    call = zh("call slow_compute seconds=60 --background")
    _wait_until(lambda: hosted.session.tasks, "no task was made")
    view = zh("task")
    task_id = view.task.task_id
    assert repr(view) == f"任务 {task_id}：working（路径：working）"
    assert view.status.value.startswith(f"tools/call 任务 {task_id}")
    assert [view.refresh_button.description, view.cancel_button.description] == ["刷新", "取消"]
    with pytest.raises(McpCellError, match="没有任务 'nope'；本会话有 "):
        zh("task nope")
    view.cancel()
    with pytest.raises(TaskCancelled, match=f"tools/call：任务 {task_id} 已取消"):
        call.result(timeout=20)


def test_a_zh_run_diffs_two_sessions_in_chinese(zh) -> None:
    zh(f"connect before -- {sys.executable} -m mcp_nb.lab")
    zh(f"connect after -- {sys.executable} -m mcp_nb.lab --apps")
    for name in ("before", "after"):
        zh(f"use {name}")
        zh("tools")
    found = zh("diff before after")
    text = found.text()
    assert "\n接口：" in text and " 处差异" in text and " 新增" in text
    assert "行为：没有差异（比较了 0 次调用）" in text
    html = found._repr_html_()
    assert "<th>位置</th><th>变化</th><th>条目</th>" in html and "<h4>接口</h4>" in html
    assert '"kind": "added"' in found.to_json()  # data for programs stays as it is


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_zh_run_says_why_a_server_could_not_be_reached_and_english_stays_the_default(
        zh) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/mcp"
    result = zh.shell.run_cell(f"%mcp connect gone {url}")
    assert result.error_in_exec._render_traceback_()[0].startswith(
        f"McpCellError: 无法连接到 {url}：")
    assert "；会话 'gone' 已关闭，它的记录还在：%mcp state gone" in str(result.error_in_exec)
    exited = zh.shell.run_cell(
        f"%mcp connect ends -- {sys.executable} -c 'import sys; sys.exit(3)'")
    assert str(exited.error_in_exec).startswith("[ServerExited] 服务器进程已结束，退出码 3")
    zh("lang en")
    english = zh.shell.run_cell(f"%mcp connect gone {url}")
    assert str(english.error_in_exec).startswith(f"could not connect to {url}: ")
    assert "; session 'gone' is shut down, its record stays" in str(english.error_in_exec)


def test_a_zh_shutdown_tells_its_steps_in_chinese_and_keeps_their_kinds(zh) -> None:
    hosted = zh(f"connect deaf -- {sys.executable} -m mcp_nb.lab --ignore-stdin-close")
    zh("shutdown deaf")
    steps = {e.kind: e.text for e in hosted.session.transcript.filter(direction="event")}
    assert steps["stdin closed"] == "关闭了服务器的 stdin"  # the kind is data: as it was
    assert steps["SIGTERM"].endswith("秒后服务器仍在运行：向它的进程组发送了 SIGTERM")
    assert steps["exited"].startswith("服务器")


def test_help_is_written_in_the_language_of_the_moment_it_is_asked_for(mcp, capsys) -> None:
    mcp("lang zh")
    try:
        capsys.readouterr()
        mcp("--help")
        said = capsys.readouterr().out
        assert "在笔记本里打开并驱动 MCP 客户端会话。" in said
        assert "发送 ping 并显示往返时间" in said
        mcp("app --help")  # a text argparse %-escapes (%%mcp) is found in the catalog too
        said = " ".join(capsys.readouterr().out.split())  # argparse wraps long lines
        assert "先什么也不做：之后每次 %mcp app --next 做宿主的一步" in said
    finally:
        mcp("lang en")
    capsys.readouterr()
    mcp("connect --help")
    assert "fault knob for the bundled lab server" in capsys.readouterr().out


def test_a_zh_timeout_is_told_in_chinese_and_the_wire_keeps_the_specs_words(zh) -> None:
    hosted = zh(f"connect slowly -- {sys.executable} -m mcp_nb.lab")
    result = zh.shell.run_cell("%mcp call slow steps=5 interval=1 --timeout 0.3")
    said = str(result.error_in_exec)
    assert said.startswith("[RequestTimeout] tools/call（id ") and " 秒后超时：" in said
    assert "已发送 notifications/cancelled 并停止等待；迟到的响应会被忽略。" in said
    cancelled = hosted.session.transcript.filter(direction="send",
                                                 method="notifications/cancelled")[-1]
    assert cancelled.message["params"]["reason"].startswith("timed out after")  # for a program


def test_a_zh_checkup_reports_titles_fixes_and_details_in_chinese_and_keeps_the_data_english(
        ) -> None:
    """Titles, fixes and observations follow the kit's language; the JSON's rule, id and
    outcome, and the spec's quote, stay English; English is unchanged afterwards."""
    import json

    import anyio

    from mcp_nb.check import html_report, run_checkup, text_summary, to_json
    from mcp_nb.client import lab_command

    def checkup(language: str):
        i18n.set_language(language)
        return anyio.run(lambda: run_checkup(lab_command("--reject-version"), timeout=3.0))

    try:
        report = checkup("zh")
        summary, page = text_summary(report), html_report(report)
        assert "fix: 客户端提出的版本未知时，以你支持的最新版本回答 initialize" in summary
        assert ("FAIL lifecycle.unknown-version [MUST] 提出 2000-01-01：回答了错误 -32602，"
                "而不是它支持的版本") in summary
        assert "提出未知版本时得到另一个版本作答" in page
        data = json.loads(to_json(report))
        failed = next(r for r in data["results"] if r["id"] == "lifecycle.unknown-version")
        assert failed["outcome"] == "fail"
        assert failed["title"] == "an unknown version offered gets a counter-offer"
        assert failed["fix"].startswith("When the offered version is unknown, answer")
        assert failed["rule"]["quote"].startswith("Otherwise, the server MUST respond")
    finally:
        english = checkup("en")
    summary = text_summary(english)
    assert ("FAIL lifecycle.unknown-version [MUST] offered 2000-01-01: answered error -32602 "
            "instead of a version it supports") in summary
    assert ("     fix: When the offered version is unknown, answer initialize with your latest "
            "supported version instead of an error.") in summary
    assert "an unknown version offered gets a counter-offer" in html_report(english)
    assert not any("\u4e00" <= c <= "\u9fff" for c in summary + html_report(english))


def test_an_empty_message_stays_empty_in_chinese(chinese) -> None:
    # gettext answers "" with the catalog's header, which names the Babel that compiled it:
    # chapter 11's zh edition once showed that header as a table heading (and broke the day
    # Babel released).
    assert i18n._("") == ""
    assert i18n._("Lifecycle") == "生命周期"
