"""A minimal MCP stdio server for the limits benchmark (and tests): big answers, stderr floods.

``tools/call`` of ``big`` answers with a text of ``bytes`` characters (with
``id_last`` the response's ``id`` comes after its ``result``, as the TypeScript
SDK writes it).  The encoded result is kept per size, so a second call of the
same size times the client, not the server's ``json.dumps`` (0.7 s for 100 MB).
``stderr`` writes ``lines`` lines of ``line_bytes`` bytes to stderr, then
answers.  Standard library only.
"""

from __future__ import annotations

import json
import sys

_BIG_RESULTS: dict[int, bytes] = {}


def _encode(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _result(name: str, arguments: dict) -> bytes:
    if name == "big":
        size = int(arguments["bytes"])
        if size not in _BIG_RESULTS:
            _BIG_RESULTS[size] = _encode({"content": [{"type": "text", "text": "x" * size}]})
        return _BIG_RESULTS[size]
    lines, width = int(arguments["lines"]), int(arguments.get("line_bytes", 60))
    line = b"e" * (width - 1) + b"\n"
    chunk = 10_000
    for start in range(0, lines, chunk):
        sys.stderr.buffer.write(line * min(chunk, lines - start))
    sys.stderr.buffer.flush()
    return _encode({"content": [{"type": "text", "text": f"wrote {lines} lines"}]})


def _answer(request_id: object, result: bytes, *, id_last: bool = False) -> None:
    envelope, ident = b'"jsonrpc":"2.0"', b'"id":' + _encode(request_id)
    if id_last:
        line = b'{"result":' + result + b"," + envelope + b"," + ident + b"}\n"
    else:
        line = b"{" + envelope + b"," + ident + b',"result":' + result + b"}\n"
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()


def main() -> None:
    for raw in sys.stdin.buffer:
        message = json.loads(raw)
        request_id, method = message.get("id"), message.get("method")
        if request_id is None:
            continue
        if method == "initialize":
            _answer(request_id, _encode({
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}}, "serverInfo": {"name": "limits", "version": "1"}}))
        elif method == "tools/call":
            params = message["params"]
            arguments = params.get("arguments") or {}
            _answer(request_id, _result(params["name"], arguments),
                    id_last=bool(arguments.get("id_last")))
        else:
            _answer(request_id, b"{}")


if __name__ == "__main__":
    main()
