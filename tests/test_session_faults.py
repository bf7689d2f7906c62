"""Every lab-server fault knob, seen from the client: the error, the state, the transcript.

Timing assertions here are classes (e.g. "SIGKILL came after both grace periods,
and not much later"), not benchmarks.
"""

from __future__ import annotations

import sys

import anyio
import pytest
from support import event_kinds, lab_session, rules, sent, until_in_flight

from mcp_nb.client import (
    ClientSession,
    RequestCancelled,
    RequestTimeout,
    ServerError,
    ServerExited,
)
from mcp_nb.protocol import State, UnsupportedVersionError
from mcp_nb.protocol.errors import LifecycleError
from mcp_nb.transports import StdioTransport

pytestmark = pytest.mark.anyio

# Generous upper slack for a loaded 2-core CI machine; lower bounds are exact.
SLACK = 1.5


# -- version negotiation -----------------------------------------------------------------

async def test_answer_with_unknown_version_disconnects_and_names_all_versions() -> None:
    async with lab_session("--answer-version", "1999-01-01", connect=False) as session:
        with pytest.raises(UnsupportedVersionError) as info:
            await session.initialize()
        message = str(info.value)
        assert "'2025-11-25'" in message and "'1999-01-01'" in message
        assert "2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25" in message
        assert session.state is State.TERMINATED
    assert session.lifecycle.path == [State.UNINITIALIZED, State.INITIALIZING,
                                      State.SHUTTING_DOWN, State.TERMINATED]
    assert rules(session) == ["unsupported-version"]
    assert session.version_outcome is not None
    assert session.version_outcome.outcome == "unsupported"


async def test_counter_offer_of_a_supported_version_governs_the_session() -> None:
    async with lab_session("--supported-versions", "2025-03-26") as session:
        assert session.negotiated_version == "2025-03-26"
        assert session.version_outcome is not None
        assert session.version_outcome.outcome == "counter-offer accepted"
        assert sent(session, "initialize")[0]["params"]["protocolVersion"] == "2025-11-25"


async def test_learner_can_offer_any_string() -> None:
    async with lab_session(connect=False) as session:
        result = await session.initialize("1.0.0")
        assert result.protocolVersion == "2025-11-25"
        assert session.version_outcome is not None
        assert (session.version_outcome.offered, session.version_outcome.outcome) == (
            "1.0.0", "counter-offer accepted")


async def test_minus_32602_rejection_is_surfaced_with_both_sides_versions() -> None:
    async with lab_session("--reject-version", connect=False) as session:
        with pytest.raises(UnsupportedVersionError) as info:
            await session.initialize("1.0.0")
        assert info.value.server_supported == ["2024-11-05", "2025-03-26", "2025-06-18",
                                               "2025-11-25"]
        assert "'1.0.0'" in str(info.value) and "-32602" in str(info.value)
        assert session.state is State.TERMINATED


# -- timeouts, cancellation, progress ---------------------------------------------------------

async def test_timeout_sends_cancelled_and_raises_minus_32001() -> None:
    async with lab_session("--delay", "0.6") as session:
        start = anyio.current_time()
        with pytest.raises(RequestTimeout) as info:
            await session.ping(timeout=0.2)
        waited = anyio.current_time() - start
        assert 0.2 <= waited < 0.2 + SLACK
        assert info.value.code == -32001
        assert "notifications/cancelled" in str(info.value)
        cancels = sent(session, "notifications/cancelled")
        assert cancels[0]["params"]["requestId"] == info.value.request_id
        assert session.state is State.OPERATING


async def test_late_response_after_timeout_is_recorded_and_ignored() -> None:
    async with lab_session("--delay", "0.4", "--ignore-cancel") as session:
        with pytest.raises(RequestTimeout):
            await session.call_tool("echo", {"text": "late"}, timeout=0.1)
        with anyio.fail_after(5):
            while not (late := [e for e in session.transcript if e.note == "late, ignored"]):
                await anyio.sleep(0.02)
        assert len(late) == 1 and late[0].id == 2
        assert session.findings == []
        assert (await session.call_tool("echo", {"text": "still fine"}, timeout=5)).text == (
            "still fine")


