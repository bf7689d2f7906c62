"""Resources: resources/list, templates, resources/read, and handshake-era resources/subscribe."""

from __future__ import annotations

from typing import ClassVar
from urllib.parse import unquote

from mcp_nb.lab.content import (
    BONUS_TEXT,
    BONUS_URI,
    COUNTER_URI,
    ECHO_PREFIX,
    HELLO_TEXT,
    HELLO_URI,
)
from mcp_nb.lab.features.base import BOTH_ERAS, HANDSHAKE, Routes, SessionBase
from mcp_nb.lab.rpc import Message, Request, RpcError, refuse_cursor
from mcp_nb.protocol.errors import INVALID_PARAMS, METHOD_NOT_FOUND, RESOURCE_NOT_FOUND


class Resources(SessionBase):
    """The lab's resources: a fixed text, the counter, the echo template, the bonus."""

    ROUTES: ClassVar[Routes] = {
        "resources/list": ("_resources_list", BOTH_ERAS),
        "resources/templates/list": ("_templates_list", BOTH_ERAS),
        "resources/read": ("_resources_read", BOTH_ERAS),
        "resources/subscribe": ("_subscribe", HANDSHAKE),
        "resources/unsubscribe": ("_unsubscribe", HANDSHAKE),
    }

    async def _resources_list(self, request: Request) -> Message:
        refuse_cursor(request)
        bonus = [self.catalogue.bonus.resource] if self._bonus else []
        if self.faults.breaks("bad-resource-uri"):  # a space: not an RFC 3986 URI
            bonus.append({"uri": "lab://bad uri", "name": "bad uri", "mimeType": "text/plain"})
        return {"resources": [*self.catalogue.resources, *bonus]}

    async def _templates_list(self, request: Request) -> Message:
        refuse_cursor(request)
        templates = list(self.catalogue.templates)
        if self.faults.breaks("bad-uri-template"):  # an expression never closed: not RFC 6570
            templates = [{**t, "uriTemplate": t["uriTemplate"].rstrip("}")} for t in templates]
        return {"resourceTemplates": templates}

    def _resource_text(self, uri: str) -> str | None:
        """The resource's text, or None if there is no such resource."""
        if uri == HELLO_URI:
            return HELLO_TEXT
        if uri == COUNTER_URI:
            return str(self._counter)
        if uri == BONUS_URI and self._bonus:
            return BONUS_TEXT
        if uri.startswith(ECHO_PREFIX) and len(uri) > len(ECHO_PREFIX):
            return unquote(uri[len(ECHO_PREFIX) :])
        return None

    def resource_exists(self, uri: str) -> bool:
        return self._resource_text(uri) is not None

    def _existing_resource(self, request: Request) -> tuple[str, str]:
        """The requested ``uri`` and its text, or "Resource not found".

        The code is -32002 in the handshake era; 2026-07-28 retired it for
        -32602 (Invalid params).
        """
        uri = request.param("uri", str)
        text = self._resource_text(uri)
        if text is None:
            code = INVALID_PARAMS if request.stateless else RESOURCE_NOT_FOUND
            raise RpcError(code, "Resource not found", {"uri": uri})
        return uri, text

    async def _resources_read(self, request: Request) -> Message:
        uri, text = self._existing_resource(request)
        if self.faults.breaks("wrong-read-uri"):
            uri += "/elsewhere"
        return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": text}]}

    async def _subscribe(self, request: Request) -> Message:
        if self.faults.breaks("no-subscribe"):  # while resources.subscribe stays declared
            raise RpcError(METHOD_NOT_FOUND, "Method not found: resources/subscribe")
        uri, _ = self._existing_resource(request)  # only existing resources can be subscribed to
        self._subscriptions.add(uri)
        return {}

    async def _unsubscribe(self, request: Request) -> Message:
        self._subscriptions.discard(request.param("uri", str))
        return {}
