"""The session against the well-behaved lab server: handshake, step-through, operation."""

from __future__ import annotations

import itertools

import anyio
import pytest
from support import lab_session, rules, sent

from mcp_nb.client import ClientSession, SessionClosed, Transcript, lab_command
from mcp_nb.protocol import LATEST_VERSION, State
from mcp_nb.protocol.errors import CapabilityError, LifecycleError
from mcp_nb.transports import StdioTransport

pytestmark = pytest.mark.anyio

FULL_PATH = [State.UNINITIALIZED, State.INITIALIZING, State.INITIALIZED, State.OPERATING,
             State.SHUTTING_DOWN, State.TERMINATED]


async def test_connect_walks_the_lifecycle_and_shuts_down_gracefully() -> None:
    causes = []
    async with lab_session(connect=False) as session:
        session.on_transition(lambda record: causes.append((record.source, record.target)))
        result = await session.connect()
        assert result.protocolVersion == LATEST_VERSION
        assert result.serverInfo.name == "mcp_nb-lab"
        assert session.version_outcome is not None
        assert session.version_outcome.outcome == "agreed"
        assert session.state is State.OPERATING
    assert session.lifecycle.path == FULL_PATH
    assert causes == list(itertools.pairwise(FULL_PATH))
    times = [r.time for r in session.lifecycle.history]
    assert times == sorted(times)
    kinds = [e.kind for e in session.transcript.events()]
    # A well-behaved server leaves when its stdin closes: no signal is needed.
    assert "stdin closed" in kinds
    assert "SIGTERM" not in kinds and "SIGKILL" not in kinds
    assert session.transport_events[-1].kind == "exited"
    assert session.transport_events[-1].data["returncode"] == 0
    assert session.findings == []


async def test_request_ids_count_from_one_and_transcript_records_states() -> None:
    async with lab_session() as session:
        await session.ping()
        await session.list_tools()
    ids = [e.id for e in session.transcript.filter(direction="send", kind="request")]
    assert ids == [1, 2, 3]
    first = session.transcript.filter(direction="send", method="initialize")[0]
    assert first.state == "Initializing"
    assert first.size > 0 and first.time >= 0
    initialized = session.transcript.filter(method="notifications/initialized")[0]
    assert initialized.state == "Initialized"
    ping = session.transcript.filter(direction="send", method="ping")[0]
    assert ping.state == "Operating"


async def test_step_through_guards_each_state() -> None:
    async with lab_session(connect=False) as session:
        assert session.state is State.UNINITIALIZED
        with pytest.raises(LifecycleError, match="send initialize first"):
            await session.list_tools()
        await session.initialize()
        assert session.state is State.INITIALIZED
        with pytest.raises(LifecycleError, match="send notifications/initialized first"):
            await session.list_tools()
        assert await session.ping() > 0  # ping is always allowed
        await session.send_initialized()
        assert session.state is State.OPERATING
        with pytest.raises(LifecycleError, match="initialized once"):
            await session.initialize()
        # Nothing refused was sent.
        assert [m["method"] for m in sent(session, "tools/list")] == []


async def test_a_refusal_carries_its_rule_and_override_as_data() -> None:
    async with lab_session(connect=False) as session:
        with pytest.raises(LifecycleError) as info:
            await session.list_tools()
        refused = info.value
        assert (refused.rule, refused.override) == ("client-message-before-initialize", "force")
        assert str(refused) == ("cannot send 'tools/list' while Uninitialized: send initialize "
                                "first (pass force=True to send it anyway)")
        assert refused.worded(clause="-", aside=" [add --force]") == (
            "cannot send 'tools/list' while Uninitialized: send initialize first [add --force]")
    with pytest.raises(SessionClosed) as info:
        await session.list_tools()
    # Refused too, but nothing overrides it: its message is the same in any spelling.
    assert (info.value.rule, info.value.override) == ("message-after-shutdown", None)
    assert info.value.worded(clause="-", aside="-") == str(info.value)


async def test_force_sends_a_refused_request_and_records_a_finding() -> None:
    async with lab_session(connect=False) as session:
        await session.initialize()
        result = await session.request("tools/list", force=True)
        assert [t["name"] for t in result["tools"]][:2] == ["echo", "add"]
        assert rules(session) == ["client-request-before-initialized"]
        assert session.findings[0].side == "client"


