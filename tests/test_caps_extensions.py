"""``%mcp caps`` names each declared extension with its settings, on both sides.

Extensions are declared under ``capabilities.extensions`` (identifier → settings object, ``{}``
meaning no settings); the side that declares one the other lacks falls back to the core
protocol. The table shows who declared what and with which settings; the text repr (what
nbval compares) names them too, not only the word "extensions".
"""

from __future__ import annotations

from typing import Any

from mcp_nb.notebook import render
from mcp_nb.protocol.lifecycle import State
from mcp_nb.protocol.negotiation import Capabilities

UI = "io.modelcontextprotocol/ui"
SETTINGS = {"mimeTypes": ["text/html;profile=mcp-app"]}


def test_rows_name_each_extension_with_each_sides_settings() -> None:
    caps = Capabilities(client={"extensions": {UI: SETTINGS, "x.example/a": {}}},
                        server={"tools": {}, "extensions": {"x.example/a": {"v": 2},
                                                            "x.example/b": {}}})
    assert caps.extensions() == [
        {"extension": UI, "client": SETTINGS, "server": None},
        {"extension": "x.example/a", "client": {}, "server": {"v": 2}},
        {"extension": "x.example/b", "client": None, "server": {}},
    ]
    assert Capabilities(client={"extensions": "sloppy"}, server={}).extensions() == []


def test_the_table_shows_both_sides_and_who_may_use_it() -> None:
    caps = Capabilities(client={"extensions": {UI: SETTINGS, "x.example/a": {}}},
                        server={"extensions": {"x.example/a": {"v": 2}}})
    page = render.capabilities_html(caps, None, State.OPERATING)
    ui_row = page.split(f"<code>{UI}</code>")[1].split("</tr>")[0]
    assert '<span class="yes">yes</span></td><td><span class="no">no</span>' in ui_row
    assert "client only" in ui_row
    assert "client: <code>{&quot;mimeTypes&quot;: [&quot;text/html;profile=mcp-app&quot;]}" \
           "</code>" in ui_row
    both = page.split("<code>x.example/a</code>")[1].split("</tr>")[0]
    assert both.count('<span class="yes">yes</span>') == 3  # client, server, usable now
    assert "client: <code>{}</code>; server: <code>{&quot;v&quot;: 2}</code>" in both
    before = render.capabilities_html(caps, None, State.INITIALIZING)
    assert "client only" not in before  # nothing is usable before operation


def test_what_a_server_names_is_escaped() -> None:
    caps = Capabilities(client={}, server={"extensions": {"<b>x</b>": {"<i>": "</td>"}}})
    page = render.capabilities_html(caps, None, State.OPERATING)
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
    assert "</td>\"" not in page and "<i>" not in page


def test_the_text_names_extensions_with_their_settings() -> None:
    assert render.declared_text({"sampling": {}, "extensions": {UI: SETTINGS}}) == (
        'extensions: io.modelcontextprotocol/ui {"mimeTypes": ["text/html;profile=mcp-app"]}'
        ", sampling")
    assert render.declared_text({"extensions": {}}) == "extensions"
    assert render.declared_text({}) == ""


def test_caps_in_the_magics_names_the_apps_extension(mcp: Any) -> None:
    mcp("connect --lab=--apps")
    caps = mcp("caps")
    assert repr(caps).startswith(
        "Capabilities: server [completions, logging, prompts, resources, tools]; client "
        '[extensions: io.modelcontextprotocol/ui {"mimeTypes": ["text/html;profile=mcp-app"]}];')
    assert f"extension <code>{UI}</code>" in caps.value
