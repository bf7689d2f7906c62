"""The handshake era (2024-11-05 … 2025-11-25): initialize, judging its answer, initialized.

Shutdown has no message in MCP (the transport ends the session), so it lives
with the session itself (:meth:`mcp_nb.client.session.ClientSession.shutdown`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..protocol import stateless
from ..protocol.errors import (
    UNSUPPORTED_PROTOCOL_VERSION,
    LifecycleError,
    UnsupportedProtocolVersionError,
    UnsupportedVersionError,
)
from ..protocol.lifecycle import Event
from ..protocol.models import InitializeResult
from ..protocol.negotiation import Capabilities, VersionOutcome, check_version, version_rejection
from ..protocol.versions import SUPPORTED_VERSIONS, VERSIONS, Era
from .errors import ServerError
from .requests import UNSET, PendingRequest

if TYPE_CHECKING:
    from .parts import SessionParts
    from .session import ClientSession


class HandshakeEra:
    """Settles a session by the initialize handshake."""

    def __init__(self, session: ClientSession, parts: SessionParts) -> None:
        self._session = session
        self._record = parts.record
        # The inbound side comes later (it hands initialize's answer here); reached
        # through the parts to tell it whether the negotiated version allows batches.
        self._parts = parts

    async def initialize(self, version: str | None = None, *,
                         timeout: float | None = UNSET) -> InitializeResult:
        session = self._session
        offered = version or session.protocol_version
        params = {
            "protocolVersion": offered,
            "capabilities": session.client_capabilities,
            "clientInfo": session.client_info.model_dump(exclude_none=True),
        }
        try:
            await session.request("initialize", params, timeout=timeout)
        except UnsupportedVersionError:
            await session.shutdown(reason="version negotiation failed")
            raise
        except ServerError as exc:
            rejection = version_rejection(offered, exc.code, exc.message, exc.data)
            if rejection is None and exc.code == UNSUPPORTED_PROTOCOL_VERSION:
                rejection = UnsupportedProtocolVersionError(
                    requested=offered, server_supported=stateless.supported_from_error(exc.data)
                    or [], supported=SUPPORTED_VERSIONS,
                    hint="a stateless-era (2026-07-28) server has no initialize: connect with "
                         "era='auto' or era='stateless' (%mcp connect … --era auto)")
            await session.shutdown(reason="initialize failed")
            if rejection is not None:
                raise rejection from exc
            raise
        assert session.initialize_result is not None
        return session.initialize_result

    def complete_initialize(self, pending: PendingRequest, result: dict[str, Any]) -> None:
        """Judge the initialize result inside the reader, so the state is exact."""
        session = self._session
        offered = session.offered_version
        try:
            parsed = InitializeResult.model_validate(result)
        except ValueError as exc:
            pending.finish(error=LifecycleError(
                f"the initialize result is malformed ({exc.__class__.__name__}: "
                f"{str(exc).splitlines()[0]}); cannot continue"
            ))
            return
        try:
            outcome = check_version(offered, parsed.protocolVersion)
        except UnsupportedVersionError as exc:
            session.version_outcome = VersionOutcome(offered, parsed.protocolVersion,
                                                     "unsupported")
            self._record.finding("unsupported-version", "server", str(exc), result)
            pending.finish(error=exc)
            return
        session.version_outcome = outcome
        session.initialize_result = parsed
        session.era = Era.HANDSHAKE
        server_caps = parsed.capabilities.model_dump(exclude_none=True)
        session.capabilities = Capabilities(
            client=session.client_capabilities, server=server_caps,
            version=parsed.protocolVersion)
        self._parts.inbound.allow_batch = VERSIONS[parsed.protocolVersion].allows_batching
        session.transport.set_protocol_version(parsed.protocolVersion)
        session.lifecycle.fire(
            Event.INITIALIZE_RESULT, f"server answered protocol {parsed.protocolVersion}"
        )
        pending.finish(result=result)

    async def send_initialized(self) -> None:
        await self._session.notify("notifications/initialized")
