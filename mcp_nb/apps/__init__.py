"""MCP Apps (extension ``io.modelcontextprotocol/ui``, 2026-01-26): the host's side, sans I/O.

A tool names a ``ui://`` HTML resource in ``_meta.ui.resourceUri``; the host reads it,
renders it in a sandboxed iframe and speaks JSON-RPC with it over ``postMessage``.
This package is the protocol core of that host, with no browser, no event loop and
no widgets, so every rule can be driven with plain JSON messages in a test:

* :mod:`.meta` — the extension's names, discovery of App tools (and visibility),
  the check of a ``resources/read`` answer;
* :mod:`.csp` — the Content Security Policy and Permission Policy the host applies;
* :mod:`.lifecycle` — the App's lifecycle as a transition table (drawn by the notebook);
* :mod:`.host` — :class:`~.host.AppHost`: message in, actions out.

The notebook layer (:mod:`mcp_nb.notebook.apps`) moves the messages between the
iframe and the kernel and carries out the actions.
"""

from .csp import SandboxPolicy, sandbox_policy
from .host import AppHost, HostContext
from .lifecycle import AppEvent, AppLifecycle, AppState
from .meta import (
    EXTENSION,
    MIME_TYPE,
    PROTOCOL_VERSION,
    AppResourceError,
    UiResource,
    app_callable,
    model_visible,
    resource_uri,
    ui_resource,
    visibility,
)

__all__ = [
    "EXTENSION", "MIME_TYPE", "PROTOCOL_VERSION", "AppEvent", "AppHost", "AppLifecycle",
    "AppResourceError", "AppState", "HostContext", "SandboxPolicy", "UiResource",
    "app_callable", "model_visible", "resource_uri", "sandbox_policy", "ui_resource",
    "visibility",
]
