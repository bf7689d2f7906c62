"""The lab's HTTP sessions: a Streamable HTTP session (its streams) and a legacy HTTP+SSE one."""

from __future__ import annotations

import itertools
import secrets

from mcp_nb.lab.http.streams import EventStream, StreamStore
from mcp_nb.lab.knobs import Knobs
from mcp_nb.lab.menus import open_session

#: Session numbers for --counter-session-ids (guessable on purpose).
_NUMBERS = itertools.count(1)


class McpSession:
    """One Streamable HTTP session (``Mcp-Session-Id``): a lab session plus its streams."""

    def __init__(self, knobs: Knobs) -> None:
        self.id = (f"session-{next(_NUMBERS)}" if knobs.counter_session_ids
                   else secrets.token_hex(16))
        self.streams = StreamStore(repeat_ids=knobs.repeat_event_ids,
                                   resume_wrong_stream=knobs.resume_wrong_stream)
        self.lab = open_session(knobs, self.streams.route, era="handshake",
                                hang_up=self.streams.hang_up_current)
        self.posts = 0
        #: True while a client holds the GET stream (one at a time).
        self.listening = False

    async def close(self) -> None:
        self.streams.finish_all()
        await self.lab.close()


class LegacySession:
    """One HTTP+SSE session: a lab session whose every message goes down one GET stream."""

    def __init__(self, knobs: Knobs) -> None:
        self.id = secrets.token_hex(16)
        self.stream = EventStream(0)
        self.lab = open_session(knobs, self.stream.push, era="handshake")

    async def close(self) -> None:
        self.stream.finish()
        await self.lab.close()
