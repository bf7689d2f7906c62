"""Before the checkup: does the target reach MCP at all, and at which URL?

A report full of failed MUSTs for a server that was down, or for a web page at the
wrong path, would blame the server for the address.  So the checkup first sends one
plain ``initialize`` POST (the first thing any client sends) and classifies the first
answer: a JSON-RPC answer (JSON or an SSE stream), or a 401 that leads to OAuth
Protected Resource Metadata, reached MCP; nothing listening, a 5xx, a 403 (or 421), a
401 without that metadata, or a page that is not JSON-RPC did not, and every check is
then *could not check* (exit status 2), with what happened and how to point the
checkup at the server.  Same-origin 307/308 redirects (``/mcp`` → ``/mcp/``, how a
Starlette mount answers) are followed, as the official SDK's client does; the report
names the URL it ended at.  A redirect to another origin is not followed (the checkup
would be judging another server): could not check.  Any other 4xx goes on to the
checkup (a legacy HTTP+SSE endpoint refuses the POST; the session falls back).

Example::

    reach = await preflight_http("http://127.0.0.1:8000/mcp", timeout=10)
    reach.url, reach.problem        # ('http://127.0.0.1:8000/mcp/', None) after a 307
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..auth.challenge import parse_challenges
from ..auth.discovery import origin, prm_urls
from ..i18n import _
from ..protocol.stateless import META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION
from ..protocol.versions import LATEST_STATELESS_VERSION, SUPPORTED_VERSIONS
from .headers import same_origin_hook
from .http_evidence import http_evidence
from .sent import http_request

#: How many same-origin redirects are followed (httpx's and the SDK's limit is 20; a
#: checkup target needs one, two at most).
MAX_REDIRECTS = 5
_INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": SUPPORTED_VERSIONS[-1], "capabilities": {},
    "clientInfo": {"name": "mcp_nb checkup (pre-flight)", "version": "1"}}}
_DISCOVER = {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": {
    META_PROTOCOL_VERSION: LATEST_STATELESS_VERSION, META_CLIENT_CAPABILITIES: {},
    META_CLIENT_INFO: {"name": "mcp_nb checkup (pre-flight)", "version": "1"}}}}
_HEADERS = {"accept": "application/json, text/event-stream",
            "content-type": "application/json"}


def how_to_point() -> str:
    """What to change when the checkup did not reach the server's MCP endpoint."""
    return _("point the checkup at the MCP endpoint itself: the full URL (scheme, host, port "
             "and path, such as http://127.0.0.1:8000/mcp); when the server accepts only its "
             "own Host name or wants a key, give them with --header 'NAME: VALUE' (or as an "
             "mcpServers entry with url and headers, --config FILE NAME)")


@dataclass
class Reach:
    """What the pre-flight found: the URL it ended at, and why MCP was not reached (if so)."""

    url: str
    #: Why the connection never reached MCP (None: it did).
    problem: str | None = None
    #: The redirects followed, as "307 A → B" (for the report's connection line).
    redirects: list[str] = field(default_factory=list)
    #: A 401 without Protected Resource Metadata: what auth.discovery can say (a warning).
    unauthorized: str | None = None
    evidence: list[dict[str, Any]] = field(default_factory=list)
    #: Every request the pre-flight sent (the report lists them with the checkup's own).
    sent: list[dict[str, Any]] = field(default_factory=list)

    @property
    def connection(self) -> str | None:
        """The report's connection line: the redirects followed, or the problem."""
        parts = [_("followed {redirect}").format(redirect=r) for r in self.redirects]
        if self.problem:
            parts.append(self.problem)
        return "; ".join(parts) or None


def _is_jsonrpc(text: str) -> bool:
    try:
        body = json.loads(text)
    except ValueError:
        return False
    items = body if isinstance(body, list) else [body]
    return bool(items) and all(isinstance(i, dict) and i.get("jsonrpc") == "2.0" for i in items)


