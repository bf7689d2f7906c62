"""The recording file format: versioned JSON Lines, written and loaded with line-exact errors.

One file holds one session (docs/recording.md is the reference)::

    {"format": "mcp_nb-recording", "version": 1, "era": "handshake", ...}   the header
    {"t": 0.0012, "send": {"jsonrpc": "2.0", "id": 1, "method": "initialize", ...}}
    {"t": 0.0310, "recv": {"jsonrpc": "2.0", "id": 1, "result": {...}}}
    {"t": 0.0311, "event": "http", "text": "POST /mcp → 200 OK", "data": {...}}
    {"t": 0.0400, "recv_raw": "not json"}
    {"end": 4}                                                             the trailer

Times are seconds since the session opened.  The trailer counts the lines in
between, so a file cut short at a line boundary is told apart from a complete
one.  Loading checks every line and names the first bad one
(:class:`RecordingError`); it never guesses.

Example::

    recording = load("session.jsonl")
    print(recording.header.server_info, len(recording.records))
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from ..i18n import _
from ..protocol.envelope import encode

FORMAT_NAME = "mcp_nb-recording"
#: The version this module writes and the newest it reads.
FORMAT_VERSION = 1

Direction = Literal["send", "recv", "event"]
ERAS = ("handshake", "stateless")

_DECODE = json.JSONDecoder().decode
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=repr).encode


class RecordingError(ValueError):
    """A recording that cannot be read; the message names the file and the line."""

    def __init__(self, source: str, line: int, problem: str) -> None:
        super().__init__(f"{source}:{line}: {problem}")
        self.source = source
        self.line = line
        self.problem = problem


@dataclass
class Header:
    """What a reader needs before the first message: who spoke, in which era, over what."""

    #: "handshake" (initialize) or "stateless" (2026-07-28, ``server/discover``).
    era: str
    #: The negotiated (handshake) or carried (stateless) protocol version.
    protocol_version: str | None
    client_info: dict[str, Any] = field(default_factory=dict)
    client_capabilities: dict[str, Any] = field(default_factory=dict)
    server_info: dict[str, Any] | None = None
    server_capabilities: dict[str, Any] = field(default_factory=dict)
    instructions: str | None = None
    #: The session's own settings (timeouts, offered version, log level …).
    settings: dict[str, Any] = field(default_factory=dict)
    #: How the server was reached: ``{"kind": "stdio", "command": [...]}`` or
    #: ``{"kind": "streamable-http", "url": ...}``; secrets already redacted.
    transport: dict[str, Any] = field(default_factory=dict)
    #: ISO 8601 UTC time the session was saved.
    recorded_at: str = ""
    #: The mcp_nb version that wrote the file.
    writer: str = ""
    #: Entries the session had already let go (its ``transcript_limit``) when it was
    #: saved: the records start after them.
    dropped: int = 0

    def to_line(self) -> dict[str, Any]:
        return {"format": FORMAT_NAME, "version": FORMAT_VERSION, **asdict(self)}


@dataclass(slots=True)
class Record:
    """One line between header and trailer: a message either way, or a transport event."""

    #: 1-based line in the file (0 for records not read from a file).
    line: int
    #: Seconds since the session opened.
    time: float
    direction: Direction
    #: The JSON-RPC message (a dict) for ``send``/``recv``; None for events and invalid input.
    message: dict[str, Any] | None = None
    #: Event kind ("http", "spawned", "stderr" …); "invalid" for unparseable input.
    kind: str = ""
    #: The event's detail, or the raw text of unparseable input.
    text: str | None = None
    #: Structured event detail (HTTP method, status, shown headers).
    data: dict[str, Any] | None = None
    note: str | None = None

    def to_line(self) -> dict[str, Any]:
        """The record as its line's JSON object (see :func:`encode_record` for the bytes)."""
        line: dict[str, Any] = {"t": round(self.time, 6)}
        if self.message is not None:
            line[self.direction] = self.message
        elif self.direction == "recv":
            line["recv_raw"] = self.text
        elif self.direction == "send":
            line["send_raw"] = self.text
        else:
            line["event"] = self.kind
            if self.text:
                line["text"] = self.text
            if self.data:
                line["data"] = self.data
        if self.note:
            line["note"] = self.note
        return line

    @property
    def method(self) -> str | None:
        return self.message.get("method") if self.message is not None else None


