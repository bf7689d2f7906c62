"""The lab server's stateless era (2026-07-28) over stdio, spoken to line by line.

Every request here carries its own version and capabilities in ``_meta``; the
tests play the client by hand (as tests/test_lab_server.py does for the
handshake era) and compare whole messages, so each wire shape the lab chose is
pinned down: discover, the -32602 / -32022 / -32601 / -32021 errors,
``resultType`` and ``serverInfo``, multi-round-trip tools, per-request logging,
and ``subscriptions/listen``.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Callable

import pytest
from test_lab_server import (
    ROUND_TRIPS,
    Lab,
    Message,
    call,
    error,
    init_params,
    initialize,
    lab,
    notification,
    request,
    text_result,
)

from mcp_nb.protocol.versions import SUPPORTED_VERSIONS

__all__ = ["lab"]  # the fixture, imported to be used here

pytestmark = pytest.mark.timeout(30)

VERSION = "2026-07-28"
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
LAB_INFO = {"name": "mcp_nb-lab", "version": "0.1.0", "title": "mcp_nb lab server"}
#: What a dual-era lab serves, newest first.
ALL_VERSIONS = [VERSION, *reversed(SUPPORTED_VERSIONS)]
CAPABILITIES = {
    "tools": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": True},
    "prompts": {"listChanged": True},
    "logging": {},
    "completions": {},
}


def meta(capabilities: Message | None = None, **extra: object) -> Message:
    return {PROTOCOL_VERSION: VERSION, CLIENT_CAPABILITIES: capabilities or {},
            CLIENT_INFO: {"name": "pytest", "version": "1"}, **extra}


def stateless(msg_id: int | str, method: str, params: Message | None = None,
              **meta_fields: object) -> Message:
    """A stateless-era request: ``params`` plus the ``_meta`` every request carries."""
    capabilities = meta_fields.pop("capabilities", None)
    return call(msg_id, method, {**(params or {}), "_meta": meta(capabilities, **meta_fields)})  # type: ignore[arg-type]


def complete(result: Message, **meta_fields: object) -> Message:
    """``result`` as the stateless era dresses it."""
    return {**result, "resultType": "complete", "_meta": {**meta_fields, SERVER_INFO: LAB_INFO}}


def cacheable(result: Message) -> Message:
    return complete({**result, "ttlMs": 0, "cacheScope": "public"})


def tool(msg_id: int, name: str, arguments: Message | None = None, **meta_fields: object
         ) -> Message:
    return stateless(msg_id, "tools/call", {"name": name, "arguments": arguments or {}},
                     **meta_fields)


def retry(original: Message, msg_id: int, responses: Message, state: str | None) -> Message:
    """The MRTR retry: a new id, the original params, the answers and the echoed state."""
    params = {**original["params"], "inputResponses": responses}
    if state is not None:
        params["requestState"] = state
    return {**original, "id": msg_id, "params": params}


def seen_methods(server: Lab, method: str) -> list[Message]:
    return [m["params"] for m in server.seen if m.get("method") == method]


# ------------------------------------------------------------------ discover


def test_discover_on_a_dual_era_server_lists_both_eras(lab: Callable[..., Lab]) -> None:
    reply = request(lab(), stateless(1, "server/discover"))
    assert reply == {"jsonrpc": "2.0", "id": 1, "result": {
        "supportedVersions": ALL_VERSIONS,
        "capabilities": CAPABILITIES,
        "instructions": reply["result"]["instructions"],
        "ttlMs": 0,
        "cacheScope": "public",
        "resultType": "complete",
        "_meta": {SERVER_INFO: LAB_INFO},
    }}
    assert "lab://counter" in reply["result"]["instructions"]


def test_discover_on_a_stateless_only_server_lists_only_stateless_versions(
        lab: Callable[..., Lab]) -> None:
    server = lab("--era", "stateless", "--stateless-versions", "2026-07-28,2027-01-01")
    result = request(server, stateless(1, "server/discover"))["result"]
    assert result["supportedVersions"] == ["2027-01-01", VERSION]


def test_a_handshake_era_server_does_not_know_discover(lab: Callable[..., Lab]) -> None:
    server = lab("--era", "handshake")
    expected = {"code": -32601, "message": "Method not found: server/discover"}
    assert error(request(server, stateless(1, "server/discover"))) == expected
    initialize(server)
    assert error(request(server, stateless(2, "server/discover"))) == expected
    # _meta means nothing to it: a stateless-looking request is served the old way.
    reply = request(server, tool(3, "echo", {"text": "hi"}))
    assert reply["result"] == text_result("hi")


# ------------------------------------------------------- the checks on _meta


def test_missing_meta_keys_are_invalid_params_naming_them(lab: Callable[..., Lab]) -> None:
    server = lab()
    only_version = call(1, "tools/list", {"_meta": {PROTOCOL_VERSION: VERSION}})
    assert error(request(server, only_version)) == {"code": -32602, "message": (
        f"Invalid params: params._meta lacks {CLIENT_CAPABILITIES}, which every 2026-07-28 "
        "request carries")}
    # Modern-only methods are served statelessly even without _meta: told what is missing.
    assert error(request(server, call(2, "server/discover")))["message"] == (
        f"Invalid params: params._meta lacks {PROTOCOL_VERSION}, {CLIENT_CAPABILITIES}, which "
        "every 2026-07-28 request carries")


def test_a_stateless_only_server_wants_meta_on_every_request(lab: Callable[..., Lab]) -> None:
    server = lab("--era", "stateless")
    for msg_id, method in enumerate(("tools/list", "ping", "server/discover"), 1):
        assert error(request(server, call(msg_id, method)))["code"] == -32602


@pytest.mark.parametrize(("flags", "supported"), [
    ((), ALL_VERSIONS),
    (("--era", "stateless"), [VERSION]),
])
def test_an_unserved_version_is_refused_with_the_versions_served(
        lab: Callable[..., Lab], flags: tuple[str, ...], supported: list[str]) -> None:
    message = call(1, "tools/list", {"_meta": {**meta(), PROTOCOL_VERSION: "2099-01-01"}})
    assert error(request(lab(*flags), message)) == {
        "code": -32022,
        "message": "Unsupported protocol version",
        "data": {"supported": supported, "requested": "2099-01-01"},
    }


def test_stateless_versions_knob_moves_what_is_served(lab: Callable[..., Lab]) -> None:
    server = lab("--stateless-versions", "2099-01-01")
    refused = error(request(server, stateless(1, "tools/list")))
    assert refused["code"] == -32022
    assert refused["data"]["supported"] == ["2099-01-01", *reversed(SUPPORTED_VERSIONS)]
    moved = call(2, "tools/list", {"_meta": {**meta(), PROTOCOL_VERSION: "2099-01-01"}})
    assert request(server, moved)["result"]["resultType"] == "complete"


@pytest.mark.parametrize(("method", "params"), [
    ("ping", {}),
    ("logging/setLevel", {"level": "debug"}),
    ("resources/subscribe", {"uri": "lab://counter"}),
    ("resources/unsubscribe", {"uri": "lab://counter"}),
    ("initialize", init_params()),
])
def test_methods_removed_in_the_stateless_era_are_not_found(
        lab: Callable[..., Lab], method: str, params: Message) -> None:
    assert error(request(lab(), stateless(1, method, params))) == {
        "code": -32601, "message": f"Method not found: {method} (removed in the stateless era)"}


def test_an_unknown_method_is_not_found(lab: Callable[..., Lab]) -> None:
    assert error(request(lab(), stateless(1, "tools/frobnicate"))) == {
        "code": -32601, "message": "Method not found: tools/frobnicate"}


def test_initialize_on_a_stateless_only_server_names_the_versions(
        lab: Callable[..., Lab]) -> None:
    refused = error(request(lab("--era", "stateless"), call(1, "initialize", init_params())))
    assert refused["code"] == -32022
    assert refused["data"] == {"supported": [VERSION], "requested": SUPPORTED_VERSIONS[-1]}
    assert f"this server speaks only {VERSION}" in refused["message"]


# ------------------------------------------------------------------- results


def test_results_carry_result_type_server_info_and_cache_hints(lab: Callable[..., Lab]) -> None:
    server = lab()
    assert request(server, tool(1, "echo", {"text": "hi"}))["result"] == complete(
        text_result("hi"))
    read = request(server, stateless(2, "resources/read", {"uri": "lab://static/hello.txt"}))
    assert read["result"] == cacheable({"contents": [{
        "uri": "lab://static/hello.txt", "mimeType": "text/plain",
        "text": "Hello from the mcp_nb lab server.\n"}]})
    tools = request(server, stateless(3, "tools/list"))["result"]
    assert (tools["resultType"], tools["ttlMs"], tools["_meta"]) == (
        "complete", 0, {SERVER_INFO: LAB_INFO})
    completion = stateless(4, "completion/complete", {
        "ref": {"type": "ref/prompt", "name": "greet"},
        "argument": {"name": "style", "value": "f"}})
    assert request(server, completion)["result"] == complete(
        {"completion": {"values": ["formal"], "total": 1, "hasMore": False}})


def test_an_unknown_resource_is_invalid_params_in_this_era(lab: Callable[..., Lab]) -> None:
    reply = request(lab(), stateless(1, "resources/read", {"uri": "lab://nope"}))
    assert error(reply) == {"code": -32602, "message": "Resource not found",
                            "data": {"uri": "lab://nope"}}


def test_omit_result_type_leaves_it_out_of_complete_results_only(
        lab: Callable[..., Lab]) -> None:
    server = lab("--omit-result-type")
    echo = request(server, tool(1, "echo", {"text": "hi"}))["result"]
    assert echo == {**text_result("hi"), "_meta": {SERVER_INFO: LAB_INFO}}
    asking = request(server, tool(2, "list_roots", capabilities={"roots": {}}))["result"]
    assert asking["resultType"] == "input_required"


def test_the_eras_share_a_connection_in_any_order(lab: Callable[..., Lab]) -> None:
    server = lab()
    # Stateless first: no "initialize first" error ...
    assert request(server, tool(1, "bump"))["result"] == complete(
        text_result("counter is now 1"))
    # ... then a handshake, whose results stay as they were ...
    initialize(server)
    assert request(server, call(2, "tools/call", {"name": "bump", "arguments": {}}))[
        "result"] == text_result("counter is now 2")
    # ... and stateless requests are still served statelessly (the state is shared).
    read = request(server, stateless(3, "resources/read", {"uri": "lab://counter"}))
    assert read["result"]["contents"][0]["text"] == "2"


# ------------------------------------------------------ multi round-trip tools


@pytest.mark.parametrize(
    ("tool_name", "arguments", "capability", "method", "params", "answer", "text"), ROUND_TRIPS)
def test_multi_round_trip(lab: Callable[..., Lab], tool_name: str, arguments: Message,
                          capability: str, method: str, params: Message, answer: Message,
                          text: str) -> None:
    server = lab()
    first = tool(1, tool_name, arguments, capabilities={capability: {}})
    asked = request(server, first)["result"]
    key = f"{capability}-1"
    state = asked["requestState"]
    assert asked == {
        "resultType": "input_required",
        "inputRequests": {key: {"method": method, "params": params}},
        "requestState": state,
        "_meta": {SERVER_INFO: LAB_INFO},
    }
    # Opaque to clients; for the record, base64url JSON naming the round to answer.
    assert json.loads(base64.urlsafe_b64decode(state))["round"] == 1
    done = request(server, retry(first, 2, {key: answer}, state))
    assert done == {"jsonrpc": "2.0", "id": 2, "result": complete(text_result(text))}
    assert not server.seen  # nothing was sent to the client in between: no server requests


@pytest.mark.parametrize(
    ("tool_name", "arguments", "capability", "method", "params", "answer", "text"), ROUND_TRIPS)
def test_multi_round_trip_needs_the_client_capability(
        lab: Callable[..., Lab], tool_name: str, arguments: Message, capability: str,
        method: str, params: Message, answer: Message, text: str) -> None:
    refused = error(request(lab(), tool(1, tool_name, arguments, capabilities={"other": {}})))
    assert refused == {
        "code": -32021,
        "message": f"Missing required client capability: {tool_name} needs {method}, and the "
                   f"request's {CLIENT_CAPABILITIES} lacks {capability!r}",
        "data": {"requiredCapabilities": {capability: {}}},
    }


def test_a_retry_without_the_answer_is_asked_again(lab: Callable[..., Lab]) -> None:
    server = lab()
    first = tool(1, "list_roots", capabilities={"roots": {}})
    asked = request(server, first)["result"]
    again = request(server, retry(first, 2, {"elicitation-1": {}}, asked["requestState"]))
    assert again["result"] == asked


def test_answers_without_request_state_are_not_taken(lab: Callable[..., Lab]) -> None:
    server = lab()
    first = tool(1, "list_roots", capabilities={"roots": {}})
    asked = request(server, first)["result"]
    unasked = request(server, retry(first, 2, {"roots-1": {"roots": []}}, None))["result"]
    assert unasked == asked  # a first attempt: the state says which question is answered


def test_request_state_is_bound_to_its_request(lab: Callable[..., Lab]) -> None:
    server = lab()
    first = tool(1, "ask_llm", {"prompt": "a"}, capabilities={"sampling": {}})
    state = request(server, first)["result"]["requestState"]
    other = tool(2, "ask_llm", {"prompt": "b"}, capabilities={"sampling": {}})
    moved = retry(other, 3, {"sampling-1": {"content": {"type": "text", "text": "x"}}}, state)
    assert error(request(server, moved)) == {"code": -32602, "message": (
        "Invalid params: requestState was issued for a different request (method, name or "
        "arguments differ); retry with the original request's params")}
    forged = retry(first, 4, {}, "not base64 at all!")
    assert error(request(server, forged)) == {
        "code": -32602, "message": "Invalid params: requestState is not one this server issued"}


def test_input_rounds_asks_again_under_a_new_key(lab: Callable[..., Lab]) -> None:
    server = lab("--input-rounds", "2")
    first = tool(1, "ask_llm", {"prompt": "Capital?"}, capabilities={"sampling": {}})
    one = request(server, first)["result"]
    assert list(one["inputRequests"]) == ["sampling-1"]
    paris = {"role": "assistant", "content": {"type": "text", "text": "Paris"}}
    two = request(server, retry(first, 2, {"sampling-1": paris}, one["requestState"]))["result"]
    assert two["resultType"] == "input_required"
    assert list(two["inputRequests"]) == ["sampling-2"]
    assert two["inputRequests"]["sampling-2"] == one["inputRequests"]["sampling-1"]
    # The first answer rides in the state, not in the server.
    assert json.loads(base64.urlsafe_b64decode(two["requestState"]))["answers"] == ["Paris"]
    lyon = {"role": "assistant", "content": {"type": "text", "text": "Lyon"}}
    done = request(server, retry(first, 3, {"sampling-2": lyon}, two["requestState"]))
    assert done["result"] == complete(text_result("Paris\nLyon"))


def test_an_unusable_answer_is_a_tool_error(lab: Callable[..., Lab]) -> None:
    server = lab()
    first = tool(1, "ask_llm", {"prompt": "x"}, capabilities={"sampling": {}})
    state = request(server, first)["result"]["requestState"]
    done = request(server, retry(first, 2, {"sampling-1": {"content": []}}, state))
    assert done["result"] == complete(text_result(
        "The client's sampling result contained no text content.", is_error=True))


# ---------------------------------------------------- logging, progress, cancel


@pytest.mark.parametrize(("level", "logged"), [
    (None, []),
    ("info", ["info"]),
    ("debug", ["info", "debug"]),
])
def test_log_messages_follow_the_request_log_level(
        lab: Callable[..., Lab], level: str | None, logged: list[str]) -> None:
    server = lab()
    fields = {} if level is None else {LOG_LEVEL: level}
    request(server, tool(1, "echo", {"text": "hi"}, **fields))
    # Log messages precede the response on the one ordered stdout.
    assert [m["level"] for m in seen_methods(server, "notifications/message")] == logged


def test_an_unknown_log_level_is_invalid_params(lab: Callable[..., Lab]) -> None:
    reply = request(lab(), tool(1, "echo", {"text": "hi"}, **{LOG_LEVEL: "loud"}))
    assert error(reply)["code"] == -32602


def test_progress_and_cancellation_work_as_before(lab: Callable[..., Lab]) -> None:
    server = lab()
    slow = tool(1, "slow", {"steps": 2, "interval": 0.01}, progressToken="p")
    assert request(server, slow)["result"] == complete(text_result("done after 2 steps"))
    assert [p["progress"] for p in seen_methods(server, "notifications/progress")] == [1, 2]
    server.send(tool(2, "slow", {"steps": 1000, "interval": 1}))
    server.send(notification("notifications/cancelled", {"requestId": 2}))
    server.wait_stderr("slow cancelled")
    # The next response is to the next request: the cancelled one never answers.
    assert request(server, tool(3, "echo", {"text": "after"}))["id"] == 3
    assert all(message.get("id") != 2 for message in server.seen)


# ------------------------------------------------------- subscriptions/listen


def listen(server: Lab, msg_id: int | str, notifications: Message) -> Message:
    """Open a subscriptions/listen request and return its acknowledgement."""
    server.send(stateless(msg_id, "subscriptions/listen", {"notifications": notifications}))
    ack = server.recv()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    return ack


def test_listen_acknowledges_what_it_honours_and_delivers_updates(
        lab: Callable[..., Lab]) -> None:
    server = lab()
    ack = listen(server, "sub", {"resourceSubscriptions": ["lab://counter", "lab://nope"],
                                 "toolsListChanged": False, "promptsListChanged": True})
    assert ack == notification("notifications/subscriptions/acknowledged", {
        "notifications": {"promptsListChanged": True, "resourceSubscriptions": ["lab://counter"]},
        "_meta": {SUBSCRIPTION_ID: "sub"},
    })
    assert request(server, tool(1, "bump"))["result"] == complete(
        text_result("counter is now 1"))
    # Sent while bump ran, so before bump's response.
    assert server.seen == [notification("notifications/resources/updated", {
        "uri": "lab://counter", "_meta": {SUBSCRIPTION_ID: "sub"}})]


def test_listen_delivers_list_changes_it_was_asked_for(lab: Callable[..., Lab]) -> None:
    server = lab("--list-changes")
    listen(server, 7, {"toolsListChanged": True})
    assert request(server, tool(1, "toggle_bonus"))["result"] == complete(
        text_result("bonus tool, prompt and resource added"))
    assert server.seen == [notification("notifications/tools/list_changed",
                                        {"_meta": {SUBSCRIPTION_ID: 7}})]
    tools = request(server, stateless(2, "tools/list"))["result"]["tools"]
    assert tools[-2:][0]["name"] == "toggle_bonus" and tools[-1]["name"] == "bonus"
    assert request(server, tool(3, "bonus"))["result"] == complete(
        text_result("You found the bonus."))
    prompt = request(server, stateless(4, "prompts/get", {"name": "bonus"}))["result"]
    assert prompt["messages"][0]["content"]["text"] == "You found the bonus."
    read = request(server, stateless(5, "resources/read", {"uri": "lab://bonus"}))["result"]
    assert read["contents"][0]["text"] == "You found the bonus."


def test_cancelling_listen_stops_delivery_without_a_response(lab: Callable[..., Lab]) -> None:
    server = lab()
    listen(server, 5, {"resourceSubscriptions": ["lab://counter"]})
    server.send(notification("notifications/cancelled", {"requestId": 5}))
    server.wait_stderr("cancelling request 5")
    request(server, tool(1, "bump"))
    assert server.seen == []  # neither an update nor a response to the listen request


def test_shutdown_completes_open_subscriptions(lab: Callable[..., Lab]) -> None:
    server = lab()
    listen(server, 5, {"toolsListChanged": True})
    server.close_stdin()
    assert server.recv() == {"jsonrpc": "2.0", "id": 5, "result": complete(
        {}, **{SUBSCRIPTION_ID: 5})}
    server.assert_stdout_closed()
    assert server.exit_code() == 0


def test_listen_needs_a_filter_object(lab: Callable[..., Lab]) -> None:
    server = lab()
    assert error(request(server, stateless(1, "subscriptions/listen")))["code"] == -32602
    bad = stateless(2, "subscriptions/listen", {"notifications": {"resourceSubscriptions": 3}})
    assert error(request(server, bad)) == {"code": -32602, "message": (
        "Invalid params: notifications.resourceSubscriptions must be an array of URIs")}


def test_list_changes_reach_a_handshake_era_session_too(lab: Callable[..., Lab]) -> None:
    server = lab("--list-changes")
    initialize(server)
    reply = request(server, call(1, "tools/call", {"name": "toggle_bonus", "arguments": {}}))
    assert reply["result"] == text_result("bonus tool, prompt and resource added")
    changes = [m["method"] for m in server.seen if m["method"] != "notifications/message"]
    assert changes == [
        "notifications/tools/list_changed", "notifications/prompts/list_changed",
        "notifications/resources/list_changed"]
    names = [t["name"] for t in request(server, call(2, "tools/list"))["result"]["tools"]]
    assert names[-1] == "bonus"
    request(server, call(3, "tools/call", {"name": "toggle_bonus", "arguments": {}}))
    names = [t["name"] for t in request(server, call(4, "tools/list"))["result"]["tools"]]
    assert "bonus" not in names


# ------------------------------------------------------------------ the knobs


@pytest.mark.parametrize(("flags", "complaint"), [
    (["--era", "stateless", "--reject-version"],
     "--reject-version concerns the handshake era, which --era stateless does not serve"),
    (["--era", "stateless", "--http", "--no-delete"],
     "--no-delete concerns the handshake era"),
    (["--era", "stateless", "--sse"], "--sse serves the handshake era's HTTP+SSE transport"),
    (["--era", "handshake", "--input-rounds", "2"],
     "--input-rounds concerns the stateless era, which --era handshake does not serve"),
    (["--era", "handshake", "--omit-result-type"], "--omit-result-type concerns the stateless"),
    (["--input-rounds", "0"], "must be >= 1"),
    (["--era", "modern"], "invalid choice: 'modern'"),
])
def test_knobs_of_an_era_not_served_are_refused(flags: list[str], complaint: str) -> None:
    result = subprocess.run([sys.executable, "-m", "mcp_nb.lab", *flags], capture_output=True,
                            text=True, timeout=10)
    assert result.returncode == 2 and complaint in result.stderr


def test_help_documents_the_era_knobs() -> None:
    result = subprocess.run([sys.executable, "-m", "mcp_nb.lab", "--help"], capture_output=True,
                            text=True, timeout=10)
    for flag in ("--era", "--list-changes", "--stateless-versions", "--omit-result-type",
                 "--input-rounds"):
        assert flag in result.stdout
