"""MCP protocol versions as data.

Each handshake-era revision is a :class:`ProtocolVersion` record carrying the
facts the kit needs to behave (and to teach) differently per version.  Code asks
these records instead of comparing date strings in scattered places.

The revisions fall into two eras (:class:`Era`): the *handshake* era
(2024-11-05 … 2025-11-25, an ``initialize`` handshake opens a session) and the
*stateless* era (2026-07-28, every request carries its own version,
capabilities and client identity in ``_meta``).

Example::

    >>> from mcp_nb.protocol.versions import VERSIONS, LATEST_VERSION
    >>> LATEST_VERSION
    '2025-11-25'
    >>> VERSIONS["2025-03-26"].allows_batching
    True
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Era(enum.Enum):
    """How a client and a server agree on what they speak."""

    #: ``initialize`` → response → ``notifications/initialized``, then a session.
    HANDSHAKE = "handshake"
    #: No handshake: version, capabilities and client info ride on every request.
    STATELESS = "stateless"

    def __str__(self) -> str:
        return self.value


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


#: Stateless-era revisions this kit speaks, oldest first.
STATELESS_VERSIONS: tuple[str, ...] = ("2026-07-28",)
LATEST_STATELESS_VERSION: str = STATELESS_VERSIONS[-1]


def era_of(version: str) -> Era | None:
    """The era a version belongs to, or None for a version this kit does not know."""
    if version in VERSIONS:
        return Era.HANDSHAKE
    if version in STATELESS_VERSIONS:
        return Era.STATELESS
    return None


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
