"""The HTTP transports against the lab server over HTTP: every HTTP knob, seen from the client.

Each test starts its own ``python -m mcp_nb.lab --http …`` on a free loopback
port (the knob-free tests share one), and asserts on what a user would look at:
the error raised, the lifecycle state, and the transcript's HTTP events.
"""

from __future__ import annotations

import gc
import re
import socket
import subprocess
import sys
import warnings
from collections.abc import Iterator

import anyio
import httpx
import pytest
from http_support import (
    ROOT,
    ServerProcess,
    event_seen,
    events,
    http_lines,
    lab_server,
    lab_session,
    transcript_text,
)
from support import until_in_flight

from mcp_nb.client import (
    ClientSession,
    HttpRequestFailed,
    RequestCancelled,
    RequestTimeout,
    ServerExited,
)
from mcp_nb.protocol import SUPPORTED_VERSIONS, VERSIONS, State
from mcp_nb.transports import (
    AutoHttpTransport,
    SessionExpired,
    SseTransport,
    StreamableHttpTransport,
    TransportClosed,
    http_transport,
)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

#: The lab's --drop-stream-after retry advice, in seconds.
DROP_RETRY = 0.25
README = ROOT / "README.md"


@pytest.fixture(scope="module")
def lab() -> Iterator[ServerProcess]:
    """One well-behaved lab server for the tests that need no knob."""
    with lab_server("--sse") as server:
        yield server


def kinds(session: ClientSession) -> list[str]:
    return [e.kind for e in session.transcript.events()]


# -- the whole lifecycle ---------------------------------------------------------------------

async def test_handshake_progress_cancel_and_shutdown_with_delete(lab: ServerProcess) -> None:
    progress: list[float] = []
    outcome: list[BaseException] = []
    async with lab_session(lab) as session:
        await session.initialize()
        assert session.state is State.INITIALIZED
        await session.send_initialized()
        result = await session.call_tool("slow", {"steps": 3, "interval": 0.02},
                                         on_progress=lambda p, total, msg: progress.append(p))
        assert result.text == "done after 3 steps"

        async def call_slow() -> None:
            try:
                await session.call_tool("slow", {"steps": 100, "interval": 0.05})
            except RequestCancelled as exc:
                outcome.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(call_slow)
            await until_in_flight(session)
            assert await session.cancel(reason="enough") == 3
        assert await session.ping() >= 0
        await event_seen(session, "stream opened", "GET stream")
    assert progress == [1, 2, 3] and isinstance(outcome[0], RequestCancelled)
    assert session.state is State.TERMINATED and session.findings == []
    assert session.lifecycle.path[-3:] == [State.OPERATING, State.SHUTTING_DOWN, State.TERMINATED]

    posts = http_lines(session, "POST")
    # initialize goes out bare; it is what assigns the session and the version.
    assert "Mcp-Session-Id" not in posts[0] and "MCP-Protocol-Version" not in posts[0]
    assert all("Mcp-Session-Id: " in line and "MCP-Protocol-Version: 2025-11-25" in line
               for line in posts[1:])
    assert "notifications/initialized" in posts[1] and posts[1].endswith("→ 202 Accepted")
    assert "request tools/call #2" in posts[2] and posts[2].endswith("text/event-stream")
    assert any("notifications/cancelled" in line and "→ 202" in line for line in posts)
    assert len(events(session, "session id")) == 1
    assert "GET stream: opened (GET /mcp)" in events(session, "stream opened")
    # The cancelled request's stream stays open (a late answer may come) but is never
    # resumed; it ends with the session.
    closed = events(session, "stream closed")
    assert "SSE stream of request tools/call #2: ended after its response" in closed
    assert [line for line in closed if "tools/call #3" in line] == [
        "SSE stream of request tools/call #3: closed with the session"]
    assert "stream resumed" not in kinds(session)
    # Shutdown: DELETE with the session id, then the streams and connections close.
    order = kinds(session)
    assert http_lines(session, "DELETE")[0].endswith("→ 200 OK")
    assert "Mcp-Session-Id" in http_lines(session, "DELETE")[0]
    delete_at = next(i for i, e in enumerate(session.transcript.events())
                     if e.kind == "http" and (e.text or "").startswith("DELETE"))
    assert order.index("connections closed") > delete_at
    assert order[-1] == "connections closed"
    lab.wait_for("cancelling request 3 \\(enough\\)")


