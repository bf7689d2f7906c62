"""%mcp connect URL --auth, %mcp auth (state, --logout) and the flow walked one cell per step."""

from __future__ import annotations

import json

import pytest
from http_support import lab_server

from mcp_nb.notebook.magics import McpCellError
from mcp_nb.protocol import State


def test_connect_with_auth_and_show_the_state_never_the_token(mcp, capsys) -> None:
    with lab_server("--auth") as server:
        with pytest.raises(McpCellError, match="401"):
            mcp(f"connect denied {server.ready_text}")
        hosted = mcp(f"connect web {server.ready_text} --auth --auth-callback auto-approved")
        assert hosted.session.state is State.OPERATING
        assert mcp("call add a=2 b=3").text == "5"
        printed = capsys.readouterr().out
        assert "auth resource metadata: GET" in printed and "auth token: POST" in printed
        state = mcp("auth")
        shown = repr(state) + state._repr_html_()
        assert "callback: auto-approved" in repr(state)
        assert "scope: mcp" in repr(state)
        from mcp_nb.notebook.magics.auth import oauth_of
        token = oauth_of(hosted).held()
        assert token is not None
        everything = shown + printed + json.dumps([e.to_dict() for e in hosted.session.transcript],
                                        default=str)
        assert token.access_token not in everything
        steps = mcp("auth --steps")
        assert [step.name for step in steps][-1] == "token"
        assert token.access_token not in repr(steps) + steps._repr_html_()
        mcp("auth --logout")
        assert oauth_of(hosted).held() is None
        assert mcp("call add a=1 b=1").text == "2"  # authorized again on the next 401


def test_auth_settings_from_an_mcpservers_entry(mcp, tmp_path) -> None:
    with lab_server("--auth") as server:
        config = tmp_path / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"remote": {
            "url": server.ready_text,
            "auth": {"client_id": "lab-public", "callback": "auto-approved"}}}}))
        hosted = mcp(f"connect remote --config {config}")
        assert hosted.session.state is State.OPERATING
        assert "client_id: lab-public" in repr(mcp("auth"))


def test_auth_is_for_http_only(mcp) -> None:
    with pytest.raises(McpCellError, match="HTTP"):
        mcp("connect --auth")


def test_walk_the_flow_one_cell_per_step_then_connect(mcp, capsys) -> None:
    with lab_server("--auth") as server:
        mcp(f"auth --step {server.ready_text} --auth-callback auto-approved")
        seen: list[str] = []
        for _ in range(20):
            steps = mcp("auth --next")
            seen += [step.name for step in steps]
            if "token held" in capsys.readouterr().out:
                break
        assert seen[-1] == "token" and "register" in seen and "callback" in seen
        with pytest.raises(McpCellError, match="no flow being walked"):
            mcp("auth --next")
        hosted = mcp(f"connect walked {server.ready_text} --auth")
        assert hosted.session.state is State.OPERATING
        assert "401" not in json.dumps([e.to_dict() for e in hosted.session.transcript],
                                       default=str)


def test_a_refusal_in_a_walk_names_the_rule(mcp) -> None:
    with lab_server("--auth", "--auth-fault", "wrong-issuer") as server:
        mcp(f"auth --step {server.ready_text} --auth-callback auto-approved")
        with pytest.raises(McpCellError, match=r"RFC 8414 §3\.3"):
            for _ in range(10):
                mcp("auth --next")