async def test_explicit_cancel_sends_notification_and_the_caller_raises() -> None:
    async with lab_session() as session:
        outcome: list[BaseException] = []

        async def call_slow() -> None:
            try:
                await session.call_tool("slow", {"steps": 50, "interval": 0.1})
            except RequestCancelled as exc:
                outcome.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(call_slow)
            await until_in_flight(session)
            cancelled_id = await session.cancel(reason="changed my mind")
        assert cancelled_id == 2
        assert isinstance(outcome[0], RequestCancelled)
        assert outcome[0].reason == "changed my mind"
        assert sent(session, "notifications/cancelled")[0]["params"] == {
            "requestId": 2, "reason": "changed my mind"}
        with pytest.raises(ValueError, match="not in flight any more"):
            await session.cancel(2)
        with pytest.raises(ValueError, match="no request with id 99"):
            await session.cancel(99)
        await anyio.sleep(0.3)
        # A well-behaved server never answers a cancelled request.
        assert not [e for e in session.transcript if e.note == "late, ignored"]


async def test_cancelled_caller_task_also_sends_cancelled() -> None:
    async with lab_session() as session:
        with anyio.move_on_after(0.3):
            await session.call_tool("slow", {"steps": 50, "interval": 0.1})
        cancels = sent(session, "notifications/cancelled")
        assert cancels[0]["params"] == {"requestId": 2, "reason": "the caller was cancelled"}
        assert session.in_flight == []
        assert await session.ping() > 0


async def test_ignored_cancellation_produces_a_late_response() -> None:
    async with lab_session("--ignore-cancel") as session:
        with pytest.raises(RequestTimeout):
            await session.call_tool("slow", {"steps": 3, "interval": 0.1}, timeout=0.1)
        with anyio.fail_after(5):
            while not [e for e in session.transcript if e.note == "late, ignored"]:
                await anyio.sleep(0.02)


async def test_progress_reaches_the_callback_in_order() -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    async with lab_session() as session:
        result = await session.call_tool(
            "slow", {"steps": 4, "interval": 0.01},
            on_progress=lambda p, total, message: seen.append((p, total, message)))
        assert result.text == "done after 4 steps"
        request = sent(session, "tools/call")[0]
        assert request["params"]["_meta"] == {"progressToken": 2}
    assert [p for p, _, _ in seen] == [1, 2, 3, 4]
    assert {total for _, total, _ in seen} == {4}


async def test_reset_on_progress_extends_the_timeout_but_not_past_the_maximum() -> None:
    args = {"steps": 6, "interval": 0.15}  # about 0.9 s in all, progress every 0.15 s
    async with lab_session() as session:
        with pytest.raises(RequestTimeout):
            await session.call_tool("slow", args, timeout=0.4, on_progress=lambda *a: None)
        result = await session.call_tool(
            "slow", args, timeout=0.4, on_progress=lambda *a: None,
            reset_timeout_on_progress=True)
        assert result.text == "done after 6 steps"
        start = anyio.current_time()
        with pytest.raises(RequestTimeout):
            await session.call_tool(
                "slow", args, timeout=0.4, on_progress=lambda *a: None,
                reset_timeout_on_progress=True, max_timeout=0.5)
        assert 0.5 <= anyio.current_time() - start < 0.5 + SLACK


async def test_initialize_cannot_be_cancelled_and_its_timeout_sends_no_cancel() -> None:
    async with lab_session("--never-answer", "initialize", connect=False) as session:
        refused: list[Exception] = []

        async def try_cancel() -> None:
            await until_in_flight(session)
            try:
                await session.cancel(1)
            except LifecycleError as exc:
                refused.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(try_cancel)
            with pytest.raises(RequestTimeout) as info:
                await session.initialize(timeout=0.3)
        assert "initialize cannot be cancelled" in str(refused[0])
        assert "never cancelled" in str(info.value)
        assert sent(session, "notifications/cancelled") == []
        assert session.state is State.INITIALIZING