async def test_a_new_lifecycle_needs_a_new_session() -> None:
    async with lab_session() as session:
        pass
    assert session.state is State.TERMINATED
    with pytest.raises(SessionClosed, match="Terminated"):
        await session.ping()
    with pytest.raises(SessionClosed, match="new ClientSession"):
        await session.open()


async def test_tools_resources_prompts_completion_and_logging() -> None:
    updates = []
    async with lab_session() as session:
        session.on_notification(lambda n: updates.append(n.method))
        tools = {t.name: t for t in await session.list_tools()}
        assert {"echo", "add", "slow", "ask_llm", "ask_user", "list_roots", "bump"} <= set(tools)
        assert tools["add"].inputSchema["type"] == "object"
        added = await session.call_tool("add", {"a": 2, "b": 40})
        assert added.text == "42" and added.isError is False
        assert added.structuredContent == {"sum": 42}
        assert (await session.call_tool("echo", {"text": "hé\nllo"})).text == "hé\nllo"

        uris = [r.uri for r in await session.list_resources()]
        assert uris == ["lab://static/hello.txt", "lab://counter"]
        hello = await session.read_resource("lab://static/hello.txt")
        assert hello[0]["text"] == "Hello from the mcp_nb lab server.\n"
        templates = await session.list_resource_templates()
        assert templates[0].uriTemplate == "lab://echo/{text}"

        await session.subscribe_resource("lab://counter")
        await session.call_tool("bump")
        with anyio.fail_after(5):
            while "notifications/resources/updated" not in updates:
                await anyio.sleep(0.01)

        prompts = await session.list_prompts()
        assert prompts[0].name == "greet"
        greeting = await session.get_prompt("greet", {"name": "Ada"})
        assert "Ada" in greeting["messages"][0]["content"]["text"]
        values = await session.complete({"type": "ref/prompt", "name": "greet"}, "style", "f")
        assert values == ["formal"]

        await session.set_logging_level("debug")
        before = len(session.log_messages)
        await session.call_tool("echo", {"text": "x"})
        with anyio.fail_after(5):
            while len(session.log_messages) == before:
                await anyio.sleep(0.01)
        assert session.log_messages[-1]["level"] in {"debug", "info"}
    assert session.findings == []


async def test_server_error_response_is_raised_with_code_and_message() -> None:
    from mcp_nb.client import ServerError

    async with lab_session() as session:
        with pytest.raises(ServerError) as info:
            await session.call_tool("no_such_tool")
        assert info.value.code == -32602
        assert "no_such_tool" in info.value.message
        with pytest.raises(ServerError) as info:
            await session.request("no/such/method")
        assert info.value.code == -32601
        # The session is still usable after errors.
        assert (await session.call_tool("echo", {"text": "ok"})).text == "ok"


async def test_transcript_exports_to_jsonl_and_loads_back(tmp_path) -> None:
    async with lab_session() as session:
        await session.call_tool("add", {"a": 1, "b": 2})
    path = tmp_path / "transcript.jsonl"
    count = session.transcript.export_jsonl(path)
    assert count == len(session.transcript) > 8
    loaded = Transcript.load_jsonl(path)
    assert [e.label for e in loaded] == [e.label for e in session.transcript]
    assert loaded[1].message == session.transcript[1].message
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"seq": 0}\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl:1"):
        Transcript.load_jsonl(bad)


async def test_capability_the_server_did_not_declare_is_refused_client_side() -> None:
    async with lab_session("--omit-capability", "prompts") as session:
        assert "prompts" not in session.capabilities.server
        with pytest.raises(CapabilityError, match=r"'prompts'.*force=True"):
            await session.list_prompts()
        assert sent(session, "prompts/list") == []
        prompts = await session.request("prompts/list", force=True)
        assert prompts["prompts"][0]["name"] == "greet"
        assert rules(session) == ["capability-not-negotiated"]


async def test_shutdown_is_idempotent_and_safe_before_initialize() -> None:
    session = ClientSession(StdioTransport(lab_command()))
    await session.shutdown()  # never opened: nothing to do
    async with session:
        await session.shutdown()
        await session.shutdown()
        assert session.state is State.TERMINATED
    assert session.lifecycle.path == [State.UNINITIALIZED, State.SHUTTING_DOWN,
                                      State.TERMINATED]
