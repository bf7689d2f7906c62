"""What every HTTP request carries besides its body: the caller's headers, then the session's.

The caller's headers (credentials, say) go on every request, and they are the
ones a transcript shows as ``<redacted>``.  The session adds its own as it
learns them: ``Mcp-Session-Id`` once a Streamable HTTP server assigns one,
``MCP-Protocol-Version`` once a revision that defines it is negotiated, and,
on a stateless ``tools/call``, the ``Mcp-Param-*`` headers mirroring the
arguments the tool annotated (2026-07-28, SEP-2243).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from ..protocol.tool_headers import HeaderAnnotation, param_headers
from ..protocol.versions import VERSIONS
from .http_messages import Outgoing


class RequestHeaders:
    """Mixin of :class:`~.http_base.HttpTransportBase`: the headers its requests carry.

    State that changes only when the session (or, for the id, the server) says
    so; every exchange reads it through :meth:`_headers`.
    """

    def __init__(self, headers: Mapping[str, str] | None) -> None:
        self.headers = dict(headers or {})
        # Lower case, for redacting them wherever the transcript shows headers.
        self._custom_header_names = {name.lower() for name in self.headers}
        #: Set by Streamable HTTP once the server assigns one.
        self.session_id: str | None = None
        self._protocol_version: str | None = None
        # Tool name → its x-mcp-header annotations (set_param_headers).
        self._param_annotations: dict[str, tuple[HeaderAnnotation, ...]] = {}

    def set_param_headers(self, tool: str, annotations: Sequence[HeaderAnnotation]) -> None:
        """Told by the session which arguments of ``tool`` travel as ``Mcp-Param-*`` headers.

        2026-07-28 (SEP-2243): each stateless ``tools/call`` of ``tool`` then
        mirrors those arguments (see :mod:`mcp_nb.protocol.tool_headers`).
        """
        if annotations:
            self._param_annotations[tool] = tuple(annotations)
        else:
            self._param_annotations.pop(tool, None)

    def _param_headers(self, outgoing: Outgoing) -> dict[str, str]:
        annotations = (self._param_annotations.get(outgoing.name or "")
                       if outgoing.method == "tools/call" else None)
        if not annotations:
            return {}
        params = json.loads(outgoing.frame).get("params") or {}
        return param_headers(annotations, params.get("arguments"))

    def set_protocol_version(self, version: str) -> None:
        """Remember the negotiated version for the ``MCP-Protocol-Version`` header.

        Only revisions that define the header (2025-06-18 on) send it; older
        servers never heard of it.
        """
        info = VERSIONS.get(version)
        self._protocol_version = version if info is not None and info.http_version_header else None

    def _headers(self) -> dict[str, str]:
        """Headers every request carries: the caller's, then the session's."""
        headers = dict(self.headers)
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self._protocol_version is not None:
            headers["MCP-Protocol-Version"] = self._protocol_version
        return headers
