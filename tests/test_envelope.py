"""The JSON-RPC 2.0 envelope: parsing, rejecting, encoding, request ids."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_nb.protocol import envelope
from mcp_nb.protocol.envelope import (
    DEFAULT_MAX_MESSAGE_BYTES,
    ErrorObject,
    ErrorResponse,
    IdAllocator,
    Notification,
    Request,
    Response,
    decode,
    encode,
    error_response,
    parse,
    parse_object,
    response_id_from_edges,
    to_dict,
)
from mcp_nb.protocol.errors import (
    ERROR_NAMES,
    INVALID_REQUEST,
    PARSE_ERROR,
    EnvelopeError,
    McpError,
)

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def rejected(data: bytes | str, **kwargs: Any) -> EnvelopeError:
    """Parse ``data`` expecting an EnvelopeError, and return it."""
    with pytest.raises(EnvelopeError) as info:
        parse(data, **kwargs)
    return info.value


def msg(**members: Any) -> str:
    """A JSON-RPC 2.0 object with ``members`` (jsonrpc added unless given)."""
    return json.dumps({"jsonrpc": "2.0", **members})


# -- parsing valid messages ------------------------------------------------------------------


def test_parse_request():
    message = parse(b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call",'
                    b' "params": {"name": "add", "arguments": {"a": 1}}}')
    assert message == Request(7, "tools/call", {"name": "add", "arguments": {"a": 1}})
    assert type(message) is Request


def test_parse_request_with_string_id_and_no_params():
    message = parse('{"jsonrpc": "2.0", "id": "abc-1", "method": "ping"}')
    assert message == Request("abc-1", "ping", None)


def test_parse_notification():
    message = parse(msg(method="notifications/progress", params={"progress": 1}))
    assert message == Notification("notifications/progress", {"progress": 1})
    assert type(message) is Notification


def test_parse_notification_without_params():
    assert parse(msg(method="notifications/initialized")) == Notification(
        "notifications/initialized", None
    )


def test_parse_result_response():
    message = parse(msg(id=3, result={"tools": []}))
    assert message == Response(3, {"tools": []})
    assert type(message) is Response


def test_parse_empty_result_response():
    # ping's result is {} and must not be confused with "no result".
    assert parse(msg(id=1, result={})) == Response(1, {})


def test_parse_error_response():
    message = parse(msg(id="r1", error={"code": -32601, "message": "Method not found",
                                        "data": {"method": "nope"}}))
    assert message == ErrorResponse("r1", ErrorObject(-32601, "Method not found",
                                                      {"method": "nope"}))
    assert type(message) is ErrorResponse


def test_parse_error_response_with_null_id():
    message = parse(msg(id=None, error={"code": -32700, "message": "Parse error"}))
    assert message == ErrorResponse(None, ErrorObject(-32700, "Parse error", None))


def test_decode_returns_the_decoded_json_too():
    text = msg(id=4, method="tools/list", params={"cursor": "x"})
    raw, message = decode(text.encode())
    assert raw == {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"cursor": "x"}}
    assert message == Request(4, "tools/list", {"cursor": "x"})


def test_decode_batch_returns_the_decoded_list():
    items = [{"jsonrpc": "2.0", "id": 1, "result": {}},
             {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}}]
    raw, messages = decode(json.dumps(items), allow_batch=True)
    assert raw == items
    assert messages == [Response(1, {}),
                        Notification("notifications/message", {"level": "info"})]


def test_parse_object_validates_an_already_decoded_value():
    assert parse_object({"jsonrpc": "2.0", "id": 1, "method": "ping"}) == Request(1, "ping")
    with pytest.raises(EnvelopeError, match="must be a JSON object, got list"):
        parse_object([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])


def test_parse_accepts_str_and_bytes_alike():
    text = msg(id=1, method="ping")
    assert parse(text) == parse(text.encode()) == Request(1, "ping")


# -- rejecting invalid messages --------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [b"", b"{", b"not json", b'{"jsonrpc": "2.0", "id": 1,}', b"\xff\xfe\xfa", "{'a': 1}"],
)
def test_not_json_is_a_parse_error(data):
    error = rejected(data)
    assert error.code == PARSE_ERROR == -32700
    assert "not valid JSON" in error.message
    assert error.id is None


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_standard_json_constants_are_a_parse_error(constant):
    # RFC 8259 has no NaN/Infinity; Python's json accepts them unless told not to.
    error = rejected('{"jsonrpc": "2.0", "id": 1, "result": {"x": ' + constant + "}}")
    assert error.code == PARSE_ERROR


def test_deeply_nested_json_is_an_envelope_error_not_a_crash():
    # A hostile peer must not be able to raise RecursionError out of the read loop.
    for data in (b"[" * 100_000, b'{"a":' * 100_000):
        error = rejected(data, allow_batch=True)
        assert error.code == PARSE_ERROR


@pytest.mark.parametrize(
    ("data", "described"),
    [("42", "int"), ("1.5", "float"), ('"hello"', "str"), ("null", "null"),
     ("true", "bool")],
)
def test_json_that_is_not_an_object_is_invalid_request(data, described):
    error = rejected(data)
    assert error.code == INVALID_REQUEST == -32600
    assert error.message == f"a message must be a JSON object, got {described}"


def test_missing_jsonrpc_member():
    error = rejected('{"id": 5, "method": "ping"}')
    assert error.code == INVALID_REQUEST
    assert 'missing "jsonrpc": "2.0"' in error.message
    assert error.id == 5


@pytest.mark.parametrize("version", ["1.0", 2.0, "2", None])
def test_wrong_jsonrpc_version(version):
    error = rejected(json.dumps({"jsonrpc": version, "id": "q", "method": "ping"}))
    assert error.code == INVALID_REQUEST
    assert error.message == f'"jsonrpc" must be "2.0", got {version!r}'
    assert error.id == "q"


def test_request_with_null_id_is_invalid():
    error = rejected(msg(id=None, method="ping"))
    assert error.code == INVALID_REQUEST
    assert error.message == "request id must be a string or an integer, not null"
    assert error.id is None


@pytest.mark.parametrize(
    ("bad_id", "described"),
    [(True, "bool"), (False, "bool"), (1.5, "float"), ({}, "dict"), ([1], "list")],
)
def test_request_with_bad_id_type_is_invalid(bad_id, described):
    error = rejected(msg(id=bad_id, method="ping"))
    assert error.code == INVALID_REQUEST
    assert error.message == f"request id must be a string or an integer, not {described}"
    assert error.id is None


@pytest.mark.parametrize("bad_id", [None, True, 1.5, {}])
def test_result_response_with_bad_id_is_invalid(bad_id):
    error = rejected(msg(id=bad_id, result={}))
    assert error.code == INVALID_REQUEST
    assert error.message.startswith("response id must be a string or an integer, not ")


def test_result_response_without_id_is_invalid():
    error = rejected(msg(result={}))
    assert error.code == INVALID_REQUEST
    assert error.message == "response id must be a string or an integer, not null"


@pytest.mark.parametrize("bad_id", [True, 1.5, {}, []])
def test_error_response_with_bad_id_is_invalid(bad_id):
    error = rejected(msg(id=bad_id, error={"code": -32603, "message": "boom"}))
    assert error.code == INVALID_REQUEST
    assert "error response id must be a string, an integer or null" in error.message


def test_error_response_without_id_member_is_invalid():
    # JSON-RPC 2.0 section 5: "id" is REQUIRED in every response; it is null (not absent)
    # when the request's id could not be determined.
    error = rejected(msg(error={"code": -32700, "message": "Parse error"}))
    assert error.code == INVALID_REQUEST


def test_result_must_be_an_object():
    error = rejected(msg(id=9, result=[1, 2]))
    assert error.code == INVALID_REQUEST
    assert error.message == '"result" must be an object in MCP, got list'
    assert error.id == 9


def test_both_result_and_error_is_invalid():
    error = rejected(msg(id=2, result={}, error={"code": -1, "message": "x"}))
    assert error.code == INVALID_REQUEST
    assert 'must not carry both "result" and "error"' in error.message
    assert error.id == 2


@pytest.mark.parametrize("members", [{"id": 2}, {"id": 2, "method": None}, {"id": 2, "x": 1}])
def test_neither_method_result_nor_error_is_invalid(members):
    error = rejected(msg(**members))
    assert error.code == INVALID_REQUEST
    assert 'no "method", "result" or "error"' in error.message
    assert error.id == 2


@pytest.mark.parametrize(("method", "described"), [(5, "int"), (["ping"], "list"),
                                                   ({}, "dict"), (True, "bool")])
def test_method_must_be_a_string(method, described):
    error = rejected(msg(id=11, method=method))
    assert error.code == INVALID_REQUEST
    assert error.message == f'"method" must be a string, got {described}'
    assert error.id == 11


@pytest.mark.parametrize(("params", "described"), [([1, 2], "list"), ("x", "str"), (3, "int")])
def test_params_must_be_an_object(params, described):
    error = rejected(msg(id="p", method="tools/call", params=params))
    assert error.code == INVALID_REQUEST
    assert error.message == f'"params" must be an object in MCP, got {described}'
    assert error.id == "p"


def test_notification_params_must_be_an_object_too():
    error = rejected(msg(method="notifications/progress", params=[1]))
    assert error.code == INVALID_REQUEST
    assert error.id is None


@pytest.mark.parametrize(
    "error_member",
    [
        "boom",
        [],
        None,
        {},
        {"code": -32000},
        {"message": "no code"},
        {"code": "-32000", "message": "code is a string"},
        {"code": -32000.5, "message": "code is a float"},
        {"code": True, "message": "code is a bool"},
        {"code": -32000, "message": 42},
        {"code": -32000, "message": None},
    ],
)
def test_malformed_error_object(error_member):
    error = rejected(msg(id=13, error=error_member))
    assert error.code == INVALID_REQUEST
    assert error.message == (
        '"error" must be an object with an integer "code" and a string "message"'
    )
    assert error.id == 13


def test_error_object_data_is_optional_and_kept_verbatim():
    message = parse(msg(id=1, error={"code": -32000, "message": "m", "data": [1, "two"]}))
    assert message.error == ErrorObject(-32000, "m", [1, "two"])


# -- the id is recovered where possible ------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected_id"),
    [
        ('{"id": 1, "method": "ping"}', 1),
        ('{"jsonrpc": "1.0", "id": "s", "method": "ping"}', "s"),
        (msg(id=21, method=7), 21),
        (msg(id=22, method="x", params=[]), 22),
        (msg(id=23, result=[]), 23),
        (msg(id=24, result={}, error={"code": 1, "message": "m"}), 24),
        (msg(id=25, error={"code": "x"}), 25),
        (msg(id=26), 26),
        # Ids of the wrong type are never "recovered".
        (msg(id=True, method=7), None),
        (msg(id=2.5, result={}), None),
        (msg(id=[1], error={}), None),
        ("not json", None),
        ("[]", None),
    ],
)
def test_id_recovered_on_envelope_error(data, expected_id):
    error = rejected(data)
    assert error.id == expected_id
    if expected_id is not None:
        assert type(error.id) is type(expected_id)


def test_envelope_error_is_an_mcp_error_with_the_message_as_str():
    error = rejected("[1]")
    assert isinstance(error, McpError)
    assert str(error) == error.message
    assert ERROR_NAMES[error.code] == "Invalid Request"


# -- batches ---------------------------------------------------------------------------------


def test_batch_rejected_by_default():
    error = rejected(json.dumps([{"jsonrpc": "2.0", "method": "ping", "id": 1}]))
    assert error.code == INVALID_REQUEST
    assert "batches" in error.message
    assert "2025-03-26" in error.message


def test_empty_batch_rejected_even_when_allowed():
    error = rejected("[]", allow_batch=True)
    assert error.code == INVALID_REQUEST
    assert error.message == "an empty batch is not a valid message"


def test_allowed_batch_parsed_into_a_list():
    batch = json.dumps([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "result": {"ok": True}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "bad"}},
    ])
    assert parse(batch, allow_batch=True) == [
        Request(1, "ping"),
        Notification("notifications/initialized"),
        Response(2, {"ok": True}),
        ErrorResponse(None, ErrorObject(-32700, "bad")),
    ]


@pytest.mark.parametrize("bad_item", [1, [], {"jsonrpc": "2.0"}, {"id": 1, "method": "ping"}])
def test_batch_with_an_invalid_item_is_rejected(bad_item):
    batch = json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, bad_item])
    assert rejected(batch, allow_batch=True).code == INVALID_REQUEST


# -- size limit ------------------------------------------------------------------------------


def _message_of_size(size: int) -> bytes:
    """A valid notification of exactly ``size`` bytes."""
    skeleton = b'{"jsonrpc":"2.0","method":"x","params":{"p":""}}'
    padding = size - len(skeleton)
    assert padding >= 0
    data = skeleton[:-3] + b"a" * padding + skeleton[-3:]
    assert len(data) == size
    return data


def test_message_exactly_at_the_limit_is_accepted():
    data = _message_of_size(100)
    assert parse(data, max_bytes=100) == Notification("x", {"p": "a" * (100 - 48)})


def test_message_one_byte_over_the_limit_is_rejected():
    data = _message_of_size(101)
    error = rejected(data, max_bytes=100)
    assert error.code == INVALID_REQUEST
    assert error.message == ("message of 101 bytes exceeds the 100-byte limit "
                             "(raise it with the max_message_bytes option)")
    assert error.id is None


def test_size_limit_is_checked_before_parsing():
    # Garbage over the limit is "too large", not "not JSON": nothing was decoded.
    error = rejected(b"\xff" * 11, max_bytes=10)
    assert error.code == INVALID_REQUEST
    assert "exceeds the 10-byte limit" in error.message


def test_size_limit_counts_utf8_bytes_of_str_input():
    text = json.dumps({"jsonrpc": "2.0", "method": "x", "params": {"p": "é" * 10}},
                      ensure_ascii=False)  # each é is 2 bytes in UTF-8
    n_bytes = len(text.encode())
    assert n_bytes == len(text) + 10
    assert parse(text, max_bytes=n_bytes) == Notification("x", {"p": "é" * 10})
    error = rejected(text, max_bytes=n_bytes - 1)
    assert f"message of {n_bytes} bytes" in error.message


def test_default_limit_is_64_mebibytes_and_the_error_names_the_option():
    # A PDF or a few images as base64 in one tool result must fit (docs/guide.md).
    assert DEFAULT_MAX_MESSAGE_BYTES == 64 * 1024 * 1024
    assert parse(_message_of_size(DEFAULT_MAX_MESSAGE_BYTES)).method == "x"
    error = rejected(_message_of_size(DEFAULT_MAX_MESSAGE_BYTES + 1))
    assert f"exceeds the {DEFAULT_MAX_MESSAGE_BYTES}-byte limit" in error.message
    assert "max_message_bytes" in error.message


# -- the id of a message discarded for its size ----------------------------------------------

def _edges(message: dict, keep: int = 40) -> tuple[bytes, bytes]:
    """The first and last ``keep`` bytes of ``message`` padded to far more than ``2 * keep``."""
    text = json.dumps(message).encode()
    return text[:keep], text[-keep:]


@pytest.mark.parametrize("message", [
    {"jsonrpc": "2.0", "id": 12, "result": {"content": [{"text": "x" * 500}]}},
    {"result": {"content": [{"text": "x" * 500}]}, "jsonrpc": "2.0", "id": 12},  # TS SDK order
    {"jsonrpc": "2.0", "id": "r-12", "error": {"code": 1, "message": "x" * 500}},
    {"id": 12, "jsonrpc": "2.0", "result": {"text": "x" * 500, "id": 99}},
])
def test_a_responses_id_is_read_from_its_two_ends(message: dict) -> None:
    assert response_id_from_edges(*_edges(message)) == message["id"]


@pytest.mark.parametrize("message", [
    # A server's own request: its id is the server's, not one of ours.
    {"jsonrpc": "2.0", "id": 12, "method": "sampling/createMessage", "params": {"x": "y" * 500}},
    {"params": {"x": "y" * 500}, "method": "sampling/createMessage", "jsonrpc": "2.0", "id": 12},
    # The id is in neither end.
    {"jsonrpc": "2.0", "result": {"content": "x" * 500}, "id": 12, "extra": "z" * 100},
    {"jsonrpc": "2.0", "id": None, "error": {"code": 1, "message": "x" * 500}},
    ["not", "an", "object", "x" * 500],
])
def test_no_id_is_guessed_when_the_ends_do_not_show_a_response_and_its_id(message: object) -> None:
    assert response_id_from_edges(*_edges(message)) is None  # type: ignore[arg-type]


# -- encoding --------------------------------------------------------------------------------


def test_encode_is_compact_utf8_without_raw_newlines():
    data = encode(Request(1, "tools/call", {"text": "line one\nline two\r\n", "name": "ünï"}))
    assert isinstance(data, bytes)
    assert b"\n" not in data
    assert b"\r" not in data
    assert b": " not in data and b", " not in data
    assert "ünï".encode() in data  # readable, not \u-escaped
    assert data == (
        '{"jsonrpc":"2.0","id":1,"method":"tools/call",'
        '"params":{"text":"line one\\nline two\\r\\n","name":"ünï"}}'
    ).encode()


def test_encode_accepts_a_plain_dict():
    assert encode({"jsonrpc": "2.0", "method": "a\nb"}) == b'{"jsonrpc":"2.0","method":"a\\nb"}'


@pytest.mark.parametrize(
    ("message", "wire"),
    [
        (Request(1, "ping"), {"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        (Request("a", "m", {}), {"jsonrpc": "2.0", "id": "a", "method": "m", "params": {}}),
        (Notification("n"), {"jsonrpc": "2.0", "method": "n"}),
        (Notification("n", {"k": 1}), {"jsonrpc": "2.0", "method": "n", "params": {"k": 1}}),
        (Response(2, {}), {"jsonrpc": "2.0", "id": 2, "result": {}}),
        (ErrorResponse(3, ErrorObject(-32601, "nope")),
         {"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "nope"}}),
        (ErrorResponse(None, ErrorObject(-32700, "bad", {"line": 1})),
         {"jsonrpc": "2.0", "id": None,
          "error": {"code": -32700, "message": "bad", "data": {"line": 1}}}),
    ],
)
def test_to_dict(message, wire):
    out = to_dict(message)
    assert out == wire
    assert list(out) == list(wire)  # jsonrpc first, params/data omitted when None
    assert parse(encode(message)) == message


def test_error_response_helper():
    data = error_response(None, PARSE_ERROR, "Parse error", {"detail": "x"})
    assert json.loads(data) == {"jsonrpc": "2.0", "id": None,
                                "error": {"code": -32700, "message": "Parse error",
                                          "data": {"detail": "x"}}}
    assert parse(data) == ErrorResponse(None, ErrorObject(-32700, "Parse error", {"detail": "x"}))


# -- property tests --------------------------------------------------------------------------

# Text biased towards the characters that break framing and escaping.  Lone surrogates
# (not encodable as UTF-8) have their own tests below.
tricky_text = st.text(
    alphabet=st.one_of(
        st.sampled_from(["\n", "\r", "\t", "\u2028", "\u2029", '"', "\\", "\x00", "é", "💥",
                         "中"]),
        st.characters(codec="utf-8"),
    ),
    max_size=20,
)
json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(),
    st.floats(allow_nan=False, allow_infinity=False), tricky_text,
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(tricky_text, children, max_size=4),
    max_leaves=12,
)
json_objects = st.dictionaries(tricky_text, json_values, max_size=4)
request_ids = st.integers() | tricky_text

messages = st.one_of(
    st.builds(Request, request_ids, tricky_text, st.none() | json_objects),
    st.builds(Notification, tricky_text, st.none() | json_objects),
    st.builds(Response, request_ids, json_objects),
    st.builds(
        ErrorResponse,
        st.none() | request_ids,
        st.builds(ErrorObject, st.integers(), tricky_text,
                  json_values.filter(lambda v: v is not None)),
    ),
)


@FAST
@given(messages)
def test_the_prebuilt_encoder_writes_what_the_json_module_writes(message):
    """encode() skips JSONEncoder.encode's per-call setup; the bytes must not change."""
    if envelope._ENCODE_FAST is None:
        pytest.skip("this Python has no C encoder to prebuild")
    wire = to_dict(message)
    assert envelope._ENCODE_FAST(wire) == envelope._ENCODER.encode(wire)


