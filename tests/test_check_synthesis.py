"""Argument synthesis for ``--call-tools`` never crashes on what a server sends (issue 32).

Property tests over arbitrary JSON and over schema-shaped documents: ``arguments_for``
returns None or arguments the schema accepts, and ``schema_problem`` (tools.input-schema)
names what is wrong instead of raising.  The end-to-end test runs the command line on a
stdio server (tests/peers/schema_zoo.py) whose tools have every shape.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_nb.check.shapes import schema_problem
from mcp_nb.check.synthesis import arguments_for
from mcp_nb.lazy_jsonschema import jsonschema

PEERS = Path(__file__).parent / "peers"
SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
           | st.text(max_size=8))
KEYWORDS = ["type", "properties", "required", "items", "prefixItems", "anyOf", "oneOf",
            "allOf", "not", "enum", "const", "$ref", "$defs", "$schema", "minimum",
            "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength",
            "maxLength", "pattern", "format", "minItems", "maxItems", "uniqueItems",
            "additionalProperties", "minProperties", "contains"]
#: Any JSON value, its object keys often schema keywords.
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(KEYWORDS) | st.text(max_size=4), inner, max_size=5),
    max_leaves=25)

TYPES = ["string", "integer", "number", "boolean", "null", "object", "array"]
NAMES = st.sampled_from(["a", "b", "c", "d~1e", "x y"])


def _schema_shaped(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keyword_values = {
        "type": st.sampled_from(TYPES) | st.lists(st.sampled_from(TYPES), min_size=1,
                                                  max_size=3, unique=True) | scalars,
        "properties": st.dictionaries(NAMES, inner, max_size=3) | scalars,
        "required": st.lists(NAMES, max_size=3, unique=True) | scalars,
        "items": inner,
        "prefixItems": st.lists(inner, max_size=2),
        "anyOf": st.lists(inner, min_size=1, max_size=3),
        "oneOf": st.lists(inner, min_size=1, max_size=3),
        "allOf": st.lists(inner, min_size=1, max_size=3),
        "not": inner,
        "enum": st.lists(scalars, min_size=1, max_size=3) | scalars,
        "const": json_values,
        "$ref": st.sampled_from(["#", "#/$defs/a", "#/$defs/b", "#/nope", "#anchor",
                                 "other.json#/x", "#/properties/a"]) | scalars,
        "minimum": st.integers(-5, 5) | st.floats(-10, 10),
        "maximum": st.integers(-5, 5) | st.floats(-10, 10),
        "exclusiveMinimum": st.integers(-5, 5) | st.booleans(),
        "multipleOf": st.sampled_from([0.5, 2, 3, 0, -1]),
        "minLength": st.integers(-1, 12),
        "maxLength": st.integers(-1, 12),
        "pattern": st.sampled_from(["^[a-z]+$", "^[0-9]{3}$", "x", "(", "^$"]),
        "format": st.sampled_from(["email", "uri", "date-time", "uuid", "nonsense"]),
        "minItems": st.integers(0, 3),
        "uniqueItems": st.booleans(),
        "additionalProperties": inner,
        "minProperties": st.integers(0, 3),
    }
    return st.booleans() | st.fixed_dictionaries(
        {}, optional={k: v for k, v in keyword_values.items()})


schemas = st.recursive(st.booleans() | st.just({}), _schema_shaped, max_leaves=12)


def _root(body: Any, defs: dict[str, Any], as_object: bool) -> Any:
    if not isinstance(body, dict):
        return body
    return {**body, "$defs": defs, **({"type": "object"} if as_object else {})}


#: Whole inputSchemas: mostly ``"type": "object"`` (as tools/list must), with $defs to point at.
roots = st.builds(_root, schemas, st.dictionaries(st.sampled_from(["a", "b"]), schemas,
                                                  max_size=2), st.booleans())


def _accepts(schema: dict[str, Any], arguments: Any) -> bool:
    schemas_module = jsonschema()
    validator = schemas_module.validators.validator_for(
        schema, default=schemas_module.Draft202012Validator)
    return bool(validator(schema).is_valid(arguments))


@SETTINGS
@given(json_values)
def test_any_json_as_a_schema_is_no_crash(schema: Any) -> None:
    arguments = arguments_for(schema)
    assert arguments is None or (isinstance(arguments, dict) and _accepts(schema, arguments))
    assert schema_problem(schema) is None or isinstance(schema_problem(schema), str)


@SETTINGS
@given(roots)
def test_schema_shaped_documents_give_accepted_arguments_or_none(schema: Any) -> None:
    arguments = arguments_for(schema)
    if arguments is not None:
        assert isinstance(arguments, dict)
        assert _accepts(schema, arguments), (schema, arguments)
    problem = schema_problem(schema)
    assert problem is None or isinstance(problem, str)


#: Schemas simple means satisfy: each required property a primitive, a list of types,
#: an enum, a const, a union of those, or an object/array of them.
primitives = st.one_of(
    st.sampled_from(TYPES).map(lambda t: {"type": t}),
    st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True).map(
        lambda ts: {"type": ts}),
    st.lists(scalars, min_size=1, max_size=3).map(lambda e: {"enum": e}),
    scalars.map(lambda c: {"const": c}),
    st.just(True), st.just({}),
    st.integers(-3, 3).map(lambda n: {"type": "integer", "minimum": n, "maximum": n + 4}),
    st.integers(0, 5).map(lambda n: {"type": "string", "minLength": n}),
)
simple = st.recursive(primitives, lambda inner: st.one_of(
    st.lists(inner, min_size=1, max_size=3).map(lambda bs: {"anyOf": bs}),
    st.dictionaries(NAMES, inner, min_size=1, max_size=3).map(
        lambda ps: {"type": "object", "properties": ps, "required": sorted(ps)}),
    inner.map(lambda i: {"type": "array", "items": i, "minItems": 1})), max_leaves=8)


@SETTINGS
@given(st.dictionaries(NAMES, simple, max_size=4), st.booleans())
def test_simple_schemas_are_always_satisfied(properties: dict[str, Any], by_ref: bool) -> None:
    schema: dict[str, Any] = {"type": "object", "properties": properties,
                              "required": sorted(properties)}
    if by_ref:  # the same, each property through $defs
        schema["$defs"] = {f"p{i}": s for i, s in enumerate(properties.values())}
        schema["properties"] = {n: {"$ref": f"#/$defs/p{i}"}
                                for i, n in enumerate(properties)}
    assert schema_problem(schema) is None
    arguments = arguments_for(schema)
    assert arguments is not None, schema
    assert _accepts(schema, arguments)


@pytest.mark.parametrize(("schema", "expected"), [
    ({"type": "object", "required": ["x"], "properties": {"x": {"type": ["boolean", "string"]}}},
     {"x": False}),
    ({"type": "object", "required": ["x"], "properties": {"x": True}}, {"x": "checkup"}),
    ({"type": "object", "required": ["x"], "properties": {"x": False}}, None),
    ({"type": "object", "required": ["x"], "properties": {"x": {"$ref": "#/$defs/n"}},
      "$defs": {"n": {"type": "integer", "exclusiveMinimum": 3, "multipleOf": 5}}}, {"x": 5}),
    ({"type": "object", "required": ["x"], "properties": {"x": {"$ref": "#/$defs/none"}}},
     None),
    ({"type": "object", "required": ["x"],
      "properties": {"x": {"oneOf": [{"type": "integer"}, {"type": "number"}]}}}, {"x": 1.5}),
    ({"type": "object", "allOf": [{"required": ["a"], "properties": {"a": {"enum": ["p"]}}},
                                  {"required": ["b"], "properties": {"b": {"const": 3}}}]},
     {"a": "p", "b": 3}),
    ({"type": "object", "required": ["x"], "properties": {"x": {
        "type": "object", "required": ["y"], "properties": {"y": {
            "type": "array", "minItems": 2, "items": {"type": "string", "format": "email"}}}}}},
     {"x": {"y": ["checkup@example.com", "checkup@example.com"]}}),
    ({"type": "object", "properties": 5}, None),
    ({"type": 7}, None),
    ({"type": "object", "$schema": ["not", "a", "uri"]}, None),
    ({"type": "object", "required": ["x"], "properties": {"x": {"$ref": "#"}}}, None),
    ({}, {}),
])
def test_each_shape(schema: Any, expected: Any) -> None:
    assert arguments_for(schema) == expected


def test_nonsense_input_schemas_fail_tools_input_schema() -> None:
    assert "not valid JSON Schema" in schema_problem({"type": "object", "properties": 5})
    assert schema_problem({"type": 7}) == "has type 7, not 'object'"
    assert "$schema" in schema_problem({"type": "object", "$schema": []})


def test_the_command_line_calls_every_tool_of_the_schema_zoo_without_a_traceback(
        tmp_path: Path) -> None:
    report, log = tmp_path / "zoo.json", tmp_path / "calls.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "mcp_nb.check", "--call-tools", "all", "--json", str(report),
         "--", sys.executable, str(PEERS / "schema_zoo.py"), "--log", str(log)],
        capture_output=True, text=True, timeout=120, check=False)
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    assert done.returncode in (0, 1), done.stderr
    results = {r["id"]: r for r in json.loads(report.read_text(encoding="utf-8"))["results"]}
    schema_check = results["tools.input-schema"]
    assert schema_check["outcome"] == "fail"
    for name in ("properties-five", "type-seven", "not-an-object"):
        assert repr(name) in schema_check["detail"]
    assert "a listed tool is int, not an object" in results["tools.names"]["detail"]
    zoo = json.loads(subprocess.run([sys.executable, str(PEERS / "schema_zoo.py"),
                                     "--describe"], capture_output=True, text=True,
                                    check=True).stdout)
    calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    # tools.input-errors: one call with the required arguments left out, refused as it should.
    assert results["tools.input-errors"]["outcome"] == "pass"
    left_out = [c for c in calls if not c["valid"]]
    assert len(left_out) == 1 and left_out[0]["arguments"] == {}
    # Every tool whose schema simple means satisfy was called once, with accepted arguments.
    made = [c for c in calls if c["valid"]]
    assert sorted(c["name"] for c in made) == sorted(zoo["satisfiable"])
    for call in made:
        assert _accepts(zoo["schemas"][call["name"]], call["arguments"]), call
