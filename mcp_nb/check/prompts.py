"""The checkup's prompts and completion checks on the main session.

``prompts.arguments`` judges the arguments ``prompts/list`` declared,
``prompts.get`` gets a sample of the prompts (side-effect free by the spec, but a
server may do I/O to build one: ``prompts_get=False`` turns it off) with inert
invented values (:data:`~mcp_nb.check.sent.SAMPLE_VALUE`) for their required
arguments, and ``completion/complete`` is sent once, for a listed prompt's first
argument or else a resource template's first variable (unless ``template_reads``
is off: nothing built from a template is sent): ``capabilities.completions`` and
``capabilities.completions-served`` judge both directions of the capability (it is
sent even when not declared, to see it refused), ``completion.result`` the shape of
what came back.

Example (what the feature phase does with it)::

    await self.prompts(main, listed["prompts"])
    await self.completion(main, listed["prompts"])
"""

from __future__ import annotations

from typing import Any

import anyio

from ..client import ClientSession
from ..i18n import _
from ..protocol.errors import McpError
from .lists import capability_verdicts
from .model import transcript_evidence as _entry
from .recorder import SAMPLE, CheckupCore, Exchange
from .sent import SAMPLE_VALUE
from .shapes import argument_problems, completion_problems, message_problems
from .uris import template_problem, template_variables

PROMPT_CHECKS = ("prompts.arguments", "prompts.get")
#: What the completion request decides (both directions of its capability, and the result).
COMPLETION_CHECKS = ("capabilities.completions", "capabilities.completions-served",
                     "completion.result")


class PromptChecks(CheckupCore):
    """prompts.arguments, prompts.get, capabilities.completions (both directions) and
    completion.result."""

    async def prompts(self, main: ClientSession, prompts: list[Any]) -> None:
        listing = [_entry("main", e) for e in main.transcript
                   if e.direction == "recv" and e.kind == "response" and e.message
                   and isinstance(e.message.get("result"), dict)
                   and "prompts" in e.message["result"]][:2]
        prompts = [p for p in prompts if isinstance(p, dict) and isinstance(p.get("name"), str)]
        problems = [p for prompt in prompts for p in argument_problems(prompt)]
        if not any("arguments" in p for p in prompts):
            self.skip(["prompts.arguments"], _("no prompt declares arguments"))
        else:
            self.put("prompts.arguments", "fail" if problems else "pass",
                     "; ".join(problems[:5]) or _("every prompt's arguments are well-formed"),
                     listing)
        sample = [p for p in prompts if not argument_problems(p)][:SAMPLE]
        if not self.prompts_get:
            self.skip(["prompts.get"], _("prompts/get not sent: turned off (--no-prompts-get)"))
            return
        if not sample:
            self.skip(["prompts.get"], _("no prompt to get"))
            return
        answers: dict[str, Exchange] = {}

        async def get(prompt: dict[str, Any]) -> None:
            arguments = {a["name"]: SAMPLE_VALUE for a in prompt.get("arguments") or ()
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
                # Invented argument values (SAMPLE_VALUE) may be refused: not a violation.
                refused.append(_("{name} refused the checkup's arguments ({error})").format(
                    name=repr(name), error=answer))
                continue
            problems += message_problems(name, answer)
        if problems:
            self.put("prompts.get", "fail", "; ".join(problems[:5]), evidence)
        elif len(refused) == len(answers):
            self.skip(["prompts.get"], _("not judged: {why}").format(
                why="; ".join(refused)[:300]))
        else:
            self.put("prompts.get", "pass", _("{count} prompt(s) got, "
                     "messages well-formed").format(count=len(answers) - len(refused)), evidence)

    async def completion(self, main: ClientSession, prompts: list[Any]) -> None:
        declared = "completions" in main.capabilities.server
        ref, argument = await self.completion_target(main, prompts)
        answer, evidence = await self.exchange(
            main, "main", "completion/complete", {"ref": ref, "argument": argument},
            force=not declared)
        capability_verdicts(self, "completions", "completion/complete", declared, answer,
                            evidence, served_errors=True)
        if not isinstance(answer, dict):
            self.skip(["completion.result"], _("no completion result to judge ({error})").format(
                error=answer)[:300])
            return
        problems = completion_problems(answer)
        self.put("completion.result", "fail" if problems else "pass",
                 "; ".join(problems) or _("completion for {ref} well-formed").format(ref=ref),
                 evidence)

    async def completion_target(self, main: ClientSession, prompts: list[Any]
                                ) -> tuple[dict[str, Any], dict[str, Any]]:
        """What to complete: a listed prompt's first argument, else a template's variable."""
        for prompt in prompts:
            arguments = prompt.get("arguments") if isinstance(prompt, dict) else None
            if isinstance(arguments, list) and arguments and isinstance(arguments[0], dict):
                return ({"type": "ref/prompt", "name": prompt.get("name")},
                        {"name": arguments[0].get("name"), "value": ""})
        if "resources" in main.capabilities.server and self.template_reads:
            answer, _entries = await self.exchange(main, "main", "resources/templates/list")
            for template in (answer.get("resourceTemplates") or []
                             if isinstance(answer, dict) else []):
                text = template.get("uriTemplate") if isinstance(template, dict) else None
                if isinstance(text, str) and template_problem(text) is None and (
                        names := template_variables(text)):
                    return {"type": "ref/resource", "uri": text}, {"name": names[0], "value": ""}
        # Nothing listed to complete: the answer still shows whether the method is served.
        return ({"type": "ref/prompt", "name": SAMPLE_VALUE},
                {"name": SAMPLE_VALUE, "value": ""})

