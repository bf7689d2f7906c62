"""The lab server's stateless era (2026-07-28) over Streamable HTTP, seen with plain httpx.

No session, headers that mirror the body, the HTTP status each error calls for,
JSON unless something precedes the response, and ``subscriptions/listen`` as a
stream that stays open until the client closes it or the server shuts down.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from http_support import ServerProcess, lab_server

from mcp_nb.protocol.versions import SUPPORTED_VERSIONS

pytestmark = pytest.mark.timeout(30)

Message = dict[str, Any]
VERSION = "2026-07-28"
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
ACCEPT = "application/json, text/event-stream"
NAMES = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


@pytest.fixture(scope="module")
def lab() -> Iterator[ServerProcess]:
    """A dual-era lab server for the tests that change nothing in it."""
    with lab_server() as server:
        yield server


def message(msg_id: int | str, method: str, params: Message | None = None,
            capabilities: Message | None = None, **meta: object) -> Message:
    full_meta = {PROTOCOL_VERSION: VERSION, CLIENT_CAPABILITIES: capabilities or {}, **meta}
    return {"jsonrpc": "2.0", "id": msg_id, "method": method,
            "params": {**(params or {}), "_meta": full_meta}}


def headers_for(body: Message, **overrides: str | None) -> dict[str, str]:
    """The headers a conforming client sends with ``body``, then ``overrides`` (None drops)."""
    headers = {"Accept": ACCEPT, "MCP-Protocol-Version": VERSION, "Mcp-Method": body["method"]}
    name_key = NAMES.get(body["method"])
    if name_key is not None:
        headers["Mcp-Name"] = body["params"][name_key]
    for name, value in overrides.items():
        header = name.replace("_", "-")
        headers.pop(next((h for h in headers if h.lower() == header.lower()), header), None)
        if value is not None:
            headers[header] = value
    return headers


def post(url: str, body: Message, **overrides: str | None) -> httpx.Response:
    return httpx.post(url, json=body, headers=headers_for(body, **overrides), timeout=5)


def sse_messages(response: httpx.Response) -> Iterator[Message]:
    """The JSON-RPC messages of an SSE response, as they arrive."""
    for line in response.iter_lines():
        assert not line.startswith("id:"), "stateless-era events carry no ids"
        if line.startswith("data:") and line[5:].strip():
            yield json.loads(line[5:])


def error_of(response: httpx.Response) -> Message:
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert "result" not in body, body
    return body["error"]


# ---------------------------------------------------------------- plain answers


def test_discover_is_plain_json_and_mints_no_session(lab: ServerProcess) -> None:
    response = post(lab.ready_text, message(1, "server/discover"))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert "mcp-session-id" not in response.headers
    result = response.json()["result"]
    assert result["supportedVersions"] == [VERSION, *reversed(SUPPORTED_VERSIONS)]
    assert result["resultType"] == "complete" and result["_meta"][SERVER_INFO]["name"]


def test_a_session_id_sent_along_is_ignored(lab: ServerProcess) -> None:
    body = message(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    response = post(lab.ready_text, body, Mcp_Session_Id="no-such-session")
    assert response.status_code == 200 and "mcp-session-id" not in response.headers
    assert response.json()["result"]["content"][0]["text"] == "hi"


@pytest.mark.parametrize(("body", "status", "code"), [
    pytest.param({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}},
                 400, -32602, id="missing-meta"),
    pytest.param(message(1, "tools/call", {"name": "list_roots", "arguments": {}}),
                 400, -32021, id="missing-capability"),
    pytest.param(message(1, "ping"), 404, -32601, id="removed-method"),
    pytest.param(message(1, "tools/frobnicate"), 404, -32601, id="unknown-method"),
    pytest.param(message(1, "resources/read", {"uri": "lab://nope"}), 400, -32602,
                 id="unknown-resource"),
])
def test_errors_carry_the_http_status_the_spec_names(
        lab: ServerProcess, body: Message, status: int, code: int) -> None:
    response = post(lab.ready_text, body)
    assert response.status_code == status
    assert error_of(response)["code"] == code


def test_an_id_that_is_no_id_is_an_invalid_request(lab: ServerProcess) -> None:
    body = {**message(1, "tools/list"), "id": True}
    response = post(lab.ready_text, body)
    assert response.status_code == 400 and error_of(response)["code"] == -32600


def test_an_unserved_version_is_400_with_the_versions_served(lab: ServerProcess) -> None:
    body = message(1, "tools/list", **{PROTOCOL_VERSION: "2099-01-01"})
    response = post(lab.ready_text, body, MCP_Protocol_Version="2099-01-01")
    assert response.status_code == 400
    assert error_of(response) == {"code": -32022, "message": "Unsupported protocol version",
                                  "data": {"supported": [VERSION, *reversed(SUPPORTED_VERSIONS)],
                                           "requested": "2099-01-01"}}


def test_a_modern_header_without_meta_is_served_as_a_stateless_request(
        lab: ServerProcess) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    response = httpx.post(lab.ready_text, json=body, timeout=5, headers={
        "Accept": ACCEPT, "MCP-Protocol-Version": VERSION, "Mcp-Method": "tools/list"})
    assert response.status_code == 400 and error_of(response)["code"] == -32602


# --------------------------------------------------------------- header checks


@pytest.mark.parametrize("overrides", [
    pytest.param({"MCP_Protocol_Version": None}, id="version-missing"),
    pytest.param({"MCP_Protocol_Version": "2025-11-25"}, id="version-differs"),
    pytest.param({"Mcp_Method": None}, id="method-missing"),
    pytest.param({"Mcp_Method": "tools/list"}, id="method-differs"),
    pytest.param({"Mcp_Name": None}, id="name-missing"),
    pytest.param({"Mcp_Name": "add"}, id="name-differs"),
    pytest.param({"Mcp_Name": "=?base64?ZWNobw?="}, id="name-badly-encoded"),  # no padding
])
def test_headers_that_disagree_with_the_body_are_400_header_mismatch(
        lab: ServerProcess, overrides: dict[str, str | None]) -> None:
    body = message(4, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    response = post(lab.ready_text, body, **overrides)
    assert response.status_code == 400
    assert response.json()["id"] == 4
    refused = error_of(response)
    assert refused["code"] == -32020 and refused["message"].startswith("Header mismatch: ")


def test_an_encoded_name_is_decoded_before_comparing(lab: ServerProcess) -> None:
    body = message(1, "resources/read", {"uri": "lab://echo/h%C3%A9"})
    encoded = "=?base64?bGFiOi8vZWNoby9oJUMzJUE5?="  # base64 of the uri
    response = post(lab.ready_text, body, Mcp_Name=encoded)
    assert response.status_code == 200
    assert response.json()["result"]["contents"][0]["text"] == "hé"


# ------------------------------------------------------------ round trips, streams


def test_a_multi_round_trip_takes_two_independent_posts(lab: ServerProcess) -> None:
    first = message(1, "tools/call", {"name": "ask_user", "arguments": {"message": "Go?"}},
                    capabilities={"elicitation": {}})
    asked = post(lab.ready_text, first).json()["result"]
    assert asked["resultType"] == "input_required"
    assert asked["inputRequests"]["elicitation-1"]["method"] == "elicitation/create"
    second = {**first, "id": 2, "params": {
        **first["params"], "requestState": asked["requestState"],
        "inputResponses": {"elicitation-1": {"action": "accept", "content": {"answer": "y"}}}}}
    done = post(lab.ready_text, second)
    assert done.status_code == 200
    assert done.json()["result"]["content"][0]["text"] == (
        'action: accept\ncontent: {"answer": "y"}')


def test_notifications_before_the_response_make_an_event_stream(lab: ServerProcess) -> None:
    body = message(1, "tools/call", {"name": "slow", "arguments": {"steps": 2, "interval": 0}},
                   progressToken="p", **{LOG_LEVEL: "info"})
    with httpx.stream("POST", lab.ready_text, json=body, headers=headers_for(body),
                      timeout=5) as response:
        assert response.headers["content-type"] == "text/event-stream"
        assert response.headers["x-accel-buffering"] == "no"
        received = list(sse_messages(response))
    assert [m.get("method", "response") for m in received] == [
        "notifications/message", "notifications/progress", "notifications/progress", "response"]
    assert received[-1]["result"]["content"][0]["text"] == "done after 2 steps"


def test_listen_stream_carries_updates_until_the_client_closes_it() -> None:
    with lab_server("--list-changes") as server:
        url = server.ready_text
        body = message("listen-1", "subscriptions/listen", {"notifications": {
            "toolsListChanged": True, "resourceSubscriptions": ["lab://counter"]}})
        with httpx.stream("POST", url, json=body, headers=headers_for(body),
                          timeout=5) as response:
            assert response.status_code == 200 and "mcp-session-id" not in response.headers
            stream = sse_messages(response)
            ack = next(stream)
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            assert ack["params"]["_meta"] == {SUBSCRIPTION_ID: "listen-1"}
            # Changes made by other requests, on other connections, arrive here.
            bump = message(1, "tools/call", {"name": "bump", "arguments": {}})
            assert post(url, bump).json()["result"]["content"][0]["text"] == "counter is now 1"
            assert next(stream) == {"jsonrpc": "2.0", "method": "notifications/resources/updated",
                                    "params": {"uri": "lab://counter",
                                               "_meta": {SUBSCRIPTION_ID: "listen-1"}}}
            toggle = message(2, "tools/call", {"name": "toggle_bonus", "arguments": {}})
            assert post(url, toggle).status_code == 200
            assert next(stream) == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                                    "params": {"_meta": {SUBSCRIPTION_ID: "listen-1"}}}
        # Closing the stream is the cancellation.
        server.wait_for("cancelling a request: its client closed the response stream")


def test_server_shutdown_ends_listen_streams_with_a_result() -> None:
    with lab_server() as server:
        body = message(9, "subscriptions/listen", {"notifications": {"promptsListChanged": True}})
        with httpx.stream("POST", server.ready_text, json=body, headers=headers_for(body),
                          timeout=5) as response:
            stream = sse_messages(response)
            assert next(stream)["method"] == "notifications/subscriptions/acknowledged"
            server.process.send_signal(signal.SIGTERM)
            final = next(stream)
            assert final["id"] == 9
            assert final["result"]["resultType"] == "complete"
            assert final["result"]["_meta"][SUBSCRIPTION_ID] == 9
            assert list(stream) == []  # and the stream ends there
        assert server.process.wait(timeout=5) == 0


# ------------------------------------------------------------------- the eras


def test_a_stateless_only_server_has_no_get_delete_or_initialize() -> None:
    with lab_server("--era", "stateless") as server:
        url = server.ready_text
        with httpx.Client(timeout=5) as client:
            for method in ("GET", "DELETE"):
                refused = client.request(method, url, headers={"Accept": "text/event-stream"})
                assert refused.status_code == 405 and refused.headers["allow"] == "POST"
            initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "old", "version": "1"}}}
            answer = client.post(url, json=initialize, headers={"Accept": ACCEPT})
            assert answer.status_code == 400 and "mcp-session-id" not in answer.headers
            refused_init = error_of(answer)
            assert refused_init["code"] == -32022 and VERSION in refused_init["message"]
            assert refused_init["data"] == {"supported": [VERSION], "requested": "2025-11-25"}
            note = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": 1}}
            assert client.post(url, json=note, headers={"Accept": ACCEPT}).status_code == 202


def test_a_handshake_only_server_answers_like_any_legacy_server() -> None:
    with lab_server("--era", "handshake") as server:
        response = post(server.ready_text, message(1, "server/discover"))
        assert response.status_code == 400
        assert error_of(response)["code"] not in (-32020, -32021, -32022)


def test_a_dual_era_server_keeps_its_handshake_sessions(lab: ServerProcess) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"}}}
    with httpx.Client(timeout=5) as client:
        with client.stream("POST", lab.ready_text, json=initialize,
                           headers={"Accept": ACCEPT}) as response:
            session_id = response.headers["mcp-session-id"]
            assert '"protocolVersion":"2025-11-25"' in response.read().decode()
        handshake = {"Accept": ACCEPT, "Mcp-Session-Id": session_id,
                     "MCP-Protocol-Version": "2025-11-25"}
        client.post(lab.ready_text, headers=handshake,
                    json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        listed = client.post(lab.ready_text, headers=handshake,
                             json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert listed.headers["content-type"] == "text/event-stream"
        assert '"resultType"' not in listed.text  # the handshake era's results are unchanged
        assert client.delete(lab.ready_text, headers=handshake).status_code == 200
