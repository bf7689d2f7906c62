"""One MCP session of the lab server, independent of any transport: receive, dispatch, answer.

Feed a :class:`LabSession` decoded messages with :meth:`LabSession.receive`
(or raw JSON with :meth:`LabSession.receive_json`) from inside a running
asyncio loop; it answers through the ``send`` callable it was built with.
Each request runs in its own task, so a slow tool never holds up a ping or a
``notifications/cancelled``.

A session serves both eras of MCP (``--era``).  A handshake-era request is
served in the context ``initialize`` set up (version, client capabilities, log
level); a stateless-era request (2026-07-28) brings all of that in its own
``params._meta`` and is served from that alone: its result carries
``resultType`` and the server's identity, a tool that needs the client's help
answers ``input_required`` instead of calling the client, and log messages flow
only at the level the request asked for.

The handlers live in :mod:`mcp_nb.lab.features`, one mixin per feature area;
the protocol fault knobs act at :class:`~mcp_nb.lab.faults.FaultSeam`.
"""

from __future__ import annotations

import asyncio
import json
import traceback
from collections.abc import Callable, Coroutine
from typing import Any

from mcp_nb.lab.eras import CACHEABLE_METHODS, MODERN_ONLY_METHODS, removed_method_note
from mcp_nb.lab.features.client_requests import ClientRequests
from mcp_nb.lab.features.lifecycle import Lifecycle
from mcp_nb.lab.features.logging import Logging
from mcp_nb.lab.features.subscriptions import Subscriptions
from mcp_nb.lab.knobs import Knobs
from mcp_nb.lab.rpc import Message, Request, RequestId, RpcError, Send, diag, is_request_id
from mcp_nb.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from mcp_nb.protocol.log_levels import LOG_LEVELS
from mcp_nb.protocol.stateless import (
    META_CLIENT_CAPABILITIES,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    RESULT_COMPLETE,
    is_stateless_request,
    missing_request_meta,
)

MethodHandler = Callable[[Request], Coroutine[Any, Any, Message]]

#: Methods a client may send before initialize has succeeded.
_PRE_INIT_METHODS = frozenset({"initialize", "ping"})


