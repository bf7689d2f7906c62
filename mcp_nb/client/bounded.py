"""Lists that keep only their most recent items, so a chatty server cannot exhaust memory.

A session keeps what it saw (transcript entries, log messages, findings,
transport events) for people to look at; a server that sends a million
notifications must not make it keep a million of each.  :class:`RecentList`
is a plain :class:`list` (slicing, equality and iteration work as ever) that
drops its oldest items once it holds more than ``limit``.  It trims in steps
of an eighth of the limit, so appending stays O(1) amortised: between trims
it may hold up to ``limit + limit // 8`` items.

Example::

    >>> recent = RecentList(limit=8)
    >>> for n in range(20):
    ...     recent.append(n)
    >>> recent[0] >= 20 - 9, recent.dropped + len(recent)
    (True, 20)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

Item = TypeVar("Item")


class RecentList(list[Item]):
    """A list of the most recent items; ``dropped`` counts the items it let go."""

    def __init__(self, items: Iterable[Item] = (), *, limit: int,
                 on_drop: Callable[[list[Item]], Any] | None = None) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        super().__init__(items)
        self.limit = limit
        #: How many items were dropped, in total.
        self.dropped = 0
        # Told of each batch of dropped items (the transcript counts them by kind).
        self._on_drop = on_drop
        self._high_water = limit + max(1, limit // 8)
        self._trim()

    def append(self, item: Item) -> None:
        super().append(item)
        if len(self) > self._high_water:
            self._trim()

    def _trim(self) -> None:
        excess = len(self) - self.limit
        if excess <= 0:
            return
        if self._on_drop is not None:
            self._on_drop(self[:excess])
        del self[:excess]
        self.dropped += excess