async def _read(response: httpx.Response, limit: int = 65536) -> str:
    """Up to ``limit`` bytes of the body (an SSE stream is not read: it may stay open)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= limit:
            break
    return b"".join(chunks).decode("utf-8", "replace")


async def _has_prm(client: httpx.AsyncClient, url: str, challenge: str) -> bool:
    """Whether the 401 leads to Protected Resource Metadata (named, or at a well-known URI)."""
    named = next((c.resource_metadata for c in parse_challenges(challenge)
                  if c.resource_metadata), None)
    for candidate in prm_urls(url, named):
        try:
            answer = await client.get(candidate)
        except httpx.HTTPError:
            continue
        if answer.status_code == 200 and isinstance(_json(answer.text), dict):
            return True
    return False


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


async def preflight_http(url: str, timeout: float,
                         headers: Mapping[str, str] | None = None) -> Reach:
    """One ``initialize`` POST to ``url`` (same-origin 307/308 followed), classified;
    ``headers`` (``--header``) go on every request to its origin."""
    reach = Reach(url)

    async def record(request: httpx.Request) -> None:
        reach.sent.append(http_request(request, "pre-flight"))

    hooks = [same_origin_hook(url, headers), record] if headers else [record]
    async with httpx.AsyncClient(timeout=timeout, event_hooks={"request": hooks}) as client:
        for _hop in range(MAX_REDIRECTS + 1):
            try:
                async with client.stream("POST", reach.url, json=_INITIALIZE,
                                         headers=_HEADERS) as response:
                    kind = response.headers.get("content-type", "").split(";")[0].strip()
                    text = "" if kind == "text/event-stream" else await _read(response)
            except (httpx.ReadTimeout, httpx.WriteTimeout) as exc:
                # Connected, then silence: the server is there but says nothing.
                reach.problem = _("{url} took the connection but answered nothing within "
                                  "--timeout ({timeout:g} s; {error}): is an MCP server "
                                  "listening there, and is it stuck? {how}").format(
                    url=reach.url, timeout=timeout, error=type(exc).__name__,
                    how=how_to_point())
                return reach
            except httpx.HTTPError as exc:
                reach.problem = _("nothing answered at {url} ({error}): is the server running, "
                                  "and is this its address? {how}").format(
                    url=reach.url, error=str(exc) or type(exc).__name__, how=how_to_point())
                return reach
            status = response.status_code
            reach.evidence.append(http_evidence("POST", reach.url, _HEADERS, _INITIALIZE, status,
                                                response.headers, text))
            session_id = response.headers.get("mcp-session-id")
            if session_id:  # the pre-flight's session is not the checkup's: end it
                with contextlib.suppress(httpx.HTTPError):
                    await client.delete(reach.url, headers={"mcp-session-id": session_id})
            if status not in (301, 302, 303, 307, 308):
                break
            location = str(response.url.join(response.headers.get("location", "")))
            if status in (307, 308) and origin(location) == origin(reach.url):
                reach.redirects.append(f"{status} {reach.url} → {location}")
                reach.url = location
                continue
            reach.problem = _("{url} redirected ({status}) to {location}, which this checkup "
                              "does not follow (only 307/308 to the same origin): check that "
                              "URL itself if it is the server's; {how}").format(
                url=reach.url, status=status, location=location, how=how_to_point())
            return reach
        else:
            reach.problem = _("more than {count} redirects from {url}").format(
                count=MAX_REDIRECTS, url=url)
            return reach
        reach.problem = await _classify(client, reach, status, kind, text,
                                        response.headers.get("www-authenticate", ""))
    return reach


async def _classify(client: httpx.AsyncClient, reach: Reach, status: int, kind: str,
                    text: str, challenge: str) -> str | None:
    """Why the answer is not MCP's (None when it is, or when the checkup should go on)."""
    answered = _("{url} answered HTTP {status} ({kind})").format(
        url=reach.url, status=status, kind=kind or _("no content type"))
    if kind == "text/event-stream" or _is_jsonrpc(text):
        return None
    if status == 401:
        if await _has_prm(client, reach.url, challenge):
            return None
        reach.unauthorized = _("the server answered 401 without OAuth Protected Resource "
                               "Metadata (WWW-Authenticate resource_metadata or a well-known "
                               "URI): a client cannot discover how to authorize")
        return _("{answered}: refused before any MCP answer, and without OAuth Protected "
                 "Resource Metadata to authorize with; {how}").format(
            answered=answered, how=how_to_point())
    if status in (403, 421):
        return _("{answered}: refused before any MCP answer (a token, or a Host or Origin "
                 "the server accepts, may be missing); {how}").format(
            answered=answered, how=how_to_point())
    if status >= 500:
        return _("{answered}: a server error before any MCP answer; see the server's log, "
                 "then run the checkup again").format(answered=answered)
    if 200 <= status < 300 and status != 202:
        return _("{answered}, which is not JSON-RPC: not an MCP endpoint (a web page?); "
                 "{how}").format(answered=answered, how=how_to_point())
    if 400 <= status < 500 and not await _other_transport(client, reach):
        # Not JSON-RPC, and neither a legacy HTTP+SSE stream nor a stateless server there:
        # a refusal at the door (Starlette's TrustedHostMiddleware answers a Host it does not
        # serve with 400), a wrong path (404): no MCP answer to judge.
        return _("{answered}, which is not JSON-RPC, and neither a GET for a legacy SSE "
                 "stream nor a 2026-07-28 server/discover got an MCP answer: refused before "
                 "any MCP answer (a wrong path, or a Host or key the server wants); "
                 "{how}").format(answered=answered, how=how_to_point())
    return None


async def _other_transport(client: httpx.AsyncClient, reach: Reach) -> bool:
    """Whether the URL that refused ``initialize`` speaks MCP another way: a GET opens a
    legacy HTTP+SSE stream, or a stateless-era ``server/discover`` gets a JSON-RPC answer."""
    try:
        async with client.stream("GET", reach.url,
                                 headers={"accept": "text/event-stream"}) as response:
            kind = response.headers.get("content-type", "").split(";")[0].strip()
            reach.evidence.append(http_evidence("GET", reach.url, {"accept": "text/event-stream"},
                                                None, response.status_code, response.headers, ""))
            if response.status_code == 200 and kind == "text/event-stream":
                return True
        headers = {**_HEADERS, "mcp-protocol-version": LATEST_STATELESS_VERSION,
                   "mcp-method": "server/discover"}
        async with client.stream("POST", reach.url, json=_DISCOVER, headers=headers) as response:
            kind = response.headers.get("content-type", "").split(";")[0].strip()
            text = "" if kind == "text/event-stream" else await _read(response)
            reach.evidence.append(http_evidence("POST", reach.url, headers, _DISCOVER,
                                                response.status_code, response.headers, text))
            return kind == "text/event-stream" or _is_jsonrpc(text)
    except httpx.HTTPError:
        return False
