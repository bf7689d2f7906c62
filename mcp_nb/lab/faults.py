"""Where the lab session's protocol fault knobs act: one seam between the engine and the wire.

The session calls this seam at each edge a fault can bend (a request
arrives, a cancellation arrives, a response leaves, a result or capability set
is built, initialize has been answered), and each knob is applied here and
nowhere else in the engine.  A new protocol knob is one field in
:class:`~mcp_nb.lab.knobs.Knobs` (with its flag) plus one line in the edge it
bends; the handlers stay the well-behaved server.

Process knobs (signals, EOF, crashing, stdout garbage) act in :mod:`.stdio` and
:mod:`.process`; the HTTP knobs in :mod:`.http`; ``--hostile-strings`` in the
catalogue (:mod:`.content`), which is data.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from mcp_nb.lab.knobs import Knobs
from mcp_nb.lab.rpc import Message, Send, diag
from mcp_nb.protocol.stateless import RESULT_COMPLETE


class FaultSeam:
    """The protocol fault knobs of one session, as hooks at the engine's edges."""

    def __init__(self, knobs: Knobs) -> None:
        self.knobs = knobs

    def swallows(self, method: str, request_id: object) -> bool:
        """--never-answer: True if this request is to be read and never answered."""
        if self.knobs.never_answers(method):
            diag(f"never answering {method} (id {request_id!r}) (--never-answer)")
            return True
        return False

    def honours_cancel(self, what: str) -> bool:
        """--ignore-cancel: False if cancelling ``what`` is to be ignored."""
        if self.knobs.ignore_cancel:
            diag(f"ignoring the cancellation of {what} (--ignore-cancel)")
            return False
        return True

    async def deliver_response(self, send: Send, response: Message) -> None:
        """--delay and --reuse-response-id: how a response leaves the session."""
        if self.knobs.delay:
            await asyncio.sleep(self.knobs.delay)
        send(response)
        if self.knobs.reuse_response_id:
            send(response)

    def declared_capabilities(self, full: dict[str, Any]) -> dict[str, Any]:
        """--omit-capability: the capabilities declared, from the ones actually served."""
        declared = {name: value for name, value in full.items()
                    if name not in self.knobs.omit_capabilities}
        if self.breaks("undeclared-list-changed") and isinstance(declared.get("tools"), dict):
            declared["tools"] = {k: v for k, v in declared["tools"].items() if k != "listChanged"}
        return declared

    def dress_complete_result(self, result: Message) -> Message:
        """--omit-result-type: a complete stateless result without its resultType."""
        if self.knobs.omit_result_type and result.get("resultType") == RESULT_COMPLETE:
            del result["resultType"]
        return result

    def breaks(self, fault: str) -> bool:
        """--feature-fault: True if this session is to break the feature rule ``fault``.

        The features ask at the one place each rule is kept (a listing, an answer), so the
        well-behaved code path stays the default and the fault is one visible branch.
        """
        return fault in self.knobs.feature_faults

    def after_initialize(self, premature_request: Callable[[], Awaitable[None]],
                         spawn: Callable[[Awaitable[None]], Any]) -> None:
        """--request-before-initialized: ask the client something before it is ready."""
        if self.knobs.request_before_initialized:
            spawn(premature_request())