async def test_server_requests_ride_the_request_stream_and_answers_get_202(
        lab: ServerProcess) -> None:
    async def sample(params: dict) -> dict:
        text = params["messages"][0]["content"]["text"]
        return {"role": "assistant", "model": "m", "content": {"type": "text", "text": f"<{text}>"}}

    async with lab_session(lab, on_sampling=sample) as session:
        await session.connect()
        assert (await session.call_tool("ask_llm", {"prompt": "hi"})).text == "<hi>"
    answer = [line for line in http_lines(session, "POST") if "response #1" in line]
    assert answer and answer[0].endswith("→ 202 Accepted")
    assert session.findings == []


async def test_late_response_after_a_timeout_arrives_on_the_same_stream() -> None:
    with lab_server("--ignore-cancel") as server:
        async with lab_session(server) as session:
            await session.connect()
            with pytest.raises(RequestTimeout):
                await session.call_tool("slow", {"steps": 2, "interval": 0.1}, timeout=0.05)
            ended = "SSE stream of request tools/call #2: ended after its response"
            # The stream's end is recorded after the late answer it carried: wait for both
            # before closing the session (a busy machine can put a close in between).
            with anyio.fail_after(5):
                while not ([e for e in session.transcript if e.note == "late, ignored"]
                           and ended in events(session, "stream closed")):
                    await anyio.sleep(0.02)


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
async def test_protocol_version_header_follows_the_negotiated_version(
        lab: ServerProcess, version: str) -> None:
    async with lab_session(lab) as session:
        await session.connect(version)
        await session.ping()
    later = http_lines(session, "POST")[1:]
    if VERSIONS[version].http_version_header:
        assert all(f"MCP-Protocol-Version: {version}" in line for line in later)
    else:
        assert not any("MCP-Protocol-Version" in line for line in later)


async def test_sessions_are_independent(lab: ServerProcess) -> None:
    async with lab_session(lab) as first, lab_session(lab) as second:
        await first.connect()
        await second.connect()
        await first.call_tool("bump")
        assert (await first.call_tool("bump")).text == "counter is now 2"
        assert (await second.call_tool("bump")).text == "counter is now 1"
        assert isinstance(first.transport, StreamableHttpTransport)
        assert isinstance(second.transport, StreamableHttpTransport)
        assert first.transport.session_id != second.transport.session_id


# -- the HTTP fault knobs ----------------------------------------------------------------------

async def test_dropped_stream_is_resumed_with_last_event_id_after_the_retry_wait() -> None:
    progress: list[float] = []
    with lab_server("--drop-stream-after", "2") as server:
        async with lab_session(server) as session:
            await session.connect()
            result = await session.call_tool("slow", {"steps": 3, "interval": 0.01},
                                             on_progress=lambda p, total, msg: progress.append(p))
            assert result.text == "done after 3 steps"
    # One log message, three progress notifications, the response: cut after 2 and 4.
    assert progress == [1, 2, 3]
    dropped = session.transcript.events("stream dropped")
    resumed = session.transcript.events("stream resumed")
    assert len(dropped) == len(resumed) == 2
    for drop, resume in zip(dropped, resumed, strict=True):
        assert "resuming from event 2-" in (drop.text or "") and "in 250 ms" in (drop.text or "")
        assert resume.time - drop.time >= DROP_RETRY
    gets = [line for line in http_lines(session, "GET") if "tools/call" in line]
    assert [line.split("Last-Event-ID: ")[1].split("]")[0] for line in gets] == ["2-2", "2-4"]
    assert session.findings == []
    assert not [e for e in session.transcript if e.note]  # no duplicates, nothing late


async def test_expired_session_ends_with_a_clear_error_and_a_new_session_works() -> None:
    with lab_server("--expire-session-after", "3") as server:
        async with lab_session(server) as session:
            await session.connect()  # POSTs 1 and 2
            await session.ping()  # POST 3
            with pytest.raises(ServerExited) as info:
                await session.ping()  # POST 4: 404
            message = str(info.value)
            assert "expired the session" in message and "Open a new session" in message
            assert session.state is State.TERMINATED
            assert isinstance(session.transport.describe_exit(), SessionExpired)
            assert isinstance(info.value.transport_error, SessionExpired)
        assert "session expired" in kinds(session)
        assert http_lines(session, "DELETE") == []  # nothing left to delete
        async with lab_session(server) as again:
            await again.connect()
            assert await again.ping() >= 0