@pytest.mark.parametrize("prebuilt", [True, False], ids=["prebuilt encoder", "json module"])
def test_encode_refuses_what_json_cannot_carry(prebuilt, monkeypatch):
    if not prebuilt:
        monkeypatch.setattr(envelope, "_ENCODE_FAST", None)
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    with pytest.raises(ValueError, match="Circular reference"):
        encode({"jsonrpc": "2.0", "method": "m", "params": cycle})
    with pytest.raises(ValueError, match="not JSON compliant"):
        encode({"jsonrpc": "2.0", "method": "m", "params": {"x": float("nan")}})
    with pytest.raises(TypeError, match="not JSON serializable"):
        encode({"jsonrpc": "2.0", "method": "m", "params": {"x": object()}})


@pytest.mark.parametrize("frame", [
    b' {"jsonrpc":"2.0","id":1,"result":{}}',
    b'{"jsonrpc":"2.0","id":1,"result":{}}\t ',
    b'{"jsonrpc":"2.0","id":1,"result":{}}',
])
def test_whitespace_around_a_message_is_allowed(frame):
    assert parse(frame) == Response(1, {})


@pytest.mark.parametrize(("frame", "wording"), [
    (b'{"jsonrpc":"2.0","id":1,"result":{}} {}', "Extra data: line 1 column 38"),
    (b'{"jsonrpc":"2.0","id":1,"result":{', "Expecting property name enclosed in double quotes"),
    (b"", "Expecting value: line 1 column 1"),
    (b"  ", "Expecting value: line 1 column 3"),
    (b'{"x":Infinity}', "Infinity is not a JSON value"),
])
def test_json_errors_are_worded_by_the_json_module(frame, wording):
    with pytest.raises(EnvelopeError) as caught:
        parse(frame)
    assert caught.value.code == PARSE_ERROR
    assert wording in caught.value.message


