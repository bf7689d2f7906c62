"""The checkup's Streamable HTTP rules, probed with raw requests (httpx).

A client that obeys the transport's rules cannot break them on purpose, so
these checks speak HTTP themselves: a foreign ``Origin``, a notification and
its status, an ``Accept`` without ``text/event-stream``, a bad
``MCP-Protocol-Version``, three sessions' ids side by side, a ``GET`` with
``Last-Event-ID``, a ``DELETE``; and, when the server speaks the stateless era
(2026-07-28) over HTTP, ``server/discover`` with ``_meta`` left short and with
headers that disagree with the body.  A 401 hands over to
:mod:`mcp_nb.check.auth_rules` (metadata reads only, never a token).

Every exchange is kept as evidence (``{"http": {"request": …, "response": …}}``).

Example::

    async with anyio.create_task_group() as group:   # inside the checkup's run
        group.start_soon(check_http, checkup, "http://127.0.0.1:8000/mcp")
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio
import httpx

from ..i18n import _
from ..protocol.errors import HEADER_MISMATCH, INVALID_PARAMS
from ..protocol.stateless import META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION
from ..protocol.versions import LATEST_STATELESS_VERSION, SUPPORTED_VERSIONS, VERSIONS
from .auth_rules import check_authorization
from .headers import same_origin_hook
from .http_evidence import Answer, http_evidence
from .recorder import Recorder
from .sent import http_request

#: An Origin a DNS-rebinding page would send.
FOREIGN_ORIGIN = "http://dns-rebinding.invalid"
#: Sent in MCP-Protocol-Version to see the server refuse it.
BAD_VERSION_HEADER = "1999-01-01"
#: How long a GET with Last-Event-ID is read for replayed events (it may stay open).
REPLAY_WINDOW = 1.0
#: Below this many bits of estimated randomness a session id is guessable (a UUIDv4 has 122).
MIN_SESSION_ID_BITS = 64
CLIENT_INFO = {"name": "mcp_nb checkup", "version": "1"}
BOTH = "application/json, text/event-stream"

HANDSHAKE_CHECKS = ("http.origin", "http.session-id", "http.protocol-version-header",
                    "http.session-404", "http.notification-202", "http.request-answer",
                    "http.session-id-unguessable", "http.event-ids", "http.resumption")
STATELESS_HTTP_CHECKS = ("stateless.request-meta", "stateless.header-mismatch")
AUTH_CHECKS = ("auth.discovery", "auth.resource-metadata", "auth.server-metadata",
               "auth.pkce-s256", "auth.client-registration")


class HttpProbe:
    """Raw POST/GET/DELETE to the MCP endpoint; each exchange is kept as evidence."""

    def __init__(self, client: httpx.AsyncClient, url: str) -> None:
        self.client, self.url = client, url

    async def post(self, message: dict[str, Any], headers: dict[str, str]) -> Answer:
        sent = {"Accept": BOTH, "Content-Type": "application/json", **headers}
        async with self.client.stream("POST", self.url, json=message, headers=sent) as response:
            answer = await _read(response, message.get("id"), until_answer=True)
        answer.evidence = http_evidence("POST", self.url, sent, message, answer.status,
                                        answer.headers, answer.text)
        return answer

    async def get(self, headers: dict[str, str], window: float) -> Answer:
        """A GET read for at most ``window`` seconds (an SSE stream may stay open).

        What an open stream delivered within the window is kept: a server that
        keeps the stream open after a replay is judged on what it replayed.
        """
        sent = {"Accept": "text/event-stream", **headers}
        async with self.client.stream("GET", self.url, headers=sent) as response:
            answer = Answer(response.status_code, response.headers, None, "", {})
            with anyio.move_on_after(window):
                await _read(response, None, until_answer=False, into=answer)
        answer.evidence = http_evidence("GET", self.url, sent, None, answer.status,
                                        answer.headers, answer.text)
        return answer

    async def delete(self, session_id: str, version: str | None) -> Answer:
        sent = {"Mcp-Session-Id": session_id}
        if version:
            sent["MCP-Protocol-Version"] = version
        response = await self.client.delete(self.url, headers=sent)
        return Answer(response.status_code, response.headers, None, response.text,
                      http_evidence("DELETE", self.url, sent, None, response.status_code,
                                    response.headers, response.text))


async def _read(response: httpx.Response, wanted: Any, *, until_answer: bool,
                into: Answer | None = None) -> Answer:
    """The answer's body: JSON, or SSE events (up to the message answering ``wanted``).

    Read into ``into`` when given, so a read cut short (a window ending) keeps what
    had arrived."""
    answer = into or Answer(response.status_code, response.headers, None, "", {})
    if answer.content_type != "text/event-stream":
        answer.text = (await response.aread()).decode("utf-8", "replace")[:100_000]
        with contextlib.suppress(ValueError):
            answer.body = json.loads(answer.text) if answer.text else None
        return answer
    async for line in response.aiter_lines():
        answer.text += line + "\n"
        if line.startswith("id:"):
            answer.event_ids.append(line[3:].strip())
        elif line.startswith("data:"):
            with contextlib.suppress(ValueError):
                data = json.loads(line[5:])
                answer.messages.append(data)
                if isinstance(data, dict) and "method" not in data and data.get("id") == wanted:
                    answer.body = data
                    if until_answer:
                        break
        if len(answer.text) > 100_000:
            break
    return answer


def _initialize(request_id: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": {
        "protocolVersion": SUPPORTED_VERSIONS[-1], "capabilities": {},
        "clientInfo": CLIENT_INFO}}


def _discover(request_id: int, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    return _stateless_request(request_id, "server/discover", {}, meta)


def _stateless_request(request_id: int, method: str, params: dict[str, Any],
                       meta: dict[str, Any] | None = None) -> dict[str, Any]:
    if meta is None:
        meta = {META_PROTOCOL_VERSION: LATEST_STATELESS_VERSION, META_CLIENT_CAPABILITIES: {},
                META_CLIENT_INFO: CLIENT_INFO}
    return {"jsonrpc": "2.0", "id": request_id, "method": method,
            "params": {**params, "_meta": meta}}


def stateless_headers(method: str) -> dict[str, str]:
    return {"MCP-Protocol-Version": LATEST_STATELESS_VERSION, "Mcp-Method": method}


def session_id_bits(ids: Sequence[str]) -> float:
    """Estimated random bits in each of ``ids``: the characters that vary between them
    (after their common prefix and suffix), times the bits of the alphabet they use."""
    prefix = len(_common_prefix(list(ids)))
    suffix = len(_common_prefix([i[::-1] for i in ids]))
    varying = min(len(i) for i in ids) - prefix - suffix
    alphabet = set("".join(ids))
    if alphabet <= set("0123456789"):
        size = 10
    elif alphabet <= set("0123456789abcdef-") or alphabet <= set("0123456789ABCDEF-"):
        size = 16
    else:
        size = 64
    return max(0, varying) * math.log2(size)


def _common_prefix(texts: list[str]) -> str:
    first, last = min(texts), max(texts)
    length = next((n for n, (a, b) in enumerate(zip(first, last, strict=False)) if a != b),
                  min(len(first), len(last)))
    return first[:length]


def _numeric(text: str) -> int | None:
    digits = re.findall(r"\d+", text)
    return int(digits[-1]) if digits else None


async def check_http(checkup: Recorder, url: str) -> None:
    """Every HTTP rule of the checkup against the MCP endpoint at ``url``."""
    async def record(request: httpx.Request) -> None:
        checkup.http_requests.append(http_request(request, "http probe"))

    hooks = [same_origin_hook(url, checkup.headers), record] if checkup.headers else [record]
    async with httpx.AsyncClient(timeout=checkup.timeout,
                                 event_hooks={"request": hooks}) as client:
        probe = HttpProbe(client, url)
        try:
            await _check(checkup, probe, client)
        except httpx.HTTPError as exc:
            # Whatever was settled stays; the rest cannot be judged without an answer.
            checkup.skip([*HANDSHAKE_CHECKS, *STATELESS_HTTP_CHECKS, *AUTH_CHECKS],
                         _("the raw HTTP probe got no answer: {error}").format(error=repr(exc)))


async def _check(checkup: Recorder, probe: HttpProbe, client: httpx.AsyncClient) -> None:
    plain = await probe.post(_initialize(1), {})
    if plain.status == 401:
        why = _("the server asks for authorization (401): only its metadata was checked")
        checkup.skip([*HANDSHAKE_CHECKS, *STATELESS_HTTP_CHECKS], why)
        checkup.authorization_required = True
        await _phase(checkup, AUTH_CHECKS, check_authorization, checkup, client, probe.url,
                     plain)
        return
    checkup.skip(AUTH_CHECKS, _("the server did not ask for authorization (initialize "
                 "answered {status}, not 401)").format(status=plain.status))
    discover = await probe.post(_discover(1), stateless_headers("server/discover"))
    stateless = discover.status == 200 and discover.result is not None
    if plain.status == 200 and plain.result is not None:
        await _phase(checkup, HANDSHAKE_CHECKS, _handshake, checkup, probe, plain,
                     plain.result)
    else:
        # Not an endpoint that initializes (legacy HTTP+SSE's, or stateless-only).
        why = _no_handshake(plain, stateless)
        if stateless:
            await _origin(checkup, probe, _discover(2), stateless_headers("server/discover"))
        checkup.skip(HANDSHAKE_CHECKS, why)
    if stateless:
        await _phase(checkup, STATELESS_HTTP_CHECKS, _stateless, checkup, probe, discover)
    else:
        checkup.skip(STATELESS_HTTP_CHECKS, _("server/discover with 2026-07-28 _meta answered "
                     "{status} without a result: no stateless era over HTTP").format(
                         status=discover.status))


async def _phase(checkup: Recorder, owns: tuple[str, ...], run: Callable[..., Awaitable[Any]],
                 *args: Any) -> None:
    """One group of HTTP rules, guarded on its own: a crash is its checks' error, and a
    connection lost midway leaves its unsettled checks not applicable, as in check_http."""
    async def probing() -> None:
        try:
            await run(*args)
        except httpx.HTTPError as exc:
            checkup.skip(owns, _("the raw HTTP probe got no answer: {error}").format(
                error=repr(exc)))

    await checkup.guarded(owns, probing)


def _no_handshake(plain: Answer, stateless: bool) -> str:
    """Why the handshake's rules are not applicable: what the plain initialize POST got, and
    only what that answer (with server/discover's) shows about the endpoint."""
    got = "{} {}".format(plain.status, plain.content_type or _("(no content type)"))
    if plain.status == 200 and plain.body is not None:
        got += (_(" with a JSON-RPC error") if plain.error_code is not None else
                _(" with a JSON-RPC message that is not a result"))
    why = _("a plain initialize POST answered {got}, not an initialize result").format(got=got)
    if stateless:
        return why + _(", while server/discover with 2026-07-28 _meta was served: a "
                       "stateless-only server has no handshake")
    allow = plain.headers.get("allow")
    if allow is not None and "POST" not in allow.upper():
        return why + _(" (Allow: {allow}): this URL takes no POST, as a legacy HTTP+SSE "
                       "endpoint's stream URL does not; no Streamable HTTP handshake to "
                       "probe").format(allow=allow)
    if allow is not None:
        return why + _(" (Allow: {allow}): no Streamable HTTP handshake to probe").format(
            allow=allow)
    return why + _(": no Streamable HTTP handshake to probe")


async def _origin(checkup: Recorder, probe: HttpProbe, message: dict[str, Any],
                  headers: dict[str, str]) -> None:
    foreign = await probe.post(message, {**headers, "Origin": FOREIGN_ORIGIN})
    if foreign.status == 403:
        checkup.put("http.origin", "pass", _("Origin {origin} refused with 403").format(
            origin=FOREIGN_ORIGIN), [foreign.evidence])
    else:
        checkup.put("http.origin", "fail", _("Origin {origin} answered "
                    "{status}").format(origin=FOREIGN_ORIGIN, status=foreign.status),
                    [foreign.evidence])
        if sid := foreign.headers.get("mcp-session-id"):
            await probe.delete(sid, None)


async def _handshake(checkup: Recorder, probe: HttpProbe, plain: Answer,
                     result: dict[str, Any]) -> None:
    """The handshake era's transport rules, on a session of the probe's own."""
    await _origin(checkup, probe, _initialize(1), {})
    version = result.get("protocolVersion")
    sid = plain.headers.get("mcp-session-id")
    if sid is None:
        checkup.skip(["http.session-id", "http.session-404", "http.session-id-unguessable"],
                     _("the server issued no Mcp-Session-Id (sessions are optional)"))
    elif all(0x21 <= ord(c) <= 0x7E for c in sid):
        checkup.put("http.session-id", "pass", _("the session id is visible ASCII"),
                    [plain.evidence])
    else:
        checkup.put("http.session-id", "fail", _("session id {sid} has characters outside "
                    "0x21..0x7E").format(sid=repr(sid)), [plain.evidence])
    # The negotiated version goes in the header only when it is a revision: a server
    # that answered a version that does not exist (a finding of its own, judged by
    # lifecycle.version-answer) rightly refuses that header with 400, and that refusal
    # must not be charged to the notification and session checks below.
    good = {"MCP-Protocol-Version": version} if version in VERSIONS else {}
    if sid:
        good["Mcp-Session-Id"] = sid
    note = await probe.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, good)
    if note.status == 202 and not note.text.strip():
        checkup.put("http.notification-202", "pass", _("notifications/initialized answered 202 "
                    "with no body"), [note.evidence])
    else:
        checkup.put("http.notification-202", "fail", _("notifications/initialized answered "
                    "{status}").format(status=note.status) + (_(" with a body ({count} characters)")
                                        .format(count=len(note.text))
                                        if note.text.strip() else ""), [note.evidence])
    if isinstance(version, str) and version >= "2025-06-18":
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        bad = await probe.post(ping, {**good, "MCP-Protocol-Version": BAD_VERSION_HEADER})
        checkup.put("http.protocol-version-header", "pass" if bad.status == 400 else "fail",
                    _("MCP-Protocol-Version: {version} answered {status}").format(
                        version=BAD_VERSION_HEADER, status=bad.status),
                    [bad.evidence])
    else:
        checkup.skip(["http.protocol-version-header"], _("negotiated {version}: the header "
                     "exists from 2025-06-18").format(version=version))
    ping = await probe.post({"jsonrpc": "2.0", "id": 3, "method": "ping"}, good)
    narrow = await probe.post({"jsonrpc": "2.0", "id": 4, "method": "ping"},
                              {**good, "Accept": "application/json"})
    _request_answers(checkup, [plain, ping], narrow)
    await _event_ids(checkup, probe, good, [plain, ping, narrow], ping)
    if sid:
        await _unguessable(checkup, probe, sid, plain)
        await _ended_session(checkup, probe, sid, version, good)


