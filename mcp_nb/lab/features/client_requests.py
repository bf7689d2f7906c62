"""Sampling, elicitation and roots: what the lab asks of the client, in either era.

The handshake era sends the client a request and waits for its answer
(:meth:`ClientRequests.request_client`); the stateless era answers the tool
call ``input_required`` and finishes when the retry brings the answer
(:meth:`ClientRequests._input_round`, its progress kept in ``requestState``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from mcp_nb.lab.eras import (
    Rounds,
    decode_request_state,
    encode_request_state,
    input_key,
    request_digest,
)
from mcp_nb.lab.features.base import SessionBase
from mcp_nb.lab.rpc import Message, Request, RpcError, ToolFailure, diag
from mcp_nb.protocol.errors import (
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    REQUEST_TIMEOUT,
)
from mcp_nb.protocol.patience import with_answer_within
from mcp_nb.protocol.stateless import (
    INPUT_REQUEST_CAPABILITY,
    META_CLIENT_CAPABILITIES,
    RESULT_INPUT_REQUIRED,
)


class ClientRequests(SessionBase):
    """Requests from the server to the client, and the answers that come back."""

    async def request_client(self, method: str, params: dict[str, Any]) -> Any:
        """Send a request to the client and wait for its result.

        A client error is raised as :class:`RpcError`, and so is silence beyond
        --client-request-timeout (-32001).  Either way the server stops waiting,
        and if it gave up (a timeout, or the waiting task was cancelled) the
        client is told with ``notifications/cancelled``.
        """
        self._last_outgoing_id += 1
        request_id = self._last_outgoing_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._outgoing[request_id] = future
        timeout = self.knobs.client_request_timeout
        # How long the lab waits, said in _meta (a lab convention, not a spec field), so
        # that a person answering sees a countdown rather than a guess.
        self.send_message({"jsonrpc": "2.0", "id": request_id, "method": method,
                           "params": with_answer_within(params, timeout)})
        try:
            return await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            self.notify("notifications/cancelled",
                        {"requestId": request_id, "reason": f"no answer within {timeout:g} s"})
            diag(f"the client did not answer {method} (id {request_id}) within {timeout:g} s")
            raise RpcError(REQUEST_TIMEOUT, f"The client did not answer {method} within "
                           f"{timeout:g} s (--client-request-timeout)") from None
        except asyncio.CancelledError:
            self.notify(
                "notifications/cancelled",
                {"requestId": request_id, "reason": "the server no longer needs it"},
            )
            raise
        finally:
            del self._outgoing[request_id]

    def receive_response(self, message: Message) -> None:
        """The client's answer to one of :meth:`request_client`'s requests."""
        future = self._outgoing.get(message["id"])
        if future is None or future.done():
            diag(f"ignoring a response to unknown request id {message['id']!r}")
        elif "error" in message:
            future.set_exception(RpcError.from_wire(message["error"]))
        else:
            future.set_result(message["result"])

    async def premature_roots_request(self) -> None:
        """The --request-before-initialized fault: roots/list before the client is ready."""
        diag("sending roots/list before notifications/initialized (--request-before-initialized)")
        try:
            result = await self.request_client("roots/list", {})
        except RpcError as exc:
            diag(f"the client refused the premature roots/list: {exc.code} {exc.message}")
        else:
            diag(f"the client answered the premature roots/list: {result!r}")

    @staticmethod
    def require_capability(request: Request, method: str) -> None:
        """-32021 unless the stateless request's client declared what ``method`` needs."""
        capability = INPUT_REQUEST_CAPABILITY[method]
        if capability not in request.meta[META_CLIENT_CAPABILITIES]:
            raise RpcError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"Missing required client capability: {request.params.get('name')} needs "
                f"{method}, and the request's {META_CLIENT_CAPABILITIES} lacks {capability!r}",
                {"requiredCapabilities": {capability: {}}},
            )

    async def with_input(self, request: Request, method: str, params: dict[str, Any],
                         finish: Callable[[dict[str, Any]], str]) -> Message:
        """A tool result built from the client's answer to ``method``.

        ``finish`` turns one answer into the tool's text.
        """
        if request.stateless:
            return self._input_round(request, method, params, finish)
        answer = await self._ask_client(INPUT_REQUEST_CAPABILITY[method], method, params)
        return self.tool_result(finish(answer))

    async def _ask_client(self, capability: str, method: str, params: dict[str, Any]) -> Message:
        """Call back into the client, turning every way that can fail into a tool failure."""
        if capability not in self.client_capabilities:
            raise ToolFailure(
                f"The client did not declare the {capability!r} capability, "
                f"so the server may not send {method}."
            )
        try:
            result = await self.request_client(method, params)
        except RpcError as exc:
            if exc.code == REQUEST_TIMEOUT:
                raise ToolFailure(exc.message) from None
            raise ToolFailure(
                f"The client answered {method} with error {exc.code}: {exc.message}"
            ) from None
        if not isinstance(result, dict):
            raise ToolFailure(f"The client's {method} result was not an object.")
        return result

    def _input_round(self, request: Request, method: str, params: dict[str, Any],
                     finish: Callable[[dict[str, Any]], str]) -> Message:
        """One round of a multi-round-trip request: ask (again), or complete.

        Where the request stands comes from its ``requestState`` alone; without
        one it is a first attempt, and any ``inputResponses`` are ignored as
        unrecognised.  A retry that lacks the answer asked for is asked again
        (the spec's SHOULD), not failed.
        """
        digest = request_digest(request.method, request.params)
        responses = request.params.get("inputResponses", {})
        if not isinstance(responses, dict):
            raise RpcError(INVALID_PARAMS, "Invalid params: inputResponses must be an object")
        rounds = Rounds()
        if "requestState" in request.params:
            try:
                rounds = decode_request_state(request.params["requestState"], digest)
            except ValueError as exc:
                raise RpcError(INVALID_PARAMS, f"Invalid params: {exc}") from None
            answer = responses.get(input_key(method, rounds.round))
            if answer is not None:
                if not isinstance(answer, dict):
                    raise RpcError(INVALID_PARAMS, "Invalid params: inputResponses."
                                   f"{input_key(method, rounds.round)} must be an object")
                answers = (*rounds.answers, finish(answer))
                if len(answers) >= self.knobs.input_rounds:
                    return self.tool_result("\n".join(answers))
                rounds = Rounds(rounds.round + 1, answers)
        diag(f"{request.params.get('name')}: asking the client for {method} "
             f"(round {rounds.round} of {self.knobs.input_rounds})")
        return {
            "resultType": RESULT_INPUT_REQUIRED,
            "inputRequests": {input_key(method, rounds.round): {"method": method,
                                                                 "params": params}},
            "requestState": encode_request_state(digest, rounds),
        }