@FAST
@given(messages)
def test_encode_then_parse_round_trips(message):
    data = encode(message)
    assert b"\n" not in data
    assert parse(data) == message
    assert parse(data.decode()) == message


@FAST
@given(
    st.one_of(
        json_values,
        # Objects that look a lot like messages, with members of random types.
        st.fixed_dictionaries(
            {},
            optional={
                "jsonrpc": st.sampled_from(["2.0", "1.0", 2]) | json_values,
                "id": json_values,
                "method": json_values,
                "params": json_values,
                "result": json_values,
                "error": json_values | st.fixed_dictionaries(
                    {}, optional={"code": json_values, "message": json_values,
                                  "data": json_values}),
            },
        ),
    ),
    st.booleans(),
)
def test_random_json_never_raises_anything_but_envelope_error(value, allow_batch):
    data = json.dumps(value).encode()
    try:
        result = parse(data, allow_batch=allow_batch)
    except EnvelopeError as exc:
        assert exc.code in (PARSE_ERROR, INVALID_REQUEST)
        assert exc.id is None or type(exc.id) in (int, str)
        return
    # Whatever parses must survive a round trip through the wire form.
    items = result if isinstance(result, list) else [result]
    assert isinstance(value, list) == isinstance(result, list)
    for item in items:
        assert parse(encode(item)) == item


