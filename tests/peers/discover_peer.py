"""A tiny stateless-only (2026-07-28) stdio server for the checkup's discover checks.

It answers ``server/discover`` (with -32022 and the versions it serves for a version it
does not serve, as versioning says), refuses ``initialize`` the same way, and answers every
other request -32601.  Healthy by default; one flag breaks one part of the discover result:

- ``--shared-cache-scope``: ``cacheScope`` is ``"shared"``: the caching hint is there (the
  caching page's MUST) but not one of the schema's two values;
- ``--no-cache-scope``: ``cacheScope`` is left out: the caching page's MUST is broken.
"""

from __future__ import annotations

import json
import sys

FLAGS = set(sys.argv[1:])
VERSION = "2026-07-28"


def answer(request: dict) -> dict:
    method = request["method"]
    meta = (request.get("params") or {}).get("_meta") or {}
    asked = meta.get("io.modelcontextprotocol/protocolVersion")
    if method in ("server/discover", "initialize") and asked != VERSION:
        return {"error": {"code": -32022, "message": "Unsupported protocol version",
                          "data": {"supported": [VERSION], "requested": asked}}}
    if method == "server/discover":
        result: dict = {"resultType": "complete", "supportedVersions": [VERSION],
                        "capabilities": {}, "ttlMs": 0, "cacheScope": "public",
                        "_meta": {"io.modelcontextprotocol/serverInfo": {
                            "name": "discover-peer", "version": "1.0"}}}
        if "--shared-cache-scope" in FLAGS:
            result["cacheScope"] = "shared"
        if "--no-cache-scope" in FLAGS:
            del result["cacheScope"]
        return {"result": result}
    return {"error": {"code": -32601, "message": f"Method not found: {method}"}}


for line in sys.stdin:
    message = json.loads(line)
    if isinstance(message, dict) and "id" in message and "method" in message:
        reply = {"jsonrpc": "2.0", "id": message["id"], **answer(message)}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
