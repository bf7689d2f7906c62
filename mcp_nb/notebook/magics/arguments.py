"""Reading a magic line: ``k=v`` pairs, a ``{json}`` object, ``{expr}``/``$name`` expansion.

Expansion follows IPython's own magics (``{expr}`` is a Python expression,
``$name`` a variable, ``{{``/``}}``/``$$`` stand for themselves) but happens
only in arguments that are never JSON: a server's argv, URLs, paths, file
names and ``--env``/``--header`` values.  Tool arguments stay verbatim.
Where a Python object is what is wanted (``--auth-callback {approve}``,
``--config {servers}``), a lone ``{expr}`` or ``$name`` is that object itself,
not its text (:func:`expand_object`).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from IPython.utils.text import DollarFormatter

from ...i18n import N_, _
from .table import McpCellError, Usage

_FORMATTER = DollarFormatter()


def key_values(items: list[str], *, parse_json: bool) -> dict[str, Any]:
    """``k=v`` pairs; values are JSON when they parse (``a=1`` is a number) unless told not to."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise Usage(_("expected key=value, got {item}").format(item=repr(item)))
        if parse_json:
            try:
                out[key] = json.loads(value)
                continue
            except ValueError:
                pass
        out[key] = value
    return out


def split_json(text: str) -> tuple[dict[str, Any] | None, str]:
    """Pull one ``{…}`` JSON object out of a magic line; return it and the rest."""
    start = text.find("{")
    if start < 0:
        return None, text
    try:
        value, end = json.JSONDecoder().raw_decode(text, start)
    except ValueError as exc:
        raise Usage(_("the arguments look like JSON but do not parse: {error}").format(
            error=exc)) from None
    if not isinstance(value, dict):
        raise Usage(_("tool arguments must be a JSON object"))
    return value, text[:start] + " " + text[end:]


def expand(text: str, namespace: dict[str, Any]) -> str:
    """``{expr}`` and ``$name`` from the notebook's namespace; a JSON value is left alone.

    Example: with ``import sys`` run, ``{sys.executable}`` becomes the kernel's
    interpreter.  A name that is not defined fails the cell and says so.
    """
    if ("{" not in text and "$" not in text) or _is_json(text):
        return text  # '{"a": 1}' or '[1]' handed to a server: never touched
    try:
        return _FORMATTER.vformat(text, args=[], kwargs=namespace)
    except Exception as exc:  # whatever the expression raised is named below
        raise _cannot_expand(text, exc) from None


def expand_object(text: str, namespace: dict[str, Any]) -> Any:
    """A lone ``{expr}`` or ``$name`` as the object it names; other text as :func:`expand` has it.

    For arguments that take a Python object from the notebook (a callable, a dict):
    its text (``<function approve at 0x…>``) would be of no use.

    >>> expand_object("{len}", {}) is len, expand_object("$n", {"n": 3})
    (True, 3)
    >>> expand_object("n={n}", {"n": 3}), expand_object("paste", {})
    ('n=3', 'paste')
    """
    expression = _lone_field(text)
    if expression is None:
        return expand(text, namespace)
    try:
        return eval(expression, dict(namespace))  # what IPython's formatter does with {expr}
    except Exception as exc:  # whatever the expression raised is named below
        raise _cannot_expand(text, exc) from None


def _lone_field(text: str) -> str | None:
    """The expression of a ``{expr}`` or ``$name`` that is all of ``text``; else ``None``."""
    if _is_json(text):
        return None
    try:
        parts = [part for part in _FORMATTER.parse(text) if part != ("", None, None, None)]
    except ValueError:
        return None
    if len(parts) != 1:
        return None
    literal, name, spec, conversion = parts[0]
    if literal or not name or conversion is not None:
        return None
    return f"{name}:{spec}" if spec else name  # {a[1:2]} arrives split at its colon


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _cannot_expand(text: str, exc: Exception) -> McpCellError:
    return McpCellError(
        f"cannot expand {text!r}: {type(exc).__name__}: {exc} (the expression runs in the "
        "notebook's namespace, e.g. import sys first for {sys.executable}; write {{ }} or "
        "$$ for literal braces or dollars)")


def expand_arguments(args: argparse.Namespace, names: tuple[str, ...],
                     namespace: dict[str, Any], objects: tuple[str, ...] = ()) -> None:
    """Expand the named attributes of ``args`` in place (strings and lists of strings).

    In the attributes named by ``objects`` a lone ``{expr}`` is the object (:func:`expand_object`).
    """
    for name in (*names, *objects):
        value = getattr(args, name, None)
        how = expand_object if name in objects else expand
        if isinstance(value, str):
            setattr(args, name, how(value, namespace))
        elif isinstance(value, list):
            setattr(args, name, [how(item, namespace) if isinstance(item, str) else item
                                 for item in value])


def session_name(parser: argparse.ArgumentParser) -> None:
    """An optional session NAME for the views (default: the current session).

    Here, below every group of subcommands, so that groups share it without importing
    one another.
    """
    parser.add_argument("name", nargs="?", help=N_("which session (default: the current one)"))


def request_options(parser: argparse.ArgumentParser) -> None:
    """``--timeout`` and ``--force``, which every request subcommand takes."""
    parser.add_argument("--timeout", type=float, help=N_("seconds to wait (overrides the default)"))
    parser.add_argument("--force", action="store_true",
                        help=N_("send even if the lifecycle or capabilities forbid it (a finding "
                                "is recorded)"))


def request_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The session keyword arguments :func:`request_options` stands for."""
    settings: dict[str, Any] = {"force": args.force}
    if args.timeout is not None:
        settings["timeout"] = args.timeout
    return settings
