"""Typed MCP payloads (pydantic), for callers who want more than dicts.

Models accept unknown fields (``extra="allow"``): servers add fields across
versions and a teaching client must show them, not drop them.  Field names
follow the wire (camelCase) so ``model_dump()`` round-trips what was sent.

Example::

    >>> from mcp_nb.protocol.models import InitializeResult
    >>> r = InitializeResult.model_validate({
    ...     "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
    ...     "serverInfo": {"name": "demo", "version": "1.0"}})
    >>> r.serverInfo.name, r.capabilities.tools
    ('demo', {})
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from .log_levels import LOG_LEVELS as LOG_LEVELS  # re-exported: its home before


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Icon(_Open):
    src: str
    mimeType: str | None = None
    sizes: list[str] | None = None


class Implementation(_Open):
    """clientInfo / serverInfo. ``title`` from 2025-06-18; icons, websiteUrl, description later."""

    name: str
    version: str
    title: str | None = None
    description: str | None = None
    websiteUrl: str | None = None
    icons: list[Icon] | None = None


class ClientCapabilities(_Open):
    roots: dict[str, Any] | None = None
    sampling: dict[str, Any] | None = None
    elicitation: dict[str, Any] | None = None
    experimental: dict[str, Any] | None = None


class ServerCapabilities(_Open):
    tools: dict[str, Any] | None = None
    resources: dict[str, Any] | None = None
    prompts: dict[str, Any] | None = None
    logging: dict[str, Any] | None = None
    completions: dict[str, Any] | None = None
    experimental: dict[str, Any] | None = None


class InitializeResult(_Open):
    protocolVersion: str
    capabilities: ServerCapabilities
    serverInfo: Implementation
    instructions: str | None = None


class DiscoverResult(_Open):
    """What ``server/discover`` answers in the stateless era (2026-07-28).

    ``serverInfo`` is lifted out of the result's ``_meta``
    (``io.modelcontextprotocol/serverInfo``), where the stateless era puts it.
    """

    supportedVersions: list[str]
    capabilities: ServerCapabilities
    instructions: str | None = None
    ttlMs: int | None = None
    cacheScope: str | None = None

    @property
    def serverInfo(self) -> Implementation | None:
        meta = (self.model_extra or {}).get("_meta") or {}
        info = meta.get("io.modelcontextprotocol/serverInfo") if isinstance(meta, dict) else None
        try:
            return Implementation.model_validate(info) if info is not None else None
        except ValueError:
            return None


class Tool(_Open):
    name: str
    title: str | None = None
    description: str | None = None
    inputSchema: dict[str, Any]
    outputSchema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    icons: list[Icon] | None = None


class CallToolResult(_Open):
    content: list[dict[str, Any]] = []
    structuredContent: dict[str, Any] | None = None
    isError: bool = False

    @property
    def text(self) -> str:
        """All text content blocks joined by newlines (the common case in notebooks)."""
        return "\n".join(b.get("text", "") for b in self.content if b.get("type") == "text")


class Resource(_Open):
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mimeType: str | None = None


class ResourceTemplate(_Open):
    uriTemplate: str
    name: str
    title: str | None = None
    description: str | None = None
    mimeType: str | None = None


class PromptArgument(_Open):
    name: str
    description: str | None = None
    required: bool | None = None


class Prompt(_Open):
    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[PromptArgument] | None = None