def _request_answers(checkup: Recorder, answers: list[Answer], narrow: Answer) -> None:
    """http.request-answer: JSON or SSE for every request; the Accept probe said how it was
    met (the Accept rule itself binds the client: the server is free to refuse or serve)."""
    bad = [a for a in [*answers, narrow] if 200 <= a.status < 300
           and a.content_type not in ("application/json", "text/event-stream")]
    if narrow.status >= 400:
        met = _("refused with {status}").format(status=narrow.status)
    else:
        met = _("answered {status} {kind}").format(
            status=narrow.status, kind=narrow.content_type or _("(no content type)"))
    evidence = [a.evidence for a in (bad or [answers[-1], narrow])]
    if bad:
        checkup.put("http.request-answer", "fail", "; ".join(
            _("{method} answered {status} {kind}").format(
                method=a.evidence["http"]["request"]["body"].get("method"), status=a.status,
                kind=a.content_type or _("(no content type)")) for a in bad), evidence)
    else:
        checkup.put("http.request-answer", "pass", _("requests answered as "
                    "{kinds}; a POST with "
                    "Accept: application/json alone was {met}").format(
                        kinds=", ".join(sorted({a.content_type for a in answers})), met=met),
                    evidence)


async def _event_ids(checkup: Recorder, probe: HttpProbe, good: dict[str, str],
                     answers: list[Answer], ping: Answer) -> None:
    """http.event-ids over this session's streams; http.resumption from ping's first id."""
    seen: dict[str, int] = {}
    for answer in answers:
        for event_id in answer.event_ids:
            seen[event_id] = seen.get(event_id, 0) + 1
    if not seen:
        checkup.skip(["http.event-ids", "http.resumption"], _("the server sent no SSE event "
                     "ids (it MAY attach them): nothing to resume"))
        return
    with_ids = [a.evidence for a in answers if a.event_ids]
    repeated = sorted(event_id for event_id, count in seen.items() if count > 1)
    if repeated:
        checkup.put("http.event-ids", "fail", _("event id(s) {ids}"
                    " sent more than once in one session").format(
                        ids=", ".join(map(repr, repeated[:5]))), with_ids)
    else:
        checkup.put("http.event-ids", "pass", _("{count} event id(s) over "
                    "{streams} stream(s), none repeated").format(
                        count=len(seen), streams=len(with_ids)), with_ids)
    if not ping.event_ids:
        checkup.skip(["http.resumption"], _("ping's stream carried no event id to resume from"))
        return
    resumed = await probe.get({**good, "Last-Event-ID": ping.event_ids[0]}, REPLAY_WINDOW)
    if resumed.status != 200 or resumed.content_type != "text/event-stream":
        asked = _("GET with Last-Event-ID {event_id} answered {status}").format(
            event_id=repr(ping.event_ids[0]), status=resumed.status)
        checkup.skip(["http.resumption"], asked + (
            _(": the server offers no SSE stream at GET, so it does not resume (it MAY not)")
            if resumed.status == 405 else
            _(" {kind}, not an SSE stream: no replay "
              "to judge").format(kind=resumed.content_type or _("(no content type)"))))
        return
    ping_id = ping.evidence["http"]["request"]["body"]["id"]
    foreign = [m for m in resumed.messages if isinstance(m, dict) and "method" not in m
               and m.get("id") != ping_id]
    evidence = [ping.evidence, resumed.evidence]
    if foreign:
        checkup.put("http.resumption", "fail", _("resuming ping's stream (id {ping}) replayed "
                    "the response to id {other}, another stream's").format(
                        ping=ping_id, other=repr(foreign[0].get("id"))), evidence)
    elif not resumed.messages:
        checkup.skip(["http.resumption"], _("GET with Last-Event-ID {event_id} "
                     "answered 200 but replayed no message within {seconds} s: "
                     "nothing to judge").format(event_id=repr(ping.event_ids[0]),
                                                seconds=f"{REPLAY_WINDOW:g}"))
    else:
        checkup.put("http.resumption", "pass", _("resuming after {event_id} replayed "
                    "{count} message(s), all of ping's stream").format(
                        event_id=repr(ping.event_ids[0]), count=len(resumed.messages)), evidence)


