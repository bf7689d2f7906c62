"""Run the checkup against a target: a URL, a stdio command, or an open ClientSession.

The main session settles its era with ``connect(era="auto")``.  Lifecycle checks
need the handshake: they use the main session when it speaks it, else a second
session that initializes (a stateless-only server makes them not applicable).
An unknown version is offered on a session of its own, and the Streamable HTTP
rules are probed with raw requests (a client that obeys the rules cannot break
them on purpose).  These groups run concurrently; within the main session the
list requests run concurrently too, as JSON-RPC allows.

Nothing here calls a tool unless ``call_tools`` names it (or is ``"all"``):
tools can have side effects.

Example::

    report = await run_checkup("http://127.0.0.1:8000/mcp")
    report = await run_checkup([sys.executable, "-m", "mcp_nb.lab"], call_tools="all")
    print(text_summary(report))
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from ..client import ClientSession
from ..client.errors import ServerError
from ..i18n import _
from ..protocol.errors import McpError, UnsupportedVersionError
from ..protocol.versions import SUPPORTED_VERSIONS, VERSIONS, Era
from .apps_rules import check_apps
from .features import FeatureChecks
from .handshake_features import HANDSHAKE_FEATURE_CHECKS, HandshakeFeatureChecks
from .http_rules import check_http
from .model import CHECKS, Report, Result
from .model import transcript_evidence as _entry
from .recorder import exchange_entries
from .sessions import SHUTDOWN_GRACE, Target, describe, is_url
from .stateless_rules import judge_stateless
from .tool_calls import TOOL_CALL_CHECKS, arguments_for

#: Offered to see the server counter-offer: it predates MCP, so no server supports it.
UNKNOWN_VERSION = "2000-01-01"
#: Declared in a stateless-era request's _meta: no server implements it.
UNKNOWN_STATELESS_VERSION = "1900-01-01"
TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
LISTS = {"tools": ("tools/list", "tools"), "resources": ("resources/list", "resources"),
         "prompts": ("prompts/list", "prompts")}
MAX_PAGES = 50
#: How long the unknown-version session waits, initialized but without sending
#: notifications/initialized, for requests a server should not send yet.
EARLY_REQUEST_WINDOW = 0.3
#: The stateless era's "Unsupported protocol version" code (initialize to a stateless-only server).
STATELESS_ONLY = -32022
JSONRPC_PREDEFINED = {-32700, -32600, -32601, -32602, -32603}
ERA_MESSAGE_RULES = ("invalid-json", "invalid-message", "invalid-utf8")


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


def _initialize_exchange(session: ClientSession, name: str) -> tuple[dict | None, list[dict]]:
    """The initialize request and its answer (the raw response message) from the transcript."""
    sent = [e for e in session.transcript if e.direction == "send" and e.method == "initialize"]
    if not sent:
        return None, []
    ids = [e.id for e in sent if isinstance(e.id, int)]
    evidence = exchange_entries(session, name, ids)
    answers = [e["message"] for e in evidence if e["message"] and "id" in e["message"]
               and "method" not in e["message"]]
    return (answers[-1] if answers else None), evidence


def _version_known_or_future(answered: str) -> bool:
    return answered in VERSIONS or (bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}", answered))
                                    and answered > SUPPORTED_VERSIONS[-1])


def _schema_problem(schema: Any) -> str | None:
    """Why ``schema`` is not a valid JSON Schema object schema (None if it is)."""
    if not isinstance(schema, dict):
        return f"is {type(schema).__name__}, not a JSON object"
    if schema.get("type") != "object":
        return f"has type {schema.get('type')!r}, not 'object'"
    try:
        validator_for(schema, default=Draft202012Validator).check_schema(schema)
    except SchemaError as exc:
        return f"is not valid JSON Schema: {exc.message}"
    return None


class _Checkup(HandshakeFeatureChecks, FeatureChecks):
    # -- the run ------------------------------------------------------------------------

    async def run(self) -> Report:
        started = time.monotonic()
        async with contextlib.AsyncExitStack() as stack:
            main = self.target if isinstance(self.target, ClientSession) else None
            connect_error: Exception | None = None
            if main is None:
                assert self.new_session is not None
                main = self.new_session()
                try:
                    await stack.enter_async_context(main)
                    await main.connect(era="auto")
                except McpError as exc:
                    connect_error = exc
            self.sessions.append(("main", main))
            async with anyio.create_task_group() as group:
                if connect_error is None:
                    group.start_soon(self.features, main)
                group.start_soon(self.lifecycle, main, connect_error)
                if is_url(self.target):
                    group.start_soon(check_http, self, self.target)
                if connect_error is None:
                    group.start_soon(check_apps, self, self.new_apps_session, main)
            self.jsonrpc()
            self.list_changed()
            if connect_error is None:
                judge_stateless(self, main)
        # Every session is closed now: how each stdio server took its stdin closing is known.
        self.shutdown()
        if self.authorization_required:
            # The sessions were refused at the door: what they saw (the 401's error body, a
            # failed handshake) says nothing about the protocol behind it.
            for check_id in CHECKS:
                if not check_id.startswith(("auth.", "http.")):
                    self.results[check_id] = Result.make(
                        CHECKS[check_id], "not-applicable", "the server asks for "
                        "authorization (401) and the checkup holds no token: only the "
                        "authorization metadata was checked")
        if connect_error is not None:
            self.skip(list(CHECKS), f"the session could not connect: {connect_error}")
        if not is_url(self.target):
            self.skip([c for c in CHECKS if c.startswith("http.")],
                      "not a Streamable HTTP target (these rules are HTTP's)")
        server = main.server_info
        return Report(
            target=describe(self.target),
            era=main.era.value if connect_error is None and main.era is not None else None,
            version=main.negotiated_version if connect_error is None else None,
            server=server.model_dump(exclude_none=True) if server is not None else None,
            results=[self.results.get(c) or Result.make(CHECKS[c], "not-applicable",
                                                        "not reached") for c in CHECKS],
            seconds=time.monotonic() - started,
            allowed_tools=["all"] if self.call_all else self.allowed,
        )

    # -- lifecycle ----------------------------------------------------------------------

    async def lifecycle(self, main: ClientSession, connect_error: Exception | None) -> None:
        # A session's task group lives in the task that opened it: each session this check
        # opens is entered and left here (its transcript and findings stay readable after).
        handshake_checks = ["lifecycle.initialize-result", "lifecycle.version-answer",
                            "lifecycle.unknown-version", "lifecycle.ping",
                            "lifecycle.requests-before-initialized", *HANDSHAKE_FEATURE_CHECKS]
        if connect_error is not None or main.era is not Era.STATELESS:
            await self.handshake_lifecycle(main, "main", connect_error)
            return
        if self.new_session is None:
            self.skip(handshake_checks,
                      "the open session speaks the stateless era (no handshake, no ping)")
            return
        session = self.new_session()
        self.sessions.append(("handshake", session))
        judged = False
        try:
            async with session:
                try:
                    await session.connect(era="handshake")
                except McpError as exc:
                    answer = _initialize_exchange(session, "handshake")[0]
                    if not isinstance((answer or {}).get("result"), dict):
                        # The server spoke 2026-07-28 to the main session and refuses the
                        # handshake: stateless-only. How it refuses is its own choice (stdio:
                        # an implementation-defined error; HTTP: 400 for the missing headers).
                        self.skip(handshake_checks, _(
                            "the server speaks only the stateless era (initialize refused: "
                            "{error}): no handshake, no ping").format(error=_first_line(exc)))
                        return
                    connect_error = exc
                judged = True
                await self.handshake_lifecycle(session, "handshake", connect_error)
        except McpError as exc:
            # The session could not even start: what it saw is judged (once; an error while
            # closing a session already judged changes nothing).
            if not judged:
                await self.handshake_lifecycle(session, "handshake", exc)

    async def handshake_lifecycle(self, session: ClientSession, name: str,
                                  connect_error: Exception | None) -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(self.unknown_version)
            self.handshake(session, name, connect_error)
            if connect_error is None and session.era is Era.HANDSHAKE:
                group.start_soon(self.handshake_features, session, name)
            else:
                self.skip(HANDSHAKE_FEATURE_CHECKS, _(
                    "no handshake-era session to use: {error}").format(error=connect_error))
            if connect_error is None and session.era is Era.HANDSHAKE:
                answer, evidence = await self.exchange(session, name, "ping")
                if isinstance(answer, dict) and not {k for k in answer if k != "_meta"}:
                    self.put("lifecycle.ping", "pass", _("ping answered with an empty result"),
                             evidence)
                elif isinstance(answer, dict):
                    self.put("lifecycle.ping", "fail", _(
                        "ping answered with a non-empty result (keys {keys})").format(
                        keys=sorted(answer)), evidence)
                else:
                    self.put("lifecycle.ping", "fail",
                             _("ping not answered: {answer}").format(answer=answer), evidence)
        if connect_error is None and session.era is Era.HANDSHAKE:
            # The unknown-version session never sends initialized: premature requests show there.
            early = [(n, f) for n, s in self.sessions for f in s.findings
                     if f.rule.id == "server-request-before-initialized"]
            self.put("lifecycle.requests-before-initialized", "fail" if early else "pass",
                     early[0][1].detail if early else
                     _("no request came before notifications/initialized"),
                     [{"session": n, "finding": f.rule.id, "message": f.evidence}
                      for n, f in early[:5]])

    def handshake(self, session: ClientSession, name: str, error: Exception | None) -> None:
        """initialize-result and version-answer, from the initialize exchange in the transcript."""
        answer, evidence = _initialize_exchange(session, name)
        if answer is None:
            self.put("lifecycle.initialize-result", "fail",
                     _("initialize was not answered: {error}").format(error=error), evidence)
            return
        result = answer.get("result")
        if not isinstance(result, dict):
            detail = _("initialize answered an error: {error}").format(
                error=json.dumps(answer.get("error"))[:300])
            # Refusing the version the client offered (its latest) is the negotiation's failure.
            check = ("lifecycle.version-answer" if isinstance(error, UnsupportedVersionError)
                     else "lifecycle.initialize-result")
            self.put(check, "fail", detail, evidence)
            return
        problems = []
        info = result.get("serverInfo")
        if not isinstance(result.get("protocolVersion"), str):
            problems.append(_("protocolVersion is not a string"))
        if not isinstance(result.get("capabilities"), dict):
            problems.append(_("capabilities is not an object"))
        if not isinstance(info, dict):
            problems.append(_("serverInfo is not an object"))
        else:
            problems += [_("serverInfo.{key} is not a string").format(key=key)
                         for key in ("name", "version") if not isinstance(info.get(key), str)]
        self.put("lifecycle.initialize-result", "fail" if problems else "pass",
                 "; ".join(problems) or _("protocolVersion, capabilities and serverInfo "
                                          "present and typed"), evidence)
        answered = result.get("protocolVersion")
        offered = next((e["message"]["params"].get("protocolVersion") for e in evidence
                        if e["message"] and e["message"].get("method") == "initialize"), None)
        if not isinstance(answered, str):
            self.put("lifecycle.version-answer", "fail", _("no protocolVersion answered"),
                     evidence)
        elif answered == offered or answered in VERSIONS:
            self.put("lifecycle.version-answer", "pass",
                     _("offered {offered}, answered {answered}").format(
                         offered=offered, answered=answered), evidence)
        elif _version_known_or_future(answered):
            self.put("lifecycle.version-answer", "warn", _(
                "offered {offered}, answered {answered}: a version this checkup does not "
                "know").format(offered=offered, answered=answered), evidence)
        else:
            self.put("lifecycle.version-answer", "fail", _(
                "offered {offered}, answered {answered}: no MCP revision has that "
                "name").format(offered=offered, answered=answered), evidence)

    async def unknown_version(self) -> None:
        check = "lifecycle.unknown-version"
        if self.new_session is None:
            self.skip([check], _("needs a new connection (the target is an open session)"))
            return
        name = "unknown-version"
        error: Exception | None = None
        session = self.new_session()
        self.sessions.append((name, session))
        try:
            async with session:
                await session.initialize(UNKNOWN_VERSION)
                # This session stays short of initialized for a moment, so a server that
                # sends requests before notifications/initialized is seen doing it.
                await anyio.sleep(EARLY_REQUEST_WINDOW)
        except McpError as exc:
            error = exc
        answer, evidence = _initialize_exchange(session, name)
        result = (answer or {}).get("result")
        if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
            answered = result["protocolVersion"]
            if answered == UNKNOWN_VERSION:
                self.put(check, "fail", _("offered {version} (predates MCP), the server "
                                          "echoed it back").format(version=UNKNOWN_VERSION),
                         evidence)
            else:
                self.put(check, "pass", _("offered {version}, counter-offered {answered}")
                         .format(version=UNKNOWN_VERSION, answered=answered), evidence)
        elif answer is not None and isinstance(answer.get("error"), dict):
            code = answer["error"].get("code")
            if code == -32022:
                self.skip([check], _("initialize refused with -32022: a stateless-era server"))
                return
            self.put(check, "fail", _("offered {version}: answered error {code} instead of a "
                                      "version it supports").format(version=UNKNOWN_VERSION,
                                                                    code=code), evidence)
        else:
            self.put(check, "fail", _("offered {version}: no answer ({error})").format(
                version=UNKNOWN_VERSION, error=error), evidence)

    # -- capabilities, tools, lists -----------------------------------------------------

    async def features(self, main: ClientSession) -> None:
        listed: dict[str, list[dict[str, Any]]] = {}
        pages: list[tuple[str, str, list[dict[str, Any]]]] = []

        async def one(capability: str) -> None:
            method, key = LISTS[capability]
            declared = capability in main.capabilities.server
            answer, evidence = await self.exchange(main, "main", method, force=not declared)
            check = f"capabilities.{capability}"
            if isinstance(answer, dict):
                if declared:
                    self.put(check, "pass", _("declared, and {method} answered").format(
                        method=method), evidence)
                else:
                    self.put(check, "fail", _("{capability} not declared, yet {method} "
                                              "answered a result").format(
                        capability=capability, method=method), evidence)
                items = answer.get(key) if isinstance(answer.get(key), list) else []
                listed[capability] = list(items)
                await self.paginate(main, method, key, answer, listed[capability], pages)
            elif isinstance(answer, ServerError):
                if declared:
                    self.put(check, "fail", _("{capability} declared, yet {method} answered "
                                              "error {code}").format(
                        capability=capability, method=method, code=answer.code), evidence)
                elif answer.code == -32601:
                    self.put(check, "pass", _("not declared, and {method} refused with "
                                              "-32601").format(method=method), evidence)
                else:
                    self.put(check, "warn", _(
                        "not declared; {method} refused with {code} (JSON-RPC's code for a "
                        "method not available is -32601)").format(method=method,
                                                                  code=answer.code), evidence)
            else:
                self.put(check, "fail" if declared else "warn",
                         f"{method}: {answer}", evidence)

        async with anyio.create_task_group() as group:
            for capability in LISTS:
                group.start_soon(one, capability)
        self.pagination(pages)
        await self.stateless(main)
        async with anyio.create_task_group() as group:
            group.start_soon(self.protocol_features, main, listed)
            if "tools" in listed:
                group.start_soon(self.tools, main, listed["tools"])
            else:
                self.skip(["tools.names", "tools.input-schema", "tools.output-schema",
                           "tools.annotations", *TOOL_CALL_CHECKS], "the server lists no tools")

    async def stateless(self, main: ClientSession) -> None:
        """The 2026-07-28 rules a stateless-era main session can observe."""
        checks = ["stateless.unsupported-version", "stateless.result-type"]
        if main.era is not Era.STATELESS:
            self.skip(checks, "the server does not speak the stateless era (2026-07-28)")
            return
        start = main.transcript.next_seq
        answer: Any
        try:
            # negotiate=False: the raw answer, not the client's retry with a supported version.
            answer = await main.discover(UNKNOWN_STATELESS_VERSION, negotiate=False,
                                         timeout=self.timeout)
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
                self.put(check, "pass", f"-32022 listing {', '.join(supported)}", evidence)
            else:
                self.put(check, "fail", "-32022 without data.supported (a list of versions)",
                         evidence)
        elif isinstance(answer, ServerError):
            self.put(check, "fail", f"answered error {answer.code}, not -32022", evidence)
        else:
            self.put(check, "fail", f"version {UNKNOWN_STATELESS_VERSION} was served: "
                     f"{type(answer).__name__}", evidence)
        missing = [_entry("main", e) for e in main.transcript
                   if e.direction == "recv" and e.kind == "response" and e.message
                   and isinstance(e.message.get("result"), dict)
                   and "resultType" not in e.message["result"]]
        self.put("stateless.result-type", "fail" if missing else "pass",
                 f"{len(missing)} result(s) without resultType" if missing else
                 "every result carried resultType", missing[:5])

    async def paginate(self, main: ClientSession, method: str, key: str, first: dict[str, Any],
                       items: list[dict[str, Any]],
                       pages: list[tuple[str, str, list[dict[str, Any]]]]) -> None:
        """Follow nextCursor; each problem goes to ``pages`` as (method, problem, evidence)."""
        answer, seen = first, set()
        for _page in range(MAX_PAGES):
            cursor = answer.get("nextCursor")
            if cursor is None:
                return
            if not isinstance(cursor, str) or cursor in seen:
                pages.append((method, f"nextCursor {cursor!r} is not a new string", []))
                return
            seen.add(cursor)
            answer, evidence = await self.exchange(main, "main", method, {"cursor": cursor})
            if not isinstance(answer, dict):
                pages.append((method, f"the cursor it handed out was refused: {answer}",
                              evidence))
                return
            pages.append((method, "", evidence))
            if isinstance(answer.get(key), list):
                items.extend(answer[key])

    def pagination(self, pages: list[tuple[str, str, list[dict[str, Any]]]]) -> None:
        check = "lists.pagination"
        if not pages:
            self.skip([check], "no list handed out a nextCursor")
            return
        problems = [(m, p, e) for m, p, e in pages if p]
        evidence = [entry for _, _, e in (problems or pages)[:4] for entry in e]
        if problems:
            self.put(check, "fail", "; ".join(f"{m}: {p}" for m, p, _ in problems), evidence)
        else:
            self.put(check, "pass", f"{len(pages)} further page(s) fetched by cursor", evidence)

    async def tools(self, main: ClientSession, tools: list[dict[str, Any]]) -> None:
        listing = [e for e in main.transcript if e.direction == "recv" and e.kind == "response"
                   and e.message and isinstance(e.message.get("result"), dict)
                   and "tools" in e.message["result"]]
        evidence = [_entry("main", e) for e in listing[:2]]
        names = [t.get("name") for t in tools if isinstance(t, dict)]
        bad = [n for n in names if not isinstance(n, str) or not TOOL_NAME.fullmatch(n)]
        dupes = sorted({n for n in names if isinstance(n, str) and names.count(n) > 1})
        if bad or dupes:
            self.put("tools.names", "fail", "; ".join(
                [f"name {n!r} breaks the naming rules" for n in bad[:5]]
                + [f"name {n!r} is not unique" for n in dupes[:5]]), evidence)
        else:
            self.put("tools.names", "pass", f"{len(names)} tool name(s) follow the rules",
                     evidence)
        problems = [f"{t.get('name')!r}: inputSchema {p}" for t in tools
                    if (p := _schema_problem(t.get("inputSchema")))]
        self.put("tools.input-schema", "fail" if problems else "pass",
                 "; ".join(problems[:5]) or f"{len(tools)} inputSchema(s) valid", evidence)
        annotated = [t for t in tools if "annotations" in t]
        if not annotated:
            self.skip(["tools.annotations"], "no tool has annotations")
        else:
            problems = []
            for tool in annotated:
                notes = tool["annotations"]
                if not isinstance(notes, dict):
                    problems.append(f"{tool.get('name')!r}: annotations is not an object")
                    continue
                problems += [f"{tool.get('name')!r}: {hint} is not a boolean" for hint in HINTS
                             if hint in notes and not isinstance(notes[hint], bool)]
                if "title" in notes and not isinstance(notes["title"], str):
                    problems.append(f"{tool.get('name')!r}: title is not a string")
            self.put("tools.annotations", "fail" if problems else "pass",
                     "; ".join(problems[:5]) or f"{len(annotated)} tool(s) annotated well",
                     evidence)
        await self.output_schemas(main, tools, evidence)
        await self.tool_calls(main, tools)

    async def output_schemas(self, main: ClientSession, tools: list[dict[str, Any]],
                             evidence: list[dict[str, Any]]) -> None:
        check = "tools.output-schema"
        typed = [t for t in tools if "outputSchema" in t]
        if not typed:
            self.skip([check], "no tool declares an outputSchema")
            return
        problems = [f"{t.get('name')!r}: outputSchema {p}" for t in typed
                    if (p := _schema_problem(t.get("outputSchema")))]
        if problems:
            self.put(check, "fail", "; ".join(problems[:5]), evidence)
            return
        callable_ = [t for t in typed if self.call_all or t.get("name") in self.allowed]
        notes: list[str] = []
        calls: list[dict[str, Any]] = []
        for tool in callable_:
            arguments = arguments_for(tool.get("inputSchema") or {})
            if arguments is None:
                notes.append(f"{tool['name']!r} not called: needs arguments the checkup "
                             "cannot invent")
                continue
            answer, entries = await self.exchange(main, "main", "tools/call",
                                                  {"name": tool["name"], "arguments": arguments})
            calls += entries
            if not isinstance(answer, dict) or answer.get("isError"):
                notes.append(f"{tool['name']!r} called, but it failed, so nothing to compare")
                continue
            structured = answer.get("structuredContent")
            if structured is None:
                problems.append(f"{tool['name']!r} returned no structuredContent")
                continue
            schema = tool["outputSchema"]
            error = next(iter(validator_for(schema, default=Draft202012Validator)(schema)
                              .iter_errors(structured)), None)
            if error is not None:
                problems.append(f"{tool['name']!r}: structuredContent does not conform: "
                                f"{error.message}")
        if problems:
            self.put(check, "fail", "; ".join(problems[:5]), calls or evidence)
        elif calls:
            self.put(check, "pass", "schemas valid; structuredContent conforms"
                     + (f" ({'; '.join(notes)})" if notes else ""), calls)
        else:
            self.put(check, "pass", f"{len(typed)} outputSchema(s) valid; structuredContent "
                     "not checked: " + ("; ".join(notes) if notes else
                                        "no call allowed (--call-tools)"), evidence)

    def list_changed(self) -> None:
        """lists.list-changed, over every session: what the server announced, and whether it
        had declared it (nothing the checkup does without tool calls changes a list)."""
        check = "lists.list-changed"
        undeclared = [(n, f) for n, s in self.sessions for f in s.findings
                      if f.rule.id == "capability-not-negotiated" and isinstance(f.evidence, dict)
                      and str(f.evidence.get("method", "")).endswith("/list_changed")]
        if undeclared:
            self.put(check, "fail", undeclared[0][1].detail,
                     [{"session": n, "finding": f.rule.id, "message": f.evidence}
                      for n, f in undeclared[:5]])
            return
        seen = [_entry(n, e) for n, s in self.sessions for e in s.transcript
                if e.direction == "recv" and e.kind == "notification"
                and (e.method or "").endswith("/list_changed")]
        if seen:
            self.put(check, "pass", f"{len(seen)} list_changed notification(s), each for a list "
                     "declared listChanged", seen[:5])
            return
        declared = sorted({kind for _, s in self.sessions for kind in LISTS
                           if s.capabilities.list_changed(kind)})
        self.skip([check], (f"declared listChanged for {', '.join(declared)}, but no list "
                            "changed while the checkup ran: a list changes when the server's "
                            "state does (a tool call, say), which the checkup does not provoke")
                  if declared else "no list is declared listChanged and none was announced")

    def shutdown(self) -> None:
        """lifecycle.shutdown, from how each stdio server the checkup closed took it."""
        check = "lifecycle.shutdown"
        if is_url(self.target):
            self.skip([check], "HTTP: shutdown is closing the connections (no process to watch)")
            return
        closed = [(name, session) for name, session in self.sessions
                  if session is not self.target and session.transport.kind == "stdio"
                  and any(e.kind == "stdin closed" for e in session.transport_events)]
        if not closed:
            self.skip([check], "no stdio server was left running for the checkup to close "
                      "(an open session is yours to close)")
            return

        def evidence(name: str, session: ClientSession) -> list[dict[str, Any]]:
            return [{"session": name, "finding": f"transport: {e.kind}",
                     "message": {"event": e.kind, "detail": e.detail, **e.data}}
                    for e in session.transport_events
                    if e.kind in ("stdin closed", "SIGTERM", "SIGKILL", "exited")]

        stubborn = [(n, s) for n, s in closed if any(e.kind == "SIGTERM"
                                                     for e in s.transport_events)]
        if stubborn:
            name, session = stubborn[0]
            self.put(check, "fail", f"{len(stubborn)} of {len(closed)} server(s) still ran "
                     f"{SHUTDOWN_GRACE:g} s after their stdin closed and needed SIGTERM",
                     evidence(name, session))
        else:
            self.put(check, "pass", f"{len(closed)} server(s) exited after their stdin closed",
                     [e for n, s in closed[:2] for e in evidence(n, s)])

    # -- JSON-RPC hygiene (over every session's transcript and findings) ------------------

    def jsonrpc(self) -> None:
        if not any(e.direction == "recv" for _, s in self.sessions for e in s.transcript):
            self.skip(["jsonrpc.ids", "jsonrpc.error-codes", "jsonrpc.messages"],
                      "nothing was received from the server")
            return
        ids = [(n, f) for n, s in self.sessions for f in s.findings
               if f.rule.id in ("duplicate-response", "response-to-unknown-id")]
        self.put("jsonrpc.ids", "fail" if ids else "pass",
                 ids[0][1].detail if ids else "every response matched one pending request",
                 [{"session": n, "finding": f.rule.id, "message": f.evidence} for n, f in ids[:5]])
        bad = []
        for name, session in self.sessions:
            for entry in session.transcript:
                if entry.direction != "recv" or entry.kind != "error" or not entry.message:
                    continue
                code = (entry.message.get("error") or {}).get("code")
                if (not isinstance(code, int) or isinstance(code, bool)
                        or (-32768 <= code < -32099 and code not in JSONRPC_PREDEFINED)):
                    bad.append(_entry(name, entry))
        self.put("jsonrpc.error-codes", "fail" if bad else "pass",
                 f"{len(bad)} error(s) with a code outside the rules" if bad else
                 "every error code is an integer in an allowed range", bad[:5])
        # The server's side only: a client-side finding is the server saying the checkup sent
        # something invalid (the batch probe does, on purpose).
        garbage = [(n, f) for n, s in self.sessions for f in s.findings
                   if f.rule.id in ERA_MESSAGE_RULES and f.side == "server"]
        self.put("jsonrpc.messages", "fail" if garbage else "pass",
                 garbage[0][1].detail if garbage else "every message received was valid",
                 [{"session": n, "finding": f.rule.id, "message": f.evidence}
                  for n, f in garbage[:5]])


async def run_checkup(target: Target, *, call_tools: str | Sequence[str] = (),
                      timeout: float = 10.0, env: Mapping[str, str] | None = None,
                      cwd: str | None = None) -> Report:
    """Run every check against ``target`` and return the :class:`Report`.

    ``call_tools``: the tools the checkup may call (names, a comma-separated
    string, or ``"all"``); none by default.  ``timeout`` bounds each request.
    ``env`` and ``cwd``: the environment and working directory a stdio server
    is started with (an ``mcpServers`` entry's), else the kernel's.
    """
    return await _Checkup(target, call_tools, timeout, env=env, cwd=cwd).run()
