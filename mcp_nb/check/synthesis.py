"""Arguments invented from a tool's ``inputSchema``, for the calls ``--call-tools`` allows.

Whatever a server sends as a schema, :func:`arguments_for` never raises: it returns
arguments that its schema accepts (checked with jsonschema before they are returned), or
None when the schema is not valid JSON Schema (``tools.input-schema`` reports that) or
asks for more than simple means can satisfy.  Handled: ``type`` as a name or a list of
names (how zod writes unions), boolean subschemas, local ``$ref`` (``#``, ``#/$defs/…``;
one that does not resolve gives up), ``anyOf`` / ``oneOf`` / ``allOf``, ``enum`` /
``const``, nested objects and arrays, string lengths, patterns and common formats,
numeric bounds and ``multipleOf``.  Only the required properties are filled in.

Example::

    >>> arguments_for({"type": "object", "required": ["n", "mode"], "properties": {
    ...     "n": {"type": "integer", "minimum": 5},
    ...     "mode": {"type": ["boolean", "string"]}}})
    {'n': 5, 'mode': False}
    >>> arguments_for({"type": "object", "properties": 5}) is None
    True
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

from ..lazy_jsonschema import jsonschema

#: Nothing fits (a sentinel: None is a JSON value).
NOTHING: Any = object()
#: How deep the invented value may nest, and how many subschemas one tool may cost.
MAX_DEPTH = 12
BUDGET = 2000
#: The longest string and array invented (a schema asking for more is given up on).
MAX_LENGTH = 1000
#: Candidates tried per subschema.
TRIES = 24
#: Strings tried, in turn, against a pattern (after the plain sample).
STRING_TRIES = ("a", "A", "0", "1", "abc", "ABC", "123", "a1", "checkup-1", "2026-01-01",
                "checkup@example.com", "https://example.com/")
FORMATS = {"email": "checkup@example.com", "idn-email": "checkup@example.com",
           "uri": "https://example.com/", "url": "https://example.com/",
           "iri": "https://example.com/", "uri-reference": "https://example.com/",
           "iri-reference": "https://example.com/", "date-time": "2026-01-01T00:00:00Z",
           "date": "2026-01-01", "time": "00:00:00Z", "duration": "P1D",
           "uuid": "00000000-0000-4000-8000-000000000000", "ipv4": "127.0.0.1",
           "ipv6": "::1", "hostname": "example.com", "idn-hostname": "example.com",
           "json-pointer": "/checkup", "relative-json-pointer": "0", "regex": "checkup"}
SIMPLE = {"string": "checkup", "integer": 1, "number": 1, "boolean": False, "null": None,
          "object": {}, "array": []}


def _number(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, int) and not isinstance(value, bool)


class _Synthesis:
    """One schema's invention: the root (for ``$ref``), its validator, a budget."""

    def __init__(self, root: dict[str, Any]) -> None:
        schemas = jsonschema()
        self.root = root
        validator_class = schemas.validators.validator_for(root,
                                                           default=schemas.Draft202012Validator)
        validator_class.check_schema(root)
        self.validator = validator_class(root)
        self.budget = BUDGET

    def fits(self, value: Any, schema: Any) -> bool:
        try:
            return bool(self.validator.evolve(schema=schema).is_valid(value))
        except Exception:  # an unresolvable $ref, a regex Python rejects, depth
            return False

    def value(self, schema: Any, depth: int = 0) -> Any:
        """The first candidate that ``schema`` accepts, or NOTHING."""
        return next(self.fitting(schema, depth), NOTHING)

    def fitting(self, schema: Any, depth: int) -> Iterator[Any]:
        """The candidates that ``schema`` accepts (a few, within the budget)."""
        self.budget -= 1
        if self.budget < 0 or depth > MAX_DEPTH:
            return
        for candidate in itertools.islice(self.candidates(schema, depth), TRIES):
            if candidate is not NOTHING and self.fits(candidate, schema):
                yield candidate
            if self.budget < 0:
                return

    def resolve(self, ref: Any) -> Any:
        """A local ``$ref``'s target (``#`` or a JSON pointer), or NOTHING."""
        if not isinstance(ref, str) or not ref.startswith("#"):
            return NOTHING
        node: Any = self.root
        pointer = unquote(ref[1:])
        if pointer and not pointer.startswith("/"):
            return NOTHING  # an anchor: not followed
        for token in pointer.split("/")[1:]:
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                return NOTHING
        return node

    def candidates(self, schema: Any, depth: int) -> Iterator[Any]:
        if schema is True or schema == {}:
            yield "checkup"
            return
        if not isinstance(schema, dict):
            return
        if "const" in schema:
            yield schema["const"]
            return
        if "enum" in schema:
            yield from schema["enum"] if isinstance(schema["enum"], list) else ()
            return
        rest = {k: v for k, v in schema.items()
                if k not in ("$ref", "allOf", "anyOf", "oneOf")}
        if "$ref" in schema:
            target = self.resolve(schema["$ref"])
            if target is NOTHING:
                return
            yield self.value(target, depth + 1)
        for key in ("allOf", "anyOf", "oneOf"):
            for branch in _branches(schema, key):
                yield from self.fitting(_merged(rest, self.merged(branch)), depth + 1)
        if "allOf" in schema:
            merged = rest
            for branch in _branches(schema, "allOf"):
                merged = _merged(merged, self.merged(branch))
            yield self.value(merged, depth + 1)
        yield from self.typed(rest, depth)

    def merged(self, branch: Any) -> Any:
        """A branch with its local ``$ref`` followed (one step), for merging."""
        if isinstance(branch, dict) and "$ref" in branch:
            target = self.resolve(branch["$ref"])
            if isinstance(target, dict):
                return _merged({k: v for k, v in branch.items() if k != "$ref"}, target)
        return branch

    def typed(self, schema: dict[str, Any], depth: int) -> Iterator[Any]:
        kinds = schema.get("type")
        if isinstance(kinds, str):
            kinds = [kinds]
        elif not isinstance(kinds, list):
            kinds = _implied_types(schema)
        for kind in kinds:
            if kind == "string":
                yield from _strings(schema)
            elif kind in ("integer", "number"):
                yield from _numbers(schema, integer=kind == "integer")
            elif kind == "boolean":
                yield from (False, True)
            elif kind == "null":
                yield None
            elif kind == "object":
                yield self.object(schema, depth)
            elif kind == "array":
                yield from self.arrays(schema, depth)

    def object(self, schema: dict[str, Any], depth: int) -> Any:
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        required = schema.get("required")
        names = [n for n in required if isinstance(n, str)] if isinstance(required, list) else []
        minimum = schema.get("minProperties")
        if isinstance(minimum, int) and not isinstance(minimum, bool):
            names += [n for n in properties if n not in names][:max(0, minimum - len(names))]
        extra = schema.get("additionalProperties", True)
        result = {}
        for name in dict.fromkeys(names):
            value = self.value(properties.get(name, extra), depth + 1)
            if value is NOTHING:
                return NOTHING
            result[name] = value
        return result

    def arrays(self, schema: dict[str, Any], depth: int) -> Iterator[Any]:
        minimum = schema.get("minItems")
        count = minimum if isinstance(minimum, int) and not isinstance(minimum, bool) else 0
        if count > MAX_LENGTH:
            return
        prefix = schema.get("prefixItems")
        prefix = prefix if isinstance(prefix, list) else []
        items = schema.get("items", True)
        if isinstance(items, list):  # draft 4 to 2019-09: items as a tuple
            prefix, items = items, schema.get("additionalItems", True)
        if count == 0 and not prefix:
            yield []
        values = []
        for index in range(max(count, len(prefix), 1)):
            value = self.value(prefix[index] if index < len(prefix) else items, depth + 1)
            if value is NOTHING:
                return
            values.append(value)
        yield values[:max(count, len(prefix))] if count or prefix else values
        contains = schema.get("contains")
        if contains is not None:
            value = self.value(contains, depth + 1)
            if value is not NOTHING:
                yield [*values[:max(count - 1, 0)], value]


