"""SSE streams of the lab's HTTP server: events kept for replay (bounded), and written out.

How a message finds its stream.  Every POSTed request is answered on an SSE
stream of its own.  LabSession knows nothing of streams, but asyncio copies the
current context into each task it creates: the POST handler sets
:data:`current_stream` to the request's stream while LabSession reads the
message, so the task serving that request, and everything it sends (progress,
log messages, requests to the client, the response), carries its stream along.
Whatever is sent outside a request goes to the session's GET stream.

Replay.  Events of a handshake-era stream carry ids ``<stream>-<n>``, so a
client whose connection broke can fetch the rest with GET + ``Last-Event-ID``,
for as long as the session still holds the stream.  What is held is bounded
(:class:`StreamStore`): each stream keeps its :data:`KEPT_EVENTS` most recent
delivered events and everything not yet delivered, up to :data:`BACKLOG_EVENTS`
in all (older ones are dropped, oldest first, and counted), and a session keeps
its :data:`KEPT_STREAMS` most recent finished streams besides those still
running (older finished streams are forgotten, oldest first).  Resuming a
forgotten stream is 404; resuming from before the oldest kept event replays
what is kept.  The stateless era has no resumption, so its events have no ids.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
from collections import deque
from collections.abc import AsyncIterator

import anyio

from mcp_nb.lab.http.wire import Connection, Headers
from mcp_nb.lab.rpc import Message, RequestId, diag, encode_message

#: Delivered events each stream keeps for replay (the most recent ones).
KEPT_EVENTS = 256
#: Events a stream keeps at most, delivered or not (a GET stream nobody reads must not
#: grow without bound).
BACKLOG_EVENTS = 4096
#: Finished streams each session keeps for replay (the most recent ones).
KEPT_STREAMS = 32
#: The ``retry`` advice (ms) that opens every request's stream: how long a client whose
#: connection broke should wait before resuming it with GET + Last-Event-ID.
RETRY_MS = 1000
#: The ``retry`` advice (ms) sent just before --drop-stream-after cuts a connection.
DROP_RETRY_MS = 250

current_stream: contextvars.ContextVar[EventStream | None] = contextvars.ContextVar(
    "lab_current_stream", default=None
)


class EventStream:
    """One logical SSE stream: its recent events, kept for replay, and followers waiting for more.

    Positions are 1-based and absolute: dropping old events (:data:`KEPT_EVENTS`)
    does not renumber the rest.  Events of a ``resumable`` stream (handshake era)
    carry ids for ``Last-Event-ID``; the stateless era has no resumption, so its
    events have none.
    """

    def __init__(self, index: int, request_id: RequestId | None = None,
                 resumable: bool = True, repeat_ids: bool = False) -> None:
        self.index = index
        #: --repeat-event-ids: ids without the stream's index, so streams repeat them.
        self.repeat_ids = repeat_ids
        #: The request this stream answers; it finishes with that request's response.
        self.request_id = request_id
        self.resumable = resumable
        self._events: deque[bytes] = deque()
        #: The messages behind the events (a lone response may go out as plain JSON).
        self.messages: deque[Message] = deque()
        #: Events pushed so far: the position of the newest one.
        self.pushed = 0
        self.finished = False
        #: How many events were written to some connection (where a fresh GET starts).
        self.delivered = 0
        #: Set by :meth:`hang_up`: the connection now writing this stream is to end.
        self._hang_up = False
        self._changed = asyncio.Event()

    @property
    def dropped(self) -> int:
        """Events no longer kept (the oldest ones)."""
        return self.pushed - len(self._events)

    def event_id(self, position: int) -> str:
        return str(position) if self.repeat_ids else f"{self.index}-{position}"

    def push(self, message: Message) -> None:
        self.pushed += 1
        event_id = f"id: {self.event_id(self.pushed)}\n" if self.resumable else ""
        self._events.append(
            f"{event_id}event: message\ndata: ".encode() + encode_message(message) + b"\n\n"
        )
        self.messages.append(message)
        self._trim()
        if (self.request_id is not None and "method" not in message
                and message.get("id") == self.request_id):
            self.finished = True
        self._wake()

    def finish(self) -> None:
        self.finished = True
        self._wake()

    def hang_up(self) -> None:
        """End the response now writing this stream, keeping the stream open for a resume.

        This is SSE polling (2025-11-25): the server closes the connection
        mid-request and the client comes back with GET + ``Last-Event-ID``.
        """
        self._hang_up = True
        self._wake()

    def priming(self, position: int) -> bytes:
        """An event with an id and empty data, so the client can resume from here.

        A request's stream also advises how long to wait before resuming
        (``retry``); the GET stream leaves that to the client.
        """
        retry = f"retry: {RETRY_MS}\n" if self.request_id is not None else ""
        return f"id: {self.event_id(position)}\n{retry}data:\n\n".encode()

    async def wait_for_first(self) -> None:
        """Return once the stream has an event."""
        while not self.pushed:
            await self._changed.wait()

    def is_last(self, position: int) -> bool:
        return self.finished and position == self.pushed

    async def follow(self, after: int) -> AsyncIterator[tuple[int, bytes]]:
        """Events after position ``after``, waiting for new ones until finished (or hung up).

        Events already dropped are skipped (with a diagnostic): they are gone.
        """
        position = after
        while True:
            if self._hang_up:
                self._hang_up = False
                return
            if position < self.dropped:
                diag(f"stream {self.index}: events {position + 1}..{self.dropped} are no "
                     f"longer kept; resuming after them")
                position = self.dropped
            if position < self.pushed:
                position += 1
                yield position, self._events[position - 1 - self.dropped]
            elif self.finished:
                return
            else:
                await self._changed.wait()

    def _trim(self) -> None:
        """Drop the oldest events beyond what the replay policy keeps (module docstring)."""
        while len(self._events) > BACKLOG_EVENTS or (
                len(self._events) > KEPT_EVENTS and self.dropped < self.delivered):
            self._events.popleft()
            self.messages.popleft()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()


class StreamStore:
    """One session's streams: the GET stream (index 0) and one per POSTed request.

    Finished streams stay resumable until :data:`KEPT_STREAMS` newer finished
    streams push them out; running streams are always kept.
    """

    def __init__(self, kept_streams: int = KEPT_STREAMS, *, repeat_ids: bool = False,
                 resume_wrong_stream: bool = False) -> None:
        self.standalone = EventStream(0, repeat_ids=repeat_ids)
        self._repeat_ids = repeat_ids
        #: --resume-wrong-stream: a Last-Event-ID resumes the stream opened before its own.
        self._resume_wrong_stream = resume_wrong_stream
        self._streams: dict[int, EventStream] = {0: self.standalone}
        self._kept_streams = kept_streams
        self._indices = itertools.count(1)

    def open(self, request_id: RequestId) -> EventStream:
        stream = EventStream(next(self._indices), request_id, repeat_ids=self._repeat_ids)
        self._streams[stream.index] = stream
        return stream

    def route(self, message: Message) -> None:
        """Push a message on the stream of the request it belongs to, else the GET stream."""
        stream = current_stream.get()
        if stream is None or stream.finished:
            stream = self.standalone
        stream.push(message)
        self._forget_old()

    def find(self, last_event_id: str) -> tuple[EventStream, int] | None:
        """The stream a ``Last-Event-ID`` belongs to and the position after which to resume."""
        index, _, position = last_event_id.partition("-")
        try:
            wrong = self._resume_wrong_stream and int(index) - 1 in self._streams
            stream = self._streams[int(index) - 1 if wrong else int(index)]
            after = 0 if wrong else int(position)
        except (KeyError, ValueError):
            return None
        return (stream, after) if 0 <= after <= stream.pushed else None

    def hang_up_current(self) -> None:
        """Hang up the connection of the request being served (see :meth:`EventStream.hang_up`)."""
        stream = current_stream.get()
        if stream is not None and not stream.finished:
            stream.hang_up()

    def finish_all(self) -> None:
        for stream in self._streams.values():
            stream.finish()

    def _forget_old(self) -> None:
        """Forget the oldest finished request streams beyond :data:`KEPT_STREAMS`."""
        finished = [index for index, stream in self._streams.items()
                    if index and stream.finished]
        for index in finished[: max(0, len(finished) - self._kept_streams)]:
            del self._streams[index]  # dicts keep insertion order: oldest first


async def write_stream(connection: Connection, stream: EventStream, after: int, *,
                       first: bytes, headers: Headers = (),
                       drop_after: int | None = None, hold_open: bool = False) -> None:
    """Write ``stream`` from position ``after`` as one SSE response, until it finishes.

    Ends early when the client leaves, or when --drop-stream-after cuts it;
    ``hold_open`` (--keep-resumed-open) keeps the connection open after the
    stream's last event, until the client leaves.
    """
    await connection.open_stream(headers)
    if first:
        await connection.write(first)
    async with anyio.create_task_group() as watch:

        async def hang_up_when_client_leaves() -> None:
            await connection.until_client_leaves()
            watch.cancel_scope.cancel()

        watch.start_soon(hang_up_when_client_leaves)
        # A client leaving mid-write ends this response, not the connection handler
        # with an exception group.
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            await _write_events(connection, stream, after, drop_after, hold_open)
        watch.cancel_scope.cancel()


async def _write_events(connection: Connection, stream: EventStream, after: int,
                        drop_after: int | None, hold_open: bool) -> None:
    written = 0
    async with contextlib.aclosing(stream.follow(after)) as events:
        async for position, event in events:
            await connection.write(event)
            stream.delivered = max(stream.delivered, position)
            written += 1
            if drop_after is not None and written >= drop_after and not stream.is_last(
                    position):
                diag(f"dropping the connection of stream {stream.index} after event "
                     f"{stream.event_id(position)} (--drop-stream-after)")
                await connection.write(f"retry: {DROP_RETRY_MS}\n\n".encode())
                await connection.abort()
                return
    if hold_open:
        diag(f"keeping the connection of resumed stream {stream.index} open "
             "(--keep-resumed-open)")
        await anyio.sleep_forever()  # until the client leaves (the watch cancels this)
    await connection.finish()