class Engine(Lifecycle, Logging, ClientRequests, Subscriptions):
    """The protocol engine of one session: receive, dispatch by the features' routes, answer.

    A session class is this engine plus the feature mixins of a menu (see
    :class:`LabSession`); the engine collects their ``ROUTES`` tables.
    Build a session with the knobs and a ``send`` callable, then call
    :meth:`receive` for every incoming message from within the event loop,
    and :meth:`close` when the transport goes away.

    ``era`` (default: ``knobs.era``) says which requests this session serves
    statelessly: a transport that routes the eras itself (HTTP) passes
    ``"handshake"`` or ``"stateless"``.  The versions the server advertises
    still follow ``knobs.era``.  ``hang_up``, if the transport can, ends the
    current request's connection without ending the request (HTTP's SSE polling).
    """

    #: Called once the handshake is done (notifications/initialized), if a transport set it.
    on_operating: Callable[[], None] | None = None

    def __init__(self, knobs: Knobs, send: Send, era: str | None = None,
                 hang_up: Callable[[], None] | None = None) -> None:
        super().__init__(knobs, send, era, hang_up)
        self._methods: dict[str, MethodHandler] = {}
        self._stateless_methods: dict[str, MethodHandler] = {}
        for feature in reversed(type(self).__mro__):
            for method, (handler, eras) in vars(feature).get("ROUTES", {}).items():
                if "handshake" in eras:
                    self._methods[method] = getattr(self, handler)
                if "stateless" in eras:
                    self._stateless_methods[method] = getattr(self, handler)

    # ----------------------------------------------------------- incoming

    def receive_json(self, data: bytes | str) -> None:
        """Decode one JSON text and :meth:`receive` it; undecodable input gets -32700."""
        try:
            message = json.loads(data)
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError alike
            self._reply_later(None, RpcError(PARSE_ERROR, f"Parse error: {exc}"))
            return
        if isinstance(message, list) and message and self.faults.breaks("answer-batches"):
            self._spawn(self._answer_batch(message))
            return
        self.receive(message)

    async def _answer_batch(self, batch: list[Any]) -> None:
        """--feature-fault answer-batches: a JSON array answered by one, as in 2025-03-26 only.

        Since 2025-06-18 a message is one request, notification or response; an array is
        not an MCP message at all, so a server that writes one breaks the stdio rule.
        """
        responses: list[Message] = []
        for item in batch:
            if not (isinstance(item, dict) and isinstance(item.get("method"), str)
                    and is_request_id(item.get("id"))):
                continue
            params = item.get("params") if isinstance(item.get("params"), dict) else {}
            request = Request(item["id"], item["method"], params,
                              self._is_stateless(item["method"], params))
            response: Message = {"jsonrpc": "2.0", "id": request.id}
            try:
                response["result"] = await self._dispatch(request)
            except RpcError as exc:
                response["error"] = exc.to_wire()
            responses.append(response)
        self._send(responses)  # type: ignore[arg-type]  # the fault: an array on the wire

    def receive(self, message: object) -> asyncio.Task[Any] | None:
        """Route one decoded message: request, notification or response.

        Returns the task serving a request (so a transport can cancel it when
        its client goes away), else None.
        """
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self._invalid(message, "expected a JSON-RPC 2.0 object")
            return None
        if "method" not in message:
            if is_request_id(message.get("id")) and ("result" in message or "error" in message):
                self.receive_response(message)
            else:
                self._invalid(message, "neither a request, a notification nor a response")
            return None
        method, params = message["method"], message.get("params", {})
        if not isinstance(method, str):
            self._invalid(message, "method must be a string")
        elif "id" not in message:
            if isinstance(params, dict):
                # A task, like requests, so a notification never overtakes an earlier
                # request (notifications/initialized must follow initialize's effect).
                self._spawn(self._receive_notification(method, params))
            else:
                diag(f"ignoring notification {method} whose params are not an object")
        elif not is_request_id(message["id"]):
            self._invalid(message, "id must be a string or an integer")
        elif not isinstance(params, dict):
            self._reply_later(
                message["id"], RpcError(INVALID_PARAMS, "Invalid params: params must be an object")
            )
        elif not self.faults.swallows(method, message["id"]):
            request = Request(message["id"], method, params, self._is_stateless(method, params))
            task = self._spawn(self._serve(request))
            self._inflight[request.id] = (method, task)
            return task
        return None

    def _is_stateless(self, method: str, params: dict[str, Any]) -> bool:
        """Which era serves this request: the session's, or (dual-era) the request's own."""
        if self.era != "both":
            return self.era == "stateless"
        return is_stateless_request(params) or method in MODERN_ONLY_METHODS

    def _invalid(self, message: object, why: str) -> None:
        """Answer -32600, echoing the id only if one can be read off the message."""
        msg_id = message.get("id") if isinstance(message, dict) else None
        self._reply_later(
            msg_id if is_request_id(msg_id) else None,
            RpcError(INVALID_REQUEST, f"Invalid Request: {why}"),
        )

    async def _receive_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/initialized":
            if self.state == "new":
                diag("notifications/initialized arrived before initialize; ignoring it")
            else:
                self.state = "operating"
                diag("client sent notifications/initialized: session operating")
                if self.on_operating is not None:
                    self.on_operating()
                if self.faults.breaks("undeclared-list-changed"):
                    self.notify("notifications/tools/list_changed", {})
        elif method == "notifications/cancelled":
            self._cancel(params.get("requestId"), params.get("reason"))
        else:
            diag(f"notification {method} received")

    def _cancel(self, request_id: object, reason: object) -> None:
        """Cancel an in-flight request; its task then ends without responding."""
        if not self.faults.honours_cancel(f"request {request_id!r}"):
            return
        entry = self._inflight.get(request_id) if is_request_id(request_id) else None
        if entry is None:
            diag(f"cancellation of unknown or finished request {request_id!r}; nothing to do")
        elif entry[0] == "initialize":
            diag("clients must not cancel initialize; ignoring the cancellation")
        else:
            diag(f"cancelling request {request_id!r} ({reason})")
            entry[1].cancel()

    def abandon(self, task: asyncio.Task[Any], reason: str) -> None:
        """Cancel the task :meth:`receive` returned: its client went away (HTTP's cancel)."""
        if task.done() or not self.faults.honours_cancel(f"a request whose client left "
                                                         f"({reason})"):
            return
        diag(f"cancelling a request: {reason}")
        task.cancel()

    # ----------------------------------------------------------- outgoing

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Start a task and keep a reference so it is neither collected nor forgotten at close."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _reply_later(self, request_id: RequestId | None, error: RpcError) -> None:
        """Answer with an error from a task, so even these responses pass the fault seam."""
        response = {"jsonrpc": "2.0", "id": request_id, "error": error.to_wire()}
        self._spawn(self.faults.deliver_response(self._send, response))

    # ----------------------------------------------------------- requests

    async def _serve(self, request: Request) -> None:
        """Run one request to completion and respond, unless cancelled."""
        try:
            response: Message = {"jsonrpc": "2.0", "id": request.id}
            try:
                response["result"] = await self._dispatch(request)
            except RpcError as exc:
                response["error"] = exc.to_wire()
            except Exception as exc:  # a bug in a handler must not kill the session
                diag(f"{request.method} failed:\n{traceback.format_exc()}")
                response["error"] = RpcError(INTERNAL_ERROR, f"Internal error: {exc}").to_wire()
            await self.faults.deliver_response(self._send, response)
        finally:
            if self._inflight.get(request.id, (None, None))[1] is asyncio.current_task():
                del self._inflight[request.id]
        if request.method == "initialize" and "result" in response:
            self.faults.after_initialize(self.premature_roots_request, self._spawn)

    async def _dispatch(self, request: Request) -> Message:
        if request.stateless:
            return self._stateless_result(request, await self._dispatch_stateless(request))
        handler = self._methods.get(request.method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {request.method}")
        if self.state == "new" and request.method not in _PRE_INIT_METHODS:
            raise RpcError(INVALID_REQUEST, "Server not initialized: send initialize first")
        return await handler(request)

    async def _dispatch_stateless(self, request: Request) -> Message:
        """Check a stateless request's ``_meta`` (the first failure is the answer), then
        serve the request from that alone."""
        if request.method == "initialize" and not is_stateless_request(request.params):
            raise self.initialize_refused(request.params.get("protocolVersion"))
        missing = missing_request_meta(request.params)
        if missing:
            raise RpcError(INVALID_PARAMS, f"Invalid params: params._meta lacks "
                           f"{', '.join(missing)}, which every 2026-07-28 request carries")
        version = request.meta[META_PROTOCOL_VERSION]
        if not isinstance(version, str):
            raise RpcError(INVALID_PARAMS, f"Invalid params: {META_PROTOCOL_VERSION} must be "
                           "a string")
        if version not in self.knobs.stateless_versions:
            served = self.served_versions()
            raise RpcError(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version",
                           {"supported": served, "requested": version})
        if not isinstance(request.meta[META_CLIENT_CAPABILITIES], dict):
            raise RpcError(INVALID_PARAMS, f"Invalid params: {META_CLIENT_CAPABILITIES} must "
                           "be an object")
        level = request.meta.get(META_LOG_LEVEL)
        if level is not None and level not in LOG_LEVELS:
            raise RpcError(INVALID_PARAMS, f"Invalid params: unknown {META_LOG_LEVEL} "
                           f"{level!r}; expected one of {', '.join(LOG_LEVELS)}")
        handler = self._stateless_methods.get(request.method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {request.method}"
                           f"{removed_method_note(request.method)}")
        return await handler(request)

    def _stateless_result(self, request: Request, result: Message) -> Message:
        """Dress a result for the stateless era: resultType, cache hints, serverInfo."""
        dressed = dict(result)
        dressed.setdefault("resultType", RESULT_COMPLETE)
        if request.method in CACHEABLE_METHODS:
            # Nothing here is user-specific, but the counter changes at any time.
            dressed.update(ttlMs=0, cacheScope="public")
        dressed["_meta"] = {**dressed.get("_meta", {}), META_SERVER_INFO: self.server_info()}
        return self.faults.dress_complete_result(dressed)

    # ----------------------------------------------------------- shutdown

    async def close(self, grace: float = 0.0) -> None:
        """End the session: give running work ``grace`` seconds to finish, then cancel it.

        The grace lets requests that were piped in just before EOF still be
        answered (``printf ... | python -m mcp_nb.lab`` works as a demo).
        Open subscriptions are ended first, so their clients learn that the
        server ended them (a complete result) rather than see the stream drop.
        """
        await self.end_subscriptions()
        if self._tasks and grace > 0:
            await asyncio.wait(list(self._tasks), timeout=grace)
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
