"""Logging: logging/setLevel (handshake era) and the log messages requests send in both eras."""

from __future__ import annotations

from typing import Any, ClassVar

from mcp_nb.lab.features.base import HANDSHAKE, Routes, SessionBase
from mcp_nb.lab.rpc import Message, Request, RpcError
from mcp_nb.protocol.errors import INVALID_PARAMS
from mcp_nb.protocol.log_levels import LOG_LEVELS
from mcp_nb.protocol.stateless import META_LOG_LEVEL


class Logging(SessionBase):
    """The client's chosen log level, and log messages that honour it."""

    ROUTES: ClassVar[Routes] = {"logging/setLevel": ("_set_level", HANDSHAKE)}

    async def _set_level(self, request: Request) -> Message:
        level = request.param("level", str)
        if level not in LOG_LEVELS and self.faults.breaks("loose-log-level"):
            return {}
        if level not in LOG_LEVELS:
            raise RpcError(
                INVALID_PARAMS,
                f"Invalid params: unknown log level {level!r}; expected one of "
                f"{', '.join(LOG_LEVELS)}",
            )
        self._log_threshold = LOG_LEVELS.index(level)
        return {}

    def log(self, request: Request, level: str, data: Any) -> None:
        """Send ``notifications/message`` if ``level`` reaches the client's chosen level.

        The handshake era's level is the session's (logging/setLevel); a
        stateless request logs only if its ``_meta`` names a level.
        """
        if request.stateless:
            chosen = request.meta.get(META_LOG_LEVEL)
            threshold = LOG_LEVELS.index(chosen) if chosen in LOG_LEVELS else None
        else:
            threshold = self._log_threshold
        if threshold is not None and LOG_LEVELS.index(level) >= threshold:
            self.notify("notifications/message", {"level": level, "logger": "lab", "data": data})
