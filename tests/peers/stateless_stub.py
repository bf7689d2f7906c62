"""A small stateless-era (2026-07-28) HTTP server for client tests, standard library only.

``python tests/peers/stateless_stub.py TOOLS_JSON [REFUSALS_JSON]``: answers
``server/discover``, lists the tools in TOOLS_JSON, and answers every
``tools/call`` with the ``Mcp-*`` headers it received (as JSON text), so a test
sees exactly what went on the wire.  REFUSALS_JSON maps a method to how many
of its first requests are refused with 400 and -32022 listing 2026-07-28, the
very version a client offers.  Prints ``listening on http://127.0.0.1:PORT/mcp``
once ready.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VERSION = "2026-07-28"
TOOLS = json.loads(sys.argv[1]) if __name__ == "__main__" else []
refusals_left: dict[str, int] = (json.loads(sys.argv[2]) if __name__ == "__main__"
                                 and len(sys.argv) > 2 else {})


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # keep the output to the ready line
        pass

    def answer(self, status: int, message: dict) -> None:
        body = json.dumps(message).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        request_id, method = request.get("id"), request.get("method")
        if refusals_left.get(method, 0) > 0:
            refusals_left[method] -= 1
            self.answer(400, {"jsonrpc": "2.0", "id": request_id, "error": {
                "code": -32022, "message": "Unsupported protocol version",
                "data": {"supported": [VERSION], "requested": VERSION}}})
            return
        if method == "server/discover":
            result = {"supportedVersions": [VERSION], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "stateless-stub", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call":
            seen = {name: value for name, value in self.headers.items()
                    if name.lower().startswith("mcp-")}
            result = {"content": [{"type": "text", "text": json.dumps(seen)}]}
        else:
            self.answer(404, {"jsonrpc": "2.0", "id": request_id,
                              "error": {"code": -32601, "message": "Method not found"}})
            return
        self.answer(200, {"jsonrpc": "2.0", "id": request_id,
                          "result": {"resultType": "complete", **result}})


if __name__ == "__main__":  # importing it (a doctest collector would) must not serve
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"listening on http://127.0.0.1:{server.server_address[1]}/mcp", flush=True)
    server.serve_forever()
