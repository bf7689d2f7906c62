"""What OAuth costs per request once a token is held (``python -m benchmarks.auth_overhead``).

Prints numbers (a benchmark, never a timed test); RESULTS.md keeps them.

- *flow alone*: ``httpx.AsyncClient`` requests to an in-process ``httpx.MockTransport``, with
  ``auth=OAuth(...)`` holding a token and with no auth, interleaved in blocks so a slow moment
  slows both; the median per-request difference is what the flow adds (attach the header,
  check the origin and expiry, look at the status). Target < 1 ms.
- *round trip*: ``call_tool`` against the lab server over Streamable HTTP, authorized once
  (``--auth``) versus the same lab server wanting a fixed header (``--require-header``, the
  same guard cost on the server side), interleaved in blocks.

Usage::

    python -m benchmarks.auth_overhead [--rounds 10 --block 500 --calls 200]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import anyio
import httpx

from mcp_nb.auth import OAuth, Token
from mcp_nb.client import ClientSession
from mcp_nb.transports import http_transport

URL = "http://127.0.0.1:9/mcp"


def _answer(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json={"jsonrpc": "2.0", "id": 1, "result": {}})


async def _block(client: httpx.AsyncClient, count: int) -> float:
    started = time.perf_counter()
    for _ in range(count):
        await client.post(URL, content=b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
    return (time.perf_counter() - started) / count


async def flow_alone(rounds: int, block: int) -> tuple[float, float]:
    auth = OAuth()
    auth.hold(Token("benchmark-token", resource=URL, issuer="http://127.0.0.1:9",
                    expires_at=time.time() + 3600))
    transport = httpx.MockTransport(_answer)
    plain: list[float] = []
    authorized: list[float] = []
    async with (httpx.AsyncClient(transport=transport) as without,
                httpx.AsyncClient(transport=transport, auth=auth) as with_auth):
        await _block(without, 50)
        await _block(with_auth, 50)
        for _ in range(rounds):
            plain.append(await _block(without, block))
            authorized.append(await _block(with_auth, block))
    return statistics.median(plain), statistics.median(authorized)


def _lab(*flags: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen([sys.executable, "-m", "mcp_nb.lab", "--http", *flags],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    return process, process.stdout.readline().split()[-1]


async def round_trip(rounds: int, calls: int) -> tuple[float, float]:
    header_lab, header_url = _lab("--require-header", "Authorization: Bearer fixed")
    auth_lab, auth_url = _lab("--auth")
    try:
        with_header = ClientSession(http_transport(
            header_url, "streamable-http", headers={"Authorization": "Bearer fixed"}))
        with_oauth = ClientSession(http_transport(
            auth_url, "streamable-http", auth=OAuth(callback="auto-approved")))
        async with with_header, with_oauth:
            await with_header.connect()
            await with_oauth.connect()
            times: dict[str, list[float]] = {"header": [], "oauth": []}
            for _ in range(rounds):
                for name, session in (("header", with_header), ("oauth", with_oauth)):
                    started = time.perf_counter()
                    for _ in range(calls):
                        await session.call_tool("add", {"a": 1, "b": 2})
                    times[name].append((time.perf_counter() - started) / calls)
        return statistics.median(times["header"]), statistics.median(times["oauth"])
    finally:
        for process in (header_lab, auth_lab):
            process.terminate()
            process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--block", type=int, default=500)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    plain, authorized = anyio.run(flow_alone, args.rounds, args.block)
    print(f"flow alone: {plain * 1e6:8.1f} µs/request without auth, {authorized * 1e6:8.1f} "
          f"µs with a held token: the flow adds {(authorized - plain) * 1e6:.1f} µs "
          f"(target < 1000 µs)")
    header, oauth = anyio.run(round_trip, args.rounds, args.calls)
    print(f"round trip (lab, Streamable HTTP): {header * 1e3:.2f} ms with a fixed header, "
          f"{oauth * 1e3:.2f} ms with OAuth: {(oauth - header) * 1e3:+.2f} ms")


if __name__ == "__main__":
    main()
