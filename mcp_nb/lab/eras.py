"""The lab's stateless era (2026-07-28), in the pieces that need no session.

A dual-era server decides per request which era it is serving; this module
holds that decision's data (which methods belong to which era), and the two
things of the stateless era that must not live in server memory:

* **requestState.**  A multi-round-trip request (``input_required``) is
  resumed by a *new* request, possibly on another connection, so whatever the
  server learned in earlier rounds travels with the client.  The lab encodes
  it as base64url JSON (:func:`encode_request_state`)::

      {"request": "<digest of method, name, arguments>", "round": 2,
       "answers": ["Paris"]}

  ``round`` is the round whose answer the retry must carry (under the
  inputRequests key :func:`input_key` names); ``answers`` are the earlier
  rounds' answers as the tool will report them.  The digest ties the state to
  the request it was issued for, so a client that echoes it on another
  request gets -32602 instead of a confusing result (the spec's SHOULD).

  The state is *not* integrity-protected (no HMAC), on purpose: the spec lets
  a server omit that only when tampering can cause nothing worse than request
  failure, and that holds here: the answers in the state are ones the client
  supplied itself, the lab grants nothing on the strength of them, and a
  forged round number only makes the tool ask again or finish early.  A
  deterministic encoding also keeps transcripts (and nbval outputs)
  identical from run to run, which a per-process HMAC key would not.
  A real server whose state influences authorization must sign or encrypt it.

* **Subscriptions.**  ``subscriptions/listen`` is a request that stays open;
  a :class:`Listener` remembers what the client opted in to and where the
  stream's messages go (the listen task's context, which the HTTP transport
  reads to pick the response stream).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextvars
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_nb.protocol.stateless import INPUT_REQUEST_CAPABILITY, REMOVED_METHODS

#: Methods only the stateless era has.  A dual-era server serves them statelessly
#: even without ``_meta`` (the answer is then -32602 naming the missing keys, which
#: tells a client more than the "Method not found" of the handshake era).
MODERN_ONLY_METHODS = frozenset({"server/discover", "subscriptions/listen"})
#: Results that carry the cache hints ``ttlMs`` and ``cacheScope`` (2026-07-28 CacheableResult).
CACHEABLE_METHODS = frozenset({
    "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read",
})


def removed_method_note(method: str) -> str:
    """Why a stateless request for ``method`` is answered -32601 (empty if merely unknown)."""
    return " (removed in the stateless era)" if method in REMOVED_METHODS else ""


def input_key(method: str, round_number: int) -> str:
    """The inputRequests key for one round: ``sampling-1``, ``elicitation-2``, ``roots-1`` …

    A new key each round, so that an answer to an earlier round can never be
    taken for the answer to this one.
    """
    return f"{INPUT_REQUEST_CAPABILITY[method]}-{round_number}"


# -------------------------------------------------------------------- requestState


@dataclass(frozen=True)
class Rounds:
    """How far a multi-round-trip request has come."""

    #: The round whose answer the next retry must carry (1-based).
    round: int = 1
    #: What each earlier round's answer contributed to the result.
    answers: tuple[str, ...] = ()


def request_digest(method: str, params: Mapping[str, Any]) -> str:
    """A short digest of what identifies a request: method, name or uri, and arguments."""
    salient = {"method": method, "name": params.get("name"), "uri": params.get("uri"),
               "arguments": params.get("arguments")}
    canonical = json.dumps(salient, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def encode_request_state(digest: str, rounds: Rounds) -> str:
    """The opaque ``requestState`` string (see the module docstring for its contents)."""
    payload = {"request": digest, "round": rounds.round, "answers": list(rounds.answers)}
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=True)
    return base64.urlsafe_b64encode(text.encode()).decode("ascii")


def decode_request_state(state: object, digest: str) -> Rounds:
    """Read a ``requestState`` back; :class:`ValueError` says why it cannot be used."""
    if not isinstance(state, str):
        raise ValueError("requestState must be a string")
    try:
        payload = json.loads(base64.urlsafe_b64decode(state.encode("ascii")))
    except (ValueError, UnicodeError, binascii.Error):
        raise ValueError("requestState is not one this server issued") from None
    round_number = payload.get("round") if isinstance(payload, dict) else None
    answers = payload.get("answers") if isinstance(payload, dict) else None
    if (not isinstance(round_number, int) or isinstance(round_number, bool) or round_number < 1
            or not isinstance(answers, list) or not all(isinstance(a, str) for a in answers)):
        raise ValueError("requestState is not one this server issued")
    if payload.get("request") != digest:
        raise ValueError("requestState was issued for a different request (method, name or "
                         "arguments differ); retry with the original request's params")
    return Rounds(round_number, tuple(answers))


# -------------------------------------------------------------------- subscriptions

#: List-change flags of a subscription filter, and the capability declaring each.
_LIST_FLAGS = (
    ("toolsListChanged", "tools"),
    ("promptsListChanged", "prompts"),
    ("resourcesListChanged", "resources"),
)


def honoured_filter(requested: Mapping[str, Any], capabilities: Mapping[str, Any],
                    exists: Callable[[str], bool]) -> dict[str, Any]:
    """The part of a ``subscriptions/listen`` filter the lab agrees to honour.

    A list-change kind is honoured if the server declares ``listChanged`` for
    it; resource URIs if it declares ``resources.subscribe`` and the resource
    exists.  Flags not set to true and an empty URI list are left out, so the
    acknowledgement reads as exactly what will be delivered.
    :class:`ValueError` for a filter of the wrong shape.
    """
    honoured: dict[str, Any] = {}
    for flag, capability in _LIST_FLAGS:
        value = requested.get(flag)
        if value is not None and not isinstance(value, bool):
            raise ValueError(f"notifications.{flag} must be a boolean")
        if value and (capabilities.get(capability) or {}).get("listChanged"):
            honoured[flag] = True
    uris = requested.get("resourceSubscriptions", [])
    if not isinstance(uris, list) or not all(isinstance(uri, str) for uri in uris):
        raise ValueError("notifications.resourceSubscriptions must be an array of URIs")
    if (capabilities.get("resources") or {}).get("subscribe"):
        kept = [uri for uri in dict.fromkeys(uris) if exists(uri)]
        if kept:
            honoured["resourceSubscriptions"] = kept
    return honoured


@dataclass
class Listener:
    """One open ``subscriptions/listen`` request."""

    #: The listen request's id: the ``subscriptionId`` stamped on its notifications.
    request_id: str | int
    #: The acknowledged filter (:func:`honoured_filter`).
    honoured: dict[str, Any]
    #: The listen task's context: sending inside it reaches the listen stream.
    context: contextvars.Context
    #: Set when the server ends the subscription (shutdown): the request then completes.
    ended: asyncio.Event = field(default_factory=asyncio.Event)

    def wants(self, flag: str, uri: str | None = None) -> bool:
        """True if the client opted in to ``flag`` (for ``resourceSubscriptions``, to ``uri``)."""
        if flag == "resourceSubscriptions":
            return uri in self.honoured.get(flag, ())
        return bool(self.honoured.get(flag))
