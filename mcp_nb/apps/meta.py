"""The extension's names, App tools and their visibility, and the check of a UI resource.

Requirement levels are kept as the specification (SEP-1865, 2026-01-26) states them:

* the resource URI MUST start with ``ui://``; the ``resources/read`` content's
  ``mimeType`` MUST be ``text/html;profile=mcp-app``; the content MUST come as
  ``text`` or base64 ``blob`` (and MUST be a valid HTML5 document, which the host
  cannot fully check: the browser is the judge of that);
* the host MUST use ``resources/read`` to fetch the resource a tool names;
* ``visibility`` defaults to ``["model", "app"]``; the host MUST NOT put a tool
  without ``"model"`` in the agent's tool list, and MUST reject an App's
  ``tools/call`` of a tool without ``"app"``.

Tools may be given as the session's :class:`~mcp_nb.protocol.models.Tool` models or
as plain dicts (what arrived on the wire); both keep ``_meta`` as sent.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..i18n import _
from ..protocol.errors import McpError

#: The extension's identifier: the key under ``capabilities.extensions``.
EXTENSION = "io.modelcontextprotocol/ui"
#: The one content type of the 2026-01-26 revision.
MIME_TYPE = "text/html;profile=mcp-app"
#: The App protocol version this host speaks in ``ui/initialize``.
PROTOCOL_VERSION = "2026-01-26"
#: What the client declares under ``extensions[EXTENSION]`` (``mimeTypes`` is REQUIRED).
CLIENT_SETTINGS: dict[str, Any] = {"mimeTypes": [MIME_TYPE]}
#: The flat key the spec deprecates ("will be removed before GA"); still read.
DEPRECATED_RESOURCE_URI = "ui/resourceUri"
#: ``visibility`` when a tool does not say.
DEFAULT_VISIBILITY = ("model", "app")


class AppResourceError(McpError):
    """A UI resource the host will not render, with the requirement it breaks.

    ``problem`` and ``requirement`` are words for a person (translated); :attr:`rule` is
    the stable id code acts on: ``"apps.mime-type"`` for a wrong ``mimeType``,
    ``"apps.resource"`` for anything else (the checkup's two checks).
    """

    def __init__(self, uri: str, problem: str, requirement: str, *,
                 rule: str = "apps.resource") -> None:
        self.uri, self.problem, self.requirement = uri, problem, requirement
        super().__init__(_("{uri}: {problem} (MCP Apps 2026-01-26: {requirement})").format(
            uri=uri, problem=problem, requirement=requirement), rule=rule)


def _meta(tool: Any) -> Mapping[str, Any]:
    if isinstance(tool, Mapping):
        meta = tool.get("_meta")
    else:  # a pydantic model whose extra fields hold what the server sent
        meta = (getattr(tool, "model_extra", None) or {}).get("_meta")
    return meta if isinstance(meta, Mapping) else {}


def _ui(tool: Any) -> Mapping[str, Any]:
    ui = _meta(tool).get("ui")
    return ui if isinstance(ui, Mapping) else {}


def resource_uri(tool: Any) -> str | None:
    """The ``ui://`` resource a tool names (``_meta.ui.resourceUri``, else the deprecated
    flat ``_meta["ui/resourceUri"]``), or None for a tool that is not an App.

    A URI that does not start with ``ui://`` is returned as named: the refusal belongs to
    the render (``ui_resource``), where the learner sees which rule it breaks.
    """
    uri = _ui(tool).get("resourceUri")
    if not isinstance(uri, str) or not uri:
        uri = _meta(tool).get(DEPRECATED_RESOURCE_URI)
    return uri if isinstance(uri, str) and uri else None


def uses_deprecated_key(tool: Any) -> bool:
    """True when the tool names its resource only under the deprecated flat key."""
    return not isinstance(_ui(tool).get("resourceUri"), str) and resource_uri(tool) is not None


def visibility(tool: Any) -> tuple[str, ...]:
    """Who may call the tool: ``"model"`` (the agent), ``"app"`` (an App of this server).

    Omitted means ``("model", "app")``; a value that is not a list of strings is read
    as omitted (the host cannot tell what the server meant, and the default is the
    spec's).
    """
    value = _ui(tool).get("visibility")
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return DEFAULT_VISIBILITY


def model_visible(tool: Any) -> bool:
    """MUST NOT be in the agent's tool list unless True (``"model"`` in visibility)."""
    return "model" in visibility(tool)


def app_callable(tool: Any) -> bool:
    """An App's ``tools/call`` of this tool MUST be rejected unless True."""
    return "app" in visibility(tool)


def same_media_type(declared: Any, expected: str = MIME_TYPE) -> bool:
    """Compare media types as RFC 9110 does: type, subtype and parameter names ignore
    case, whitespace around ``;`` and ``=`` is not significant; parameter values are
    compared as written."""
    if not isinstance(declared, str):
        return False

    def parts(value: str) -> tuple[str, frozenset[tuple[str, str]]]:
        kind, *params = (p.strip() for p in value.split(";"))
        pairs = set()
        for param in params:
            name, _, val = param.partition("=")
            pairs.add((name.strip().lower(), val.strip().strip('"')))
        return kind.lower(), frozenset(pairs)

    return parts(declared) == parts(expected)


@dataclass(frozen=True)
class UiResource:
    """A checked UI resource: the HTML and the ``_meta.ui`` that shapes its sandbox."""

    uri: str
    html: str
    mime_type: str
    #: ``_meta.ui.csp`` as declared (None when omitted: the restrictive default applies).
    csp: Mapping[str, Any] | None = None
    #: ``_meta.ui.permissions`` as declared (the host MAY honour them).
    permissions: Mapping[str, Any] = field(default_factory=dict)
    #: ``_meta.ui.domain``: host-dependent; this host has no dedicated origins (noted, unused).
    domain: str | None = None
    #: ``_meta.ui.prefersBorder``: True, False, or None (the host decides).
    prefers_border: bool | None = None


def ui_resource(uri: str, result: Mapping[str, Any]) -> UiResource:
    """Check a ``resources/read`` result for ``uri`` and return the resource to render.

    Raises :class:`AppResourceError` naming the broken rule: a URI that is not
    ``ui://``, no content for that URI, a wrong ``mimeType``, neither ``text`` nor
    ``blob``, a blob that is not base64 of UTF-8 text, or empty content.
    """
    if not uri.startswith("ui://"):
        raise AppResourceError(uri, _("not a ui:// URI"), _("URI MUST start with ui:// scheme"))
    contents = result.get("contents")
    if not isinstance(contents, list) or not contents:
        raise AppResourceError(uri, _("resources/read returned no contents"),
                               _("Resource MUST exist on the server"))
    matching = [c for c in contents if isinstance(c, Mapping) and c.get("uri") == uri]
    if not matching:
        raise AppResourceError(
            uri, _("no content carries the requested URI (got {uris})").format(
                uris=", ".join(repr(c.get("uri")) for c in contents if isinstance(c, Mapping))),
            _("contents[].uri is the matching UI resource URI"))
    content = matching[0]
    mime = content.get("mimeType")
    if not same_media_type(mime):
        raise AppResourceError(
            uri, _("mimeType is {mime}, not {expected}").format(mime=repr(mime),
                                                                 expected=repr(MIME_TYPE)),
            _('mimeType MUST be "{expected}" (other types reserved for future extensions)'
              ).format(expected=MIME_TYPE), rule="apps.mime-type")
    text = content.get("text")
    if isinstance(text, str):
        html = text
    elif isinstance(content.get("blob"), str):
        try:
            html = base64.b64decode(content["blob"], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise AppResourceError(uri, _("blob is not base64 of UTF-8 HTML ({error})").format(
                error=exc), _("blob is base64-encoded HTML")) from None
    else:
        raise AppResourceError(uri, _("the content has neither text nor blob"),
                               _("Content MUST be provided via either text or blob"))
    if not html.strip():
        raise AppResourceError(uri, _("the HTML is empty"),
                               _("Content MUST be valid HTML5 document"))
    meta = content.get("_meta")
    ui = meta.get("ui") if isinstance(meta, Mapping) else None
    ui = ui if isinstance(ui, Mapping) else {}
    csp = ui.get("csp")
    permissions = ui.get("permissions")
    border = ui.get("prefersBorder")
    domain = ui.get("domain")
    return UiResource(
        uri=uri, html=html, mime_type=mime,
        csp=csp if isinstance(csp, Mapping) else None,
        permissions=permissions if isinstance(permissions, Mapping) else {},
        domain=domain if isinstance(domain, str) else None,
        prefers_border=border if isinstance(border, bool) else None,
    )
