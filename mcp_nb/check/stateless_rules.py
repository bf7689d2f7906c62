"""The checkup's stateless-era (2026-07-28) rules on the main session (its HTTP rules are
:mod:`~mcp_nb.check.http_rules`').

Mostly judged from what the main session received: ``server/discover``'s result
(the probe its ``connect(era="auto")`` makes) and the ``x-mcp-header`` annotations
of the tools listed.  One request is sent here, by :func:`probe_stateless`:
``server/discover`` declaring a version no server implements, to see it refused
with the supported list; then every result the session received is looked at for
``resultType``.

Example::

    await probe_stateless(checkup, main)   # in the feature phase, after the lists
    judge_stateless(checkup, main)   # after the main session's requests are done
    x_mcp_header_problems({"type": "object", "properties": {
        "n": {"type": "number", "x-mcp-header": "N"}}})
    # ['n: x-mcp-header on a number parameter (only integer, string, boolean)']
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ..client import ClientSession
from ..client.errors import ServerError
from ..i18n import _
from ..protocol.errors import McpError
from ..protocol.stateless import server_info_of
from ..protocol.versions import Era
from .model import transcript_evidence as _entry
from .recorder import Recorder

#: RFC 9110 §5.1 field-name: 1*tchar.
TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
PRIMITIVE = {"integer", "string", "boolean"}
#: Keywords whose subschemas are not "statically reachable" through properties alone.
NOT_STATIC = ("items", "prefixItems", "additionalItems", "contains", "additionalProperties",
              "patternProperties", "oneOf", "anyOf", "allOf", "not", "if", "then", "else",
              "$ref", "$defs", "definitions", "dependentSchemas", "unevaluatedItems",
              "unevaluatedProperties", "propertyNames")
DISCOVER_CHECKS = ("stateless.discover", "stateless.discover-result",
                   "stateless.discover-server-info")
#: What probe_stateless decides.
STATELESS_PROBE_CHECKS = ("stateless.unsupported-version", "stateless.result-type")
#: Declared in a stateless-era request's _meta: no server implements it.
UNKNOWN_STATELESS_VERSION = "1900-01-01"
#: The stateless era's "Unsupported protocol version" code (initialize to a stateless-only server).
STATELESS_ONLY = -32022


def _annotations(schema: Any, path: str, static: bool) -> Iterator[tuple[str, Any, Any, bool]]:
    """(path, x-mcp-header value, the annotated schema, statically reachable) for each."""
    if not isinstance(schema, dict):
        return
    if "x-mcp-header" in schema and path:
        yield path, schema["x-mcp-header"], schema, static
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for name, sub in properties.items():
            yield from _annotations(sub, f"{path}.{name}" if path else name, static)
    for keyword in NOT_STATIC:
        value = schema.get(keyword)
        subs = value if isinstance(value, list) else (
            list(value.values()) if isinstance(value, dict) and keyword in (
                "$defs", "definitions", "dependentSchemas", "patternProperties")
            else [value])
        for sub in subs:
            yield from _annotations(sub, f"{path}/{keyword}" if path else keyword, False)


def x_mcp_header_problems(schema: Any) -> list[str]:
    """What breaks the x-mcp-header constraints in one inputSchema (empty when valid)."""
    problems: list[str] = []
    seen: dict[str, str] = {}
    for path, value, annotated, static in _annotations(schema, "", True):
        if not isinstance(value, str) or not value:
            problems.append(_("{path}: x-mcp-header {value} is empty or not a string").format(
                path=path, value=repr(value)))
            continue
        if not TOKEN.fullmatch(value):
            problems.append(_("{path}: x-mcp-header {value} is not an HTTP field-name "
                              "token").format(path=path, value=repr(value)))
        if value.lower() in seen:
            problems.append(_("{path}: x-mcp-header {value} repeats {other}'s").format(
                path=path, value=repr(value), other=seen[value.lower()]))
        seen.setdefault(value.lower(), path)
        kind = annotated.get("type")
        if not (isinstance(kind, str) and kind in PRIMITIVE):
            problems.append(_("{path}: x-mcp-header on a {kind} parameter (only integer, "
                            "string, boolean)").format(path=path, kind=kind))
        if not static:
            problems.append(_("{path}: x-mcp-header not reachable through properties "
                              "alone").format(path=path))
    return problems


def judge_stateless(checkup: Recorder, main: ClientSession) -> None:
    """stateless.discover (and its result's types), stateless.discover-server-info and
    stateless.x-mcp-header."""
    _x_mcp_header(checkup, main)
    if main.era is not Era.STATELESS:
        checkup.skip(DISCOVER_CHECKS, _("the server does not speak the stateless era "
                     "(2026-07-28)"))
        return
    sent = {e.id for e in main.transcript if e.direction == "send" and e.kind == "request"
            and e.method == "server/discover"}
    answers = [e for e in main.transcript if e.direction == "recv" and e.id in sent
               and e.kind == "response" and e.message
               and isinstance(e.message.get("result"), dict)]
    if not answers:
        checkup.skip(DISCOVER_CHECKS, _("the session settled the stateless era without a "
                     "server/discover result to judge"))
        return
    first = answers[0]
    request = [_entry("main", e) for e in main.transcript if e.direction == "send"
               and e.id == first.id and e.kind == "request"]
    evidence = [*request, _entry("main", first)]
    result = first.message["result"]
    # The sentences: implement it, with caching hints, ttlMs >= 0 (stateless.discover); the
    # rest is the schema's types (stateless.discover-result, which only warns).
    hints = []
    ttl = result.get("ttlMs")
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or ttl < 0:
        hints.append(_("ttlMs is {value}, not a number >= 0").format(value=repr(ttl)))
    if "cacheScope" not in result:
        hints.append(_("no cacheScope"))
    checkup.put("stateless.discover", "fail" if hints else "pass",
                "; ".join(hints) or _("answered, with ttlMs {ttl} and cacheScope {scope}").format(
                    ttl=repr(ttl), scope=repr(result.get("cacheScope"))), evidence)
    problems = []
    versions = result.get("supportedVersions")
    if not (isinstance(versions, list) and versions and all(isinstance(v, str)
                                                            for v in versions)):
        problems.append(_("supportedVersions is {value}, not a list of version strings").format(
            value=repr(versions)))
    if not isinstance(result.get("capabilities"), dict):
        problems.append(_("capabilities is not an object"))
    if "cacheScope" in result and result["cacheScope"] not in ("public", "private"):
        problems.append(_("cacheScope is {value}, not \"public\" or "
                          "\"private\"").format(value=repr(result["cacheScope"])))
    checkup.put("stateless.discover-result", "fail" if problems else "pass",
                "; ".join(problems) or _("supportedVersions {versions}, capabilities and "
                "cacheScope typed as the schema says").format(versions=", ".join(versions)),
                evidence)
    info = server_info_of(result)
    if info is not None and all(isinstance(info.get(k), str) for k in ("name", "version")):
        checkup.put("stateless.discover-server-info", "pass",
                    _("_meta names the server (name and version)"), evidence)
    else:
        checkup.put("stateless.discover-server-info", "fail",
                    _("no io.modelcontextprotocol/serverInfo with name and version strings in "
                    "server/discover's _meta"), evidence)


def _x_mcp_header(checkup: Recorder, main: ClientSession) -> None:
    check = "stateless.x-mcp-header"
    pages = [e for e in main.transcript if e.direction == "recv" and e.kind == "response"
             and e.message and isinstance(e.message.get("result"), dict)
             and isinstance(e.message["result"].get("tools"), list)]
    found: list[tuple[Any, str]] = []
    annotated = 0
    for page in pages:
        for tool in page.message["result"]["tools"]:
            schema = tool.get("inputSchema") if isinstance(tool, dict) else None
            if any(True for _ in _annotations(schema, "", True)):
                annotated += 1
                found += [(page, f"{tool.get('name')!r}: {p}")
                          for p in x_mcp_header_problems(schema)]
    if not annotated:
        checkup.skip([check], _("no tool's inputSchema carries x-mcp-header"))
        return
    evidence = [_entry("main", p) for p in dict.fromkeys(p for p, _ in found)] or [
        _entry("main", pages[0])]
    if found:
        checkup.put(check, "fail", "; ".join(p for _, p in found[:5]), evidence[:3])
    else:
        checkup.put(check, "pass", _("{count} tool(s) annotate parameters with valid "
                    "x-mcp-header names").format(count=annotated), evidence[:3])


async def probe_stateless(checkup: Recorder, main: ClientSession) -> None:
    """stateless.unsupported-version (server/discover declaring a version no server has) and
    stateless.result-type (over every result the main session received)."""
    if main.era is not Era.STATELESS:
        checkup.skip(STATELESS_PROBE_CHECKS,
                     _("the server does not speak the stateless era (2026-07-28)"))
        return
    start = main.transcript.next_seq
    answer: Any
    try:
        # negotiate=False: the raw answer, not the client's retry with a supported version.
        answer = await main.discover(UNKNOWN_STATELESS_VERSION, negotiate=False,
                                     timeout=checkup.timeout)
    except McpError as exc:
        answer = exc
    evidence = [_entry("main", e) for e in main.transcript.since(start)
                if e.kind in ("request", "response", "error") and e.direction != "event"
                and (e.method in (None, "server/discover"))]
    check = "stateless.unsupported-version"
    if isinstance(answer, ServerError) and answer.code == STATELESS_ONLY:
        supported = (answer.data or {}).get("supported") if isinstance(answer.data,
                                                                    dict) else None
        if isinstance(supported, list) and supported and all(
                isinstance(v, str) for v in supported):
            checkup.put(check, "pass", _("-32022 listing {versions}").format(
                versions=", ".join(supported)), evidence)
        else:
            checkup.put(check, "fail", _("-32022 without data.supported (a list of versions)"),
                        evidence)
    elif isinstance(answer, ServerError):
        checkup.put(check, "fail", _("answered error {code}, not -32022").format(
            code=answer.code), evidence)
    else:
        checkup.put(check, "fail", _("version {version} was served: "
                    "{answer}").format(version=UNKNOWN_STATELESS_VERSION,
                                       answer=type(answer).__name__), evidence)
    missing = [_entry("main", e) for e in main.transcript
               if e.direction == "recv" and e.kind == "response" and e.message
               and isinstance(e.message.get("result"), dict)
               and "resultType" not in e.message["result"]]
    results = sum(1 for e in main.transcript if e.direction == "recv" and e.kind == "response"
                  and e.message and isinstance(e.message.get("result"), dict))
    if not results:
        checkup.skip(["stateless.result-type"], _("no result was received to judge"))
        return
    checkup.put("stateless.result-type", "fail" if missing else "pass",
                _("{count} result(s) without resultType").format(count=len(missing))
                if missing else _("all {count} result(s) carried resultType").format(
                    count=results), missing[:5])