async def test_never_answer_times_out() -> None:
    # The short timeout is per call: a session-wide 0.2 s would also bound the handshake,
    # which a loaded CI machine can take longer than that to answer.
    async with lab_session("--never-answer", "tools/list") as session:
        with pytest.raises(RequestTimeout, match=r"tools/list \(id 2\) timed out"):
            await session.list_tools(timeout=0.2)
        assert await session.ping() > 0


# -- misbehaving servers -----------------------------------------------------------------------

async def test_garbage_on_stdout_is_a_finding_not_a_crash() -> None:
    async with lab_session("--garbage-stdout") as session:
        assert (await session.call_tool("add", {"a": 1, "b": 1})).text == "2"
    invalid = session.transcript.filter(kind="invalid")
    assert invalid and all(e.note == "invalid-json" for e in invalid)
    assert set(rules(session)) == {"invalid-json"}
    assert "not JSON" in (invalid[0].text or "")


async def test_request_before_initialized_is_a_finding_and_gets_minus_32601() -> None:
    # Step through so the client really is still Initialized when the request lands.
    async with lab_session("--request-before-initialized", connect=False) as session:
        await session.initialize()
        with anyio.fail_after(5):
            while not session.transcript.filter(direction="send", kind="error"):
                await anyio.sleep(0.01)
        assert session.state is State.INITIALIZED
        await session.send_initialized()
    assert rules(session) == ["server-request-before-initialized", "capability-not-negotiated"]
    early = session.findings[0]
    assert early.side == "server" and early.evidence["method"] == "roots/list"
    answer = session.transcript.filter(direction="send", kind="error")[0].message
    assert answer is not None and answer["error"]["code"] == -32601
    assert "roots" in answer["error"]["message"]


async def test_reused_response_id_is_a_finding() -> None:
    async with lab_session("--reuse-response-id") as session:
        await session.ping()
        with anyio.fail_after(5):
            while "duplicate-response" not in rules(session):
                await anyio.sleep(0.01)
    duplicate = next(f for f in session.findings if f.rule.id == "duplicate-response")
    assert duplicate.side == "server"


async def test_crash_fails_pending_requests_with_exit_code_and_stderr() -> None:
    # initialize and notifications/initialized are messages 1 and 2; the call is 3.
    async with lab_session("--crash-after", "3") as session:
        with pytest.raises(ServerExited) as info:
            await session.call_tool("echo", {"text": "boom"})
        assert info.value.exit_code == 3
        assert info.value.transport_error is not None
        assert info.value.transport_error.exit_code == 3  # type: ignore[attr-defined]
        assert any("crashing on purpose" in line for line in info.value.stderr_tail)
        assert "exit code 3" in str(info.value)
        assert session.state is State.TERMINATED
        with pytest.raises(ServerExited):
            await session.ping()
    assert session.lifecycle.path[-2:] == [State.OPERATING, State.TERMINATED]


async def test_a_server_that_exits_at_once_is_reported_by_its_exit_code() -> None:
    # It races the first send: the pipe may refuse initialize ("stdin is closed") or the
    # process be not yet reaped ("still running") while the reader collects the exit code.
    # Before the send waited for the reader's account, 8 of 40 said one of those instead.
    said = set()
    for _ in range(20):
        session = ClientSession(StdioTransport([sys.executable, "-c",
                                                "import sys; sys.exit(3)"]))
        with pytest.raises(ServerExited) as info:
            async with session:
                await session.connect()
        said.add((str(info.value), info.value.exit_code))
    assert said == {("the server process exit code 3", 3)}


