"""The typed API: one method per MCP operation (list, call, read, get …), built on ``request``.

:class:`TypedApi` is a base class of :class:`~mcp_nb.client.ClientSession`;
each method shapes the params, sends them through ``request`` (which already
knows the era, timeouts and progress) and turns the result into a model.
Every method takes the ``request`` options (``timeout``, ``on_progress`` …).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from ..protocol.models import CallToolResult, Prompt, Resource, ResourceTemplate, Tool
from ..protocol.tasks import is_task_handle

if TYPE_CHECKING:
    from .tasks import Task


class TypedApi:
    """MCP operations as typed methods."""

    if TYPE_CHECKING:  # provided by ClientSession
        async def request(self, method: str, params: dict[str, Any] | None = None,
                          **options: Any) -> dict[str, Any]: ...

        def _screen_tools(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]: ...

        def _open_task(self, method: str, result: dict[str, Any]) -> Task: ...

    async def ping(self, **options: Any) -> float:
        """Send ``ping``; returns the round-trip time in seconds."""
        start = anyio.current_time()
        await self.request("ping", **options)
        return anyio.current_time() - start

    async def _list_all(self, method: str, key: str, **options: Any) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor = None
        while True:
            result = await self.request(method, {"cursor": cursor} if cursor else None,
                                        **options)
            items.extend(result.get(key) or [])
            cursor = result.get("nextCursor")
            if not cursor:
                return items

    async def list_tools(self, **options: Any) -> list[Tool]:
        """Every tool the server offers (follows ``nextCursor`` pagination).

        In the stateless era (2026-07-28) a tool whose ``x-mcp-header``
        annotations break the spec's rules is left out, and a
        ``tool-header-invalid`` finding says why; the others' annotated
        arguments are mirrored as ``Mcp-Param-*`` headers when called over HTTP.
        """
        tools = await self._list_all("tools/list", "tools", **options)
        return [Tool.model_validate(t) for t in self._screen_tools(tools)]

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None,
                        **options: Any) -> CallToolResult:
        """Call a tool; a tool-level failure comes back as ``isError`` (not an exception).

        If the server answers with a task (the tasks extension, SEP-2663), the
        task is followed to its end and its result returned, as if it had come
        at once; :meth:`start_tool` hands out the task instead.
        """
        result = await self.request("tools/call", {"name": name, "arguments": arguments or {}},
                                    **options)
        if is_task_handle(result):
            result = await self._open_task("tools/call", result).wait()
        return CallToolResult.model_validate(result)

    async def start_tool(self, name: str, arguments: dict[str, Any] | None = None,
                         **options: Any) -> CallToolResult | Task:
        """Call a tool; the :class:`~mcp_nb.client.tasks.Task` if the server made one.

        The server decides (SEP-2663): a :class:`CallToolResult` when it
        answered at once, a task to poll, answer and cancel otherwise.
        """
        result = await self.request("tools/call", {"name": name, "arguments": arguments or {}},
                                    **options)
        if is_task_handle(result):
            return self._open_task("tools/call", result)
        return CallToolResult.model_validate(result)

    async def list_resources(self, **options: Any) -> list[Resource]:
        return [Resource.model_validate(r)
                for r in await self._list_all("resources/list", "resources", **options)]

    async def list_resource_templates(self, **options: Any) -> list[ResourceTemplate]:
        return [ResourceTemplate.model_validate(r) for r in
                await self._list_all("resources/templates/list", "resourceTemplates", **options)]

    async def read_resource(self, uri: str, **options: Any) -> list[dict[str, Any]]:
        """The resource's ``contents`` blocks (text or base64 blob)."""
        return (await self.request("resources/read", {"uri": uri}, **options)).get("contents", [])

    async def subscribe_resource(self, uri: str, **options: Any) -> None:
        await self.request("resources/subscribe", {"uri": uri}, **options)

    async def unsubscribe_resource(self, uri: str, **options: Any) -> None:
        await self.request("resources/unsubscribe", {"uri": uri}, **options)

    async def list_prompts(self, **options: Any) -> list[Prompt]:
        return [Prompt.model_validate(p)
                for p in await self._list_all("prompts/list", "prompts", **options)]

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None,
                         **options: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        return await self.request("prompts/get", params, **options)

    async def complete(self, ref: dict[str, Any], argument_name: str, value: str,
                       **options: Any) -> list[str]:
        """Completion values for one argument of a prompt or resource template."""
        result = await self.request(
            "completion/complete",
            {"ref": ref, "argument": {"name": argument_name, "value": value}}, **options)
        return list(result.get("completion", {}).get("values", []))

    async def set_logging_level(self, level: str, **options: Any) -> None:
        await self.request("logging/setLevel", {"level": level}, **options)
