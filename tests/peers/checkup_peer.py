"""A tiny handshake-era stdio server for the checkup's tests: rules the lab has no knob for.

Healthy by default: ``tools/list`` comes in three pages (each cursor good for the next),
and ``measure`` declares an outputSchema its structuredContent conforms to.  One flag
breaks one rule:

- ``--broken-cursor``: the cursors it hands out are refused (-32602): pagination's SHOULD
  "Provide stable cursors";
- ``--bad-output``: ``measure`` returns ``{"value": "high"}`` against an outputSchema wanting a
  number: "Servers MUST provide structured results that conform to this schema";
- ``--bad-input-schema``: a tool's inputSchema has ``"properties": 5``, not valid JSON Schema;
- ``--bad-annotations``: a tool's ``readOnlyHint`` is the string ``"yes"``;
- ``--untyped-output-schema``: ``measure``'s outputSchema has no ``type`` (valid JSON Schema,
  but the schema's ``Tool.outputSchema`` says ``type: "object"``), and its structuredContent
  conforms to it;
- ``--untyped-server-info``: ``serverInfo.version`` is the number 1 (the schema says string);
  the capabilities and the information are there, as the sentence asks.

Two flags break no rule but leave a check nothing to observe (it must then not pass):

- ``--failing-measure``: ``measure`` answers a result with ``isError: true``, so no
  structuredContent is ever compared with its outputSchema;
- ``--empty-resources``: resources are declared, and ``resources/list`` and
  ``resources/templates/list`` list none.

No resources (unless ``--empty-resources``), no prompts: their list methods answer -32601, as
any method it does not serve.
"""

from __future__ import annotations

import json
import sys

PAGES = [[f"page{page}_tool{n}" for n in range(2)] for page in range(3)]
FLAGS = set(sys.argv[1:])
MEASURE = {"name": "measure", "description": "a measurement",
           "inputSchema": {"type": "object", "additionalProperties": False},
           "outputSchema": {"type": "object", "properties": {"value": {"type": "number"}},
                            "required": ["value"]}}


if "--untyped-output-schema" in FLAGS:
    MEASURE["outputSchema"] = {k: v for k, v in MEASURE["outputSchema"].items() if k != "type"}


def tool(name: str) -> dict:
    schema: dict = {"type": "object"}
    hint: object = True
    if name == "page0_tool1" and "--bad-input-schema" in FLAGS:
        schema["properties"] = 5
    if name == "page0_tool1" and "--bad-annotations" in FLAGS:
        hint = "yes"
    return {"name": name, "description": "does nothing", "inputSchema": schema,
            "annotations": {"readOnlyHint": hint, "title": name}}


def answer(request: dict) -> dict:
    method, params = request["method"], request.get("params") or {}
    if method == "initialize":
        capabilities: dict = {"tools": {}}
        if "--empty-resources" in FLAGS:
            capabilities["resources"] = {}
        return {"result": {"protocolVersion": "2025-11-25", "capabilities": capabilities,
                           "serverInfo": {"name": "checkup-peer", "version": 1 if (
                               "--untyped-server-info" in FLAGS) else "1.0"}}}
    if method == "ping":
        return {"result": {}}
    if method == "tools/list":
        cursor = params.get("cursor")
        if cursor is not None and ("--broken-cursor" in FLAGS or cursor not in ("c1", "c2")):
            return {"error": {"code": -32602, "message": "Invalid params: unknown cursor"}}
        page = 0 if cursor is None else int(cursor[1])
        result: dict = {"tools": [tool(name) for name in PAGES[page]]}
        if page + 1 < len(PAGES):
            result["nextCursor"] = f"c{page + 1}"
        else:
            result["tools"].append(MEASURE)
        return {"result": result}
    if "--empty-resources" in FLAGS and method in ("resources/list", "resources/templates/list"):
        return {"result": {method.split("/")[1] if method == "resources/list"
                           else "resourceTemplates": []}}
    if method == "tools/call" and params.get("name") == "measure" and (
            "--failing-measure" in FLAGS):
        return {"result": {"content": [{"type": "text", "text": "the sensor is offline"}],
                           "isError": True}}
    if method == "tools/call" and params.get("name") == "measure":
        value = "high" if "--bad-output" in FLAGS else 42
        return {"result": {"content": [{"type": "text", "text": json.dumps({"value": value})}],
                           "structuredContent": {"value": value}}}
    return {"error": {"code": -32601, "message": f"Method not found: {method}"}}


for line in sys.stdin:
    message = json.loads(line)
    if "id" in message and "method" in message:
        reply = {"jsonrpc": "2.0", "id": message["id"], **answer(message)}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