@dataclass
class Recording:
    """A loaded (or freshly captured) session: the header and the records in order."""

    header: Header
    records: list[Record]
    #: Where it was read from ("<memory>" when captured from a live session).
    source: str = "<memory>"
    #: False when the trailer was missing and the file was loaded with ``partial=True``.
    complete: bool = True

    def messages(self, direction: Direction | None = None) -> Iterator[Record]:
        """Records carrying a parsed message (optionally one direction only)."""
        for record in self.records:
            if record.message is not None and (direction is None or record.direction == direction):
                yield record

    def write(self, path: str | os.PathLike[str]) -> int:
        """Write the file; returns the number of records written."""
        count = write(path, self.header, self.records)
        self.source = os.fspath(path)
        return count


def write(path: str | os.PathLike[str], header: Header, records: Iterable[Record]) -> int:
    """Write a recording file from records as they come; returns how many were written."""
    count = 0
    with open(path, "wb") as out:
        out.write(_ENCODE(header.to_line()).encode() + b"\n")
        for record in records:
            out.write(encode_record(record))
            count += 1
        out.write(b'{"end":%d}\n' % count)
    return count


def encode_record(record: Record) -> bytes:
    """One record's line, newline included.

    Saving is what recording costs, so a message line is spliced around the
    envelope's own encoder instead of building and encoding a wrapper object.
    """
    if record.message is None or record.note:
        return _ENCODE(record.to_line()).encode() + b"\n"
    prefix = b'{"t":%.6f,"send":' if record.direction == "send" else b'{"t":%.6f,"recv":'
    return prefix % record.time + encode(record.message) + b"}\n"


_HEADER_FIELDS = {name for name in Header.__dataclass_fields__}
_HEADER_TYPES: dict[str, tuple[type, ...]] = {
    "era": (str,), "protocol_version": (str, type(None)), "client_info": (dict,),
    "client_capabilities": (dict,), "server_info": (dict, type(None)),
    "server_capabilities": (dict,), "instructions": (str, type(None)), "settings": (dict,),
    "transport": (dict,), "recorded_at": (str,), "writer": (str,), "dropped": (int,),
}
_MESSAGE_KEYS = ("send", "recv")
_LINE_KEYS = frozenset({"t", "send", "recv", "event", "text", "data", "note", "recv_raw",
                        "send_raw"})


def _parse_header(source: str, text: str) -> Header:
    try:
        value = _DECODE(text)
    except ValueError as exc:
        raise RecordingError(source, 1, _("the header is not JSON ({error}); is this an "
                                          "mcp_nb recording?").format(error=exc)) from None
    if not isinstance(value, dict) or value.get("format") != FORMAT_NAME:
        raise RecordingError(source, 1, _("not an mcp_nb recording: the first line should be "
                                          "a header with {field}").format(
            field=f'"format": "{FORMAT_NAME}"'))
    version = value.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise RecordingError(source, 1, _("the header's version must be an integer, not "
                                          "{value}").format(value=repr(version)))
    if version > FORMAT_VERSION:
        raise RecordingError(source, 1, _("format version {version} is newer than this mcp_nb "
                                          "reads (up to {newest}); upgrade mcp_nb").format(
            version=version, newest=FORMAT_VERSION))
    if version < 1:
        raise RecordingError(source, 1, _("format version {version} does not exist").format(
            version=version))
    fields = {k: v for k, v in value.items() if k not in ("format", "version")}
    unknown = set(fields) - _HEADER_FIELDS
    if unknown:
        raise RecordingError(source, 1, _("unknown header field(s) {fields}").format(
            fields=", ".join(sorted(unknown))))
    for name, types in _HEADER_TYPES.items():
        if name in fields and not isinstance(fields[name], types):
            raise RecordingError(source, 1, _("header field {name} has the wrong type "
                                              "({type})").format(
                name=repr(name), type=type(fields[name]).__name__))
    if fields.get("era") not in ERAS:
        raise RecordingError(source, 1, _("header field 'era' must be one of {eras}, not "
                                          "{value}").format(eras=", ".join(ERAS),
                                                            value=repr(fields.get("era"))))
    if "protocol_version" not in fields:
        raise RecordingError(source, 1, _("header field 'protocol_version' is missing"))
    return Header(**fields)


def _message_problem(message: Any) -> str | None:
    """Why ``message`` is not a JSON-RPC 2.0 message, or None (cheap: a few look-ups)."""
    if not isinstance(message, dict):
        return f"a message must be a JSON object, not {type(message).__name__}"
    if message.get("jsonrpc") != "2.0":
        return 'a message must have "jsonrpc": "2.0"'
    if "method" in message:
        if not isinstance(message["method"], str):
            return "a message's method must be a string"
        if "params" in message and not isinstance(message["params"], dict | list):
            return "params must be an object or an array"
        return None
    if "id" not in message:
        return "a message needs a method (request, notification) or an id (response)"
    if ("result" in message) == ("error" in message):
        return "a response has exactly one of result and error"
    if "error" in message and not (isinstance(message["error"], dict)
                                   and isinstance(message["error"].get("code"), int)
                                   and isinstance(message["error"].get("message"), str)):
        return "an error needs an integer code and a string message"
    return None


