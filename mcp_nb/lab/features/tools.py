"""Tools: tools/list, tools/call, argument checking, and the lab's own tools."""

from __future__ import annotations

import asyncio
import json
import operator
from collections.abc import Callable, Coroutine
from typing import Any, ClassVar

from mcp_nb.lab.content import BONUS, BONUS_TEXT, COUNTER_URI, ToolSpec
from mcp_nb.lab.features.base import BOTH_ERAS, Routes, SessionBase
from mcp_nb.lab.rpc import Message, Request, RpcError, ToolFailure, diag, refuse_cursor
from mcp_nb.protocol.errors import INVALID_PARAMS

ToolHandler = Callable[[dict[str, Any], Request], Coroutine[Any, Any, Message]]

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
}
_BOUNDS = (("minimum", operator.lt, ">="), ("maximum", operator.gt, "<="))


def check_arguments(schema: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Validate tool arguments against the (flat) input schemas of this catalogue.

    Returns the arguments with defaults filled in.  Failures become tool errors
    (``isError``), as the 2025-11-25 revision recommends, so a model can retry.
    """
    properties: dict[str, Any] = schema["properties"]
    unexpected = sorted(set(arguments) - set(properties))
    if unexpected:
        raise ToolFailure(f"Unexpected argument(s): {', '.join(unexpected)}")
    missing = [name for name in schema["required"] if name not in arguments]
    if missing:
        raise ToolFailure(f"Missing required argument(s): {', '.join(missing)}")
    checked: dict[str, Any] = {}
    for name, prop in properties.items():
        if name not in arguments and "default" not in prop:
            continue
        value = arguments.get(name, prop.get("default"))
        kind = prop["type"]
        # bool subclasses int in Python, but true and false are not JSON numbers.
        if isinstance(value, bool) or not isinstance(value, _JSON_TYPES[kind]):
            raise ToolFailure(f"Argument {name!r} must be of type {kind}, got {json.dumps(value)}")
        for keyword, breaks, relation in _BOUNDS:
            if keyword in prop and breaks(value, prop[keyword]):
                raise ToolFailure(f"Argument {name!r} must be {relation} {prop[keyword]}")
        checked[name] = value
    return checked


class Tools(SessionBase):
    """The lab's tools; those that ask the client something use :mod:`.client_requests`."""

    ROUTES: ClassVar[Routes] = {
        "tools/list": ("_tools_list", BOTH_ERAS),
        "tools/call": ("_tools_call", BOTH_ERAS),
    }

    def _tool_handlers(self) -> dict[str, ToolHandler]:
        """The handler each :class:`ToolSpec` names, by that name."""
        return {
            "echo": self._tool_echo,
            "add": self._tool_add,
            "slow": self._tool_slow,
            "ask_llm": self._tool_ask_llm,
            "ask_user": self._tool_ask_user,
            "list_roots": self._tool_list_roots,
            "bump": self._tool_bump,
            "toggle_bonus": self._tool_toggle_bonus,
            BONUS: self._tool_bonus,
        }

    def _tool_specs(self) -> list[ToolSpec]:
        """The tools on offer right now (the bonus tool comes and goes)."""
        bonus = [self.catalogue.bonus.tool] if self._bonus else []
        return [*self.catalogue.tools.values(), *bonus]

    async def _tools_list(self, request: Request) -> Message:
        refuse_cursor(request)
        return {"tools": [tool.listing() for tool in self._tool_specs()]}

    async def _tools_call(self, request: Request) -> Message:
        name = request.param("name", str)
        arguments = request.params.get("arguments", {})
        if not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, "Invalid params: tools/call arguments must be an object")
        tool = self.catalogue.tools.get(name)
        if tool is None and self._bonus and name == BONUS:
            tool = self.catalogue.bonus.tool
        if tool is None and self.faults.breaks("unknown-tool-result"):
            return self.tool_result(f"Unknown tool: {name}", is_error=True)
        if tool is None:
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        if request.stateless and tool.asks is not None:
            # Checked before anything is sent, so over HTTP the refusal is still a plain 400.
            self.require_capability(request, tool.asks)
        self.log(request, "info", f"{tool.handler} called")
        self.log(request, "debug", {"tool": tool.handler, "arguments": arguments})
        try:
            return await self._tool_handlers()[tool.handler](
                check_arguments(tool.input_schema, arguments), request
            )
        except ToolFailure as exc:
            if self.faults.breaks("arguments-as-protocol-error"):
                raise RpcError(INVALID_PARAMS, f"Invalid params: {exc}") from None
            return self.tool_result(str(exc), is_error=True)

    def tool_result(
        self, text: str, structured: dict[str, Any] | None = None, is_error: bool = False
    ) -> Message:
        """A ``CallToolResult`` with one text block (plus --hostile-strings' extra block)."""
        content = [{"type": "text", "text": text}]
        if self.catalogue.tool_output_extra:
            content.append({"type": "text", "text": self.catalogue.tool_output_extra})
        result: Message = {"content": content, "isError": is_error}
        if structured is not None:
            result["structuredContent"] = structured
        return result

    async def _tool_echo(self, args: dict[str, Any], request: Request) -> Message:
        return self.tool_result(args["text"])

    async def _tool_add(self, args: dict[str, Any], request: Request) -> Message:
        total = args["a"] + args["b"]
        return self.tool_result(str(total), structured={"sum": total})

    async def _tool_slow(self, args: dict[str, Any], request: Request) -> Message:
        steps, interval = args["steps"], args["interval"]
        token = request.progress_token
        try:
            for step in range(1, steps + 1):
                await asyncio.sleep(interval)
                if token is not None:
                    self.notify(
                        "notifications/progress",
                        {
                            "progressToken": token,
                            # --feature-fault bad-progress: a value that does not increase.
                            "progress": 1 if self.faults.breaks("bad-progress") else step,
                            "total": steps,
                            "message": f"step {step} of {steps}",
                        },
                    )
        except asyncio.CancelledError:
            diag("slow cancelled")
            raise
        return self.tool_result(f"done after {steps} steps")

    async def _tool_ask_llm(self, args: dict[str, Any], request: Request) -> Message:
        params = {
            "messages": [{"role": "user", "content": {"type": "text", "text": args["prompt"]}}],
            "maxTokens": 100,
        }
        return await self.with_input(request, "sampling/createMessage", params, sampled_text)

    async def _tool_ask_user(self, args: dict[str, Any], request: Request) -> Message:
        params = {
            "message": args["message"],
            "requestedSchema": {
                "type": "object",
                "properties": {"answer": {"type": "string"}},
                "required": ["answer"],
            },
        }
        return await self.with_input(request, "elicitation/create", params, elicited_text)

    async def _tool_list_roots(self, args: dict[str, Any], request: Request) -> Message:
        return await self.with_input(request, "roots/list", {}, root_list_text)

    async def _tool_bump(self, args: dict[str, Any], request: Request) -> Message:
        self._counter += 1
        if COUNTER_URI in self._subscriptions:
            self.notify("notifications/resources/updated", {"uri": COUNTER_URI})
        self.publish("resourceSubscriptions", {"uri": COUNTER_URI}, COUNTER_URI)
        return self.tool_result(f"counter is now {self._counter}")

    async def _tool_toggle_bonus(self, args: dict[str, Any], request: Request) -> Message:
        self._bonus = not self._bonus
        declared = self.capabilities()
        for flag, kind in (("toolsListChanged", "tools"), ("promptsListChanged", "prompts"),
                           ("resourcesListChanged", "resources")):
            if not (declared.get(kind) or {}).get("listChanged"):
                continue
            if self.state != "new":  # a handshake-era session is listening
                self.notify(f"notifications/{kind}/list_changed", {})
            self.publish(flag, {})
        state = "added" if self._bonus else "removed"
        return self.tool_result(f"bonus tool, prompt and resource {state}")

    async def _tool_bonus(self, args: dict[str, Any], request: Request) -> Message:
        return self.tool_result(BONUS_TEXT)


def sampled_text(answer: dict[str, Any]) -> str:
    """The text of a ``sampling/createMessage`` result (one block or, since 2025-11-25, a list)."""
    content = answer.get("content")
    blocks = content if isinstance(content, list) else [content]
    texts = [
        block["text"]
        for block in blocks
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]
    if not texts:
        raise ToolFailure("The client's sampling result contained no text content.")
    return "".join(texts)


def elicited_text(answer: dict[str, Any]) -> str:
    """What ``ask_user`` reports of an ``elicitation/create`` result."""
    text = f"action: {answer.get('action')}"
    if "content" in answer:
        text += f"\ncontent: {json.dumps(answer['content'], ensure_ascii=False)}"
    return text


def root_list_text(answer: dict[str, Any]) -> str:
    """What ``list_roots`` reports of a ``roots/list`` result: one URI a line."""
    roots = answer.get("roots")
    if not isinstance(roots, list) or not all(
        isinstance(root, dict) and isinstance(root.get("uri"), str) for root in roots
    ):
        raise ToolFailure("The client's roots/list result had no valid roots array.")
    return "\n".join(root["uri"] for root in roots) or "(no roots)"
