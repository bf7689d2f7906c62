"""A minimal MCP stdio server that answers every request with a canned result.

It exists so that the *client* dominates a round trip: a blocking loop over
stdin lines, no asyncio, no validation, results pre-encoded as bytes, only the
request id spliced in.  Standard library only, so any interpreter can run it.

It speaks just enough of the handshake era for every client under test:
``initialize`` (echoing the offered version), ``ping``, ``tools/list`` (one
tool without an output schema, so no client validates structured output) and
``tools/call``.  Other requests get -32601; notifications are ignored.  It
exits as soon as stdin reaches EOF, which makes it a well-behaved server for
the graceful-close figure.
"""

from __future__ import annotations

import json
import sys

TOOL_NAME = "echo"

_TOOLS = {"tools": [{
    "name": TOOL_NAME,
    "description": "Answers every call with the same text.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
}]}
_CALL_RESULT = {"content": [{"type": "text", "text": "ok"}], "isError": False}


def _encode(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


# Results that do not depend on the request, encoded once.
_CANNED = {
    "ping": _encode({}),
    "tools/list": _encode(_TOOLS),
    "tools/call": _encode(_CALL_RESULT),
}
_NOT_FOUND = _encode({"code": -32601, "message": "Method not found"})


def _initialize_result(params: dict) -> bytes:
    return _encode({
        "protocolVersion": params.get("protocolVersion", "2025-11-25"),
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "canned", "version": "1.0"},
    })


def answer(line: bytes) -> bytes | None:
    """The response frame for one request line, or None for a notification."""
    message = json.loads(line)
    if "id" not in message:
        return None
    head = b'{"jsonrpc":"2.0","id":' + _encode(message["id"])
    method = message.get("method")
    canned = _CANNED.get(method)
    if canned is not None:
        return head + b',"result":' + canned + b"}\n"
    if method == "initialize":
        return head + b',"result":' + _initialize_result(message.get("params") or {}) + b"}\n"
    return head + b',"error":' + _NOT_FOUND + b"}\n"


def main() -> None:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    for line in stdin:
        if not line.strip():
            continue
        frame = answer(line)
        if frame is not None:
            stdout.write(frame)
            stdout.flush()


if __name__ == "__main__":
    main()
