"""The lab's HTTP streams: retry advice, resuming any stream still held, the bounded replay
policy, SSE polling's hang-up, and the timeout on the lab's own requests to the client.

Real lab servers over real HTTP (raw httpx, so the wire is what is judged) and stdio.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from http_support import lab_server
from test_lab_server import Lab, call, initialize, notification, tool_call

from mcp_nb.lab.http.streams import (
    BACKLOG_EVENTS,
    KEPT_EVENTS,
    KEPT_STREAMS,
    RETRY_MS,
    EventStream,
)

pytestmark = pytest.mark.timeout(60)
Message = dict[str, Any]
ACCEPT = {"Accept": "application/json, text/event-stream"}


def sse_events(text: str) -> list[dict[str, str]]:
    """Each SSE event's fields (id, retry, event, data) as written on the wire."""
    events = []
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            name, _, value = line.partition(":")
            fields[name] = value.strip()
        if fields:
            events.append(fields)
    return events


def messages(events: list[dict[str, str]]) -> list[Message]:
    return [json.loads(event["data"]) for event in events if event.get("data")]


class RawSession:
    """A handshake-era session over raw HTTP: POSTs and GETs with its Mcp-Session-Id."""

    def __init__(self, client: httpx.Client, url: str) -> None:
        self.client, self.url = client, url
        params = {"protocolVersion": "2025-11-25", "capabilities": {},
                  "clientInfo": {"name": "raw", "version": "0"}}
        response = client.post(url, headers=ACCEPT, json={
            "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        self.headers = {**ACCEPT, "Mcp-Session-Id": response.headers["mcp-session-id"],
                        "MCP-Protocol-Version": "2025-11-25"}
        client.post(url, headers=self.headers,
                    json={"jsonrpc": "2.0", "method": "notifications/initialized"})

    def post(self, message: Message) -> list[dict[str, str]]:
        response = self.client.post(self.url, headers=self.headers, json=message)
        assert response.status_code == 200, response.text
        return sse_events(response.text)

    def resume(self, last_event_id: str) -> httpx.Response:
        return self.client.get(self.url, headers={**self.headers, "Accept": "text/event-stream",
                                                  "Last-Event-ID": last_event_id})


@pytest.fixture
def session() -> Iterator[RawSession]:
    with lab_server() as server, httpx.Client(timeout=10) as client:
        yield RawSession(client, server.ready_text)


def test_post_streams_open_with_an_id_and_the_retry_advice(session: RawSession) -> None:
    events = session.post(call(1, "ping"))
    priming = events[0]
    assert priming["retry"] == str(RETRY_MS) and priming["data"] == "" and priming["id"]
    assert messages(events) == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


def test_a_fully_delivered_stream_can_still_be_resumed(session: RawSession) -> None:
    events = session.post(tool_call(1, "echo", {"text": "hi"}))
    first, last = events[0]["id"], events[-1]["id"]
    replay = session.resume(first)
    assert replay.status_code == 200
    assert messages(sse_events(replay.text)) == messages(events)  # everything after the priming
    caught_up = session.resume(last)
    assert caught_up.status_code == 200 and messages(sse_events(caught_up.text)) == []


def test_streams_beyond_the_kept_number_are_forgotten_oldest_first(session: RawSession) -> None:
    ids = [session.post(call(n, "ping"))[-1]["id"] for n in range(KEPT_STREAMS + 1)]
    forgotten = session.resume(ids[0])
    assert forgotten.status_code == 404
    assert "forgotten" in forgotten.json()["error"]["message"]
    assert session.resume(ids[1]).status_code == 200
    assert session.resume(ids[-1]).status_code == 200
    assert session.resume("999-1").status_code == 404  # never existed


def test_a_hung_up_request_is_finished_on_the_resumed_stream() -> None:
    with lab_server("--fixtures", "conformance") as server, httpx.Client(timeout=10) as client:
        session = RawSession(client, server.ready_text)
        cut = session.post(tool_call(1, "test_reconnection", {}))
        assert messages(cut) == []  # the connection ended before the result existed
        resumed = session.resume(cut[-1]["id"])
        [result] = messages(sse_events(resumed.text))
        assert result["id"] == 1 and "survived the hang-up" in result["result"]["content"][0][
            "text"]


def test_keep_resumed_open_holds_the_resumed_connection_after_its_replay() -> None:
    with lab_server("--keep-resumed-open") as server, httpx.Client(timeout=10) as client:
        session = RawSession(client, server.ready_text)
        events = session.post(call(1, "ping"))
        seen = ""
        headers = {**session.headers, "Accept": "text/event-stream",
                   "Last-Event-ID": events[0]["id"]}
        # The replay comes, and then no end: the read times out.
        with (client.stream("GET", session.url, headers=headers,
                            timeout=httpx.Timeout(10, read=1.0)) as replay,
              pytest.raises(httpx.ReadTimeout)):
            for text in replay.iter_text():
                seen += text
        assert messages(sse_events(seen)) == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


def next_besides_logs(lab: Lab) -> Message:
    """The next message that is not a log message (tools log that they were called)."""
    while (message := lab.recv()).get("method") == "notifications/message":
        pass
    return message


def test_a_client_that_never_answers_cannot_stall_a_tool() -> None:
    lab = Lab("--client-request-timeout", "0.5")
    try:
        initialize(lab, sampling={})
        lab.send(tool_call(2, "ask_llm", {"prompt": "hello?"}))
        asked = next_besides_logs(lab)
        assert asked["method"] == "sampling/createMessage"  # ...and never answered
        cancelled = next_besides_logs(lab)
        assert cancelled == notification("notifications/cancelled", {
            "requestId": asked["id"], "reason": "no answer within 0.5 s"})
        reply = next_besides_logs(lab)
        assert reply["id"] == 2 and reply["result"]["isError"] is True
        assert "did not answer sampling/createMessage within 0.5 s" in reply["result"][
            "content"][0]["text"]
    finally:
        lab.kill()


def test_the_timeout_knob_belongs_to_the_handshake_era() -> None:
    refused = subprocess.run([sys.executable, "-m", "mcp_nb.lab", "--era", "stateless",
                              "--client-request-timeout", "1"], capture_output=True, text=True,
                             timeout=30)
    assert refused.returncode == 2
    assert "--client-request-timeout concerns the handshake era" in refused.stderr


@pytest.mark.anyio
async def test_a_stream_keeps_recent_delivered_events_and_a_bounded_backlog() -> None:
    stream = EventStream(7)
    for n in range(KEPT_EVENTS + 10):
        stream.push(notification("notifications/message", {"n": n}))
    assert stream.dropped == 0  # nothing delivered yet: all of it is still owed
    stream.delivered = stream.pushed
    stream.push(notification("notifications/message", {"n": "last"}))
    assert stream.dropped == stream.pushed - KEPT_EVENTS  # delivered ones beyond the cap go
    stream.finish()
    replayed = [position async for position, _ in stream.follow(0)]
    assert replayed == list(range(stream.dropped + 1, stream.pushed + 1))  # ids keep counting
    idle = EventStream(0)  # a GET stream nobody reads
    for n in range(BACKLOG_EVENTS + 5):
        idle.push(notification("notifications/message", {"n": n}))
    assert idle.dropped == 5
