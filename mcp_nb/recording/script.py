"""A recording read as a script: which client message made the server say what, and when.

Each message the client sent starts an :class:`Exchange`; everything the
server sent while that request was open (progress with its token, log lines,
its own requests to the client, then the response) becomes the exchange's
:class:`Step` list, each with its delay after the trigger.  A server message
sent while no request was open belongs to the client message before it (the
``initialized`` notification, typically).  When the client answered a server
request, a step says to wait for that answer before going on.

Requests are looked up by method and params, with ``_meta`` (progress tokens,
the stateless era's version and client info) and ids left out; ``initialize``,
``server/discover`` and every notification by method alone, since each client
fills those in its own way.  The n-th identical request gets the n-th recorded
answer, and the last one after that.

Example::

    script = Script.from_recording(load("session.jsonl"))
    found = script.find({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})
"""

from __future__ import annotations

import difflib
import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ..protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND
from .compare import count_differences, differences, shown
from .format import Record, Recording

#: Methods a replay answers whatever their params (clients fill them in their own way).
MATCHED_BY_METHOD = frozenset({"initialize", "server/discover"})

_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode


def comparable_params(params: Any) -> Any:
    """``params`` without ``_meta``: what must be equal for two requests to match."""
    if isinstance(params, dict) and "_meta" in params:
        return {k: v for k, v in params.items() if k != "_meta"}
    return params if params is not None else {}


def match_key(message: dict[str, Any]) -> tuple[str, str | None]:
    """The look-up key of a client message: its method, plus its params for most requests."""
    method = message["method"]
    if "id" not in message or method in MATCHED_BY_METHOD:
        return method, None
    params = message.get("params")
    if not params:
        return method, "{}"
    if isinstance(params, dict) and "_meta" in params:
        if len(params) == 1:
            return method, "{}"
        params = comparable_params(params)
    return method, _CANONICAL(params)


def progress_token(message: dict[str, Any]) -> Any:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get("progressToken") if isinstance(meta, dict) else None


@dataclass(slots=True)
class Step:
    """One thing the server does after the trigger: send ``message``, or wait for an answer."""

    #: Seconds after the trigger arrived.
    delay: float
    #: What the server sends; None for a step that only waits.
    message: dict[str, Any] | None = None
    #: Recorded id of a server request whose answer the client sent before this point.
    wait_for: str | int | None = None


@dataclass
class Exchange:
    """A client message and what the server did about it, in order."""

    trigger: Record
    steps: list[Step] = field(default_factory=list)
    #: False for a request the recording never saw answered (ended, cancelled, timed out).
    answered: bool = False

    @property
    def is_request(self) -> bool:
        return self.trigger.message is not None and "id" in self.trigger.message

    @property
    def response(self) -> dict[str, Any] | None:
        """The recorded response or error (requests only)."""
        if not self.answered:
            return None
        return self.steps[-1].message


@dataclass(frozen=True)
class Miss:
    """A client request the recording cannot answer, and the closest thing it has."""

    code: int
    message: str
    closest: Exchange | None = None
    changes: tuple[str, ...] = ()

    def error(self) -> dict[str, Any]:
        """The JSON-RPC ``error`` object a replay answers with."""
        data: dict[str, Any] = {"replay": "not in the recording"}
        if self.closest is not None:
            trigger = self.closest.trigger
            data["closest"] = {"line": trigger.line, "method": trigger.method,
                               "params": comparable_params((trigger.message or {}).get("params"))}
            data["differences"] = list(self.changes)
        return {"code": self.code, "message": self.message, "data": data}


