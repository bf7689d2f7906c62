"""Version and capability negotiation, as pure functions over the handshake.

Version rule (handshake era): the client offers a version (its latest unless a
user picks one, any string at all for teaching); the server echoes it if it can
speak it, otherwise it answers with a version of its own.  If the client cannot
speak the answer, it must disconnect.

Capability rule: each side uses only what the other side declared.

Example::

    >>> from mcp_nb.protocol.negotiation import negotiate_version, Capabilities
    >>> negotiate_version("2025-11-25", "2025-06-18").outcome
    'counter-offer accepted'
    >>> caps = Capabilities(client={}, server={"tools": {"listChanged": True}})
    >>> caps.server_supports("tools/call"), caps.server_supports("prompts/list")
    (True, False)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..i18n import _
from .errors import INVALID_PARAMS, CapabilityError, UnsupportedVersionError, refusal
from .versions import SUPPORTED_VERSIONS, VERSIONS


@dataclass(frozen=True)
class VersionOutcome:
    """What happened to the version offered in ``initialize``."""

    offered: str
    answered: str
    #: "agreed" (echoed), "counter-offer accepted", or "unsupported" (client must leave).
    outcome: str

    @property
    def ok(self) -> bool:
        return self.outcome != "unsupported"


def negotiate_version(
    offered: str, answered: str, supported: tuple[str, ...] = SUPPORTED_VERSIONS
) -> VersionOutcome:
    """Judge the server's answer to the version the client offered."""
    if answered not in supported:
        return VersionOutcome(offered, answered, "unsupported")
    if answered == offered:
        return VersionOutcome(offered, answered, "agreed")
    return VersionOutcome(offered, answered, "counter-offer accepted")


def check_version(
    offered: str, answered: Any, supported: tuple[str, ...] = SUPPORTED_VERSIONS
) -> VersionOutcome:
    """Like :func:`negotiate_version` but raises :class:`UnsupportedVersionError` on failure."""
    if not isinstance(answered, str):
        raise UnsupportedVersionError(offered=offered, answered=repr(answered), supported=supported)
    outcome = negotiate_version(offered, answered, supported)
    if not outcome.ok:
        raise UnsupportedVersionError(offered=offered, answered=answered, supported=supported)
    return outcome


def version_rejection(
    offered: str, code: int, message: str, data: Any,
    supported: tuple[str, ...] = SUPPORTED_VERSIONS,
) -> UnsupportedVersionError | None:
    """Recognise an initialize error that rejects the offered version.

    Servers answer with ``-32602`` and a message such as "Unsupported protocol
    version", carrying ``data.supported`` (and ``data.requested``).
    """
    mentions_version = "version" in message.lower()
    has_supported = isinstance(data, dict) and isinstance(data.get("supported"), list)
    if code != INVALID_PARAMS or not (mentions_version or has_supported):
        return None
    server_supported = data.get("supported") if has_supported else None
    return UnsupportedVersionError(
        offered=offered, answered=None, supported=supported, server_supported=server_supported
    )


# Which server capability (and optional sub-flag) each client request needs.
_SERVER_CAPABILITY_FOR_METHOD: dict[str, tuple[str, str | None]] = {
    "tools/list": ("tools", None),
    "tools/call": ("tools", None),
    "resources/list": ("resources", None),
    "resources/templates/list": ("resources", None),
    "resources/read": ("resources", None),
    "resources/subscribe": ("resources", "subscribe"),
    "resources/unsubscribe": ("resources", "subscribe"),
    "prompts/list": ("prompts", None),
    "prompts/get": ("prompts", None),
    "logging/setLevel": ("logging", None),
    "completion/complete": ("completions", None),
}

# Which client capability each server→client request needs.
_CLIENT_CAPABILITY_FOR_METHOD: dict[str, str] = {
    "roots/list": "roots",
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
}

