"""The checkup's protocol-feature checks: resources, prompts, completion, logging, tool calls.

A mixin of :class:`~mcp_nb.check.runner._Checkup` (it uses the runner's
``put``/``skip``/``exchange`` and what ``--call-tools`` allowed).  Two groups:

- On the main session, in whichever era it speaks: resource URIs, reads and
  templates; prompt arguments and ``prompts/get``; ``completion/complete``; and,
  only for tools the user allowed, tool errors, progress and cancellation.
- On a handshake-era session (the main one, or the lifecycle's second one): what
  2026-07-28 removed (``logging/setLevel``, ``resources/subscribe``), and what a
  JSON-RPC batch gets over stdio.

Every read here is side-effect free by the spec (``resources/read``,
``prompts/get``, ``completion/complete``, ``logging/setLevel``); ``tools/call``
is only ever sent for tools ``--call-tools`` names.

Example (what the runner does with it)::

    report = await run_checkup([sys.executable, "-m", "mcp_nb.lab"], call_tools="all")
    report.result("tools.progress").outcome   # 'pass': slow's progress increased
"""

from __future__ import annotations

import contextlib
import itertools
import json
import time
from typing import Any

import anyio

from ..client import ClientSession
from ..client.errors import ServerError
from ..protocol.envelope import Notification
from ..protocol.errors import McpError
from ..protocol.models import LOG_LEVELS
from ..protocol.versions import Era
from .model import transcript_evidence as _entry
from .recorder import CheckupCore, Exchange
from .uris import template_problem, template_variables, uri_problem

#: At most this many listed resources are read, and prompts got (each is one request).
SAMPLE = 3
#: ContentBlock types (schema 2025-11-25) a prompt message may carry.
CONTENT_TYPES = ("text", "image", "audio", "resource_link", "resource")
#: A name no server lists: the unknown tool (a suffix is added if one does).
UNKNOWN_TOOL = "checkup-no-such-tool"
#: A level RFC 5424 does not have.
INVALID_LEVEL = "checkup-invalid-level"
#: A cancelled call's late answer is awaited twice as long as the call had run, within these.
CANCEL_WINDOW = (0.5, 3.0)
#: A log message: the server may send it only when it declared logging.
LOG_NOTIFICATION = "notifications/message"
#: The batch sent over stdio: one ping, under an id the session's own counter never makes.
BATCH = json.dumps([{"jsonrpc": "2.0", "id": "checkup-batch", "method": "ping"}])
#: How long the batch's answer is awaited after the ping that follows it was answered.
BATCH_SETTLE = 0.1

RESOURCE_CHECKS = ("resources.uris", "resources.read", "resources.templates")
PROMPT_CHECKS = ("prompts.arguments", "prompts.get")
TOOL_CALL_CHECKS = ("tools.unknown-tool", "tools.input-errors", "tools.progress",
                    "tools.cancellation")
#: Checks that need the handshake era (2026-07-28 removed what they exercise).
HANDSHAKE_FEATURE_CHECKS = ("capabilities.logging", "logging.invalid-level",
                            "resources.subscribe", "jsonrpc.batch")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _contents_problems(uri: str, result: Any) -> tuple[list[str], bool]:
    """What breaks ReadResourceResult's shape, and whether some content carries ``uri``."""
    contents = result.get("contents") if isinstance(result, dict) else None
    if not isinstance(contents, list):
        return [f"{uri}: contents is not an array"], False
    problems = []
    for item in contents:
        if not isinstance(item, dict):
            problems.append(f"{uri}: a content is not an object")
            continue
        if not isinstance(item.get("uri"), str):
            problems.append(f"{uri}: a content has no string uri")
        if not isinstance(item.get("text"), str) and not isinstance(item.get("blob"), str):
            problems.append(f"{uri}: a content has neither text nor blob as a string")
        if "mimeType" in item and not isinstance(item["mimeType"], str):
            problems.append(f"{uri}: a content's mimeType is not a string")
    return problems, any(isinstance(i, dict) and i.get("uri") == uri for i in contents)


