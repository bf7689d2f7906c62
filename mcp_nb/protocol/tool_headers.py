"""Tool parameters mirrored into HTTP headers (2026-07-28, SEP-2243): validate, extract, encode.

A server may mark a parameter of a tool's ``inputSchema`` with
``"x-mcp-header": "Region"``; over Streamable HTTP the client then sends the
argument's value as ``Mcp-Param-Region`` on each ``tools/call``, so that
gateways can route on it without reading the body.  The spec
(basic/transports/streamable-http, "Custom Headers from Tool Parameters")
constrains the annotation, and a client MUST drop a tool that breaks any
constraint from its tool list:

- not empty, an HTTP token (RFC 9110 ``tchar``: no space, colon, control or
  non-ASCII character);
- unique within the schema, compared case-insensitively;
- only on a parameter of type ``string``, ``integer`` or ``boolean`` (not
  ``number``, ``object``, ``array`` or ``null``);
- only on a property reached from the root through ``properties`` alone (not
  inside ``items``, ``anyOf``, ``$ref``, ``$defs`` …).

Values are encoded as the spec says: strings as they are, integers in
decimal, booleans as ``true``/``false``; a value that is not plain visible
ASCII, has leading or trailing whitespace, or looks like the sentinel itself
is sent as ``=?base64?…?=`` (Base64 of its UTF-8).  A missing or null value
sends no header.

Example (the last line is shortened with ``...``)::

    >>> schema = {"type": "object", "properties": {
    ...     "region": {"type": "string", "x-mcp-header": "Region"},
    ...     "query": {"type": "string"}}}
    >>> annotations = header_annotations(schema)
    >>> param_headers(annotations, {"region": "us-west1", "query": "SELECT 1"})
    {'Mcp-Param-Region': 'us-west1'}
    >>> param_headers(annotations, {"region": "Hello, 世界"})
    {'Mcp-Param-Region': '=?base64?SGVsbG8sIOS4lueVjA==?='}
    >>> header_problems({"properties": {"n": {"type": "number", "x-mcp-header": "N"}}})[0]
    "parameter 'n': x-mcp-header 'N' is on a parameter of type number (only string, ..."
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

ANNOTATION = "x-mcp-header"
HEADER_PREFIX = "Mcp-Param-"
#: The types a mirrored parameter may have.
PRIMITIVE_TYPES = ("string", "integer", "boolean")
#: Integers a header may carry: JavaScript's safe range.
MAX_SAFE_INTEGER = 2**53 - 1

# RFC 9110 token: 1*tchar.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_SENTINEL_PREFIX, _SENTINEL_SUFFIX = "=?base64?", "?="


@dataclass(frozen=True)
class HeaderAnnotation:
    """One annotated parameter: its header name part and where its value sits."""

    name: str
    #: The chain of ``properties`` keys from the arguments' root to the value.
    path: tuple[str, ...]

    @property
    def header(self) -> str:
        return HEADER_PREFIX + self.name


@dataclass(frozen=True)
class _Found:
    value: Any
    path: tuple[str, ...]
    #: Reached from the root through ``properties`` keys alone.
    reachable: bool
    schema: Mapping[str, Any]


def _walk(schema: Any, path: tuple[str, ...], reachable: bool) -> Iterator[_Found]:
    """Every ``x-mcp-header`` in ``schema``, wherever it sits."""
    if isinstance(schema, list):
        for item in schema:
            yield from _walk(item, path, False)
        return
    if not isinstance(schema, Mapping):
        return
    if ANNOTATION in schema:
        yield _Found(schema[ANNOTATION], path, reachable and bool(path), schema)
    for keyword, value in schema.items():
        if keyword == "properties" and isinstance(value, Mapping):
            for name, subschema in value.items():
                yield from _walk(subschema, (*path, str(name)), reachable)
        elif keyword != ANNOTATION:
            yield from _walk(value, path, False)


def _type_problem(schema: Mapping[str, Any]) -> str | None:
    declared = schema.get("type")
    kinds = [declared] if isinstance(declared, str) else declared
    if not isinstance(kinds, list) or not kinds:
        return "has no type (only string, integer and boolean parameters may be mirrored)"
    # A nullable primitive (["string", "null"]) is still one primitive; null sends no header.
    proper = [kind for kind in kinds if kind != "null"]
    if len(proper) == 1 and proper[0] in PRIMITIVE_TYPES:
        return None
    shown = "/".join(str(kind) for kind in kinds)
    return (f"is on a parameter of type {shown} (only string, integer and boolean may be "
            "mirrored)")


def _name_problem(value: Any) -> str | None:
    if not isinstance(value, str):
        return f"is {json.dumps(value)}, not a string"
    if not value:
        return "is empty"
    if not _TOKEN.fullmatch(value):
        bad = sorted({ch for ch in value if not _TOKEN.fullmatch(ch)})
        shown = ", ".join("a space" if ch == " " else repr(ch) if " " < ch < "\x7f"
                          else f"U+{ord(ch):04X}" for ch in bad)
        return (f"is not an HTTP header token (it contains {shown}; allowed are letters, "
                "digits and !#$%&'*+-.^_`|~)")
    return None


def header_problems(schema: Any) -> list[str]:
    """Why ``schema`` (a tool's ``inputSchema``) breaks the ``x-mcp-header`` rules; [] if valid."""
    problems: list[str] = []
    seen: dict[str, str] = {}
    for found in _walk(schema, (), True):
        where = f"parameter {'.'.join(found.path)!r}" if found.path else "the schema root"
        label = f"x-mcp-header {found.value!r}" if isinstance(found.value, str) else \
            "x-mcp-header"
        problem = _name_problem(found.value)
        if problem is None and not found.reachable:
            problem = ("is not reached through properties alone (it sits under items, a "
                       "composition keyword, $ref or $defs, or on the root)")
        if problem is None:
            problem = _type_problem(found.schema)
        if problem is None:
            key = found.value.lower()
            if key in seen:
                problem = (f"repeats the header of parameter {seen[key]!r} (names are "
                           "compared case-insensitively)")
            else:
                seen[key] = ".".join(found.path)
        if problem is not None:
            problems.append(f"{where}: {label} {problem}")
    return problems


def header_annotations(schema: Any) -> list[HeaderAnnotation]:
    """The annotated parameters of a valid ``schema`` (check :func:`header_problems` first)."""
    return [HeaderAnnotation(found.value, found.path) for found in _walk(schema, (), True)
            if isinstance(found.value, str)]


def encode_value(value: Any) -> str:
    """A parameter value as a header value, Base64-wrapped when it is not plain ASCII.

    Raises :class:`ValueError` for an integer outside JavaScript's safe range.
    """
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise ValueError(f"{value} is outside the range a header may carry "
                             f"(±{MAX_SAFE_INTEGER})")
        text = str(value)
    elif isinstance(value, float) and value.is_integer():
        text = str(int(value))
    elif isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    plain = (all(" " <= ch <= "~" for ch in text) and text == text.strip(" ")
             and not (text.startswith(_SENTINEL_PREFIX) and text.endswith(_SENTINEL_SUFFIX)))
    if plain:
        return text
    encoded = base64.b64encode(text.encode("utf-8", "surrogatepass")).decode("ascii")
    return f"{_SENTINEL_PREFIX}{encoded}{_SENTINEL_SUFFIX}"


def param_headers(annotations: list[HeaderAnnotation] | tuple[HeaderAnnotation, ...],
                  arguments: Any) -> dict[str, str]:
    """The ``Mcp-Param-*`` headers for one call's ``arguments`` (absent or null: no header)."""
    headers: dict[str, str] = {}
    for annotation in annotations:
        value: Any = arguments
        for key in annotation.path:
            value = value.get(key) if isinstance(value, Mapping) else None
        if value is not None:
            headers[annotation.header] = encode_value(value)
    return headers