def _branches(schema: dict[str, Any], key: str) -> list[Any]:
    branches = schema.get(key)
    return branches if isinstance(branches, list) else []


def _merged(base: Any, branch: Any) -> Any:
    """Two subschemas as one (properties and required combined; otherwise base's word first)."""
    if branch is True:
        return base
    if not isinstance(base, dict) or not isinstance(branch, dict):
        return NOTHING if branch is not True else base
    merged = {**branch, **base}
    for key in ("properties", "$defs"):
        if isinstance(base.get(key), dict) and isinstance(branch.get(key), dict):
            merged[key] = {**branch[key], **base[key]}
    if isinstance(base.get("required"), list) and isinstance(branch.get("required"), list):
        merged["required"] = [*base["required"], *branch["required"]]
    return merged


def _implied_types(schema: dict[str, Any]) -> list[str]:
    """The types a schema without ``type`` hints at by its keywords (a plain string first)."""
    if any(k in schema for k in ("properties", "required", "additionalProperties",
                                 "minProperties")):
        return ["object"]
    if any(k in schema for k in ("items", "prefixItems", "minItems", "contains")):
        return ["array"]
    if any(k in schema for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                                 "multipleOf")):
        return ["number"]
    return ["string", "integer", "boolean", "null", "object", "array"]