def _message_problems(name: str, result: Any) -> list[str]:
    """What breaks GetPromptResult's messages (role user/assistant, a ContentBlock)."""
    messages = result.get("messages") if isinstance(result, dict) else None
    if not isinstance(messages, list):
        return [f"{name!r}: messages is not an array"]
    problems = []
    for message in messages:
        if not isinstance(message, dict):
            problems.append(f"{name!r}: a message is not an object")
            continue
        if message.get("role") not in ("user", "assistant"):
            problems.append(f"{name!r}: role {message.get('role')!r} is neither 'user' nor "
                            "'assistant'")
        content = message.get("content")
        if not isinstance(content, dict) or content.get("type") not in CONTENT_TYPES:
            kind = content.get("type") if isinstance(content, dict) else type(content).__name__
            problems.append(f"{name!r}: content of type {kind!r} is not a ContentBlock")
    return problems


def _argument_problems(prompt: dict[str, Any]) -> list[str]:
    name = prompt.get("name")
    arguments = prompt.get("arguments")
    if arguments is None:
        return []
    if not isinstance(arguments, list):
        return [f"{name!r}: arguments is not an array"]
    problems = []
    for argument in arguments:
        if not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
            problems.append(f"{name!r}: an argument has no string name")
            continue
        for key, kind, label in (("required", bool, "a boolean"),
                                 ("description", str, "a string")):
            if key in argument and not isinstance(argument[key], kind):
                problems.append(f"{name!r}: argument {argument['name']!r}: {key} "
                                f"{argument[key]!r} is not {label}")
    return problems


def _completion_problems(result: Any) -> list[str]:
    completion = result.get("completion") if isinstance(result, dict) else None
    if not isinstance(completion, dict):
        return ["completion is not an object"]
    values = completion.get("values")
    problems = []
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        problems.append("values is not an array of strings")
    elif len(values) > 100:
        problems.append(f"{len(values)} values: at most 100 are allowed")
    if "total" in completion and not _is_number(completion["total"]):
        problems.append(f"total {completion['total']!r} is not a number")
    if "hasMore" in completion and not isinstance(completion["hasMore"], bool):
        problems.append(f"hasMore {completion['hasMore']!r} is not a boolean")
    return problems


def arguments_for(schema: dict[str, Any]) -> dict[str, Any] | None:
    """Arguments for a tool from its schema's required primitives; None when it needs more."""
    samples = {"string": "checkup", "number": 1, "integer": 1, "boolean": False}
    properties = schema.get("properties") or {}
    arguments: dict[str, Any] = {}
    for name in schema.get("required") or ():
        kind = (properties.get(name) or {}).get("type")
        if kind not in samples:
            return None
        arguments[name] = samples[kind]
    return arguments


def _required_names(tool: dict[str, Any]) -> list[str]:
    schema = tool.get("inputSchema")
    required = schema.get("required") if isinstance(schema, dict) else None
    return [n for n in required if isinstance(n, str)] if isinstance(required, list) else []


class _CallRecord:
    """One allowed tool called with a progress token: what came back, and when."""

    def __init__(self, tool: str) -> None:
        self.tool = tool
        self.ids: list[int] = []
        #: Progress values received for this call's token before it was cancelled.
        self.progress: list[Any] = []
        self.enough = anyio.Event()
        self.started = time.monotonic()
        self.cancelled_at: float | None = None
        #: The id of a ping sent right behind notifications/cancelled.
        self.ping_ids: list[int] = []


