"""The checkup's tools checks on what ``tools/list`` gave: names, schemas and annotations.

``tools.names``, ``tools.input-schema`` and ``tools.annotations`` judge the listing
alone; ``tools.output-schema`` judges each ``outputSchema`` and, for the tools the
user allowed, whether a call's ``structuredContent`` conforms to it.  The calls
themselves (errors, progress, cancellation) follow (:mod:`~mcp_nb.check.tool_calls`).

Example (what the feature phase does with it)::

    await self.tools(main, listed["tools"])
    self.results["tools.names"].outcome   # 'pass': every name follows the naming rules
"""

from __future__ import annotations

import re
from typing import Any

from ..client import ClientSession
from ..i18n import _
from ..lazy_jsonschema import jsonschema
from .model import transcript_evidence as _entry
from .shapes import conformance_problem, object_type_problem, schema_problem
from .tool_calls import TOOL_CALL_CHECKS, ToolCallChecks, arguments_for

#: The naming rule (2025-11-25): 1 to 128 ASCII letters, digits, ``_``, ``-`` and ``.``.
TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
#: The ToolAnnotations hints: each a boolean when present.
HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
#: The checks a server that lists no tools makes not applicable (with TOOL_CALL_CHECKS).
TOOL_LIST_CHECKS = ("tools.names", "tools.input-schema", "tools.output-schema",
                    "tools.output-schema-type", "tools.annotations")