async def _unguessable(checkup: Recorder, probe: HttpProbe, sid: str, plain: Answer) -> None:
    """http.session-id-unguessable: two more sessions, the three ids side by side."""
    others = [await probe.post(_initialize(1), {}) for _ in range(2)]
    ids = [sid, *(a.headers.get("mcp-session-id") for a in others)]
    for other in others:
        if other_sid := other.headers.get("mcp-session-id"):
            await probe.delete(other_sid, None)
    evidence = [plain.evidence, *(a.evidence for a in others)]
    if any(i is None for i in ids):
        checkup.skip(["http.session-id-unguessable"], _("a later initialize got no session id"))
        return
    known = [i for i in ids if i is not None]
    numbers = [_numeric(i) for i in known]
    bits = session_id_bits(known)
    if len(set(known)) < len(known):
        problem = _("two sessions were given the same id")
    elif all(n is not None for n in numbers) and len(
            {b - a for a, b in itertools.pairwise(numbers)}) == 1 and bits < MIN_SESSION_ID_BITS:
        problem = _("the ids count up: the next one can be guessed")
    elif bits < MIN_SESSION_ID_BITS:
        problem = _("about {bits} bits vary between them (fewer than {least})").format(
            bits=f"{bits:.0f}", least=MIN_SESSION_ID_BITS)
    else:
        checkup.put("http.session-id-unguessable", "pass", _("3 sessions, 3 distinct ids, about "
                    "{bits} random bits each").format(bits=f"{bits:.0f}"), evidence)
        return
    checkup.put("http.session-id-unguessable", "fail", _("session ids {ids}"
                ": {problem}").format(ids=", ".join(map(repr, known)), problem=problem), evidence)


