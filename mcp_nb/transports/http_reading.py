"""Reading what an HTTP server sends within the one-message size limit: bodies and SSE events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

import httpx

from ..protocol.envelope import response_id_from_edges
from .http_messages import Outgoing
from .sse_events import OversizedEvent, SseEvent, SseParser


class EventReporter(Protocol):
    def __call__(self, kind: str, detail: str, **data: Any) -> None: ...


class ResponseReader:
    """Reads response bodies and SSE events no further than ``limit`` bytes per message.

    A message over the limit is reported through ``report`` (a transport event) and
    fails the request it answers, when that is known.
    """

    def __init__(self, limit: int, report: EventReporter) -> None:
        self.limit = limit
        self._report = report

    async def body(self, response: httpx.Response, outgoing: Outgoing | None) -> bytes | None:
        """The response body, read no further than the limit; None once it is over it.

        A body over the limit fails the request it answered (``outgoing``, when
        the body is that request's response) without being read to its end.
        """
        limit = self.limit
        declared = response.headers.get("content-length", "")
        size, complete = (int(declared), True) if declared.isdigit() else (0, False)
        if size <= limit:
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if size > limit:
                    break
            else:
                return b"".join(chunks)
            complete = False
        await response.aclose()
        answers = outgoing.id if outgoing is not None and outgoing.kind == "request" else None
        self._too_large(answers, size, complete=complete, what="an HTTP response body")
        return None

    async def events(self, response: httpx.Response) -> AsyncIterator[SseEvent]:
        """The events of an SSE response, none over the limit (an oversized one is reported)."""
        parser = SseParser(self.limit)
        async for chunk in response.aiter_bytes():
            for event in parser.feed(chunk):
                if isinstance(event, OversizedEvent):
                    self._too_large(response_id_from_edges(event.head, event.tail), event.size,
                                    complete=True, what="an SSE event")
                else:
                    yield event

    def _too_large(self, request_id: str | int | None, size: int, *, complete: bool,
                   what: str) -> None:
        """A message over ``max_message_bytes`` was not read: fail its request if known."""
        limit = self.limit
        text = (f"{'' if complete else 'at least '}{size:,} bytes, over the {limit:,}-byte "
                "limit on one message")
        if request_id is None:
            self._report("oversized line", f"discarded {what} of {text} (max_message_bytes)",
                         size=size, limit=limit)
            return
        self._report("request failed", f"discarded its response ({what}) of {text}",
                     request_id=request_id, cause="too-large", status=None, limit=limit,
                     option="max_message_bytes", size=size)
