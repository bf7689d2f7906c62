"""The client's stateless era against the lab server in each ``--era``, faults included."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from http_support import events
from http_support import lab_server as http_lab
from http_support import lab_session as http_lab_session
from support import lab_session, sent, until_in_flight

from mcp_nb.client import (
    EraProbeFailed,
    InputRequestFailed,
    RequestCancelled,
    RequestTimeout,
    ServerError,
)
from mcp_nb.protocol import Era, State, UnsupportedProtocolVersionError
from mcp_nb.protocol.errors import MISSING_REQUIRED_CLIENT_CAPABILITY

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}


def handlers() -> dict[str, Any]:
    return {
        "on_elicitation": lambda params: {"action": "accept", "content": {"answer": "42"}},
        "on_sampling": lambda params: SAMPLED,
        "on_roots": lambda params: {"roots": [{"uri": "file:///srv/data"}]},
    }


def kinds(session: Any) -> list[str]:
    return [step.kind for step in session.era_steps]


async def test_dual_era_lab_in_the_stateless_era() -> None:
    async with lab_session(connect=False, log_level="info", **handlers()) as session:
        await session.connect(era="stateless")
        assert session.era is Era.STATELESS and session.state is State.OPERATING
        assert session.server_info is not None and session.server_info.name == "mcp_nb-lab"
        assert (await session.call_tool("add", {"a": 1, "b": 2})).text == "3"
        assert "content: {\"answer\": \"42\"}" in (
            await session.call_tool("ask_user", {"message": "?"})).text
        assert (await session.call_tool("ask_llm", {"prompt": "capital?"})).text == "Paris"
        assert (await session.call_tool("list_roots", {})).text == "file:///srv/data"
        # Per-request log level: this session asked for info on every request.
        assert [m["data"] for m in session.log_messages][:1] == ["add called"]
        subscription = await session.listen(resource_uris=["lab://counter"])
        assert subscription.acknowledged == {"resourceSubscriptions": ["lab://counter"]}
        await session.call_tool("bump", {})
        assert [n["method"] for n in subscription.notifications] == [
            "notifications/resources/updated"]
        await session.unlisten(subscription)
        assert subscription.ended == "the client ended the subscription"
    assert session.findings == []
    cancelled = sent(session, "notifications/cancelled")
    assert cancelled[-1]["params"]["requestId"] == subscription.request_id
    assert "initialize" not in {e.method for e in session.transcript.entries}
    # Each input round is a new request with a new id.
    calls = [m for m in sent(session, "tools/call") if m["params"]["name"] == "ask_llm"]
    assert len(calls) == 2 and calls[0]["id"] != calls[1]["id"]
    assert calls[1]["params"]["inputResponses"] == {"sampling-1": SAMPLED}


async def test_an_undeclared_capability_is_refused_by_the_server() -> None:
    async with lab_session(connect=False) as session:
        await session.connect(era="stateless")
        with pytest.raises(ServerError) as caught:
            await session.call_tool("ask_user", {"message": "?"})
    assert caught.value.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert "elicitation" in str(caught.value)


async def test_handshake_lab_auto_falls_back_and_stateless_refuses() -> None:
    async with lab_session("--era=handshake", connect=False) as session:
        await session.connect(era="auto")
        assert session.era is Era.HANDSHAKE and kinds(session) == ["probe", "verdict", "fallback"]
        assert (await session.call_tool("add", {"a": 2, "b": 2})).text == "4"
    assert session.findings == []
    async with lab_session("--era=handshake", connect=False) as session:
        with pytest.raises(EraProbeFailed, match="does not speak the stateless era"):
            await session.connect(era="stateless")
    assert session.state is State.TERMINATED


async def test_stateless_lab_refuses_the_handshake_and_says_what_to_do() -> None:
    async with lab_session("--era=stateless", connect=False) as session:
        with pytest.raises(UnsupportedProtocolVersionError, match="--era auto"):
            await session.connect()
    async with lab_session("--era=stateless", connect=False) as session:
        await session.connect(era="auto")
        assert session.era is Era.STATELESS and kinds(session) == ["probe", "verdict", "adopt"]


async def test_a_silent_probe_counts_as_a_handshake_era_server() -> None:
    async with lab_session("--era=handshake", "--never-answer=server/discover", connect=False,
                           probe_timeout=0.3) as session:
        await session.connect(era="auto")
        assert session.era is Era.HANDSHAKE
        assert "no answer to server/discover" in session.era_steps[1].detail
    # Nothing but initialize may reach a handshake-era server first: no cancellation.
    assert sent(session, "notifications/cancelled") == []


async def test_within_bounds_the_probe_and_its_fallback_together() -> None:
    # A server silent to both: the fallback initialize gets what the probe left of the budget
    # (its own timeout, 30 s, would be the wait without one).
    async with lab_session("--era=handshake", "--never-answer=server/discover",
                           "--never-answer=initialize", connect=False, probe_timeout=0.4,
                           timeout=30) as session:
        with pytest.raises(RequestTimeout) as raised:
            await session.connect(era="auto", within=0.6)
        # .timeout is the time waited, which load can stretch past the 0.2 s left of the
        # budget: what tells the budget from the request's own 30 s is that it is not 30 s.
        assert raised.value.method == "initialize" and raised.value.timeout < 30
        assert kinds(session) == ["probe", "verdict", "fallback"]
    # A server that only ignores the probe is still reached within the budget.
    async with lab_session("--era=handshake", "--never-answer=server/discover", connect=False,
                           probe_timeout=0.4, timeout=30) as session:
        await session.connect(era="auto", within=30.4)
        assert session.era is Era.HANDSHAKE and session.state is State.OPERATING


async def test_versions_are_renegotiated_from_the_servers_list() -> None:
    async with lab_session("--era=stateless", "--stateless-versions=2099-01-01", connect=False
                           ) as session:
        with pytest.raises(EraProbeFailed, match="none of which this client speaks"):
            await session.connect(era="auto")
    async with lab_session(connect=False) as session:
        await session.connect(era="stateless")
        session.stateless_version = "2099-01-01"  # as if the client preferred a newer one
        assert (await session.call_tool("add", {"a": 1, "b": 1})).text == "2"
        assert session.stateless_version == "2026-07-28"
        assert kinds(session)[-1] == "version"
    versions = [m["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
                for m in sent(session, "tools/call")]
    assert versions == ["2099-01-01", "2026-07-28"]


async def test_faulty_results_become_findings_or_clear_errors() -> None:
    async with lab_session("--omit-result-type", connect=False) as session:
        await session.connect(era="stateless")
        assert (await session.call_tool("add", {"a": 1, "b": 2})).text == "3"
    assert [f.rule.id for f in session.findings] == ["result-type-missing"]
    async with lab_session("--input-rounds=3", connect=False, max_input_rounds=2,
                           **handlers()) as session:
        await session.connect(era="stateless")
        with pytest.raises(InputRequestFailed, match="after 2 rounds"):
            await session.call_tool("ask_user", {"message": "?"})
    async with lab_session("--input-rounds=3", connect=False, **handlers()) as session:
        await session.connect(era="stateless")
        assert (await session.call_tool("ask_user", {"message": "?"})).text.count("42") == 3
    rounds = [e for e in session.transcript.entries if e.kind == "input required"]
    assert len(rounds) == 3


async def test_removed_methods_are_refused_unless_forced() -> None:
    async with lab_session(connect=False) as session:
        await session.connect(era="stateless")
        for call in (session.ping(), session.set_logging_level("debug"),
                     session.subscribe_resource("lab://counter")):
            with pytest.raises(Exception, match="does not exist in the stateless era"):
                await call
        with pytest.raises(ServerError, match="-32601"):
            await session.request("ping", force=True)
    assert [f.rule.id for f in session.findings] == ["removed-in-stateless-era"]


async def test_stateless_over_http_cancels_by_closing_the_stream() -> None:
    with http_lab("--era=stateless") as server:
        async with http_lab_session(server) as session:
            await session.connect(era="auto")
            assert session.era is Era.STATELESS
            outcome: list[BaseException] = []

            async def slow() -> None:
                try:
                    await session.call_tool("slow", {"steps": 100, "interval": 0.05})
                except RequestCancelled as exc:
                    outcome.append(exc)

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow)
                await until_in_flight(session)
                await session.cancel(reason="enough")
            assert (await session.call_tool("add", {"a": 1, "b": 2})).text == "3"
    assert isinstance(outcome[0], RequestCancelled)
    posts = [line for line in events(session, "http") if line.startswith("POST")]
    assert not any("notifications/cancelled" in line for line in posts)
    assert any("closed the response of request #2" in line for line in events(session, "cancelled"))
    assert not any(line.startswith(("GET", "DELETE")) for line in events(session, "http"))
    assert session.findings == []
