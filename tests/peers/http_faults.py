"""An MCP Streamable HTTP server that misbehaves on request, for the transport tests.

``python tests/peers/http_faults.py ERA`` (``handshake`` or ``stateless``),
standard library only; prints ``listening on http://127.0.0.1:PORT/mcp``.  What
``tools/call`` does depends on the tool's name:

* ``echo``: answers ``arguments.text`` as JSON;
* ``http500``: answers HTTP 500 with a plain-text body;
* ``huge_json``: a JSON answer of ``arguments.bytes`` bytes (``Content-Length``
  declared when ``arguments.declared``, else chunked);
* ``huge_event``: an SSE answer whose one event has ``arguments.bytes`` bytes;
* ``die``: an SSE stream with one log notification, then the connection is cut;
* ``flaky``: like ``die`` the first time a given ``arguments.key`` is seen, then
  answers with the id it was asked under;
* ``hang``: an SSE stream with one log notification, then nothing, ever;
* ``log``: answers with every request line seen so far ("POST tools/call", "GET" …).

In the handshake era a GET opens a stream that stays open (comments every 0.2 s).
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ERA = sys.argv[1] if __name__ == "__main__" else "handshake"
SESSION = "faults-session-1"
seen: list[str] = []
flaky_keys: set[str] = set()
lock = threading.Lock()


def message(request_id: object, result: dict) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()


def text_result(text: str) -> dict:
    return {"content": [{"type": "text", "text": text}]}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def note(self, what: str) -> None:
        with lock:
            seen.append(what)

    def start(self, status: int, media: str, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", media)
        if ERA == "handshake":
            self.send_header("Mcp-Session-Id", SESSION)
        if length is None:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(length))
        self.send_header("Connection", "close")
        self.end_headers()

    def chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end_chunks(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def cut(self) -> None:
        """Drop the connection mid-body, as a crashing server does."""
        self.wfile.flush()
        linger_zero = struct.pack("ii", 1, 0)  # close with a reset, not an orderly end
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger_zero)
        self.connection.close()

    def json(self, status: int, body: bytes) -> None:
        self.start(status, "application/json", len(body))
        self.wfile.write(body)

    def sse_event(self, payload: bytes) -> None:
        self.chunk(b"event: message\ndata: " + payload + b"\n\n")

    def do_GET(self) -> None:
        self.note("GET")
        if ERA != "handshake":
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.start(200, "text/event-stream")
        try:
            while True:
                self.chunk(b": keep-alive\n\n")
                time.sleep(0.2)
        except OSError:
            pass

    def do_DELETE(self) -> None:
        self.note("DELETE")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        request_id, method = request.get("id"), request.get("method")
        params = request.get("params") or {}
        self.note(f"POST {method}" + (f" {params.get('name')}" if method == "tools/call" else ""))
        if request_id is None:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if method == "initialize":
            self.json(200, message(request_id, {
                "protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "faults", "version": "1"}}))
        elif method == "server/discover":
            if ERA != "stateless":
                self.json(400, b"")
                return
            self.json(200, message(request_id, {
                "resultType": "complete", "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}}, "serverInfo": {"name": "faults", "version": "1"}}))
        elif method == "tools/call":
            self.call(request_id, params["name"], params.get("arguments") or {})
        else:
            self.json(200, message(request_id, {}))

    def call(self, request_id: object, name: str, arguments: dict) -> None:
        log = json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                          "params": {"level": "info", "data": "working"}}).encode()
        if name == "echo":
            self.json(200, message(request_id, text_result(arguments["text"])))
        elif name == "log":
            with lock:
                self.json(200, message(request_id, text_result(json.dumps(seen))))
        elif name == "http500":
            body = b"boom: the tool crashed"
            self.start(500, "text/plain", len(body))
            self.wfile.write(body)
        elif name == "huge_json":
            body = message(request_id, text_result("x" * int(arguments["bytes"])))
            if arguments.get("declared"):
                self.json(200, body)
            else:
                self.start(200, "application/json")
                for start in range(0, len(body), 1 << 20):
                    self.chunk(body[start:start + (1 << 20)])
                self.end_chunks()
        elif name == "huge_event":
            self.start(200, "text/event-stream")
            self.sse_event(message(request_id, text_result("x" * int(arguments["bytes"]))))
            self.end_chunks()
        elif name in ("die", "hang") or (name == "flaky" and arguments["key"] not in flaky_keys):
            flaky_keys.add(arguments.get("key", ""))
            self.start(200, "text/event-stream")
            self.sse_event(log)
            if name == "hang":
                time.sleep(3600)
            self.cut()
        elif name == "flaky":
            self.json(200, message(request_id, text_result(f"answered as {request_id}")))
        else:
            self.json(200, message(request_id, text_result(f"unknown tool {name}")))


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"listening on http://127.0.0.1:{server.server_address[1]}/mcp", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
