"""A minimal MCP stdio server whose one tool floods the client with log notifications.

``tools/call`` with ``{"count": N}`` writes N ``notifications/message`` lines,
then the result.  Standard library only, lines pre-encoded, written in large
chunks, so the client's cost is what the flood measures.
"""

from __future__ import annotations

import json
import sys

_LOG = (b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info",'
        b'"logger":"flood","data":"one of very many log lines from a chatty server"}}\n')
_CHUNK = 1000


def _send(message: dict) -> None:
    sys.stdout.buffer.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
    sys.stdout.buffer.flush()


def main() -> None:
    for line in sys.stdin.buffer:
        message = json.loads(line)
        request_id, method = message.get("id"), message.get("method")
        if request_id is None:
            continue
        if method == "initialize":
            _send({"jsonrpc": "2.0", "id": request_id, "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}, "logging": {}},
                "serverInfo": {"name": "flood", "version": "1.0"}}})
        elif method == "tools/call":
            left = int(message["params"]["arguments"]["count"])
            while left:
                lines = min(left, _CHUNK)
                sys.stdout.buffer.write(_LOG * lines)
                left -= lines
            _send({"jsonrpc": "2.0", "id": request_id,
                   "result": {"content": [{"type": "text", "text": "done"}]}})
        else:
            _send({"jsonrpc": "2.0", "id": request_id,
                   "error": {"code": -32601, "message": "Method not found"}})


if __name__ == "__main__":
    main()