# Server notifications that only make sense under a declared capability flag.
_SERVER_CAPABILITY_FOR_NOTIFICATION: dict[str, tuple[str, str | None]] = {
    "notifications/tools/list_changed": ("tools", "listChanged"),
    "notifications/resources/list_changed": ("resources", "listChanged"),
    "notifications/prompts/list_changed": ("prompts", "listChanged"),
    "notifications/resources/updated": ("resources", "subscribe"),
    "notifications/message": ("logging", None),
}


def _declares(declared: dict[str, Any], name: str, flag: str | None) -> bool:
    section = declared.get(name)
    if not isinstance(section, dict):
        # Capabilities are objects; `"tools": true` is sloppy but clearly meant as present.
        return bool(section) and flag is None
    return flag is None or section.get(flag) is True


@dataclass
class Capabilities:
    """Both sides' declarations and the questions a session asks of them."""

    client: dict[str, Any]
    server: dict[str, Any]
    #: The negotiated version; decides whether ``completion/complete`` needs a capability.
    version: str | None = None

    def required_for(self, method: str) -> tuple[str, str | None] | None:
        """The server capability (and sub-flag) ``method`` needs, or None if none is needed."""
        need = _SERVER_CAPABILITY_FOR_METHOD.get(method)
        if (
            need
            and need[0] == "completions"
            and self.version in VERSIONS
            and not VERSIONS[self.version].has_completions_capability
        ):
            return None  # 2024-11-05 had completion without a capability flag
        return need

    def server_supports(self, method: str) -> bool:
        """May the client send request ``method`` to this server?"""
        need = self.required_for(method)
        return need is None or _declares(self.server, *need)

    def check_request(self, method: str) -> None:
        """Raise :class:`CapabilityError` if ``method`` needs an undeclared server capability."""
        need = self.required_for(method)
        if need is None or _declares(self.server, *need):
            return
        name, flag = need
        what = f"{name}.{flag}" if flag else name
        # The hint inside the sentence, in the spelling of whoever words it (the magics: --force).
        raise refusal(CapabilityError, "capability-not-negotiated", lambda hint, _aside: _(
            "the server did not declare the {capability} capability, so {method} may not be "
            "sent (use only negotiated capabilities); {hint} and record a finding").format(
            capability=repr(what), method=repr(method), hint=hint))

    def client_supports(self, method: str) -> bool:
        """May the server send request ``method`` to this client?"""
        need = _CLIENT_CAPABILITY_FOR_METHOD.get(method)
        return need is None or _declares(self.client, need, None)

    def notification_allowed(self, method: str) -> bool:
        """Is a server notification consistent with what the server declared?"""
        need = _SERVER_CAPABILITY_FOR_NOTIFICATION.get(method)
        return need is None or _declares(self.server, *need)

    def list_changed(self, kind: str) -> bool:
        """Will the server announce changes to list ``kind`` (tools, resources, prompts)?"""
        return _declares(self.server, kind, "listChanged")

    def extensions(self) -> list[dict[str, Any]]:
        """One row per extension either side declared under ``capabilities.extensions``: its
        identifier and each side's settings object (None where that side did not declare it).

        An extension's settings are its own schema (an empty object: no settings); the side
        that declares an extension the other lacks falls back to the core protocol.
        """
        client = self.client.get("extensions")
        server = self.server.get("extensions")
        client = client if isinstance(client, dict) else {}
        server = server if isinstance(server, dict) else {}
        return [{"extension": name, "client": client.get(name), "server": server.get(name)}
                for name in sorted(set(client) | set(server), key=str)]

    def table(self) -> list[dict[str, Any]]:
        """Capability | client declared | server declared, one row each (for widgets)."""
        rows: list[dict[str, Any]] = []
        for name in ("tools", "resources", "prompts", "logging", "completions"):
            rows.append({"capability": name, "side": "server",
                         "declared": _declares(self.server, name, None),
                         "options": self.server.get(name)})
        for name in ("roots", "sampling", "elicitation"):
            rows.append({"capability": name, "side": "client",
                         "declared": _declares(self.client, name, None),
                         "options": self.client.get(name)})
        return rows