async def test_delete_refused_with_405_still_shuts_down() -> None:
    with lab_server("--no-delete") as server:
        async with lab_session(server) as session:
            await session.connect()
        assert http_lines(session, "DELETE")[0].endswith("→ 405 Method Not Allowed")
        assert "session kept" in kinds(session)
        assert kinds(session)[-1] == "connections closed"
        assert session.state is State.TERMINATED
        server.wait_for("refusing DELETE")


async def test_missing_get_stream_is_tolerated() -> None:
    with lab_server("--no-get-stream") as server:
        async with lab_session(server) as session:
            await session.connect()
            assert (await session.call_tool("echo", {"text": "still here"})).text == "still here"
            await event_seen(session, "no GET stream")
    assert http_lines(session, "GET")[0].endswith("→ 405 Method Not Allowed")
    assert session.findings == []


async def test_credentials_are_sent_but_never_shown() -> None:
    secret = "Bearer s3cret-token"
    with lab_server("--require-header", f"Authorization: {secret}") as server:
        async with lab_session(server) as refused:
            # The refusal fails that request, named an HTTP error; the session is not over.
            with pytest.raises(HttpRequestFailed, match="401 Unauthorized") as info:
                await refused.initialize()
            assert "headers={'Authorization'" in str(info.value)
            assert info.value.status == 401 and info.value.cause == "http-error"
            assert refused.state is not State.TERMINATED
        async with lab_session(server, headers={"Authorization": secret}) as session:
            await session.connect()
            assert await session.ping() >= 0
    assert all("Authorization: <redacted>" in line for line in http_lines(session))
    assert "s3cret" not in transcript_text(session)
    assert "s3cret" not in transcript_text(refused)


async def test_foreign_origin_gets_403_and_localhost_is_welcome(lab: ServerProcess) -> None:
    async with lab_session(lab, headers={"Origin": "http://evil.example"}) as refused:
        with pytest.raises(HttpRequestFailed, match="403 Forbidden") as info:
            await refused.initialize()
        assert info.value.status == 403
    async with lab_session(lab, headers={"Origin": "http://localhost:8888"}) as session:
        await session.connect()


# -- legacy HTTP+SSE and the automatic fallback -------------------------------------------------

async def test_auto_falls_back_to_legacy_sse_step_by_step(lab: ServerProcess) -> None:
    async with lab_session(lab, path="/sse", transport="auto") as session:
        await session.connect()
        assert session.transport.kind == "sse"
        assert (await session.call_tool("add", {"a": 2, "b": 3})).text == "5"
    order = kinds(session)
    steps = ["http", "fallback", "http", "endpoint", "stream opened"]
    assert order[:len(steps)] == steps
    texts = events(session)
    assert texts[0].startswith("POST /sse request initialize #1") and "405" in texts[0]
    assert texts[2].startswith("GET /sse") and "text/event-stream" in texts[2]
    assert "/messages?session_id=" in texts[3]
    assert session.transcript.filter(direction="send", method="initialize")[0].id == 1
    assert session.findings == [] and session.state is State.TERMINATED


async def test_auto_keeps_streamable_http_when_the_post_works(lab: ServerProcess) -> None:
    async with lab_session(lab, transport="auto") as session:
        await session.connect()
        assert session.transport.kind == "streamable-http"
    assert "fallback" not in kinds(session)


async def test_legacy_sse_transport_directly(lab: ServerProcess) -> None:
    async with lab_session(lab, path="/sse", transport="sse") as session:
        await session.connect()
        assert (await session.call_tool("echo", {"text": "old school"})).text == "old school"
    assert kinds(session)[-2:] == ["stream closed", "connections closed"]


async def test_auto_reports_both_attempts_when_neither_transport_answers(
        lab: ServerProcess) -> None:
    url = lab.ready_text.replace("/mcp", "/nowhere")
    async with ClientSession(AutoHttpTransport(url)) as session:
        with pytest.raises(ServerExited) as info:
            await session.initialize()
    message = str(info.value)
    assert "404 Not Found" in message and "did not work either" in message
    assert "not an SSE stream" in message


def test_readme_http_example_runs_against_the_lab() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    example = next(block for block in blocks if "http_transport(" in block)
    with lab_server("--require-header", "Authorization: Bearer s3cret") as server:
        code = example.replace("http://127.0.0.1:8000/mcp", server.ready_text)
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                timeout=30)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "3"
    assert lines[1].startswith("POST /mcp request initialize #1 [Authorization: <redacted>]")
    assert lines[-1].startswith("DELETE /mcp") and "s3cret" not in result.stdout


