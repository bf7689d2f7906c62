"""The checkup's capability and list checks on the main session.

Each of ``tools/list``, ``resources/list`` and ``prompts/list`` is sent once,
concurrently, declared or not (``capabilities.*``: a server that answers a list
MUST have declared it; ``capabilities.*-served``: a declared list is answered);
every ``nextCursor`` is followed (``lists.pagination``).
What the lists hold is what the feature areas then judge.  ``lists.list-changed``
is judged at the end, over every session the checkup opened.

Example (what the feature phase does with it)::

    listed = await self.capability_lists(main)   # {"tools": [...], "prompts": [...]}
"""

from __future__ import annotations

from typing import Any

import anyio

from ..client import ClientSession
from ..client.errors import ServerError
from ..i18n import _
from .model import transcript_evidence as _entry
from .recorder import CheckupCore, Recorder

#: Each listing capability: the method that lists it, and the key of the result's items.
LISTS = {"tools": ("tools/list", "tools"), "resources": ("resources/list", "resources"),
         "prompts": ("prompts/list", "prompts")}
#: Pages followed at most per list (a server that always hands out a new cursor never ends).
MAX_PAGES = 50


def capability_verdicts(recorder: Recorder, kind: str, method: str, declared: bool, answer: Any,
                        evidence: list[dict[str, Any]], *, strict: bool = True,
                        served_errors: bool = False) -> None:
    """Both directions of a capability, from one request of its method (forced when not
    declared): ``capabilities.<kind>`` (a server that answers it supports it, so MUST have
    declared it) and ``capabilities.<kind>-served`` (declared, so it is answered).

    ``strict``: the session speaks the revision whose MUST the served check cites (else a
    refusal only warns); ``served_errors``: an error other than -32601 still shows the method
    is served (completion/complete refusing a made-up reference).
    """
    must, served = f"capabilities.{kind}", f"capabilities.{kind}-served"
    code = answer.code if isinstance(answer, ServerError) else None
    answered = isinstance(answer, dict) or (served_errors and code not in (None, -32601))
    said = _("a result") if isinstance(answer, dict) else (
        _("error {code}").format(code=code) if code is not None
        else _("no answer ({error})").format(error=answer))
    if answered:
        if declared:
            recorder.put(must, "pass", _("declared, and {method} got {said}").format(
                method=method, said=said), evidence)
        else:
            recorder.put(must, "fail", _("{kind} not declared, yet {method} got {said}").format(
                kind=kind, method=method, said=said), evidence)
    elif declared:
        recorder.skip([must], _("{method} got {said}: nothing is served beyond what is "
                                "declared (see {check})").format(method=method, said=said,
                                                                 check=served))
    elif code == -32601 or code is None:
        recorder.put(must, "pass", _("not declared, and {method} got {said}").format(
            method=method, said=said), evidence)
    else:
        recorder.put(must, "warn", _(
            "not declared; {method} refused with {code} (JSON-RPC's code for a method not "
            "available is -32601)").format(method=method, code=code), evidence)
    if not declared:
        recorder.skip([served], _("{kind} not declared").format(kind=kind))
    elif answered:
        recorder.put(served, "pass", _("declared, and {method} got {said}").format(
            method=method, said=said), evidence)
    else:
        detail = _("{kind} declared, yet {method} got {said}").format(
            kind=kind, method=method, said=said)
        if not strict:
            detail += _(" (a MUST of 2026-07-28; the revision this session speaks has no such "
                        "sentence, so it only warns)")
        recorder.put(served, "fail" if strict else "warn", detail, evidence)


class ListChecks(CheckupCore):
    """capabilities.tools, capabilities.resources, capabilities.prompts (each with its
    ``-served`` direction), lists.pagination and lists.list-changed."""

    async def capability_lists(self, main: ClientSession) -> dict[str, list[dict[str, Any]]]:
        """Each list the server answers, every page of it, by capability."""
        listed: dict[str, list[dict[str, Any]]] = {}
        pages: list[tuple[str, str, list[dict[str, Any]]]] = []

        async def one(capability: str) -> None:
            method, key = LISTS[capability]
            declared = capability in main.capabilities.server
            answer, evidence = await self.exchange(main, "main", method, force=not declared)
            capability_verdicts(self, capability, method, declared, answer, evidence,
                                strict=(main.negotiated_version or "") >= "2026-07-28")
            if isinstance(answer, dict):
                items = answer.get(key) if isinstance(answer.get(key), list) else []
                listed[capability] = list(items)
                await self.paginate(main, method, key, answer, listed[capability], pages)

        async with anyio.create_task_group() as group:
            for capability in LISTS:
                group.start_soon(one, capability)
        self.pagination(pages)
        return listed

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
                pages.append((method, _("nextCursor {cursor} is not a new string").format(
                    cursor=repr(cursor)), []))
                return
            seen.add(cursor)
            answer, evidence = await self.exchange(main, "main", method, {"cursor": cursor})
            if not isinstance(answer, dict):
                pages.append((method, _("the cursor it handed out was refused: {error}").format(
                    error=answer), evidence))
                return
            pages.append((method, "", evidence))
            if isinstance(answer.get(key), list):
                items.extend(answer[key])

    def pagination(self, pages: list[tuple[str, str, list[dict[str, Any]]]]) -> None:
        check = "lists.pagination"
        if not pages:
            self.skip([check], _("no list handed out a nextCursor"))
            return
        problems = [(m, p, e) for m, p, e in pages if p]
        evidence = [entry for _, _, e in (problems or pages)[:4] for entry in e]
        if problems:
            self.put(check, "fail", "; ".join(f"{m}: {p}" for m, p, _ in problems), evidence)
        else:
            self.put(check, "pass", _("{count} further page(s) fetched by cursor").format(
                count=len(pages)), evidence)

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
            self.put(check, "pass", _("{count} list_changed notification(s), each for a list "
                     "declared listChanged").format(count=len(seen)), seen[:5])
            return
        declared = sorted({kind for _, s in self.sessions for kind in LISTS
                           if s.capabilities.list_changed(kind)})
        self.skip([check], _("declared listChanged for {lists}, but no list "
                            "changed while the checkup ran: a list changes when the server's "
                            "state does (a tool call, say), which the checkup does not provoke"
                             ).format(lists=", ".join(declared))
                  if declared else _("no list is declared listChanged and none was announced"))

