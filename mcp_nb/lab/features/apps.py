"""MCP Apps (``--apps``): a ``ui://`` App, a tool that renders it, an app-only and a model-only
tool, and the ``--app-fault`` misbehaviours.

The tools are offered only to a client that declared the extension (the spec: servers
SHOULD check client capabilities before registering UI-enabled tools): in the handshake
era in ``initialize``, in the stateless era in each request's ``_meta``.

* ``clock`` (visibility model and app): a tick count (one per call: deterministic, unlike the
  time of day), rendered by ``ui://lab/clock.html``;
* ``clock_refresh`` (visibility app only): what the App's Refresh button calls;
* ``clock_reset`` (visibility model only): an App calling it MUST be refused by the host.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_nb.apps.meta import EXTENSION, MIME_TYPE
from mcp_nb.lab.app_view import app_html
from mcp_nb.lab.features.base import SessionBase
from mcp_nb.lab.rpc import Message, Request, RpcError
from mcp_nb.protocol.errors import INVALID_PARAMS, RESOURCE_NOT_FOUND
from mcp_nb.protocol.stateless import META_CLIENT_CAPABILITIES

APP_URI = "ui://lab/clock.html"
#: What ``--app-fault missing-resource`` makes the clock tool name instead.
MISSING_URI = "ui://lab/missing.html"
_OBJECT = {"type": "object", "properties": {}, "required": []}
_CLOCK = {"type": "object", "required": [],
          "properties": {"label": {"type": "string"},
                         "wait": {"type": "number", "minimum": 0, "maximum": 60,
                                  "description": "seconds to wait before answering"}}}


class Apps(SessionBase):
    """The Apps fixture, layered over the lab's tools and resources (it comes first in the
    session's bases and hands everything else to them)."""

    def apps_offered(self, request: Request) -> bool:
        if not self.knobs.apps:
            return False
        declared = (request.meta.get(META_CLIENT_CAPABILITIES, {})
                    if request.stateless else self.client_capabilities)
        extensions = declared.get("extensions") if isinstance(declared, dict) else None
        return isinstance(extensions, dict) and EXTENSION in extensions

    def app_tools(self) -> list[dict[str, Any]]:
        uri = MISSING_URI if self.knobs.app_fault == "missing-resource" else APP_URI
        return [
            {"name": "clock", "title": "Clock (an MCP App)", "inputSchema": _CLOCK,
             "description": "The clock's next tick; hosts that render MCP Apps show it in a clock.",
             "_meta": {"ui": {"resourceUri": uri, "visibility": ["model", "app"]}}},
            {"name": "clock_refresh", "title": "Refresh the clock", "inputSchema": _OBJECT,
             "description": "The next tick (only the App may call this).",
             "_meta": {"ui": {"resourceUri": uri, "visibility": ["app"]}}},
            {"name": "clock_reset", "title": "Reset the clock", "inputSchema": _OBJECT,
             "description": "Only the model may call this: an App calling it is refused.",
             "_meta": {"ui": {"visibility": ["model"]}}},
        ]

    def app_resource(self) -> dict[str, Any]:
        fault = self.knobs.app_fault
        mime = "text/html" if fault == "wrong-mime" else MIME_TYPE
        meta: dict[str, Any] = {"ui": {"prefersBorder": True}}
        if fault == "undeclared-fetch":
            # Declares one origin; the App then fetches another, which the CSP must block.
            meta["ui"]["csp"] = {"connectDomains": ["https://declared.example"]}
        elif fault == "bad-csp":
            # Not origins: a bare wildcard, and a string where a list is due.
            meta["ui"]["csp"] = {"connectDomains": ["*"], "resourceDomains": "https://cdn.example"}
        return {"uri": APP_URI, "mimeType": mime, "text": app_html(fault), "_meta": meta}

    async def _tools_list(self, request: Request) -> Message:
        listed = await super()._tools_list(request)  # type: ignore[misc]
        if self.apps_offered(request):
            listed = {**listed, "tools": [*listed["tools"], *self.app_tools()]}
        return listed

    async def _tools_call(self, request: Request) -> Message:
        name = request.params.get("name")
        if name not in ("clock", "clock_refresh", "clock_reset") \
                or not self.apps_offered(request):
            return await super()._tools_call(request)  # type: ignore[misc]
        self.log(request, "info", f"{name} called")  # type: ignore[attr-defined]
        if name == "clock_reset":
            self._ticks = 0
            return {"content": [{"type": "text", "text": "clock reset"}], "isError": False}
        arguments = request.params.get("arguments") or {}
        wait = arguments.get("wait", 0)
        if isinstance(wait, int | float) and not isinstance(wait, bool) and 0 < wait <= 60:
            await asyncio.sleep(wait)  # cancellable: notifications/cancelled ends it here
        # A tick count, not the time of day: saved notebooks show the same run after run.
        self._ticks = getattr(self, "_ticks", 0) + 1
        label = arguments.get("label", "UTC")
        return {"content": [{"type": "text", "text": f"tick {self._ticks} ({label})"}],
                "structuredContent": {"tick": self._ticks, "label": label}, "isError": False}

    async def _resources_list(self, request: Request) -> Message:
        listed = await super()._resources_list(request)  # type: ignore[misc]
        if self.apps_offered(request):
            app = {"uri": APP_URI, "name": "clock", "title": "The lab clock App",
                   "mimeType": MIME_TYPE}
            listed = {**listed, "resources": [*listed["resources"], app]}
        return listed

    async def _resources_read(self, request: Request) -> Message:
        uri = request.params.get("uri")
        if uri == MISSING_URI and self.apps_offered(request):
            code = INVALID_PARAMS if request.stateless else RESOURCE_NOT_FOUND
            raise RpcError(code, "Resource not found", {"uri": uri})
        if uri == APP_URI and self.apps_offered(request):
            return {"contents": [self.app_resource()]}
        return await super()._resources_read(request)  # type: ignore[misc]
