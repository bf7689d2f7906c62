"""Hand-written messages: sent exactly as written, each broken rule recorded, answers awaited."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..i18n import _
from ..protocol.envelope import ErrorResponse, Notification, Request, Response, decode
from ..protocol.errors import EnvelopeError, McpError
from ..protocol.findings import Finding
from ..protocol.lifecycle import State
from .requests import UNSET, PendingRequest
from .transcript import TranscriptEntry

if TYPE_CHECKING:
    from .parts import SessionParts
    from .session import ClientSession

_KIND_OF: dict[type, str] = {
    Request: "request", Notification: "notification", Response: "response",
    ErrorResponse: "error",
}


@dataclass
class RawExchange:
    """What one hand-written message did: transcript entries, findings, the state after."""

    entries: list[TranscriptEntry]
    findings: list[Finding]
    state: State
    #: For each request in the message: its result dict, or the error it produced.
    outcomes: list[dict[str, Any] | Exception] = field(default_factory=list)


async def send_raw(session: ClientSession, parts: SessionParts, text: str | bytes,
                   timeout: float | None = UNSET) -> RawExchange:
    """See :meth:`ClientSession.send_raw <mcp_nb.client.ClientSession.send_raw>`.

    Uses the outbound side (guard, lifecycle effects, the wire), the request
    table, the record, and whether the inbound side decodes batches.
    """
    outbound = parts.outbound
    if outbound.closed:
        raise outbound.closed_error()
    record = parts.record
    frame = text.encode() if isinstance(text, str) else text
    first_entry = session.transcript.next_seq
    findings_before = len(session.findings) + getattr(session.findings, "dropped", 0)
    try:
        raw, parsed = decode(frame, max_bytes=session.max_message_bytes, allow_batch=True)
    except EnvelopeError as exc:
        raw, parsed = None, None
        record.finding(
            "invalid-message",
            "client",
            _("sent anyway: {reason}").format(reason=exc.message),
            frame[:2000].decode("utf-8", "replace"))
    messages = parsed if isinstance(parsed, list) else [parsed] if parsed else []
    if isinstance(parsed, list) and not parts.inbound.allow_batch:
        record.finding(
            "batch-not-allowed",
            "client",
            _("sent a batch, which only protocol 2025-03-26 allows"),
            raw)
    waiting: list[PendingRequest] = []
    for message in messages:
        if isinstance(message, (Request, Notification)):
            # Nothing is refused, but every broken rule becomes a finding.
            outbound.guard(message.method, is_request=isinstance(message, Request), force=True)
        if isinstance(message, Request):
            waiting.append(_register(parts, message, timeout))
    single = messages[0] if len(messages) == 1 and not isinstance(parsed, list) else None
    kind = ("batch" if isinstance(parsed, list) else "invalid" if single is None
            else _KIND_OF[type(single)])
    session.transcript.add(
        session.lifecycle.elapsed(), "send", kind, session.state.value, size=len(frame),
        method=getattr(single, "method", None), id=getattr(single, "id", None),
        message=raw if isinstance(raw, dict) else None,
        text=None if isinstance(raw, dict) else frame[:2000].decode("utf-8", "replace"),
        note="raw",
    )
    await outbound.transmit(frame)
    for message in messages:
        if isinstance(message, Notification):
            outbound.after_sending(message.method)
    outcomes: list[dict[str, Any] | Exception] = []
    for pending in waiting:
        try:
            outcomes.append(await parts.table.wait(pending, None))
        except McpError as exc:
            outcomes.append(exc)
    return RawExchange(
        entries=session.transcript.since(first_entry),
        findings=_since(session.findings, findings_before),
        state=session.state,
        outcomes=outcomes,
    )


def _register(parts: SessionParts, message: Request, timeout: float | None) -> PendingRequest:
    table = parts.table
    if message.id in table.pending:
        raise ValueError(f"request id {message.id!r} is already in flight; pick another id")
    if table.ids.was_issued(message.id) or message.id in table.abandoned:
        parts.record.finding(
            "request-id-reused",
            "client",
            _("request id {id} was used before in this session").format(id=repr(message.id)),
            message.method)
    table.ids.reserve(message.id)
    pending = table.register(message.id, message.method,  # type: ignore[arg-type]
                             timeout=timeout, reset=False)
    parts.outbound.before_sending(message.method, message.params)
    return pending


def _since(findings: list[Finding], count_before: int) -> list[Finding]:
    """The findings recorded after the first ``count_before`` (dropped ones included)."""
    new = len(findings) + getattr(findings, "dropped", 0) - count_before
    return findings[max(0, len(findings) - new):] if new > 0 else []