class FeatureChecks(CheckupCore):
    """The protocol-feature checks; mixed into the runner's ``_Checkup``."""

    # -- the main session ----------------------------------------------------------------

    async def protocol_features(self, main: ClientSession, listed: dict[str, list[Any]]) -> None:
        """Resources, prompts and completion on the main session, concurrently."""
        declared = main.capabilities.server
        async with anyio.create_task_group() as group:
            for kind, checks, run in (("resources", RESOURCE_CHECKS, self.resources),
                                      ("prompts", PROMPT_CHECKS, self.prompts)):
                if kind in declared and kind in listed:
                    group.start_soon(run, main, listed[kind])
                elif kind in declared:
                    # Declared but its list failed: capabilities.<kind> reports that; the
                    # reason here must not say it was never declared.
                    self.skip(checks, f"the server declares {kind} but its list could not "
                              f"be read (see capabilities.{kind})")
                else:
                    self.skip(checks, f"the server does not declare {kind}")
            group.start_soon(self.completion, main, listed.get("prompts") or [])

    async def resources(self, main: ClientSession, resources: list[Any]) -> None:
        listing = [_entry("main", e) for e in main.transcript
                   if e.direction == "recv" and e.kind == "response" and e.message
                   and isinstance(e.message.get("result"), dict)
                   and "resources" in e.message["result"]][:2]
        problems, readable = [], []
        for resource in resources:
            uri = resource.get("uri") if isinstance(resource, dict) else None
            if not isinstance(uri, str):
                problems.append(f"a resource has no string uri ({resource!r:.80})")
                continue
            if (why := uri_problem(uri)) is not None:
                problems.append(f"{uri!r} {why}")
            else:
                readable.append(uri)
            if "mimeType" in resource and not isinstance(resource["mimeType"], str):
                problems.append(f"{uri!r}: mimeType {resource['mimeType']!r} is not a string")
        self.put("resources.uris", "fail" if problems else "pass",
                 "; ".join(problems[:5]) or f"{len(resources)} resource URI(s) valid", listing)
        async with anyio.create_task_group() as group:
            group.start_soon(self.reads, main, readable[:SAMPLE])
            group.start_soon(self.templates, main)

    async def reads(self, main: ClientSession, uris: list[str]) -> None:
        check = "resources.read"
        if not uris:
            self.skip([check], "no listed resource has a valid URI to read")
            return
        answers: dict[str, Exchange] = {}

        async def read(uri: str) -> None:
            answers[uri] = await self.exchange(main, "main", "resources/read", {"uri": uri})

        async with anyio.create_task_group() as group:
            for uri in uris:
                group.start_soon(read, uri)
        problems, elsewhere, refused, evidence = [], [], [], []
        for uri in uris:
            answer, entries = answers[uri]
            evidence += entries
            if isinstance(answer, ServerError):
                # A listed resource may still be unreadable now (gone, access): not the shape.
                refused.append(f"{uri} answered error {answer.code}")
                continue
            shape, found = _contents_problems(uri, answer)
            problems += shape
            if not shape and not found:
                elsewhere.append(uri)
        if problems:
            self.put(check, "fail", "; ".join(problems[:5]), evidence)
        elif elsewhere:
            self.put(check, "warn", "no content carries the uri read: "
                     + ", ".join(elsewhere[:5]), evidence)
        elif len(refused) == len(uris):
            self.skip([check], "not judged: every read was refused (" + "; ".join(refused) + ")")
        else:
            self.put(check, "pass", f"{len(uris) - len(refused)} resource(s) read, contents "
                     "well-formed under the uri read"
                     + (f" ({'; '.join(refused)})" if refused else ""), evidence)

    async def templates(self, main: ClientSession) -> None:
        check = "resources.templates"
        answer, evidence = await self.exchange(main, "main", "resources/templates/list")
        if isinstance(answer, ServerError) and answer.code == -32601:
            self.skip([check], "the server does not serve resources/templates/list")
            return
        templates = answer.get("resourceTemplates") if isinstance(answer, dict) else None
        if not isinstance(templates, list):
            self.put(check, "fail", f"resources/templates/list: {answer!r:.200} has no "
                     "resourceTemplates array", evidence)
            return
        if not templates:
            self.skip([check], "the server lists no resource templates")
            return
        problems = []
        for template in templates:
            text = template.get("uriTemplate") if isinstance(template, dict) else None
            if not isinstance(text, str):
                problems.append("a template has no string uriTemplate")
            elif (why := template_problem(text)) is not None:
                problems.append(f"{text!r} {why}")
        self.put(check, "fail" if problems else "pass",
                 "; ".join(problems[:5]) or f"{len(templates)} template(s) valid RFC 6570",
                 evidence)

    async def prompts(self, main: ClientSession, prompts: list[Any]) -> None:
        listing = [_entry("main", e) for e in main.transcript
                   if e.direction == "recv" and e.kind == "response" and e.message
                   and isinstance(e.message.get("result"), dict)
                   and "prompts" in e.message["result"]][:2]
        prompts = [p for p in prompts if isinstance(p, dict) and isinstance(p.get("name"), str)]
        problems = [p for prompt in prompts for p in _argument_problems(prompt)]
        if not any("arguments" in p for p in prompts):
            self.skip(["prompts.arguments"], "no prompt declares arguments")
        else:
            self.put("prompts.arguments", "fail" if problems else "pass",
                     "; ".join(problems[:5]) or "every prompt's arguments are well-formed",
                     listing)
        sample = [p for p in prompts if not _argument_problems(p)][:SAMPLE]
        if not sample:
            self.skip(["prompts.get"], "no prompt to get")
            return
        answers: dict[str, Exchange] = {}

        async def get(prompt: dict[str, Any]) -> None:
            arguments = {a["name"]: "checkup" for a in prompt.get("arguments") or ()
                         if a.get("required") is True}
            answers[prompt["name"]] = await self.exchange(
                main, "main", "prompts/get", {"name": prompt["name"], "arguments": arguments})

        async with anyio.create_task_group() as group:
            for prompt in sample:
                group.start_soon(get, prompt)
        problems, refused, evidence = [], [], []
        for name, (answer, entries) in answers.items():
            evidence += entries
            if isinstance(answer, McpError):
                # Invented argument values ("checkup") may be refused: not a violation.
                refused.append(f"{name!r} refused the checkup's arguments ({answer})")
                continue
            problems += _message_problems(name, answer)
        if problems:
            self.put("prompts.get", "fail", "; ".join(problems[:5]), evidence)
        elif len(refused) == len(answers):
            self.skip(["prompts.get"], "not judged: " + "; ".join(refused)[:300])
        else:
            self.put("prompts.get", "pass", f"{len(answers) - len(refused)} prompt(s) got, "
                     "messages well-formed", evidence)

    async def completion(self, main: ClientSession, prompts: list[Any]) -> None:
        declared = "completions" in main.capabilities.server
        ref, argument = await self.completion_target(main, prompts)
        answer, evidence = await self.exchange(
            main, "main", "completion/complete", {"ref": ref, "argument": argument},
            force=not declared)
        check = "capabilities.completions"
        served = isinstance(answer, dict) or (isinstance(answer, ServerError)
                                              and answer.code != -32601)
        if declared:
            self.put(check, "pass" if served else "fail",
                     f"declared, and completion/complete answered "
                     f"{'a result' if isinstance(answer, dict) else answer}", evidence)
        elif isinstance(answer, dict):
            self.put(check, "fail", "completions not declared, yet completion/complete "
                     "answered a result", evidence)
        elif isinstance(answer, ServerError) and answer.code == -32601:
            self.put(check, "pass", "not declared, and completion/complete refused with -32601",
                     evidence)
        else:
            self.put(check, "warn", f"not declared; completion/complete answered {answer} "
                     "(JSON-RPC's code for a method not available is -32601)", evidence)
        if not isinstance(answer, dict):
            self.skip(["completion.result"], f"no completion result to judge ({answer})"[:300])
            return
        problems = _completion_problems(answer)
        self.put("completion.result", "fail" if problems else "pass",
                 "; ".join(problems) or f"completion for {ref} well-formed", evidence)

    async def completion_target(self, main: ClientSession, prompts: list[Any]
                                ) -> tuple[dict[str, Any], dict[str, Any]]:
        """What to complete: a listed prompt's first argument, else a template's variable."""
        for prompt in prompts:
            arguments = prompt.get("arguments") if isinstance(prompt, dict) else None
            if isinstance(arguments, list) and arguments and isinstance(arguments[0], dict):
                return ({"type": "ref/prompt", "name": prompt.get("name")},
                        {"name": arguments[0].get("name"), "value": ""})
        if "resources" in main.capabilities.server:
            answer, _ = await self.exchange(main, "main", "resources/templates/list")
            for template in (answer.get("resourceTemplates") or []
                             if isinstance(answer, dict) else []):
                text = template.get("uriTemplate") if isinstance(template, dict) else None
                if isinstance(text, str) and template_problem(text) is None and (
                        names := template_variables(text)):
                    return {"type": "ref/resource", "uri": text}, {"name": names[0], "value": ""}
        # Nothing listed to complete: the answer still shows whether the method is served.
        return {"type": "ref/prompt", "name": "checkup"}, {"name": "checkup", "value": ""}

    # -- tool calls (only the allowed ones) ----------------------------------------------

    async def tool_calls(self, main: ClientSession, tools: list[Any]) -> None:
        allowed = [t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)
                   and (self.call_all or t["name"] in self.allowed)]
        if not allowed:
            self.skip(TOOL_CALL_CHECKS, "no call allowed (--call-tools)" if not (
                self.call_all or self.allowed) else "no listed tool is among those allowed")
            return
        calls = [(_CallRecord(t["name"]), args) for t in allowed
                 if (args := arguments_for(t.get("inputSchema") or {})) is not None]
        by_token = {}
        foreign: list[dict[str, Any]] = []

        def on_notification(note: Notification) -> None:
            if note.method != "notifications/progress":
                return
            params = note.params or {}
            token = params.get("progressToken")
            record = next((r for r in by_token.values() if r.ids and token == r.ids[0]
                           and type(token) is int), None)
            if record is None:
                foreign.append(params)
            elif record.cancelled_at is None:
                record.progress.append(params.get("progress"))
                if len(record.progress) >= 2:
                    record.enough.set()

        stop = main.on_notification(on_notification)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self.tool_errors, main, allowed, tools)
                for record, arguments in calls:
                    by_token[record.tool] = record
                    group.start_soon(self.call_watching_progress, main, record, arguments)
        finally:
            stop()
        self.judge_progress(main, [r for r, _ in calls], foreign)

    async def tool_errors(self, main: ClientSession, allowed: list[dict[str, Any]],
                          tools: list[Any]) -> None:
        """tools.unknown-tool (a name nobody lists) and tools.input-errors (arguments left out)."""
        names = {t.get("name") for t in tools if isinstance(t, dict)}
        unknown = UNKNOWN_TOOL
        while unknown in names:
            unknown += "-x"
        answer, evidence = await self.exchange(main, "main", "tools/call",
                                               {"name": unknown, "arguments": {}})
        check = "tools.unknown-tool"
        if not evidence:
            # Our own client refused to send it (the server declared no tools, say):
            # nothing reached the server, so there is nothing to judge.
            self.skip([check, "tools.input-errors"], f"tools/call was not sent: {answer}")
            return
        if isinstance(answer, ServerError):
            self.put(check, "pass", f"{unknown!r} refused with error {answer.code}", evidence)
        elif isinstance(answer, dict):
            self.put(check, "fail", f"{unknown!r}, a tool the server does not list, got a "
                     f"result (isError {answer.get('isError')!r}), not a JSON-RPC error",
                     evidence)
        else:
            self.put(check, "fail", f"{unknown!r}: {answer}", evidence)
        check = "tools.input-errors"
        target = next((t for t in allowed if _required_names(t)), None)
        if target is None:
            self.skip([check], "no allowed tool has a required argument to leave out")
            return
        answer, evidence = await self.exchange(main, "main", "tools/call",
                                               {"name": target["name"], "arguments": {}})
        missing = ", ".join(_required_names(target))
        called = f"{target['name']!r} called without its required {missing}"
        if isinstance(answer, dict) and answer.get("isError") is True:
            self.put(check, "pass", f"{called}: a result with isError: true", evidence)
        elif isinstance(answer, dict):
            self.put(check, "fail", f"{called}: a result without isError: true", evidence)
        elif isinstance(answer, ServerError):
            self.put(check, "fail", f"{called}: JSON-RPC error {answer.code}, not a result with "
                     "isError: true (which lets a model correct itself)", evidence)
        else:
            self.put(check, "fail", f"{called}: {answer}", evidence)

    async def call_watching_progress(self, main: ClientSession, record: _CallRecord,
                                     arguments: dict[str, Any]) -> None:
        """Call with a progress token; cancel at the second progress, then watch for an answer."""
        done = anyio.Event()

        async def call() -> None:
            try:
                await main.request("tools/call", {"name": record.tool, "arguments": arguments},
                                   timeout=self.timeout, on_progress=lambda *_: None,
                                   on_sent=record.ids.append)
            except McpError:
                pass  # an error, a timeout or our own cancel: the notifications are judged
            finally:
                done.set()

        async def ping_behind_cancel() -> None:
            # A ping right behind the cancel marks when the server had read it: an answer
            # that arrives before the ping's may have crossed the cancel on the wire, which
            # the spec allows; only one after it is a late answer.
            with contextlib.suppress(McpError):
                await main.request("ping", timeout=self.timeout, on_sent=record.ping_ids.append)

        async def cancel_when_running(outer: anyio.abc.TaskGroup) -> None:
            await record.enough.wait()
            if not done.is_set() and record.ids:
                record.cancelled_at = time.monotonic()
                try:
                    await main.cancel(record.ids[0], "checkup: cancellation check")
                except ValueError:  # answered meanwhile
                    record.cancelled_at = None
                    return
                # In the outer group: our cancel ends the call, which ends this group, and
                # the ping must still get its answer (an abandoned one would be a response
                # to an unknown id).
                outer.start_soon(ping_behind_cancel)

        async with anyio.create_task_group() as outer, anyio.create_task_group() as group:
            group.start_soon(call)
            group.start_soon(cancel_when_running, outer)
            await done.wait()
            group.cancel_scope.cancel()
        if record.cancelled_at is None:
            return
        low, high = CANCEL_WINDOW
        window = min(self.timeout, high, max(low, 2 * (record.cancelled_at - record.started)))
        with anyio.move_on_after(window):
            while not self.answered(main, record.ids[0]):
                await anyio.sleep(0.05)

    @staticmethod
    def answered_after_ping(session: ClientSession, record: _CallRecord) -> bool:
        """Whether the cancelled call's answer arrived after the ping sent behind its cancel
        was answered (or with no ping answer to tell by, at all)."""
        answers = {e.id: e.seq for e in session.transcript
                   if e.direction == "recv" and e.kind in ("response", "error")}
        call = answers.get(record.ids[0])
        if call is None:
            return False
        ping = answers.get(record.ping_ids[0]) if record.ping_ids else None
        return ping is None or call > ping

    @staticmethod
    def answered(session: ClientSession, request_id: int) -> bool:
        return any(e.direction == "recv" and e.id == request_id
                   and e.kind in ("response", "error") for e in session.transcript)

    def judge_progress(self, main: ClientSession, records: list[_CallRecord],
                       foreign: list[dict[str, Any]]) -> None:
        def evidence_of(record: _CallRecord) -> list[dict[str, Any]]:
            token = record.ids[0] if record.ids else None
            return [_entry("main", e) for e in main.transcript
                    if (e.id == token and e.kind in ("request", "response", "error"))
                    or (e.method == "notifications/progress" and e.message
                        and (e.message.get("params") or {}).get("progressToken") == token)][:8]

        reporting = [r for r in records if r.progress]
        problems = []
        for record in reporting:
            values = record.progress
            if not all(_is_number(v) for v in values):
                problems.append((record, f"{record.tool!r}: progress {values!r} not numbers"))
            elif any(b <= a for a, b in itertools.pairwise(values)):
                problems.append((record, f"{record.tool!r}: progress {values!r} does not "
                                 "increase with each notification"))
        if foreign:
            problems.append((None, f"progress for token(s) "
                             f"{sorted({repr(p.get('progressToken')) for p in foreign})} that no "
                             "call of the checkup carried"))
        if problems:
            evidence = [e for r, _ in problems if r is not None for e in evidence_of(r)]
            evidence += [{"session": "main", "finding": "progress-unknown-token", "message": p}
                         for p in foreign[:3]]
            self.put("tools.progress", "fail", "; ".join(p for _, p in problems), evidence)
        elif reporting:
            self.put("tools.progress", "pass", "; ".join(
                f"{r.tool!r}: {len(r.progress)} notification(s) under its token, increasing"
                for r in reporting), [e for r in reporting for e in evidence_of(r)])
        else:
            self.skip(["tools.progress"], "no allowed tool reported progress when called with "
                      "a progressToken")
        cancelled = [r for r in records if r.cancelled_at is not None]
        if not cancelled:
            self.skip(["tools.cancellation"], "no allowed call was still running (reporting "
                      "progress) to be cancelled")
            return
        if main.era is Era.STATELESS and main.transport.kind != "stdio":
            # 2026-07-28 basic/patterns/cancellation: over Streamable HTTP "closing the SSE
            # response stream is the cancellation signal", and our client closes it; an
            # answer read before the close is the race the spec allows, and none can come
            # after it. There is no notification whose handling could be judged.
            self.skip(["tools.cancellation"], "stateless era over Streamable HTTP: the client "
                      "cancels by closing the request's response stream, so no answer can "
                      "follow the cancel (nothing for the server to get wrong)")
            return
        late = [r for r in cancelled if self.answered_after_ping(main, r)]
        crossed = [r for r in cancelled if r not in late and self.answered(main, r.ids[0])]
        if late:
            self.put("tools.cancellation", "fail", "; ".join(
                f"{r.tool!r} answered after notifications/cancelled (and after a ping sent "
                "behind it was answered)" for r in late),
                [e for r in late for e in evidence_of(r)])
        elif crossed == cancelled:
            self.skip(["tools.cancellation"], "; ".join(
                f"{r.tool!r} answered before a ping sent behind the cancel was: the answer "
                "crossed the cancel on the wire, which the spec allows" for r in crossed))
        else:
            self.put("tools.cancellation", "pass", "; ".join(
                f"{r.tool!r} cancelled at its second progress: no answer followed"
                for r in cancelled if r not in crossed),
                [e for r in cancelled if r not in crossed for e in evidence_of(r)])

    # -- a handshake-era session ---------------------------------------------------------

    async def handshake_features(self, session: ClientSession, name: str) -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(self.logging, session, name)
            group.start_soon(self.subscribe, session, name)
            group.start_soon(self.batch, session, name)

    async def logging(self, session: ClientSession, name: str) -> None:
        check = "capabilities.logging"
        if "logging" not in session.capabilities.server:
            self.skip(["logging.invalid-level"], "the server does not declare logging")
            answer, evidence = await self.exchange(session, name, "logging/setLevel",
                                                   {"level": "info"}, force=True)
            logs = [_entry(name, e) for e in session.transcript
                    if e.direction == "recv" and e.method == LOG_NOTIFICATION][:3]
            if logs:
                self.put(check, "fail", "logging not declared, yet notifications/message "
                         "arrived", logs + evidence)
            elif isinstance(answer, dict):
                self.put(check, "fail", "logging not declared, yet logging/setLevel answered "
                         "a result", evidence)
            elif isinstance(answer, ServerError) and answer.code == -32601:
                self.put(check, "pass", "not declared, and logging/setLevel refused with "
                         "-32601", evidence)
            else:
                self.put(check, "warn", f"not declared; logging/setLevel answered {answer} "
                         "(JSON-RPC's code for a method not available is -32601)", evidence)
            return
        refused, evidence = [], []
        previous = [e.message["params"].get("level") for e in session.transcript
                    if e.direction == "send" and e.method == "logging/setLevel" and e.message
                    and isinstance(e.message.get("params"), dict)]
        # From the most severe down, so the session ends up hearing everything rather than
        # nothing; an open session gets back the level it had set, if it had.
        for level in reversed(LOG_LEVELS):
            answer, entries = await self.exchange(session, name, "logging/setLevel",
                                                  {"level": level})
            evidence += entries
            if not isinstance(answer, dict):
                refused.append(f"{level}: {answer}")
        self.put(check, "fail" if refused else "pass",
                 "declared, yet logging/setLevel refused " + "; ".join(refused) if refused else
                 f"declared, and logging/setLevel accepted all {len(LOG_LEVELS)} levels",
                 evidence)
        answer, evidence = await self.exchange(session, name, "logging/setLevel",
                                               {"level": INVALID_LEVEL})
        check = "logging.invalid-level"
        if isinstance(answer, ServerError) and answer.code == -32602:
            self.put(check, "pass", f"level {INVALID_LEVEL!r} refused with -32602", evidence)
        elif isinstance(answer, ServerError):
            self.put(check, "warn", f"level {INVALID_LEVEL!r} refused with {answer.code}, not "
                     "-32602", evidence)
        else:
            self.put(check, "warn", f"level {INVALID_LEVEL!r}: "
                     f"{'accepted' if isinstance(answer, dict) else answer}", evidence)
        if previous and previous[-1] in LOG_LEVELS:
            await self.exchange(session, name, "logging/setLevel", {"level": previous[-1]})

    async def subscribe(self, session: ClientSession, name: str) -> None:
        check = "resources.subscribe"
        declared = session.capabilities.server.get("resources")
        if not (isinstance(declared, dict) and declared.get("subscribe") is True):
            self.skip([check], "the server does not declare resources.subscribe")
            return
        answer, _ = await self.exchange(session, name, "resources/list")
        uris = [r.get("uri") for r in (answer.get("resources") or [] if isinstance(answer, dict)
                                       else []) if isinstance(r, dict)]
        uri = next((u for u in uris if isinstance(u, str) and uri_problem(u) is None), None)
        if uri is None:
            self.skip([check], "no listed resource with a valid URI to subscribe to")
            return
        subscribed, evidence = await self.exchange(session, name, "resources/subscribe",
                                                   {"uri": uri})
        ended, entries = await self.exchange(session, name, "resources/unsubscribe",
                                             {"uri": uri})
        evidence += entries
        problems = [f"resources/{method} {uri}: {answer}" for method, answer in
                    (("subscribe", subscribed), ("unsubscribe", ended))
                    if not isinstance(answer, dict)]
        self.put(check, "fail" if problems else "pass",
                 "; ".join(problems) or f"subscribed to {uri} and unsubscribed", evidence)

    async def batch(self, session: ClientSession, name: str) -> None:
        check = "jsonrpc.batch"
        if session.transport.kind != "stdio":
            self.skip([check], "not stdio: over Streamable HTTP a POSTed batch is the "
                      "transport's rule (not checked here)")
            return
        version = session.negotiated_version or ""
        if version < "2025-06-18":
            self.skip([check], f"negotiated {version}: batches were allowed before 2025-06-18")
            return
        start = session.transcript.next_seq

        async def send_batch() -> None:
            with contextlib.suppress(McpError):  # judged from the transcript
                await session.send_raw(BATCH, timeout=self.timeout)

        async with anyio.create_task_group() as group:
            group.start_soon(send_batch)
            # The ping after the batch marks "the server has read past it": whatever it says
            # to the batch has been said a moment after the ping's answer.
            await anyio.sleep(0)
            await self.exchange(session, name, "ping")
            await anyio.sleep(BATCH_SETTLE)
            group.cancel_scope.cancel()
        # The batch sent, and what came back that answers no request of ours: the array
        # (recorded as an invalid frame) or an error whose id is null or the batch's.
        relevant = [e for e in session.transcript.since(start)
                    if (e.direction == "send" and e.kind == "batch")
                    or (e.direction == "recv" and (e.kind == "invalid" or (
                        e.kind == "error" and e.id in (None, "checkup-batch"))))]
        evidence = [{**_entry(name, e), "text": e.text} if e.message is None
                    else _entry(name, e) for e in relevant]
        arrays = [f for f in session.findings if f.rule.id == "batch-not-allowed"
                  and f.side == "server"]
        if arrays:
            self.put(check, "fail", f"a batch sent at {version} was answered with a JSON array "
                     "(not an MCP message since 2025-06-18)", evidence)
            return
        codes = [e["message"]["error"].get("code") for e in evidence
                 if e["message"] and isinstance(e["message"].get("error"), dict)]
        self.put(check, "pass", "the batch was " + (f"refused with error {codes[0]}" if codes
                                                     else "not answered"), evidence)
