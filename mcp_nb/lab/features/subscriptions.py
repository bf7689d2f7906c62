"""The stateless era's subscriptions/listen: a request that stays open and carries changes."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any, ClassVar

from mcp_nb.lab.eras import Listener, honoured_filter
from mcp_nb.lab.features.base import STATELESS, Routes, SessionBase
from mcp_nb.lab.rpc import Message, Request, RpcError, diag
from mcp_nb.protocol.errors import INVALID_PARAMS
from mcp_nb.protocol.stateless import META_SUBSCRIPTION_ID, SUBSCRIPTION_FILTERS

#: Seconds that open subscriptions get to send their final result at shutdown.
GOODBYE = 1.0


class Subscriptions(SessionBase):
    """Open listen requests, and the change notifications published to them."""

    ROUTES: ClassVar[Routes] = {"subscriptions/listen": ("_listen", STATELESS)}

    async def _listen(self, request: Request) -> Message:
        """``subscriptions/listen``: acknowledge, then stay open until cancelled or shut down.

        Matching changes are sent from whatever task makes them (see
        :meth:`publish`), inside this request's context, so they reach this
        request's stream on HTTP and are written before the change's own
        response on stdio.
        """
        wanted = request.param("notifications", dict)
        try:
            honoured = honoured_filter(wanted, self.capabilities(), self.resource_exists)
        except ValueError as exc:
            raise RpcError(INVALID_PARAMS, f"Invalid params: {exc}") from None
        task = asyncio.current_task()
        assert task is not None
        listener = Listener(request.id, honoured, contextvars.copy_context())
        self._listeners[task] = listener
        try:
            self.notify("notifications/subscriptions/acknowledged",
                        {"notifications": honoured,
                         "_meta": {META_SUBSCRIPTION_ID: request.id}})
            await listener.ended.wait()
        finally:
            del self._listeners[task]
        diag(f"subscription {request.id!r} ended by the server")
        return {"_meta": {META_SUBSCRIPTION_ID: request.id}}

    def publish(self, flag: str, params: dict[str, Any], uri: str | None = None) -> None:
        """Send a change notification to every open listen request that opted in to it."""
        for listener in self._listeners.values():
            if listener.wants(flag, uri):
                stamped = {**params, "_meta": {META_SUBSCRIPTION_ID: listener.request_id}}
                message = {"jsonrpc": "2.0", "method": SUBSCRIPTION_FILTERS[flag],
                           "params": stamped}
                listener.context.run(self.send_message, message)

    async def end_subscriptions(self) -> None:
        """Complete every open ``subscriptions/listen`` request (the server is going away)."""
        for listener in self._listeners.values():
            listener.ended.set()
        if self._listeners:
            # Bounded: a listen response waits only for --delay before it is sent.
            await asyncio.wait(list(self._listeners), timeout=self.knobs.delay + GOODBYE)
