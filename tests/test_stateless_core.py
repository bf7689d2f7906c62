"""The stateless era's sans-I/O rules: request metadata, result types, input rounds, the probe."""

from __future__ import annotations

import base64

import pytest

from mcp_nb.protocol import stateless
from mcp_nb.protocol.errors import (
    HEADER_MISMATCH,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    UnsupportedProtocolVersionError,
)
from mcp_nb.protocol.versions import LATEST_STATELESS_VERSION, Era, era_of
from mcp_nb.transports.http_messages import Outgoing, header_value

V = LATEST_STATELESS_VERSION
DISCOVER = {"supportedVersions": [V], "capabilities": {"tools": {}}, "resultType": "complete",
            "ttlMs": 0, "cacheScope": "public",
            "_meta": {stateless.META_SERVER_INFO: {"name": "peer", "version": "1"}}}


def test_eras_of_versions() -> None:
    assert era_of("2025-11-25") is Era.HANDSHAKE and era_of("2024-11-05") is Era.HANDSHAKE
    assert era_of(V) is Era.STATELESS
    assert era_of("1999-01-01") is None


def test_request_meta_and_merging_keep_the_callers_own_meta() -> None:
    meta = stateless.request_meta(V, {"sampling": {}}, {"name": "c", "version": "1"}, "info")
    assert meta == {
        stateless.META_PROTOCOL_VERSION: V,
        stateless.META_CLIENT_CAPABILITIES: {"sampling": {}},
        stateless.META_CLIENT_INFO: {"name": "c", "version": "1"},
        stateless.META_LOG_LEVEL: "info",
    }
    params = stateless.with_meta({"name": "add", "_meta": {"progressToken": 7}}, meta)
    assert params["_meta"]["progressToken"] == 7 and params["name"] == "add"
    assert stateless.is_stateless_request(params)
    assert not stateless.is_stateless_request({"name": "add"})
    assert stateless.missing_request_meta(params) == []
    assert stateless.missing_request_meta({"_meta": {stateless.META_PROTOCOL_VERSION: V}}) == [
        stateless.META_CLIENT_CAPABILITIES]
    assert stateless.missing_request_meta(None) == list(stateless.REQUIRED_REQUEST_META)


def test_result_type_absent_means_complete() -> None:
    assert stateless.result_type({}) == "complete"
    assert stateless.result_type({"resultType": "input_required"}) == "input_required"
    assert stateless.server_info_of(DISCOVER) == {"name": "peer", "version": "1"}
    assert stateless.server_info_of({"_meta": "nonsense"}) is None


def test_input_required_is_validated() -> None:
    needed = stateless.parse_input_required({
        "resultType": "input_required", "requestState": "opaque",
        "inputRequests": {"who": {"method": "elicitation/create", "params": {"message": "?"}}},
    })
    assert needed.request_state == "opaque"
    assert needed.requests == {"who": {"method": "elicitation/create", "params": {"message": "?"}}}
    state_only = stateless.parse_input_required({"requestState": "s"})
    assert state_only.requests == {} and state_only.request_state == "s"
    bad = [
        ({}, "inputRequests or requestState"),
        ({"requestState": 3}, "requestState must be a string"),
        ({"inputRequests": []}, "must be an object"),
        ({"inputRequests": {"x": {"method": "tools/call"}}}, "only elicitation/create"),
        ({"inputRequests": {"x": "roots/list"}}, "not a {method, params} object"),
        ({"inputRequests": {"x": {"method": "roots/list", "params": 1}}}, "params that are not"),
    ]
    for result, words in bad:
        with pytest.raises(ValueError, match=words.replace("{", r"\{").replace("}", r"\}")):
            stateless.parse_input_required(result)


def test_retry_params_echo_the_state_and_replace_earlier_answers() -> None:
    first = stateless.retry_params({"name": "t", "requestState": "old", "inputResponses": {"a": 1}},
                                   {"b": 2}, "new")
    assert first == {"name": "t", "inputResponses": {"b": 2}, "requestState": "new"}
    # No requestState in the input_required result: none may be sent back.
    assert stateless.retry_params(first, {}, None) == {"name": "t"}


