"""The stateless era in the notebook layer: ``%mcp connect --era``, the views, escaping."""

from __future__ import annotations

import sys

import pytest
from http_support import PEERS

from mcp_nb.client.session import EraStep
from mcp_nb.notebook import render
from mcp_nb.protocol import State
from mcp_nb.protocol.versions import Era

pytest.importorskip("mcp.server.mcpserver", reason="the official MCP SDK (mcp>=2) is needed")
pytestmark = pytest.mark.timeout(60)

SDK = f"{sys.executable} {PEERS / 'sdk_server.py'}"


def test_connect_stateless_shows_the_per_request_model(mcp) -> None:
    hosted = mcp(f"connect sdk --era stateless --log-level info -- {SDK}")
    assert hosted.era is Era.STATELESS and hosted.state is State.OPERATING
    view = hosted.view
    assert repr(view) == ("McpSession 'sdk': Operating, stateless era 2026-07-28, 2 messages, "
                          "0 findings")
    assert repr(view.state_diagram) == (
        "StateDiagram: stateless era 2026-07-28, Operating; no handshake states; every request "
        "carries protocolVersion, clientCapabilities, clientInfo, logLevel")
    html = view.state_diagram.value
    assert "io.modelcontextprotocol/protocolVersion" in html and "&quot;info&quot;" in html
    assert "Initializing" not in html  # no handshake states in this era's view
    assert repr(view.handshake) == (
        "Discover: server/discover #1 → supported 2026-07-28 (no handshake)")
    assert repr(view.capabilities).startswith("Capabilities (server/discover): server [")
    assert "the server supports <b>2026-07-28</b>" in view.capabilities.value
    assert view.get_title(1) == "Discover"
    result = mcp("call add a=2 b=40")
    assert result.text == "42"
    sent = [e for e in hosted.transcript.entries if e.direction == "send"]
    assert sent[-1].message["params"]["_meta"]["io.modelcontextprotocol/logLevel"] == "info"
    # The handshake-era commands say what replaced them instead of failing obscurely.
    with pytest.raises(Exception, match=r"does not exist in the stateless era.*ping was removed"):
        mcp("ping")
    mcp("log-level debug")
    assert hosted.session.log_level == "debug"
    assert mcp("discover").supportedVersions == ["2026-07-28"]


def test_connect_auto_shows_how_the_era_was_chosen(mcp) -> None:
    hosted = mcp(f"connect sdk --era auto -- {SDK}")
    assert hosted.era is Era.STATELESS
    text = repr(hosted.view.state_diagram)
    assert "stateless era" in text
    steps = render.era_steps_html(hosted.era_steps)
    assert [s.kind for s in hosted.era_steps] == ["probe", "verdict", "adopt"]
    assert "How the era was chosen" in steps and "server/discover at 2026-07-28" in steps


def test_handshake_default_is_unchanged(mcp) -> None:
    hosted = mcp(f"connect sdk -- {SDK}")
    assert hosted.era is Era.HANDSHAKE and hosted.era_steps == []
    assert repr(hosted.view.state_diagram) == (
        "StateDiagram: Operating (path: Uninitialized → Initializing → Initialized → Operating)")
    with pytest.raises(Exception, match="--step walks through the handshake"):
        mcp(f"connect other --step --era stateless -- {SDK}")


def test_era_views_escape_what_the_server_said() -> None:
    hostile = '<img src=x onerror="alert(1)">\u202e'
    html = render.era_steps_html([EraStep(0.1, "verdict", f"handshake: error -32601 ({hostile})")])
    assert "<img" not in html and "&lt;img" in html and "\\u202e" in html
    model = render.stateless_model_html("2026-07-28", State.OPERATING,
                                        {"io.modelcontextprotocol/clientInfo": {"name": hostile}},
                                        {"name": hostile, "version": "<b>"}, [])
    assert "<img" not in model and "<b>&" not in model