# -- failures that are not the server's fault ---------------------------------------------------

async def test_unreachable_server_is_a_clear_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with ClientSession(http_transport(f"http://127.0.0.1:{port}/mcp")) as session:
        with pytest.raises(ServerExited, match=f"could not connect to http://127.0.0.1:{port}/mcp"):
            await session.initialize()
    assert session.state is State.TERMINATED and "http failed" in kinds(session)


def test_legacy_endpoint_must_stay_on_the_streams_origin() -> None:
    # The transport's headers (credentials) go to the endpoint with every POST.
    transport = SseTransport("http://127.0.0.1:9/sse")
    assert transport._endpoint_from("/messages?session_id=1") == (
        "http://127.0.0.1:9/messages?session_id=1")
    with pytest.raises(TransportClosed, match="another origin"):
        transport._endpoint_from("http://evil.example/messages")


def test_http_transports_refuse_urls_that_are_not_http() -> None:
    with pytest.raises(ValueError, match="not an http"):
        StreamableHttpTransport("ftp://127.0.0.1/mcp")
    with pytest.raises(ValueError, match="unknown HTTP transport"):
        http_transport("http://127.0.0.1/mcp", "websocket")  # type: ignore[arg-type]


# -- the lab server's HTTP rules, seen with a plain HTTP client --------------------------------

def test_lab_answers_http_mistakes_with_the_statuses_the_spec_names(lab: ServerProcess) -> None:
    url = lab.ready_text
    accept = {"Accept": "application/json, text/event-stream"}
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    with httpx.Client(timeout=5) as client:
        assert client.post(url, json=ping, headers=accept).status_code == 400  # no session
        unknown = client.post(url, json=ping, headers={**accept, "Mcp-Session-Id": "nope"})
        assert unknown.status_code == 404 and unknown.json()["id"] is None
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw",
                                                                               "version": "0"}}}
        with client.stream("POST", url, json=initialize, headers=accept) as response:
            session_id = response.headers["mcp-session-id"]
            assert response.headers["content-type"] == "text/event-stream"
            assert '"protocolVersion":"2025-11-25"' in response.read().decode()
        session = {**accept, "Mcp-Session-Id": session_id}
        bad_version = client.post(url, json=ping, headers={**session,
                                                            "MCP-Protocol-Version": "1999-01-01"})
        assert bad_version.status_code == 400
        assert client.post(url, json=[ping], headers=session).status_code == 400  # no batches
        assert client.get(url, headers={"Mcp-Session-Id": session_id}).status_code == 406
        put = client.put(url, json=ping)
        assert put.status_code == 405 and put.headers["allow"] == "POST, GET, DELETE"
        assert client.delete(url, headers=session).status_code == 200
        assert client.delete(url, headers=session).status_code == 404


@pytest.mark.parametrize("flags, complaint", [
    (["--drop-stream-after", "2"], "--drop-stream-after is for the HTTP (--http) transport"),
    (["--http", "--garbage-stdout"], "--garbage-stdout is for the stdio transport"),
    (["--http", "--require-header", "no colon"], "expected 'Name: value'"),
])
def test_lab_refuses_knobs_of_the_other_transport(flags: list[str], complaint: str) -> None:
    result = subprocess.run([sys.executable, "-m", "mcp_nb.lab", *flags], capture_output=True,
                            text=True, timeout=10)
    assert result.returncode == 2 and complaint in result.stderr


def test_lab_help_documents_every_http_knob() -> None:
    result = subprocess.run([sys.executable, "-m", "mcp_nb.lab", "--help"], capture_output=True,
                            text=True, timeout=10)
    for flag in ("--http", "--sse", "--host", "--port", "--drop-stream-after",
                 "--expire-session-after", "--no-delete", "--no-get-stream", "--require-header"):
        assert flag in result.stdout


@pytest.mark.parametrize("kind", ["streamable-http", "sse"])
async def test_a_closed_transport_leaves_no_stream_unclosed(lab: ServerProcess,
                                                           kind: str) -> None:
    # The inbox's receiving end used to be dropped unclosed (a ResourceWarning per session).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        async with lab_session(lab, path="/sse" if kind == "sse" else "/mcp",
                               transport=kind) as session:
            await session.connect()
            await session.list_tools()
        gc.collect()
    assert not [w for w in caught if "MemoryObject" in str(w.message)]
