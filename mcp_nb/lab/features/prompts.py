"""Prompts and completion: prompts/list, prompts/get, completion/complete."""

from __future__ import annotations

from typing import ClassVar

from mcp_nb.lab.content import BONUS, BONUS_TEXT, ECHO_TEMPLATE, GREET, GREET_STYLES
from mcp_nb.lab.features.base import BOTH_ERAS, Routes, SessionBase
from mcp_nb.lab.rpc import Message, Request, RpcError, refuse_cursor, required_field
from mcp_nb.protocol.errors import INVALID_PARAMS


class Prompts(SessionBase):
    """The greet prompt (and the bonus), and completion of their arguments."""

    ROUTES: ClassVar[Routes] = {
        "prompts/list": ("_prompts_list", BOTH_ERAS),
        "prompts/get": ("_prompts_get", BOTH_ERAS),
        "completion/complete": ("_complete", BOTH_ERAS),
    }

    async def _prompts_list(self, request: Request) -> Message:
        refuse_cursor(request)
        bonus = [self.catalogue.bonus.prompt] if self._bonus else []
        prompts = [*self.catalogue.prompts, *bonus]
        if self.faults.breaks("bad-prompt-arguments"):  # PromptArgument.required is a boolean
            prompts = [{**p, "arguments": [{**a, "required": "yes"} for a in p["arguments"]]}
                       if "arguments" in p else p for p in prompts]
        return {"prompts": prompts}

    async def _prompts_get(self, request: Request) -> Message:
        name = request.param("name", str)
        if name == BONUS and self._bonus:
            return {"messages": [{"role": "user", "content": {"type": "text",
                                                               "text": BONUS_TEXT}}]}
        if name != GREET:
            raise RpcError(INVALID_PARAMS, f"Unknown prompt: {name}")
        arguments = request.params.get("arguments", {})
        if not isinstance(arguments, dict):
            raise RpcError(
                INVALID_PARAMS, "Invalid params: prompts/get arguments must be an object"
            )
        who = arguments.get("name")
        if not isinstance(who, str) or not who:
            raise RpcError(INVALID_PARAMS, "Missing required argument: name")
        style = arguments.get("style", "casual")
        if style not in GREET_STYLES:
            raise RpcError(
                INVALID_PARAMS,
                f"Invalid argument style={style!r}: expected one of {', '.join(GREET_STYLES)}",
            )
        return {
            "description": f"A {style} greeting for {who}",
            "messages": [
                {
                    # Role is "user" or "assistant": "system" is a common mix-up.
                    "role": "system" if self.faults.breaks("bad-prompt-role") else "user",
                    "content": {
                        "type": "text",
                        "text": f"Please write a {style} greeting for {who}.",
                    },
                }
            ],
        }

    async def _complete(self, request: Request) -> Message:
        ref = request.param("ref", dict)
        argument = request.param("argument", dict)
        where = "completion/complete params.argument"
        name = required_field(argument, "name", str, where)
        prefix = required_field(argument, "value", str, where)
        kind = required_field(ref, "type", str, "completion/complete params.ref")
        if kind == "ref/prompt" and ref.get("name") == GREET:
            candidates = GREET_STYLES if name == "style" else ()
        elif kind == "ref/resource" and ref.get("uri") == ECHO_TEMPLATE:
            candidates = ()  # free text: nothing sensible to suggest
        else:
            raise RpcError(INVALID_PARAMS, f"Invalid params: nothing to complete for {ref!r}")
        values = [value for value in candidates if value.startswith(prefix)]
        total: int | str = len(values)
        if self.faults.breaks("bad-completion"):  # completion.total is a number
            total = str(total)
        return {"completion": {"values": values, "total": total, "hasMore": False}}