def _parse_record(number: int, value: Any, previous_time: float) -> Record | str:
    """The record on line ``number``, or what is wrong with it."""
    if not isinstance(value, dict):
        return f"a line must be a JSON object, not {type(value).__name__}"
    unknown = value.keys() - _LINE_KEYS
    if unknown:
        return f"unknown field(s) {', '.join(sorted(unknown))}"
    time = value.get("t")
    if not isinstance(time, int | float) or isinstance(time, bool) or time < 0:
        return f'"t" must be a non-negative number of seconds, not {time!r}'
    if time < previous_time:
        return f"time goes backwards ({time} after {previous_time}); was the file edited?"
    note = value.get("note")
    if note is not None and not isinstance(note, str):
        return '"note" must be a string'
    for direction in _MESSAGE_KEYS:
        if direction in value:
            message = value[direction]
            problem = _message_problem(message)
            if problem is not None:
                return problem
            return Record(number, time, direction, message, note=note)  # type: ignore[arg-type]
    for direction in _MESSAGE_KEYS:
        raw = value.get(f"{direction}_invalid")
        if raw is not None:
            if not isinstance(raw, str):
                return f'"{direction}_invalid" must be the raw text as a string'
            return Record(number, time, direction, None, "invalid", raw,  # type: ignore[arg-type]
                          note=note)
    kind = value.get("event")
    if not isinstance(kind, str):
        return 'a line needs one of "send", "recv", "event", "recv_raw" or "send_raw"'
    text, data = value.get("text"), value.get("data")
    if text is not None and not isinstance(text, str):
        return '"text" must be a string'
    if data is not None and not isinstance(data, dict):
        return '"data" must be an object'
    return Record(number, time, "event", None, kind, text, data, note)


def loads(text: str, source: str = "<string>", *, partial: bool = False) -> Recording:
    """Parse a recording from its text (see :func:`load`)."""
    lines = text.split("\n")
    cut_off = bool(lines) and lines[-1] != ""
    if not cut_off:
        lines.pop()
    if not lines or not lines[0].strip():
        raise RecordingError(source, 1, _("the file is empty; a recording starts with a "
                                          "header line"))
    header = _parse_header(source, lines[0])
    records: list[Record] = []
    previous = 0.0
    last = len(lines)
    for number in range(2, last + 1):
        line = lines[number - 1]
        if not line.strip():
            continue
        try:
            value = _DECODE(line)
        except ValueError as exc:
            if number == last and cut_off:
                if partial:
                    return Recording(header, records, source, complete=False)
                raise RecordingError(source, number, _(
                    "the last line is cut off (the file ends mid-line): the recording is "
                    "truncated; load(..., partial=True) reads what is there")) from None
            raise RecordingError(source, number, _("not JSON: {error}").format(
                error=exc)) from None
        if isinstance(value, dict) and "end" in value and len(value) == 1:
            if value["end"] != len(records):
                raise RecordingError(source, number, _(
                    "the trailer counts {counted} records but {count} precede it; lines were "
                    "added or removed").format(counted=repr(value["end"]), count=len(records)))
            if number != last:
                raise RecordingError(source, number + 1, _("content after the trailer"))
            return Recording(header, records, source)
        record = _parse_record(number, value, previous)
        if isinstance(record, str):
            raise RecordingError(source, number, record)
        previous = record.time
        records.append(record)
    if partial:
        return Recording(header, records, source, complete=False)
    raise RecordingError(source, last, _(
        "no trailer ({trailer}) after the last line: the recording is truncated; "
        "load(..., partial=True) reads what is there").format(trailer='{"end": N}'))


def load(path: str | os.PathLike[str], *, partial: bool = False) -> Recording:
    """Read and check a recording file; :class:`RecordingError` names the first bad line.

    ``partial=True`` accepts a file cut short (no trailer, or a last line cut
    mid-way), keeping every complete record; :attr:`Recording.complete` says so.
    """
    source = os.fspath(path)
    with open(path, "rb") as file:
        data = file.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise RecordingError(source, line, _("not UTF-8 text ({reason})").format(
            reason=exc.reason)) from None
    return loads(text, source, partial=partial)
