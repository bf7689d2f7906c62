"""Comparing JSON values: what a path-by-path difference looks like, in words.

Replay uses it to say how an unrecorded request differs from the closest
recorded one; the diff uses it for schema and result changes.

Example::

    >>> differences({"a": 1, "b": [1, 2]}, {"a": 2, "b": [1], "c": None})
    ['a: 1 → 2', 'b: 2 items → 1 item', 'b[1]: removed (2)', 'c: added (null)']
"""

from __future__ import annotations

import json
from typing import Any

from ..protocol.plaintext import plain_text

#: A shown value is cut to this many characters.
SHOWN_LENGTH = 60


def printable(text: str) -> str:
    """``text`` on one line, safe for a terminal: the project's one plain-text sink.

    >>> printable("a\\u202eb\\x1b[31m\\n")
    'a\\\\u202eb\\\\u001b[31m\\\\u000a'
    """
    return plain_text(text, one_line=True)


def shown(value: Any) -> str:
    """A short, printable JSON rendering of ``value`` for a one-line explanation."""
    text = printable(json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr))
    return text if len(text) <= SHOWN_LENGTH else text[: SHOWN_LENGTH - 1] + "…"


def _items(count: int) -> str:
    return f"{count} item" if count == 1 else f"{count} items"


def differences(before: Any, after: Any, path: str = "", limit: int = 20) -> list[str]:
    """Each place where ``after`` differs from ``before``, as ``path: what changed``.

    Objects are compared key by key, arrays item by item (their lengths
    first); at most ``limit`` lines, the last saying how many more there were.
    """
    found: list[str] = []
    _walk(before, after, path, found)
    if len(found) > limit:
        found[limit - 1:] = [f"… and {len(found) - limit + 1} more differences"]
    return found


def _walk(before: Any, after: Any, path: str, found: list[str]) -> None:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in before:
            where = f"{path}.{key}" if path else str(key)
            if key not in after:
                found.append(f"{where}: removed ({shown(before[key])})")
            else:
                _walk(before[key], after[key], where, found)
        for key in after:
            if key not in before:
                where = f"{path}.{key}" if path else str(key)
                found.append(f"{where}: added ({shown(after[key])})")
        return
    if isinstance(before, list) and isinstance(after, list):
        if len(before) != len(after):
            found.append(f"{path or '(top)'}: {_items(len(before))} → {_items(len(after))}")
        for index, (old, new) in enumerate(zip(before, after, strict=False)):
            _walk(old, new, f"{path}[{index}]", found)
        for index in range(len(after), len(before)):
            found.append(f"{path}[{index}]: removed ({shown(before[index])})")
        for index in range(len(before), len(after)):
            found.append(f"{path}[{index}]: added ({shown(after[index])})")
        return
    # bool is an int in Python; JSON tells true from 1.
    if before != after or type(before) is not type(after):
        found.append(f"{path or '(top)'}: {change(before, after)}")


def change(before: Any, after: Any) -> str:
    """``before → after`` in short; long strings from a little before where they differ."""
    if not (isinstance(before, str) and isinstance(after, str)
            and max(len(before), len(after)) > SHOWN_LENGTH):
        return f"{shown(before)} → {shown(after)}"
    start = 0
    while start < min(len(before), len(after)) and before[start] == after[start]:
        start += 1
    start = max(0, start - 10)

    def excerpt(text: str) -> str:
        return shown(text[start:]) if start == 0 else "…" + shown(text[start:])

    where = f" (from character {start})" if start else ""
    return f"{excerpt(before)} → {excerpt(after)}{where}"


def count_differences(before: Any, after: Any) -> int:
    """How many places differ (unbounded; for choosing the closest of several candidates)."""
    found: list[str] = []
    _walk(before, after, "", found)
    return len(found)