class ToolChecks(ToolCallChecks):
    """tools.names, tools.input-schema, tools.annotations and tools.output-schema, then the
    calls of the allowed tools."""

    async def tools(self, main: ClientSession, tools: list[dict[str, Any]]) -> None:
        listing = [e for e in main.transcript if e.direction == "recv" and e.kind == "response"
                   and e.message and isinstance(e.message.get("result"), dict)
                   and "tools" in e.message["result"]]
        evidence = [_entry("main", e) for e in listing[:2]]
        junk = [t for t in tools if not isinstance(t, dict)]
        tools = [t for t in tools if isinstance(t, dict)]
        if not tools and not junk:
            self.skip(TOOL_LIST_CHECKS, _("tools/list answered no tools"))
            await self.tool_calls(main, tools)
            return
        names = [t.get("name") for t in tools]
        bad = [n for n in names if not isinstance(n, str) or not TOOL_NAME.fullmatch(n)]
        dupes = sorted({n for n in names if isinstance(n, str) and names.count(n) > 1})
        if bad or dupes or junk:
            self.put("tools.names", "fail", "; ".join(
                [_("a listed tool is {kind}, not an object").format(kind=type(t).__name__)
                 for t in junk[:5]]
                + [_("name {name} breaks the naming rules").format(name=repr(n)) for n in bad[:5]]
                + [_("name {name} is not unique").format(name=repr(n)) for n in dupes[:5]]),
                evidence)
        else:
            self.put("tools.names", "pass", _("{count} tool name(s) follow the rules").format(
                count=len(names)), evidence)
        problems = [f"{t.get('name')!r}: inputSchema {p}" for t in tools
                    if (p := schema_problem(t.get("inputSchema")))]
        # "MUST be a valid JSON Schema object": a type other than "object" is the schema's
        # (Tool.inputSchema.type: "object"), no sentence's, so on its own it only warns.
        typed = [t for t in tools if isinstance(t.get("inputSchema"), dict)
                 and t["inputSchema"].get("type") != "object"]
        self.put("tools.input-schema", "warn" if len(problems) == len(typed) and typed else
                 "fail" if problems else "pass",
                 "; ".join(problems[:5]) + (_(" (type \"object\" is the schema's)") if typed
                                            else "")
                 or _("{count} inputSchema(s) valid").format(count=len(tools)), evidence)
        annotated = [t for t in tools if "annotations" in t]
        if not annotated:
            self.skip(["tools.annotations"], _("no tool has annotations"))
        else:
            problems = []
            for tool in annotated:
                notes = tool["annotations"]
                if not isinstance(notes, dict):
                    problems.append(_("{tool}: annotations is not an object").format(
                        tool=repr(tool.get("name"))))
                    continue
                problems += [_("{tool}: {hint} is not a boolean").format(
                                 tool=repr(tool.get("name")), hint=hint) for hint in HINTS
                             if hint in notes and not isinstance(notes[hint], bool)]
                if "title" in notes and not isinstance(notes["title"], str):
                    problems.append(_("{tool}: title is not a string").format(
                        tool=repr(tool.get("name"))))
            self.put("tools.annotations", "fail" if problems else "pass",
                     "; ".join(problems[:5]) or _("{count} tool(s) annotated well").format(
                         count=len(annotated)),
                     evidence)
        await self.guarded(("tools.output-schema",), self.output_schemas, main, tools, evidence)
        await self.guarded(TOOL_CALL_CHECKS, self.tool_calls, main, tools)

    async def output_schemas(self, main: ClientSession, tools: list[dict[str, Any]],
                             evidence: list[dict[str, Any]]) -> None:
        check = "tools.output-schema"
        typed = [t for t in tools if "outputSchema" in t]
        if not typed:
            self.skip([check, "tools.output-schema-type"], _("no tool declares an outputSchema"))
            return
        # Valid JSON Schema is basic's MUST; type "object" is the schema's (only warns).
        problems = [f"{t.get('name')!r}: outputSchema {p}" for t in typed
                    if (p := schema_problem(t.get("outputSchema"), object_type=False))]
        shapes = [f"{t.get('name')!r}: outputSchema {p}" for t in typed
                  if not schema_problem(t.get("outputSchema"), object_type=False)
                  and (p := object_type_problem(t.get("outputSchema")))]
        if shapes:
            self.put("tools.output-schema-type", "fail", "; ".join(shapes[:5]), evidence)
        elif problems:
            self.skip(["tools.output-schema-type"], _("no outputSchema is valid JSON Schema to "
                      "judge the type of (see tools.output-schema)"))
        else:
            self.put("tools.output-schema-type", "pass",
                     _("{count} outputSchema(s) of type \"object\"").format(count=len(typed)),
                     evidence)
        if problems:
            self.put(check, "fail", "; ".join(problems[:5]), evidence)
            return
        callable_ = [t for t in typed if isinstance(t.get("name"), str)
                     and (self.call_all or t["name"] in self.allowed)]
        notes: list[str] = []
        calls: list[dict[str, Any]] = []
        compared = 0
        for tool in callable_:
            arguments = arguments_for(tool.get("inputSchema") or {})
            if arguments is None:
                notes.append(_("{tool} not called: needs arguments the checkup "
                             "cannot invent").format(tool=repr(tool["name"])))
                continue
            answer, entries = await self.exchange(main, "main", "tools/call",
                                                  {"name": tool["name"], "arguments": arguments})
            calls += entries
            if not isinstance(answer, dict) or answer.get("isError"):
                failure = (_("error {error}").format(error=answer) if not isinstance(answer, dict)
                           else _("a result with isError: true"))
                notes.append(_("{tool} called, but it answered {failure}, so "
                             "nothing to compare").format(tool=repr(tool["name"]),
                                                          failure=failure[:160]))
                continue
            structured = answer.get("structuredContent")
            if structured is None:
                problems.append(_("{tool} returned no structuredContent").format(
                    tool=repr(tool["name"])))
                continue
            compared += 1
            schema = tool["outputSchema"]
            schemas = jsonschema()
            from referencing.exceptions import Unresolvable  # jsonschema's, imported by it

            validator = schemas.validators.validator_for(
                schema, default=schemas.Draft202012Validator)(schema)
            try:
                error = next(iter(validator.iter_errors(structured)), None)
            except (Unresolvable, RecursionError) as exc:
                # A $ref that resolves nowhere, or one that loops: the schema's fault.
                problems.append(_("{tool}: outputSchema cannot be applied: "
                                "{error}").format(tool=repr(tool["name"]),
                                                  error=f"{type(exc).__name__}: {str(exc)[:200]}"))
                continue
            if error is not None:
                problems.append(_("{tool}: structuredContent does not conform: "
                                "{error}").format(tool=repr(tool["name"]),
                                                  error=conformance_problem(error)))
        if problems:
            self.put(check, "fail", "; ".join(problems[:5]), calls or evidence)
        elif calls and not compared:
            # Called, but no call gave a result to compare: nothing conformed or failed to.
            self.skip([check], _("{count} outputSchema(s) valid, but no structuredContent "
                      "was compared: {notes}").format(count=len(typed), notes="; ".join(notes)))
        elif calls:
            self.put(check, "pass", _("schemas valid; structuredContent of {count} call(s) "
                     "conforms").format(count=compared)
                     + (f" ({'; '.join(notes)})" if notes else ""), calls)
        else:
            self.put(check, "pass", _("{count} outputSchema(s) valid; structuredContent "
                     "not checked: {why}").format(count=len(typed), why="; ".join(notes) if notes
                                                  else _("no call allowed (--call-tools)")),
                     evidence)

