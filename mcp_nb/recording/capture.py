"""Turning a live client session into a :class:`~mcp_nb.recording.format.Recording` (and a file).

Everything comes from what the session already keeps: its transcript (every
message both ways, with times), its transport events (HTTP method, status and
the headers worth showing), and its public properties (era, negotiated
version, both sides' capabilities, server info, settings).  Nothing is added
to the round trip: a session is recorded after the fact, when it is saved.
Secrets are redacted here, before anything is written (:mod:`.redact`).

Example::

    from mcp_nb.recording import save
    async with ClientSession(StdioTransport(lab_command())) as session:
        await session.connect()
        await session.call_tool("add", {"a": 1, "b": 2})
        save(session, "add.jsonl")
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..client.transcript import APP_LANE
from ..transports import DEFAULT_INHERITED_ENV, Transport
from .format import Header, Record, Recording, write
from .redact import Redactor

if TYPE_CHECKING:
    from ..client import ClientSession

#: The session settings a recording keeps (attribute names of ClientSession).
SETTINGS = ("protocol_version", "offered_version", "stateless_version", "default_timeout",
            "max_timeout", "reset_timeout_on_progress", "log_level", "probe_timeout",
            "max_input_rounds", "max_message_bytes")


def _dump(model: Any) -> dict[str, Any] | None:
    return model.model_dump(mode="json", exclude_none=True) if model is not None else None


def describe_transport(transport: Transport, redactor: Redactor) -> dict[str, Any]:
    """How the server was reached, secrets redacted (and taught to ``redactor``)."""
    target = transport.describe_target()  # auto HTTP: the transport it settled on
    described: dict[str, Any] = {"kind": target["kind"]}
    command = target.get("command")
    if command is not None:
        described["command"] = redactor.command(command)
        env = target.get("env") or {}
        supplied = {name: value for name, value in env.items()
                    if name not in DEFAULT_INHERITED_ENV or os.environ.get(name) != value}
        if supplied:
            described["env"] = redactor.environment(supplied)
        if target.get("cwd"):
            described["cwd"] = target["cwd"]
    url = target.get("url")
    if url is not None:
        described["url"] = redactor.url(url)
        headers = target.get("headers")
        if headers:
            described["headers"] = redactor.headers(headers)
    return described


def _header(session: ClientSession, transport: dict[str, Any]) -> Header:
    era = session.era.value if session.era is not None else "handshake"
    server_capabilities: dict[str, Any] = dict(session.capabilities.server or {})
    instructions = None
    if session.initialize_result is not None:
        instructions = session.initialize_result.instructions
    elif session.discover_result is not None:
        instructions = session.discover_result.instructions
        server_capabilities = _dump(session.discover_result.capabilities) or {}
    return Header(
        era=era,
        protocol_version=session.negotiated_version,
        client_info=_dump(session.client_info) or {},
        client_capabilities=dict(session.client_capabilities),
        server_info=_dump(session.server_info),
        server_capabilities=server_capabilities,
        instructions=instructions,
        settings={name: getattr(session, name) for name in SETTINGS if hasattr(session, name)},
        transport=transport,
        recorded_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        writer=f"mcp_nb {__version__}",
        dropped=getattr(session.transcript, "wire_dropped", 0),
    )


def _redacted_header(session: ClientSession, redactor: Redactor) -> Header:
    """The header; the transport description teaches ``redactor`` the secrets it found."""
    header = _header(session, describe_transport(session.transport, redactor))
    header.instructions = redactor.literal(header.instructions) if header.instructions else None
    return header


def _records(session: ClientSession, redactor: Redactor) -> Iterator[Record]:
    """The transcript as records, one at a time (saving never holds them all)."""
    # Transport events carry structured data the transcript's text lacks; they
    # appear in the transcript in the same order, so one pointer pairs them up.
    events = list(getattr(session, "transport_events", ()))
    next_event = 0
    for entry in session.transcript:
        if entry.direction in APP_LANE:
            continue  # an App's postMessage traffic never crossed the MCP wire: not replayable
        if entry.direction == "event":
            data = None
            if next_event < len(events) and events[next_event].kind == entry.kind \
                    and events[next_event].detail == (entry.text or ""):
                data = redactor.value(events[next_event].data) or None
                next_event += 1
            yield Record(0, entry.time, "event", None, entry.kind,
                         redactor.text(entry.text) if entry.text else None, data, entry.note)
        elif entry.message is not None:
            yield Record(0, entry.time, entry.direction, redactor.value(entry.message),
                         entry.kind, note=entry.note)
        else:
            yield Record(0, entry.time, entry.direction, None, entry.kind,
                         redactor.text(entry.text or ""), note=entry.note)


def capture(session: ClientSession, *, secrets: Iterable[str] = ()) -> Recording:
    """The session so far as a :class:`Recording` (in memory), credentials redacted.

    ``secrets`` adds values of your own to scrub everywhere (a token a tool
    argument carried, say); header values, secret-named flags and URL
    credentials are found without help.
    """
    redactor = Redactor(secrets)
    return Recording(_redacted_header(session, redactor), list(_records(session, redactor)))


def save(session: ClientSession, path: str | os.PathLike[str], *,
         secrets: Iterable[str] = ()) -> int:
    """Write the session to ``path`` as a recording (docs/recording.md); returns how many records.

    The lines are written as the transcript is read, so saving a long session
    never holds a second copy of it (and keeps the garbage collector out of it).
    """
    redactor = Redactor(secrets)
    return write(path, _redacted_header(session, redactor), _records(session, redactor))