async def _ended_session(checkup: Recorder, probe: HttpProbe, sid: str, version: Any,
                         good: dict[str, str]) -> None:
    deleted = await probe.delete(sid, version if isinstance(version, str) else None)
    if deleted.status == 405:
        checkup.skip(["http.session-404"], _("DELETE answered 405: the server does not let "
                     "clients end sessions (it MAY), so no session could be ended to test"))
    elif 200 <= deleted.status < 300:
        after = await probe.post({"jsonrpc": "2.0", "id": 5, "method": "ping"}, good)
        checkup.put("http.session-404", "pass" if after.status == 404 else "fail",
                    _("a request with the ended session's id answered {status}").format(
                        status=after.status),
                    [deleted.evidence, after.evidence])
    else:
        checkup.skip(["http.session-404"], _("DELETE answered {status}").format(
            status=deleted.status))


async def _stateless(checkup: Recorder, probe: HttpProbe, discover: Answer) -> None:
    """The 2026-07-28 request rules over HTTP: required _meta, headers matching the body."""
    short = {META_PROTOCOL_VERSION: LATEST_STATELESS_VERSION, META_CLIENT_INFO: CLIENT_INFO}
    lacking = await probe.post(_discover(2, short), stateless_headers("server/discover"))
    if lacking.status == 400 and lacking.error_code == INVALID_PARAMS:
        checkup.put("stateless.request-meta", "pass", _("_meta without {key}"
                    " refused: 400, error {code}").format(
                        key=META_CLIENT_CAPABILITIES, code=INVALID_PARAMS), [lacking.evidence])
    else:
        checkup.put("stateless.request-meta", "fail", _("_meta without "
                    "{key} answered {status}").format(
                        key=META_CLIENT_CAPABILITIES, status=lacking.status)
                    + (_(", error {code}").format(code=lacking.error_code)
                       if lacking.error_code is not None
                       else _(" with a result") if isinstance(lacking.body, dict)
                       and "result" in lacking.body else "")
                    + _(" (the rule: 400, error {code})").format(code=INVALID_PARAMS),
                    [lacking.evidence])
    discovered = discover.result
    probes = {
        _("Mcp-Method: tools/list on a server/discover body"): (
            _discover(3), stateless_headers("tools/list")),
        _("no Mcp-Method header"): (_discover(4),
                                    {"MCP-Protocol-Version": LATEST_STATELESS_VERSION}),
        # A dual-era server may not take the header's legacy version at its word: "A request
        # carrying modern per-request _meta is served statelessly" (2026-07-28, versioning).
        _("MCP-Protocol-Version: {version} with _meta naming "
          "{named}").format(version=SUPPORTED_VERSIONS[-1],
                            named=LATEST_STATELESS_VERSION): (_discover(5), {
            **stateless_headers("server/discover"),
            "MCP-Protocol-Version": SUPPORTED_VERSIONS[-1]}),
    }
    if discovered is not None and "resources" in (discovered.get("capabilities") or {}):
        # Mcp-Name, on a read (no side effects): the first resource listed, a header naming
        # another. A server that lists none leaves Mcp-Name unprobed.
        listing = await probe.post(_stateless_request(6, "resources/list", {}),
                                   stateless_headers("resources/list"))
        listed = (listing.result or {}).get("resources")
        uris = [r.get("uri") for r in (listed if isinstance(listed, list) else [])
                if isinstance(r, dict) and isinstance(r.get("uri"), str)]
        uri = uris[0] if uris else None
        if uri is not None:
            probes[_("Mcp-Name: checkup-other on a resources/read of {uri}").format(uri=uri)] = (
                _stateless_request(7, "resources/read", {"uri": uri}),
                {**stateless_headers("resources/read"), "Mcp-Name": "checkup-other"})
    wrong: list[str] = []
    evidence: list[dict[str, Any]] = [discover.evidence]
    for what, (message, headers) in probes.items():
        answer = await probe.post(message, headers)
        evidence.append(answer.evidence)
        if answer.status != 400 or answer.error_code != HEADER_MISMATCH:
            wrong.append(_("{what}: answered {status}").format(what=what, status=answer.status)
                         + (_(", error {code}").format(code=answer.error_code)
                            if answer.error_code is not None else ""))
    if wrong:
        checkup.put("stateless.header-mismatch", "fail", "; ".join(wrong)
                    + _(" (the rule: 400, error {code})").format(code=HEADER_MISMATCH), evidence)
    else:
        checkup.put("stateless.header-mismatch", "pass", _("{count} disagreeing or missing "
                    "headers refused: 400, error {code}").format(
                        count=len(probes), code=HEADER_MISMATCH), evidence)
