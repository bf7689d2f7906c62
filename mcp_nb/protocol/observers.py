"""Observer lists whose members cannot break the code that tells them: errors go to a handler.

A session tells observers (widgets, user callbacks) about transitions,
transcript entries and findings from inside its read path.  An observer that
raises must not end the session, so :meth:`Observers.notify` catches what an
observer raises and passes it to :attr:`Observers.on_error` (the session
records it as an ``observer-failed`` finding); without a handler the error
is only counted.

Example::

    >>> seen = []
    >>> observers = Observers()
    >>> unsubscribe = observers.add(seen.append)
    >>> _ = observers.add(lambda value: 1 / 0)
    >>> observers.notify("x")
    >>> seen, observers.failures
    (['x'], 1)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

Value = TypeVar("Value")
#: ``(observer, error)``: told when an observer raised.
ErrorHandler = Callable[[Callable[..., Any], Exception], None]


class Observers(Generic[Value]):
    """An ordered list of callables, each told every value."""

    __slots__ = ("_items", "failures", "on_error")

    def __init__(self) -> None:
        self._items: list[Callable[[Value], Any]] = []
        #: How many times an observer raised.
        self.failures = 0
        self.on_error: ErrorHandler | None = None

    def __bool__(self) -> bool:
        return bool(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def add(self, observer: Callable[[Value], Any]) -> Callable[[], None]:
        """Subscribe ``observer``; returns a function that unsubscribes it (idempotent)."""
        self._items.append(observer)

        def remove() -> None:
            if observer in self._items:
                self._items.remove(observer)

        return remove

    def notify(self, value: Value) -> None:
        """Call every observer with ``value``; one that raises does not stop the others."""
        for observer in list(self._items):
            try:
                observer(value)
            except Exception as exc:
                self.failed(observer, exc)

    def failed(self, observer: Callable[..., Any], error: Exception) -> None:
        """Count an observer's error and hand it to :attr:`on_error`."""
        self.failures += 1
        if self.on_error is not None:
            self.on_error(observer, error)