def _strings(schema: dict[str, Any]) -> Iterator[str]:
    low, high = schema.get("minLength"), schema.get("maxLength")
    low = low if isinstance(low, int) and not isinstance(low, bool) and low > 0 else 0
    if low > MAX_LENGTH:
        return
    high = high if isinstance(high, int) and not isinstance(high, bool) else None
    sample = FORMATS.get(schema.get("format"), "checkup") if isinstance(
        schema.get("format"), str) else "checkup"
    for text in (sample, *STRING_TRIES):
        if len(text) < low:
            text = (text * (low // max(len(text), 1) + 1))[:low]
        yield text if high is None else text[:max(high, 0)]


def _numbers(schema: dict[str, Any], *, integer: bool) -> Iterator[Any]:
    tries: list[Any] = [1, 0] if integer else [1, 0, 1.5, 0.5]
    # Bounds too large for a float, or a step too small, leave the plain tries.
    with contextlib.suppress(ArithmeticError, ValueError):
        tries += _number_tries(schema)
    for value in tries:
        if integer:
            if isinstance(value, float) and not value.is_integer():
                continue
            value = int(value)
        yield value


def _number_tries(schema: dict[str, Any]) -> list[Any]:
    low, high = schema.get("minimum"), schema.get("maximum")
    above, below = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if above is True and _number(low):  # draft 4: a boolean beside minimum
        above, low = low, None
    if below is True and _number(high):
        below, high = high, None
    floor = max((v for v in (low, above) if _number(v)), default=None)
    ceiling = min((v for v in (high, below) if _number(v)), default=None)
    step = schema.get("multipleOf")
    tries: list[Any] = []
    if floor is not None:
        tries += [math.ceil(floor), math.floor(floor) + 1, floor]
    if ceiling is not None:
        tries += [math.floor(ceiling), math.ceil(ceiling) - 1, ceiling]
    if floor is not None and ceiling is not None:
        tries.append((floor + ceiling) / 2)
    if _number(step) and step > 0:
        start = floor if floor is not None else (ceiling - step if ceiling is not None else 0)
        multiple = math.ceil(start / step) * step
        tries = [step, multiple, multiple + step, *tries]
    return tries


def arguments_for(schema: Any) -> dict[str, Any] | None:
    """Arguments that ``schema`` (a tool's inputSchema) accepts; None when none can be
    invented or the schema is not valid JSON Schema."""
    if not isinstance(schema, dict):
        return None
    try:
        synthesis = _Synthesis(schema)
    except Exception:  # not a schema jsonschema can use: tools.input-schema
        return None
    kinds = schema.get("type")
    if "type" not in schema or kinds == "object" or (isinstance(kinds, list)
                                                      and "object" in kinds):
        root = {**schema, "type": "object"}
        for candidate in (synthesis.object(root, 0),
                          *(c for c in synthesis.candidates(schema, 0) if isinstance(c, dict))):
            if isinstance(candidate, dict) and synthesis.fits(candidate, schema):
                return candidate
    return None