@pytest.mark.parametrize(("kwargs", "verdict", "words"), [
    ({"result": DISCOVER}, "stateless", "speaks 2026-07-28"),
    ({"result": {**DISCOVER, "supportedVersions": ["2025-11-25"]}}, "handshake",
     "lists no stateless-era version"),
    ({"result": {"tools": []}}, "handshake", "not a discover result"),
    ({"error": (METHOD_NOT_FOUND, "Method not found", None)}, "handshake", "-32601"),
    ({"error": (-32000, "Server not initialized", None)}, "handshake", "-32000"),
    ({"error": (-32602, "Invalid params", None)}, "handshake", "not a stateless-era error"),
    ({"error": (None, "<html>", None), "http_status": 404}, "handshake", "HTTP 404"),
    ({"timed_out": True}, "handshake", "no answer"),
    ({"error": (UNSUPPORTED_PROTOCOL_VERSION, "no", {"supported": ["2025-06-18"]})},
     "handshake", "only handshake-era versions"),
    ({"error": (UNSUPPORTED_PROTOCOL_VERSION, "no", {"supported": ["2099-01-01"]})},
     "fail", "none of which this client speaks"),
    ({"error": (UNSUPPORTED_PROTOCOL_VERSION, "no", "garbage")}, "fail", "no version"),
    ({"error": (HEADER_MISMATCH, "Header mismatch", None)}, "fail", "rejected the probe"),
    ({"error": (MISSING_REQUIRED_CLIENT_CAPABILITY, "need sampling", None)}, "fail",
     "rejected the probe"),
])
def test_the_probe_falls_back_on_anything_not_recognisably_modern(
        kwargs: dict, verdict: str, words: str) -> None:
    judged = stateless.judge_probe(V, **kwargs)
    assert judged.verdict == verdict
    assert words in judged.reason


def test_the_probe_retries_at_a_version_both_sides_speak() -> None:
    error = (UNSUPPORTED_PROTOCOL_VERSION, "no", {"supported": ["2026-07-28", "2025-11-25"]})
    judged = stateless.judge_probe("2027-01-01", error=error)
    assert (judged.verdict, judged.version) == ("retry", "2026-07-28")
    ok = stateless.judge_probe(V, result=DISCOVER)
    assert ok.version == V and ok.discover is not None
    assert ok.discover.serverInfo is not None and ok.discover.serverInfo.name == "peer"


def test_unsupported_protocol_version_error_names_both_sides() -> None:
    exc = UnsupportedProtocolVersionError(requested="2026-07-28", server_supported=["2099-01-01"],
                                          supported=("2026-07-28",), hint="try auto")
    text = str(exc)
    assert exc.code == UNSUPPORTED_PROTOCOL_VERSION
    assert "'2026-07-28'" in text and "2099-01-01" in text and text.endswith("try auto")


@pytest.mark.parametrize(("value", "header"), [
    ("us-west1", "us-west1"),
    ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
    (" padded ", "=?base64?IHBhZGRlZCA=?="),
    ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
    ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ("", "=?base64??="),
])
def test_header_values_follow_the_base64_sentinel_rule(value: str, header: str) -> None:
    assert header_value(value) == header
    if header.startswith("=?base64?"):
        assert base64.b64decode(header[9:-2]).decode() == value


def test_stateless_posts_mirror_method_and_name_into_headers() -> None:
    frame = (b'{"jsonrpc":"2.0","id":4,"method":"resources/read","params":'
             b'{"uri":"file:///\\u00e9t\\u00e9","_meta":' +
             f'{{"{stateless.META_PROTOCOL_VERSION}":"{V}","{stateless.META_CLIENT_CAPABILITIES}"'
             f':{{}}}}}}}}'.encode())
    outgoing = Outgoing.read(frame)
    assert outgoing.stateless_version == V
    headers = outgoing.stateless_headers()
    assert headers["MCP-Protocol-Version"] == V and headers["Mcp-Method"] == "resources/read"
    assert base64.b64decode(headers["Mcp-Name"][9:-2]).decode() == "file:///été"
    handshake = Outgoing.read(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
    assert handshake.stateless_version is None
