"""%mcp over HTTP: URLs, transports, headers and url entries in mcpServers files."""

from __future__ import annotations

import json

import pytest
from http_support import lab_server

from mcp_nb.notebook.magics import McpCellError
from mcp_nb.protocol import State


def test_connect_to_a_url_and_shut_down_with_delete(mcp) -> None:
    with lab_server() as server:
        hosted = mcp(f"connect web {server.ready_text}")
        assert hosted.session.state is State.OPERATING
        assert hosted.session.transport.kind == "streamable-http"
        assert mcp("call add a=2 b=3").text == "5"
        mcp("shutdown")
        texts = [e.text or "" for e in hosted.session.transcript.events()]
        assert any(text.startswith("DELETE /mcp") for text in texts)
        assert hosted.session.state is State.TERMINATED


def test_a_bare_url_names_the_session_after_its_host(mcp) -> None:
    with lab_server() as server:
        hosted = mcp(f"connect {server.ready_text}")
        assert hosted.name == "127.0.0.1"


def test_auto_falls_back_to_legacy_sse_and_sse_can_be_forced(mcp) -> None:
    with lab_server("--sse") as server:
        base = server.ready_text.removesuffix("/mcp")
        # The legacy server has no Streamable HTTP endpoint at /sse: auto falls back.
        hosted = mcp(f"connect old {base}/sse")
        assert hosted.session.transport.kind == "sse"
        kinds = [e.kind for e in hosted.session.transcript.events()]
        assert "fallback" in kinds
        forced = mcp(f"connect forced {base}/sse --transport sse")
        assert "fallback" not in [e.kind for e in forced.session.transcript.events()]
        assert forced.session.state is State.OPERATING


def test_headers_are_sent_and_redacted(mcp) -> None:
    with lab_server("--require-header", "Authorization: Bearer s3cret") as server:
        with pytest.raises(McpCellError, match="401"):
            mcp(f"connect denied {server.ready_text}")
        hosted = mcp(f"connect allowed {server.ready_text} --header Authorization='Bearer s3cret'")
        assert hosted.session.state is State.OPERATING
        everything = json.dumps([e.to_dict() for e in hosted.session.transcript], default=str)
        assert "s3cret" not in everything and "<redacted>" in everything


def test_url_entries_in_an_mcpservers_file(mcp, tmp_path) -> None:
    with lab_server("--require-header", "X-Lab: yes") as server:
        config = tmp_path / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {
            "remote": {"url": server.ready_text, "headers": {"X-Lab": "yes"}}}}))
        hosted = mcp(f"connect remote --config {config}")
        assert hosted.session.state is State.OPERATING
        assert hosted.session.transport.kind == "streamable-http"


def test_http_usage_errors(mcp) -> None:
    with pytest.raises(McpCellError, match="no command after its URL"):
        mcp("connect x http://127.0.0.1:9/mcp extra")
    with pytest.raises(McpCellError, match="HTTP servers only"):
        mcp("connect x --header A=b")