async def test_server_exiting_on_its_own_terminates_the_session_at_once() -> None:
    async with lab_session("--exit-after", "0.4") as session:
        start = anyio.current_time()
        with pytest.raises(ServerExited) as info:
            await session.call_tool("slow", {"steps": 100, "interval": 0.1})
        assert anyio.current_time() - start < 0.4 + SLACK
        assert info.value.exit_code == 0
        await session.wait_closed()
        assert session.state is State.TERMINATED


async def test_hostile_strings_arrive_verbatim() -> None:
    async with lab_session("--hostile-strings") as session:
        tools = await session.list_tools()
        assert session.initialize_result is not None
        assert "<script>" in (session.initialize_result.instructions or "")
        marked = [t for t in tools if "<" in t.name or "<" in (t.description or "")]
        assert marked, "hostile mode should put markup in tool metadata"
        # Names with markup are still callable: the protocol layer never rewrites them.
        echo = next(t for t in tools if "echo" in t.name)
        result = await session.call_tool(echo.name, {"text": "x"})
        assert result.isError is False


async def test_stderr_is_kept_in_a_bounded_buffer() -> None:
    async with lab_session("--stderr-chatter", "2000", stderr_lines=50) as session:
        await session.ping()
        transport = session.transport
        with anyio.fail_after(5):
            while len(session.transcript.events("stderr")) < 2000:
                await anyio.sleep(0.01)
        tail = transport.stderr_tail  # type: ignore[attr-defined]
        assert len(tail) == 50


# -- server → client requests -----------------------------------------------------------------

async def test_sampling_elicitation_and_roots_go_to_user_handlers() -> None:
    async def sample(params: dict) -> dict:
        prompt = params["messages"][0]["content"]["text"]
        return {"role": "assistant", "model": "test",
                "content": {"type": "text", "text": f"sampled: {prompt}"}}

    async with lab_session(
        on_sampling=sample,
        on_elicitation=lambda params: {"action": "accept", "content": {"answer": "42"}},
        on_roots=lambda params: {"roots": [{"uri": "file:///work", "name": "work"}]},
    ) as session:
        assert set(session.client_capabilities) == {"sampling", "elicitation", "roots"}
        llm = await session.call_tool("ask_llm", {"prompt": "hi"})
        assert llm.text == "sampled: hi"
        user = await session.call_tool("ask_user", {"message": "meaning?"})
        assert "accept" in user.text and "42" in user.text
        roots = await session.call_tool("list_roots")
        assert "file:///work" in roots.text
    assert session.findings == []


async def test_undeclared_capability_is_answered_minus_32601() -> None:
    async with lab_session() as session:
        # Force the server to try: the lab asks only if we declared sampling, so we
        # send sampling/createMessage's trigger and look at what it reports back.
        result = await session.call_tool("ask_llm", {"prompt": "hi"})
        assert result.isError is True
        assert "sampling" in result.text


async def test_handler_failure_becomes_an_error_response() -> None:
    def broken(params: dict) -> dict:
        raise RuntimeError("no model here")

    async with lab_session(on_sampling=broken) as session:
        result = await session.call_tool("ask_llm", {"prompt": "hi"})
        assert result.isError is True
        assert "no model here" in result.text
        answer = session.transcript.filter(direction="send", kind="error")[0].message
        assert answer is not None and answer["error"]["code"] == -32603


async def test_server_error_is_not_confused_with_lifecycle() -> None:
    async with lab_session() as session:
        with pytest.raises(ServerError, match="resources/read"):
            await session.read_resource("lab://nope")
        assert session.state is State.OPERATING
        assert "SIGKILL" not in event_kinds(session)


async def test_a_raw_request_honours_its_timeout_and_guards_record_findings() -> None:
    async with lab_session("--never-answer", "tools/list", connect=False) as session:
        exchange = await session.send_raw(
            '{"jsonrpc": "2.0", "id": 40, "method": "tools/list"}', timeout=0.2)
        assert isinstance(exchange.outcomes[0], RequestTimeout)
        # Sent before initialize: recorded as a finding, not refused.
        assert rules(session) == ["client-message-before-initialize"]
        assert session.state is State.UNINITIALIZED