@FAST
@given(st.binary(max_size=64))
def test_random_bytes_never_raise_anything_but_envelope_error(data):
    try:
        parse(data, allow_batch=True)
    except EnvelopeError as exc:
        assert exc.code in (PARSE_ERROR, INVALID_REQUEST)


def test_lone_surrogate_from_the_wire_survives_a_round_trip():
    # "\ud800" is a legal JSON escape (RFC 8259 section 7) and json.loads turns it into a
    # lone surrogate; re-encoding that message must not crash with UnicodeEncodeError
    # but produce UTF-8 JSON that parses back to the same message.
    message = parse(b'{"jsonrpc":"2.0","id":1,"result":{"name":"a\\ud800b"}}')
    assert message == Response(1, {"name": "a\ud800b"})
    data = encode(message)
    data.decode("utf-8")  # strict UTF-8
    assert b"\n" not in data
    assert parse(data) == message


def test_str_with_a_raw_lone_surrogate_raises_only_envelope_error():
    text = '{"jsonrpc":"2.0","method":"x","params":{"p":"\ud800"}}'
    with contextlib.suppress(EnvelopeError):
        parse(text)


# -- request ids -----------------------------------------------------------------------------


def test_id_allocator_counts_from_one_and_never_repeats():
    ids = IdAllocator()
    assert ids.issued == 0
    issued = [ids.allocate() for _ in range(1000)]
    assert issued == list(range(1, 1001))
    assert len(set(issued)) == 1000
    assert all(type(i) is int for i in issued)
    assert ids.issued == 1000


def test_id_allocators_are_independent():
    a, b = IdAllocator(), IdAllocator()
    assert [a.allocate(), a.allocate()] == [1, 2]
    assert b.allocate() == 1


def test_was_issued():
    ids = IdAllocator()
    assert not ids.was_issued(1)
    first, second = ids.allocate(), ids.allocate()
    assert ids.was_issued(first)
    assert ids.was_issued(second)
    assert not ids.was_issued(3)  # not yet issued


@pytest.mark.parametrize("value", [True, False, 0, -1, "1", "2", 1.0, None, [1]])
def test_was_issued_rejects_non_ids(value):
    ids = IdAllocator()
    ids.allocate()
    ids.allocate()
    assert ids.was_issued(value) is False
