"""A tiny handshake-era stdio server whose tools have every inputSchema shape (issue 32).

``python tests/peers/schema_zoo.py --log FILE`` serves the tools and appends one JSON line
per ``tools/call`` to FILE: the tool, its arguments, and whether its schema accepts them
(a call whose arguments it rejects gets a result with ``isError: true``).
``python tests/peers/schema_zoo.py --describe`` prints the schemas and the names of the
tools whose schema simple means satisfy, as JSON, and exits.

Two schemas are not JSON Schema at all (``"properties": 5``, ``"type": 7``), one is not
even an object; the checkup's tools.input-schema must say so, and not call those tools.
Beside the tools, the list holds a number and a nameless tool (tools.names' to report).
"""

from __future__ import annotations

import json
import sys

import jsonschema

SCHEMAS: dict[str, object] = {
    "type-list": {"type": "object", "required": ["flag"],
                  "properties": {"flag": {"type": ["boolean", "string"]}}},
    "boolean-subschemas": {"type": "object", "required": ["anything"],
                           "properties": {"anything": True, "never": False}},
    "local-ref": {"type": "object", "required": ["size"],
                  "properties": {"size": {"$ref": "#/$defs/size"}},
                  "$defs": {"size": {"type": "integer", "minimum": 3, "multipleOf": 3}}},
    "combinators": {"type": "object", "required": ["one", "any", "all"], "properties": {
        "one": {"oneOf": [{"type": "integer"}, {"type": "number"}]},
        "any": {"anyOf": [{"type": "string", "minLength": 3, "maxLength": 3},
                          {"type": "null"}]},
        "all": {"allOf": [{"type": "object", "required": ["a"],
                           "properties": {"a": {"const": 1}}},
                          {"required": ["b"], "properties": {"b": {"enum": ["x", "y"]}}}]}}},
    "nested": {"type": "object", "required": ["rows"], "properties": {"rows": {
        "type": "array", "minItems": 2, "items": {
            "type": "object", "required": ["when", "mail"],
            "properties": {"when": {"type": "string", "format": "date-time"},
                           "mail": {"type": "string", "format": "email"}}}}}},
    "zod-draft-07": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                     "required": ["code", "ratio"], "additionalProperties": False,
                     "properties": {"code": {"type": "string", "pattern": "^[0-9]{3}$"},
                                    "ratio": {"type": "number", "exclusiveMinimum": 0,
                                              "exclusiveMaximum": 1}}},
    "never-satisfiable": {"type": "object", "required": ["x"], "properties": {"x": False}},
    "dangling-ref": {"type": "object", "required": ["x"],
                     "properties": {"x": {"$ref": "#/$defs/missing"}}},
    "properties-five": {"type": "object", "required": ["a"], "properties": 5},
    "type-seven": {"type": 7},
    "not-an-object": "a string, not a schema",
}
#: Listed beside them: not a tool at all, and a tool without a name (with an outputSchema).
JUNK = [5, {"inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}}]
SATISFIABLE = ["type-list", "boolean-subschemas", "local-ref", "combinators", "nested",
               "zod-draft-07"]


def accepts(schema: object, arguments: object) -> bool:
    try:
        validator = jsonschema.validators.validator_for(schema)  # type: ignore[arg-type]
        return bool(validator(schema).is_valid(arguments))
    except Exception:  # a broken schema accepts nothing
        return False


def answer(request: dict, log: str | None) -> dict:
    method, params = request["method"], request.get("params") or {}
    if method == "initialize":
        return {"result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                           "serverInfo": {"name": "schema-zoo", "version": "1.0"}}}
    if method == "ping":
        return {"result": {}}
    if method == "tools/list":
        return {"result": {"tools": [*({"name": name, "description": "a schema shape",
                                        "inputSchema": schema}
                                       for name, schema in SCHEMAS.items()), *JUNK]}}
    if method == "tools/call":
        name = params.get("name")
        if name not in SCHEMAS:
            return {"error": {"code": -32602, "message": f"Unknown tool: {name}"}}
        arguments = params.get("arguments")
        valid = accepts(SCHEMAS[name], arguments)
        if log:
            with open(log, "a", encoding="utf-8") as file:
                file.write(json.dumps({"name": name, "arguments": arguments,
                                       "valid": valid}) + "\n")
        return {"result": {"content": [{"type": "text", "text": "ok" if valid else
                                        "arguments rejected"}], "isError": not valid}}
    return {"error": {"code": -32601, "message": f"Method not found: {method}"}}


def main() -> None:
    if "--describe" in sys.argv:
        print(json.dumps({"schemas": SCHEMAS, "satisfiable": SATISFIABLE}))
        return
    log = sys.argv[sys.argv.index("--log") + 1] if "--log" in sys.argv else None
    for line in sys.stdin:
        message = json.loads(line)
        if "id" in message and "method" in message:
            reply = {"jsonrpc": "2.0", "id": message["id"], **answer(message, log)}
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
