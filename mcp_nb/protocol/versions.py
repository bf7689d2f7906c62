"""MCP protocol versions as data.

Each handshake-era revision is a :class:`ProtocolVersion` record carrying the
facts the kit needs to behave (and to teach) differently per version.  Code asks
these records instead of comparing date strings in scattered places.

Example::

    >>> from mcp_nb.protocol.versions import VERSIONS, LATEST_VERSION
    >>> LATEST_VERSION
    '2025-11-25'
    >>> VERSIONS["2025-03-26"].allows_batching
    True
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProtocolVersion:
    """What changed in one revision of the MCP specification (handshake era)."""

    name: str
    #: JSON-RPC batches (arrays of messages) were allowed only in 2025-03-26.
    allows_batching: bool
    #: Clients send ``MCP-Protocol-Version`` on every HTTP request after initialize.
    http_version_header: bool
    #: Streamable HTTP exists (it replaced HTTP+SSE in 2025-03-26).
    streamable_http: bool
    #: ``title`` on Implementation, tools, resources and prompts (display names).
    has_titles: bool
    #: Elicitation (``elicitation/create``) exists as a client capability.
    has_elicitation: bool
    #: ``icons`` and ``websiteUrl`` on Implementation; ``description`` on Implementation.
    has_icons: bool
    #: Structured tool output (``outputSchema`` / ``structuredContent``).
    has_structured_output: bool
    #: The ``completions`` server capability is declared explicitly.
    has_completions_capability: bool

    def __str__(self) -> str:
        return self.name


_ALL = (
    ProtocolVersion(
        "2024-11-05",
        allows_batching=False,
        http_version_header=False,
        streamable_http=False,
        has_titles=False,
        has_elicitation=False,
        has_icons=False,
        has_structured_output=False,
        has_completions_capability=False,
    ),
    ProtocolVersion(
        "2025-03-26",
        allows_batching=True,
        http_version_header=False,
        streamable_http=True,
        has_titles=False,
        has_elicitation=False,
        has_icons=False,
        has_structured_output=False,
        has_completions_capability=True,
    ),
    ProtocolVersion(
        "2025-06-18",
        allows_batching=False,
        http_version_header=True,
        streamable_http=True,
        has_titles=True,
        has_elicitation=True,
        has_icons=False,
        has_structured_output=True,
        has_completions_capability=True,
    ),
    ProtocolVersion(
        "2025-11-25",
        allows_batching=False,
        http_version_header=True,
        streamable_http=True,
        has_titles=True,
        has_elicitation=True,
        has_icons=True,
        has_structured_output=True,
        has_completions_capability=True,
    ),
)

#: Every handshake-era version this kit speaks, oldest first.
VERSIONS: dict[str, ProtocolVersion] = {v.name: v for v in _ALL}
SUPPORTED_VERSIONS: tuple[str, ...] = tuple(VERSIONS)
LATEST_VERSION: str = SUPPORTED_VERSIONS[-1]


def is_supported(version: str) -> bool:
    """True if ``version`` is one this kit can speak."""
    return version in VERSIONS


def version_info(version: str) -> ProtocolVersion:
    """The facts for ``version``; :class:`KeyError` names the supported ones."""
    try:
        return VERSIONS[version]
    except KeyError:
        raise KeyError(
            f"unknown MCP protocol version {version!r}; supported: {', '.join(SUPPORTED_VERSIONS)}"
        ) from None
