"""JSON-RPC 2.0 envelope: bytes in, typed messages out (and back).

This is the hot path of every round trip, so messages are small slotted
dataclasses and validation is a handful of dict look-ups; pydantic models
(:mod:`mcp_nb.protocol.models`) are applied only where a caller wants typed
MCP payloads.

Example::

    >>> from mcp_nb.protocol.envelope import parse, Request
    >>> msg = parse(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}')
    >>> isinstance(msg, Request), msg.id, msg.method
    (True, 1, 'ping')
    >>> parse('{"jsonrpc": "2.0", "id": null, "method": "ping"}')
    Traceback (most recent call last):
    ...
    mcp_nb.protocol.errors.EnvelopeError: request id must be a string or an integer, not null
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .errors import INVALID_REQUEST, PARSE_ERROR, EnvelopeError

RequestId = str | int

#: Default upper bound for one incoming message, in bytes: the kit's policy (the spec
#: sets no limit), enforced by the transports as a message arrives and by
#: :func:`decode`.  64 MiB because a tool result carries images, audio and
#: documents as base64 text, a third larger than the file: a PDF or a few
#: screenshots must pass, while a runaway server must not fill the kernel's memory.
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024


@dataclass(slots=True)
class Request:
    id: RequestId
    method: str
    params: dict[str, Any] | None = None


@dataclass(slots=True)
class Notification:
    method: str
    params: dict[str, Any] | None = None


@dataclass(slots=True)
class Response:
    id: RequestId
    result: dict[str, Any]


@dataclass(slots=True)
class ErrorObject:
    code: int
    message: str
    data: Any = None


@dataclass(slots=True)
class ErrorResponse:
    #: ``None`` only when the peer could not tell which request failed (e.g. -32700).
    id: RequestId | None
    error: ErrorObject


Message = Request | Notification | Response | ErrorResponse


def _is_valid_id(value: Any) -> bool:
    # bool is a subclass of int in Python, but `true` is not a valid JSON-RPC id.
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value (RFC 8259 has no NaN or Infinity)")


# Built once: json.loads/json.dumps with any keyword argument build a new decoder or
# encoder per call, a measurable share of a round trip (benchmarks/RESULTS.md).
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_ASCII_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
# The decoder's own scanner: what JSONDecoder.decode runs after two whitespace regex
# matches, which a frame without surrounding whitespace does not need.
_SCAN_ONCE = _DECODER.scan_once


def _prebuilt_c_encoder() -> Callable[[Any], str] | None:
    """``_ENCODER.encode`` without building a C encoder object per call (None if unavailable).

    ``JSONEncoder.encode`` constructs its C encoder (and a closure) on every call;
    this builds the same one once.  It skips the circular-reference check (a cycle
    recurses until ``RecursionError``, after which :func:`encode` re-encodes with
    ``_ENCODER`` for the usual ``ValueError``); the result is checked against
    ``_ENCODER`` here, so a Python whose private ``c_make_encoder`` differs falls
    back instead of encoding differently.
    """
    from json import encoder as json_encoder

    make = getattr(json_encoder, "c_make_encoder", None)
    if make is None:
        return None
    try:
        iterencode = make(None, _ENCODER.default, json_encoder.encode_basestring, None, ":", ",",
                          False, False, False)
    except TypeError:
        return None

    def encode_fast(obj: Any) -> str:
        return "".join(iterencode(obj, 0))

    sample = {"jsonrpc": "2.0", "id": 1, "params": {"text": "é\u2028\"\n", "n": [1.5, True, None]}}
    try:
        if encode_fast(sample) != _ENCODER.encode(sample):
            return None
    except Exception:  # any surprise means: use the public path
        return None
    return encode_fast


_ENCODE_FAST = _prebuilt_c_encoder()


def _describe(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def parse_object(obj: Any) -> Message:
    """Validate one already-decoded JSON value as a JSON-RPC 2.0 message."""
    if not isinstance(obj, dict):
        raise EnvelopeError(
            INVALID_REQUEST, f"a message must be a JSON object, got {_describe(obj)}"
        )
    raw_id = obj.get("id")
    recovered_id = raw_id if _is_valid_id(raw_id) else None
    if obj.get("jsonrpc") != "2.0":
        if "jsonrpc" not in obj:
            text = 'missing "jsonrpc": "2.0" member'
        else:
            text = f'"jsonrpc" must be "2.0", got {obj["jsonrpc"]!r}'
        raise EnvelopeError(INVALID_REQUEST, text, id=recovered_id)

    method = obj.get("method")
    if method is not None:
        if not isinstance(method, str):
            raise EnvelopeError(
                INVALID_REQUEST, f'"method" must be a string, got {_describe(method)}',
                id=recovered_id,
            )
        params = obj.get("params")
        if params is not None and not isinstance(params, dict):
            raise EnvelopeError(
                INVALID_REQUEST,
                f'"params" must be an object in MCP, got {_describe(params)}',
                id=recovered_id,
            )
        if "id" not in obj:
            return Notification(method, params)
        if not _is_valid_id(raw_id):
            raise EnvelopeError(
                INVALID_REQUEST,
                f"request id must be a string or an integer, not {_describe(raw_id)}",
            )
        return Request(raw_id, method, params)

    has_result = "result" in obj
    has_error = "error" in obj
    if has_result and has_error:
        raise EnvelopeError(
            INVALID_REQUEST, 'a response must not carry both "result" and "error"',
            id=recovered_id,
        )
    if not has_result and not has_error:
        raise EnvelopeError(
            INVALID_REQUEST,
            'not a request, notification or response: no "method", "result" or "error"',
            id=recovered_id,
        )
    if has_result:
        if not _is_valid_id(raw_id):
            raise EnvelopeError(
                INVALID_REQUEST,
                f"response id must be a string or an integer, not {_describe(raw_id)}",
            )
        result = obj["result"]
        if not isinstance(result, dict):
            raise EnvelopeError(
                INVALID_REQUEST,
                f'"result" must be an object in MCP, got {_describe(result)}',
                id=raw_id,
            )
        return Response(raw_id, result)
    error = obj["error"]
    if (
        not isinstance(error, dict)
        or not isinstance(error.get("code"), int)
        or isinstance(error.get("code"), bool)
        or not isinstance(error.get("message"), str)
    ):
        raise EnvelopeError(
            INVALID_REQUEST,
            '"error" must be an object with an integer "code" and a string "message"',
            id=recovered_id,
        )
    if "id" not in obj:
        raise EnvelopeError(
            INVALID_REQUEST, 'an error response must carry "id" (null when it is unknown)'
        )
    if raw_id is not None and not _is_valid_id(raw_id):
        raise EnvelopeError(
            INVALID_REQUEST, f"error response id must be a string, an integer or null, "
            f"not {_describe(raw_id)}",
        )
    return ErrorResponse(raw_id, ErrorObject(error["code"], error["message"], error.get("data")))


def _top_level_members(text: str) -> Iterator[tuple[str, Any]]:
    """``(key, value)`` of an object's members in order, as far as ``text`` holds them whole.

    A member whose value (or colon) is cut off is still reported, with the value ``...``.
    """
    index = text.find("{")
    if index < 0 or text[:index].strip():
        return
    index += 1
    while True:
        while index < len(text) and text[index] in " \t\r\n,":
            index += 1
        if index >= len(text) or text[index] != '"':
            return
        try:
            key, index = json.decoder.scanstring(text, index + 1)
        except ValueError:
            return
        colon = text.find(":", index)
        if colon < 0:  # cut off after the key: the key alone still tells
            yield key, ...
            return
        if text[index:colon].strip():
            return
        index = colon + 1
        while index < len(text) and text[index] in " \t\r\n":
            index += 1
        try:
            value, index = _SCAN_ONCE(text, index)
        except (StopIteration, ValueError, RecursionError):
            yield key, ...
            return
        yield key, value


#: Bytes worth keeping from each end of a discarded message for :func:`response_id_from_edges`:
#: enough for the members around the payload ("jsonrpc", "id", "result"/"error"/"method").
EDGE_BYTES = 4096

# An id that is the last member of the message: `"id": 7}` at its very end.
_TRAILING_ID = re.compile(r'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$')


def response_id_from_edges(head: bytes, tail: bytes) -> RequestId | None:
    """The id of a response known only by its first and last bytes (the rest discarded).

    A message over the size limit is dropped unread; when its two ends still
    show that it was a response (a ``"result"`` or ``"error"`` member and no
    ``"method"``) and which request it answered, that request can fail at once
    instead of waiting for its timeout.  None when that cannot be told.

    >>> response_id_from_edges(b'{"jsonrpc":"2.0","id":7,"result":{"content":[{"te', b'"}]}}')
    7
    >>> response_id_from_edges(b'{"result":{"content":[{"te', b'x"}]},"jsonrpc":"2.0","id":"a"}')
    'a'
    >>> response_id_from_edges(b'{"jsonrpc":"2.0","id":3,"method":"sampling/create', b"}}")
    """
    members = dict(_top_level_members(head.decode("utf-8", "ignore")))
    if "method" in members or not ("result" in members or "error" in members):
        return None
    found = members.get("id")
    if found is None:
        match = _TRAILING_ID.search(tail.decode("utf-8", "ignore"))
        if match is None:
            return None
        found = json.loads(match.group(1))
    return found if _is_valid_id(found) else None


def decode(
    data: bytes | str,
    *,
    max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    allow_batch: bool = False,
) -> tuple[Any, Message | list[Message]]:
    """Like :func:`parse`, but also return the decoded JSON value.

    Sessions keep the decoded value for their transcript, so the message is
    never serialised twice on the hot path.
    """
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise EnvelopeError(
            INVALID_REQUEST,
            f"message of {size} bytes exceeds the {max_bytes}-byte limit "
            "(raise it with the max_message_bytes option)",
            rule="message-too-large",
        )
    try:
        # MCP messages are UTF-8: decode strictly rather than let json guess UTF-16/32.
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        if text.startswith("\ufeff"):  # json.loads says so; the bare decoder would not
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        try:
            obj, end = _SCAN_ONCE(text, 0)
        except (StopIteration, ValueError):
            end = -1
        if end != len(text):
            # Whitespace around the value, trailing data or an error: the full path,
            # which also words the error.
            obj = _DECODER.decode(text)
    except (ValueError, RecursionError) as exc:
        # ValueError covers JSONDecodeError and UnicodeDecodeError; RecursionError is
        # what absurdly deep nesting ("[[[[…") raises, and must not kill a reader.
        raise EnvelopeError(PARSE_ERROR, f"not valid JSON: {exc}") from None
    if isinstance(obj, list):
        if not allow_batch:
            raise EnvelopeError(
                INVALID_REQUEST,
                "JSON-RPC batches (arrays) are not allowed in this protocol version "
                "(only 2025-03-26 had them)",
                rule="batch-not-allowed",
            )
        if not obj:
            raise EnvelopeError(INVALID_REQUEST, "an empty batch is not a valid message")
        return obj, [parse_object(item) for item in obj]
    return obj, parse_object(obj)


def parse(
    data: bytes | str,
    *,
    max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    allow_batch: bool = False,
) -> Message | list[Message]:
    """Parse one framed message into a typed message (a list for a batch).

    The size limit is checked before decoding so a hostile peer cannot make us
    build a huge object.  A JSON array is a batch: accepted only when
    ``allow_batch`` (protocol 2025-03-26), otherwise rejected with -32600.
    """
    return decode(data, max_bytes=max_bytes, allow_batch=allow_batch)[1]


def to_dict(message: Message) -> dict[str, Any]:
    """The JSON-RPC 2.0 wire form of ``message`` (``params``/``data`` omitted when None)."""
    if isinstance(message, Request):
        out: dict[str, Any] = {"jsonrpc": "2.0", "id": message.id, "method": message.method}
        if message.params is not None:
            out["params"] = message.params
        return out
    if isinstance(message, Notification):
        out = {"jsonrpc": "2.0", "method": message.method}
        if message.params is not None:
            out["params"] = message.params
        return out
    if isinstance(message, Response):
        return {"jsonrpc": "2.0", "id": message.id, "result": message.result}
    error: dict[str, Any] = {"code": message.error.code, "message": message.error.message}
    if message.error.data is not None:
        error["data"] = message.error.data
    return {"jsonrpc": "2.0", "id": message.id, "error": error}


def encode(obj: Message | dict[str, Any]) -> bytes:
    """Compact UTF-8 JSON, guaranteed free of raw newlines (stdio frames by newline)."""
    if not isinstance(obj, dict):
        obj = to_dict(obj)
    # ensure_ascii=False keeps payloads readable; json never emits a raw "\n" inside strings.
    if _ENCODE_FAST is None:
        text = _ENCODER.encode(obj)
    else:
        try:
            text = _ENCODE_FAST(obj)
        except RecursionError:  # a cycle, or nesting too deep: the checked encoder says which
            text = _ENCODER.encode(obj)
    try:
        return text.encode()
    except UnicodeEncodeError:
        # A lone surrogate (legal as a "\ud800" escape in JSON) has no UTF-8 form:
        # escape everything non-ASCII instead, which round-trips exactly.
        return _ASCII_ENCODER.encode(obj).encode()


def error_response(id: RequestId | None, code: int, message: str, data: Any = None) -> bytes:
    """Encoded error response, for answering a peer's bad request."""
    return encode(ErrorResponse(id, ErrorObject(code, message, data)))


class IdAllocator:
    """Request ids 1, 2, 3 … for one session; never reused (ids are never recycled)."""

    __slots__ = ("_next",)

    def __init__(self) -> None:
        self._next = 1

    def allocate(self) -> int:
        value = self._next
        self._next = value + 1
        return value

    def was_issued(self, value: Any) -> bool:
        """True if ``value`` is an id this allocator has handed out."""
        return type(value) is int and 1 <= value < self._next

    def reserve(self, value: Any) -> None:
        """Skip past ``value`` if it is an integer id someone chose by hand.

        Hand-written requests (``%%mcp``) pick their own ids; later automatic
        ids must not collide with them.
        """
        if type(value) is int and value >= self._next:
            self._next = value + 1

    @property
    def issued(self) -> int:
        return self._next - 1
