"""Each session's copy of the ``ui://`` resources its Apps were rendered from.

MCP Apps (2026-01-26, "Resource Discovery"): the host MUST use ``resources/read`` to fetch an
App's resource, and MAY prefetch and cache UI resource content for performance. An App is
static HTML (the data comes with the tool's result), often hundreds of KB: calling the same
App tool again re-reads the same bytes. So ``%mcp call`` reads a resource once per session and
keeps it; the server's word makes the copy go:

* ``notifications/resources/list_changed``: every copy of the session goes (the server's
  resources changed, which ones it does not say);
* ``notifications/resources/updated`` with ``uri``: that resource's copy goes.

``%mcp app --step`` always reads (its *read* step is what it teaches) and refreshes the copy.
A read that was in flight while the server said one of these is not kept (its bytes may be
the old ones). ``enabled = False`` (``hosted.app_resources.enabled``) reads every time.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from ..protocol.envelope import Notification

LIST_CHANGED = "notifications/resources/list_changed"
UPDATED = "notifications/resources/updated"


@dataclass(frozen=True)
class CachedResource:
    """``resources/read``'s ``contents`` for one URI, and when (session clock) it was read."""

    contents: list[dict[str, Any]]
    read_at: float


class AppResourceCache:
    """The session's ``ui://`` resources as read, until the server says they changed.

    Notifications arrive on the session's loop thread; reads happen on the cell's thread.
    A generation counter, bumped by every invalidation, keeps a read that straddled one out.
    """

    def __init__(self, session: Any) -> None:
        self.session = session
        #: Off: every render reads the resource again (the benchmark's "without" side).
        self.enabled = True
        self._entries: dict[str, CachedResource] = {}
        self._generation = 0
        self._lock = threading.Lock()
        #: How many renders were served from a copy, and how many copies were dropped.
        self.hits = 0
        self.dropped = 0
        session.on_notification(self._on_notification)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, uri: object) -> bool:
        return uri in self._entries

    def get(self, uri: str) -> CachedResource | None:
        if not self.enabled:
            return None
        cached = self._entries.get(uri)
        if cached is not None:
            self.hits += 1
        return cached

    def read(self, run: Any, uri: str, *, fresh: bool = False) -> tuple[list[dict[str, Any]],
                                                                       CachedResource | None]:
        """The resource's contents: the session's copy, or ``resources/read`` (kept).

        ``run`` runs a coroutine on the session's loop and waits (``hosted.run``). Returns
        the contents and the copy they came from (None when read now).
        """
        cached = None if fresh else self.get(uri)
        if cached is not None:
            return cached.contents, cached
        with self._lock:
            generation = self._generation
        contents = run(self.session.read_resource(uri))
        read_at = self.session.lifecycle.elapsed()
        with self._lock:
            if generation == self._generation:
                self._entries[uri] = CachedResource(list(contents), read_at)
        return contents, None

    def drop(self, uri: str | None = None) -> None:
        """Forget ``uri``'s copy (every copy with None)."""
        with self._lock:
            self._generation += 1
            if uri is None:
                self.dropped += len(self._entries)
                self._entries.clear()
            elif self._entries.pop(uri, None) is not None:
                self.dropped += 1

    def _on_notification(self, notification: Notification) -> None:
        if notification.method == LIST_CHANGED:
            self.drop()
        elif notification.method == UPDATED:
            uri = (notification.params or {}).get("uri")
            if isinstance(uri, str):
                self.drop(uri)
