"""The kit speaks the notebook's language: every message has its Chinese; %mcp lang zh uses it."""

# ruff: noqa: RUF001  (Chinese punctuation in the expected texts is meant)

from __future__ import annotations

import os
import subprocess
import sys
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
