"""Inbound dispatch: frames from the transport to responses, notifications and server requests.

A frame is handled in one of two places.  Where the transport offers it
(stdio on asyncio), responses and notifications are handled right in the
pipe's read callback (:meth:`Inbound.take_inline`), and a response resumes
its caller there; everything else goes through the session's reader task
(:meth:`Inbound.read_loop`), which is also the only path on other event loops.
Transport events (stderr lines, discarded frames, refusals) arrive here too.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..i18n import _
from ..protocol.envelope import ErrorResponse, Message, Notification, Response, decode
from ..protocol.errors import EnvelopeError
from ..protocol.lifecycle import State
from ..protocol.salvage import response_id
from ..transports.base import TransportClosed, TransportEvent
from .errors import (
    HttpRequestFailed,
    RequestFailed,
    RequestRefused,
    ResponseRejected,
    ServerError,
)
from .requests import PendingRequest

if TYPE_CHECKING:
    from .parts import SessionParts
    from .session import ClientSession

NotificationCallback = Callable[[Notification], Any]

#: Notifications the client understands (others are recorded as unknown).
KNOWN_SERVER_NOTIFICATIONS = frozenset({
    "notifications/cancelled",
    "notifications/progress",
    "notifications/message",
    "notifications/resources/updated",
    "notifications/resources/list_changed",
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/elicitation/complete",
    "notifications/subscriptions/acknowledged",
    "notifications/tasks/status",
})


class Inbound:
    """The receiving side of one session."""

    def __init__(self, session: ClientSession, parts: SessionParts) -> None:
        self._session = session
        self._lifecycle = session.lifecycle
        self._transcript = session.transcript
        self._elapsed = session.lifecycle.elapsed
        self._record = parts.record
        self._table = parts.table
        self._pending = parts.table.pending
        self._lifetime = parts.lifetime
        self._server_requests = parts.server_requests
        self._handshake = parts.handshake
        self._route_to_subscription = parts.stateless.route
        self._start_soon = parts.lifetime.start_soon
        #: Batches are decoded only where the negotiated version allows them (2025-03-26).
        self.allow_batch = False
        self.notification_callbacks: list[NotificationCallback] = []
        # The frame take_inline decoded and left to the reader, so it is decoded once.
        self._left_to_reader: tuple[bytes, Any, Message | list[Message]] | None = None

    async def read_loop(self) -> None:
        transport = self._session.transport
        try:
            while True:
                frame = await transport.receive()
                await self._on_frame(frame)
        except TransportClosed as exc:
            await self._lifetime.transport_closed(exc)
        except Exception as exc:  # a failing transport: end the session, release every waiter
            await self._lifetime.transport_closed(TransportClosed(
                f"the session's reader failed: {type(exc).__name__}: {exc}"))

    def take_inline(self, frame: bytes) -> bool:
        """Handle a response or notification in the transport's read callback, if it offers.

        Offered by transports that can (:meth:`StdioTransport.take_frames_inline
        <mcp_nb.transports.stdio.StdioTransport.take_frames_inline>`) while the
        reader sleeps with nothing queued, so nothing is overtaken.  Neither
        needs a task, and :meth:`PendingRequest.finish
        <mcp_nb.client.requests.PendingRequest.finish>`, the last thing
        :meth:`_on_response` does, resumes the caller right here: a round trip
        takes one event-loop iteration instead of two (the reader task's
        hand-over to the caller was the other), also when log or progress
        notifications come first.  Server requests need a task (their handlers
        await) and malformed frames are reported by the reader: both are left
        to it, decoded once.
        """
        try:
            raw, parsed = decode(frame, max_bytes=self._session.max_message_bytes,
                                 allow_batch=self.allow_batch)
        except EnvelopeError:
            return False
        kind = type(parsed)
        try:
            if kind is Response or kind is ErrorResponse:
                self._on_response(parsed, raw, len(frame))  # type: ignore[arg-type]
                return True
            if kind is Notification:
                self._on_notification(parsed, raw, len(frame))  # type: ignore[arg-type]
                return True
        except Exception as exc:
            self._handling_failed(parsed, raw, exc)  # type: ignore[arg-type]
            return True
        self._left_to_reader = (frame, raw, parsed)
        return False

    async def _on_frame(self, frame: bytes) -> None:
        decoded = self._left_to_reader
        if decoded is not None and decoded[0] is frame:
            self._left_to_reader = None
            raw, parsed = decoded[1], decoded[2]
        else:
            try:
                raw, parsed = decode(frame, max_bytes=self._session.max_message_bytes,
                                     allow_batch=self.allow_batch)
            except EnvelopeError as exc:
                self._on_invalid(frame, exc)
                return
        if not isinstance(parsed, list):  # the common case: one message per frame
            await self._dispatch(parsed, raw, len(frame))
            return
        for obj, message in zip(raw, parsed, strict=True):
            await self._dispatch(message, obj, len(frame) // len(parsed))

    def _on_invalid(self, frame: bytes, exc: EnvelopeError) -> None:
        """A frame the decoder rejects; if it answers a request in flight, that request fails."""
        text = frame[:2000].decode("utf-8", "replace")
        self._transcript.add(self._elapsed(), "recv", "invalid", self._lifecycle.state.value,
                             size=len(frame), text=text, note=exc.rule)
        cause, limit = "malformed", None
        if exc.rule == "message-too-large":
            cause, limit = "too-large", self._session.max_message_bytes
        elif exc.rule == "invalid-json" and not _is_utf8(frame):
            cause = "invalid-utf8"
        rule = "invalid-utf8" if cause == "invalid-utf8" else exc.rule
        self._record.finding(rule, "server", exc.message, text)
        for request_id in _answered_ids(frame, exc):
            self._fail_request(request_id, ResponseRejected, cause, exc.message,
                               size=len(frame), limit=limit,
                               option="max_message_bytes" if limit else None)

    def _fail_request(self, request_id: Any, error_type: type[RequestFailed], cause: str,
                      detail: str, **facts: Any) -> None:
        """Fail the request in flight with ``request_id`` (if there is one) at once."""
        pending = self._pending.pop(request_id, None) if request_id is not None else None
        if pending is not None:
            pending.finish(error=error_type(pending.method, pending.id, cause, detail, **facts))

    async def _dispatch(self, message: Message, raw: dict[str, Any], size: int) -> None:
        try:
            if isinstance(message, (Response, ErrorResponse)):
                self._on_response(message, raw, size)
            elif isinstance(message, Notification):
                self._on_notification(message, raw, size)
            else:
                await self._server_requests.serve(message, raw, size)
        except Exception as exc:
            self._handling_failed(message, raw, exc)

    def _handling_failed(self, message: Message, raw: Any, exc: Exception) -> None:
        """A bug or a surprise while handling one message: record it, keep the session."""
        what = getattr(message, "method", None) or f"the answer to request {message.id!r}"
        self._record.finding(
            "message-handling-failed",
            "client",
            _("handling {what} failed: {error}").format(
                what=what, error=f"{type(exc).__name__}: {exc}"),
            raw)

    def _on_response(self, message: Response | ErrorResponse, raw: dict[str, Any],
                     size: int) -> None:
        # Popped at once: a duplicate arriving before the waiter wakes is still a duplicate.
        pending = self._pending.pop(message.id, None)  # type: ignore[arg-type]
        try:
            self._answer(pending, message, raw, size)
        except Exception as exc:
            if pending is not None:  # its caller must not wait for an answer already taken
                pending.finish(error=ResponseRejected(
                    pending.method, pending.id, "client-error",
                    f"the client failed to handle the answer: {type(exc).__name__}: {exc}"))
            raise

    def _answer(self, pending: PendingRequest | None, message: Response | ErrorResponse,
                raw: dict[str, Any], size: int) -> None:
        kind = "response" if isinstance(message, Response) else "error"
        method = pending.method if pending else None
        note = None
        if pending is None:
            if message.id in self._table.abandoned:
                note = "late, ignored"
            elif self._table.ids.was_issued(message.id):
                note = "duplicate-response"
            else:
                note = "response-to-unknown-id"
        state = self._lifecycle.state
        self._transcript.add(self._elapsed(), "recv", kind, state.value, size=size,
                             method=method, id=message.id, message=raw, note=note)
        if pending is None:
            if note == "duplicate-response":
                self._record.finding(
                    note,
                    "server",
                    _("a second response for request {id}").format(id=message.id),
                    raw)
            elif note == "response-to-unknown-id":
                if message.id is None and isinstance(message, ErrorResponse):
                    detail = (f"the server reported error {message.error.code} "
                              f"{message.error.message!r} without a request id")
                    self._record.finding("invalid-message", "client", detail, raw)
                else:
                    self._record.finding(
                        note,
                        "server",
                        _("response for id {id}, never sent").format(id=repr(message.id)),
                        raw)
            return
        if isinstance(message, ErrorResponse):
            error = message.error
            pending.finish(error=ServerError(pending.method, error.code, error.message,
                                             error.data))
        elif pending.method == "initialize" and state is State.INITIALIZING:
            self._handshake.complete_initialize(pending, message.result)
        else:
            pending.finish(result=message.result)

    def _on_notification(self, message: Notification, raw: dict[str, Any], size: int) -> None:
        session = self._session
        method = message.method
        note = None if method in KNOWN_SERVER_NOTIFICATIONS else "unknown notification"
        state = self._lifecycle.state
        self._transcript.add(self._elapsed(), "recv", "notification", state.value,
                             size=size, method=method, message=raw, note=note)
        violation = self._lifecycle.server_violation(method, is_request=False)
        if violation:
            self._record.finding("server-request-before-initialized", "server", violation, raw)
        elif state is State.OPERATING and not session.capabilities.notification_allowed(method):
            self._record.finding(
                "capability-not-negotiated",
                "server",
                _("{method} sent, but the server did not declare the capability it belongs "
                  "to").format(method=method),
                raw)
        params = message.params or {}
        if method == "notifications/progress":
            self._on_progress(params, raw)
        elif method == "notifications/cancelled":
            self._server_requests.cancel(params.get("requestId"))
        elif method == "notifications/message":
            session.log_messages.append(params)
        elif method == "notifications/tasks/status":
            task = session.tasks.get(params.get("taskId"))  # type: ignore[arg-type]
            if task is not None:
                task.take_notification(params)
        self._route_to_subscription(method, params)
        for callback in list(self.notification_callbacks):
            self._call_soon("on_notification callback", callback, message)

    def _on_progress(self, params: dict[str, Any], raw: dict[str, Any]) -> None:
        token = params.get("progressToken")
        pending = self._table.progressed(token)
        if pending is None:
            if token not in self._table.abandoned:
                self._record.finding(
                    "progress-unknown-token",
                    "server",
                    _("progress for token {token}, which no active request carries").format(
                        token=repr(token)),
                    raw)
            return
        self._call_soon("on_progress callback", pending.on_progress,
                        params.get("progress", 0), params.get("total"), params.get("message"))

    def _call_soon(self, where: str, callback: Callable[..., Any], *args: Any) -> None:
        """Run a user callback; async ones become tasks so they can't stall the reader.

        Its errors are contained (recorded, the session goes on), awaited ones too.
        """
        try:
            result = callback(*args)
        except Exception as exc:
            self._record.observer_failed(where, callback, exc)
            return
        if inspect.isawaitable(result):

            async def _await() -> None:
                try:
                    await result
                except Exception as exc:
                    self._record.observer_failed(where, callback, exc)

            self._start_soon(_await)

    def on_transport_event(self, event: TransportEvent) -> None:
        """Record what the transport reports; act on refusals and discarded frames."""
        session = self._session
        session.transport_events.append(event)
        self._transcript.add(self._elapsed(), "event", event.kind,
                             self._lifecycle.state.value, text=event.detail)
        if event.kind == "oversized line":
            self._record.finding("message-too-large", "server", event.detail, None)
        elif event.kind == "request refused":
            self._on_request_refused(event.data)
        elif event.kind == "request failed":
            self._on_request_failed(event)

    def _on_request_failed(self, event: TransportEvent) -> None:
        """The transport could not deliver one request's answer: fail it now, say why."""
        data = event.data
        cause = str(data.get("cause") or "malformed")
        if cause == "too-large":
            self._record.finding("message-too-large", "server", event.detail, None)
        elif cause == "invalid-utf8":
            self._record.finding("invalid-utf8", "server", event.detail, None)
        error_type = HttpRequestFailed if cause == "http-error" else ResponseRejected
        self._fail_request(data.get("request_id"), error_type, cause, event.detail,
                           status=data.get("status"), size=data.get("size"),
                           limit=data.get("limit"), option=data.get("option"))

    def _on_request_refused(self, data: dict[str, Any]) -> None:
        """An HTTP refusal of a stateless request that carried no JSON-RPC answer."""
        pending = self._pending.pop(data.get("id"), None)  # type: ignore[arg-type]
        if pending is None:
            return
        error = data.get("error") if isinstance(data.get("error"), dict) else {}
        code = error.get("code") if isinstance(error.get("code"), int) else None
        message = str(error.get("message") or data.get("body") or "(empty body)")
        pending.finish(error=RequestRefused(pending.method, int(data.get("status", 0)), code,
                                            message, error.get("data")))


def _is_utf8(frame: bytes) -> bool:
    try:
        frame.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _answered_ids(frame: bytes, exc: EnvelopeError) -> list[Any]:
    """Ids of the requests a rejected frame answers, where they can be told for sure."""
    if exc.rule == "batch-not-allowed":  # valid JSON, an array: its responses' ids
        return [item.get("id") for item in json.loads(frame)
                if isinstance(item, dict) and "method" not in item]
    if exc.id is not None:
        # The decoder read the object; its id is ours unless it is a server request.
        return [] if _is_request(frame) else [exc.id]
    return [response_id(frame, frame)]


def _is_request(frame: bytes) -> bool:
    try:
        obj = json.loads(frame)
    except ValueError:
        return False
    return isinstance(obj, dict) and "method" in obj
