"""Lifecycle: initialize and versions (handshake era), server/discover (stateless), ping."""

from __future__ import annotations

from typing import Any, ClassVar

from mcp_nb.lab.features.base import HANDSHAKE, STATELESS, Routes, SessionBase
from mcp_nb.lab.rpc import Message, Request, RpcError, diag
from mcp_nb.protocol.errors import INVALID_PARAMS, INVALID_REQUEST, UNSUPPORTED_PROTOCOL_VERSION
from mcp_nb.protocol.stateless import META_PROTOCOL_VERSION


class Lifecycle(SessionBase):
    """How a session starts (or, statelessly, how a server describes itself) and stays alive."""

    ROUTES: ClassVar[Routes] = {
        "initialize": ("_initialize", HANDSHAKE),
        "ping": ("_ping", HANDSHAKE),
        "server/discover": ("_discover", STATELESS),
    }

    def _negotiate(self, offered: str) -> str:
        """Pick the version to answer: the offered one if spoken, else a counter-offer."""
        knobs = self.knobs
        if knobs.answer_version is not None:
            return knobs.answer_version
        if offered in knobs.supported_versions:
            return offered
        if knobs.reject_version:
            raise RpcError(
                INVALID_PARAMS,
                "Unsupported protocol version",
                {"supported": list(knobs.supported_versions), "requested": offered},
            )
        return max(knobs.supported_versions)  # ISO dates sort chronologically

    async def _initialize(self, request: Request) -> Message:
        if self.state != "new":
            raise RpcError(INVALID_REQUEST, "Already initialized: send initialize only once")
        offered = request.param("protocolVersion", str)
        capabilities = request.param("capabilities", dict)
        client_info = request.param("clientInfo", dict)
        version = self._negotiate(offered)
        self.protocol_version = version
        self.client_capabilities = capabilities
        self.client_info = client_info
        self.state = "initialized"
        diag(f"initialize from {client_info.get('name')!r}: offered {offered}, answering {version}")
        return {
            "protocolVersion": version,
            "capabilities": self.capabilities(),
            "serverInfo": self.server_info(),
            "instructions": self.catalogue.instructions,
        }

    def initialize_refused(self, offered: object) -> RpcError:
        """What a stateless-only server says to ``initialize``: the versions it does speak.

        A handshake-era client cannot fall forward, so this message may be all
        its user ever sees; it names the versions (a SHOULD of 2026-07-28).
        """
        served = self.served_versions()
        data: dict[str, Any] = {"supported": served}
        if isinstance(offered, str):
            data["requested"] = offered
        return RpcError(
            UNSUPPORTED_PROTOCOL_VERSION,
            f"Unsupported protocol version: this server speaks only {', '.join(served)}, the "
            "stateless era, which has no initialize; send requests with the version in "
            f"params._meta[{META_PROTOCOL_VERSION!r}]",
            data,
        )

    async def _discover(self, request: Request) -> Message:
        return {
            "supportedVersions": self.served_versions(),
            "capabilities": self.capabilities(),
            "instructions": self.catalogue.instructions,
            # Nothing here changes while the server runs, but a teaching server may be
            # restarted with other flags at any moment: never serve it from a cache.
            "ttlMs": 0,
            "cacheScope": "public",
        }

    async def _ping(self, request: Request) -> Message:
        return {}