class Script:
    """The exchanges of one recording, indexed for replay."""

    def __init__(self, recording: Recording, exchanges: list[Exchange],
                 opening: list[Step]) -> None:
        self.recording = recording
        self.exchanges = exchanges
        #: Server messages sent before the client said anything (rare; stdio only).
        self.opening = opening
        self._by_key: dict[tuple[str, str | None], list[Exchange]] = defaultdict(list)
        self._by_method: dict[str, list[Exchange]] = defaultdict(list)
        for exchange in exchanges:
            message = exchange.trigger.message
            assert message is not None
            self._by_key[match_key(message)].append(exchange)
            if exchange.is_request:
                self._by_method[message["method"]].append(exchange)
        self._served: dict[tuple[str, str | None], int] = defaultdict(int)

    @classmethod
    def from_recording(cls, recording: Recording) -> Script:
        exchanges: list[Exchange] = []
        opening = Exchange(Record(0, 0.0, "send"))
        pending: dict[Any, Exchange] = {}  # open client requests by id, oldest first
        by_token: dict[Any, Exchange] = {}
        server_requests: dict[Any, Exchange] = {}
        latest: Exchange = opening
        for record in recording.messages():
            message = record.message
            assert message is not None
            if record.direction == "send":
                if "method" in message:
                    latest = Exchange(record)
                    exchanges.append(latest)
                    if "id" in message:
                        pending[message["id"]] = latest
                        token = progress_token(message)
                        if token is not None:
                            by_token[token] = latest
                else:  # the client's answer to a server request
                    owner = server_requests.get(message.get("id"))
                    if owner is not None:
                        owner.steps.append(Step(record.time - owner.trigger.time,
                                                wait_for=message.get("id")))
                continue
            if "method" not in message:  # a response: it closes its request's exchange
                exchange = pending.pop(message.get("id"), None)
                if exchange is not None:  # else a late answer to an abandoned request
                    exchange.steps.append(Step(record.time - exchange.trigger.time, message))
                    exchange.answered = True
                continue
            owner = None
            if message["method"] == "notifications/progress":
                owner = by_token.get((message.get("params") or {}).get("progressToken"))
            if owner is None:
                owner = next(reversed(pending.values())) if pending else latest
            owner.steps.append(Step(record.time - owner.trigger.time, message))
            if "id" in message:
                server_requests[message["id"]] = owner
        return cls(recording, exchanges, opening.steps)

    def find(self, message: dict[str, Any]) -> Exchange | Miss:
        """The exchange that answers ``message`` (a client request or notification), or a miss."""
        key = match_key(message)
        candidates = self._by_key.get(key)
        if candidates:
            served = self._served[key]
            self._served[key] = served + 1
            exchange = candidates[min(served, len(candidates) - 1)]
            if exchange.is_request and not exchange.answered:
                return Miss(INTERNAL_ERROR,
                            f"replay: the recorded server never answered this {key[0]} "
                            f"(line {exchange.trigger.line}); answering with this error so the "
                            "replay does not hang", exchange)
            return exchange
        return self._miss(message)

    def _miss(self, message: dict[str, Any]) -> Miss:
        method = message.get("method", "")
        same_method = self._by_method.get(method)
        if not same_method:
            known = sorted(self._by_method)
            close = difflib.get_close_matches(method, known, n=1, cutoff=0.5)
            if not close:
                listed = ", ".join(known) if known else "none"
                return Miss(METHOD_NOT_FOUND, f"replay: the recording has no {method!r} request "
                                              f"(recorded requests: {listed})")
            closest = self._by_method[close[0]][0]
            return Miss(METHOD_NOT_FOUND,
                        f"replay: the recording has no {method!r} request; the closest is "
                        f"{close[0]!r} on line {closest.trigger.line}", closest,
                        (f"method: {shown(close[0])} → {shown(method)}",))
        params = comparable_params(message.get("params"))

        def distance(exchange: Exchange) -> int:
            recorded = comparable_params((exchange.trigger.message or {}).get("params"))
            return count_differences(recorded, params)

        closest = min(same_method, key=distance)
        recorded = comparable_params((closest.trigger.message or {}).get("params"))
        changes = differences(recorded, params)
        return Miss(INVALID_PARAMS,
                    f"replay: no recorded {method} has these params; the closest is on line "
                    f"{closest.trigger.line}, and from it to this request: {'; '.join(changes)}",
                    closest, tuple(changes))
