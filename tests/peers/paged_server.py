"""A tiny handshake-era stdio server whose tools/list is paginated, for the checkup's tests.

``python paged_server.py`` hands out three pages of tools, each cursor good for the next
page; ``--broken-cursor`` refuses the cursors it handed out (-32602), which breaks the
pagination SHOULD ("Provide stable cursors").  Nothing else: no resources, no prompts
(their list methods answer -32601, as for any method it does not serve).
"""

from __future__ import annotations

import json
import sys

PAGES = [[f"page{page}_tool{n}" for n in range(2)] for page in range(3)]
BROKEN = "--broken-cursor" in sys.argv


def tool(name: str) -> dict:
    return {"name": name, "description": "does nothing", "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": True, "title": name}}


def answer(request: dict) -> dict:
    method, params = request["method"], request.get("params") or {}
    if method == "initialize":
        return {"result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                           "serverInfo": {"name": "paged-peer", "version": "1.0"}}}
    if method == "ping":
        return {"result": {}}
    if method == "tools/list":
        cursor = params.get("cursor")
        if cursor is not None and (BROKEN or cursor not in ("c1", "c2")):
            return {"error": {"code": -32602, "message": "Invalid params: unknown cursor"}}
        page = 0 if cursor is None else int(cursor[1])
        result: dict = {"tools": [tool(name) for name in PAGES[page]]}
        if page + 1 < len(PAGES):
            result["nextCursor"] = f"c{page + 1}"
        return {"result": result}
    return {"error": {"code": -32601, "message": f"Method not found: {method}"}}


for line in sys.stdin:
    message = json.loads(line)
    if "id" in message and "method" in message:
        reply = {"jsonrpc": "2.0", "id": message["id"], **answer(message)}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
