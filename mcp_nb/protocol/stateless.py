"""The stateless 2026-07-28 era, without I/O: per-request metadata, result types,
multi-round-trip requests and the era probe's verdicts.

In this era nothing is negotiated once for a connection.  Every request carries
its protocol version, the client's capabilities and (optionally) its identity
in ``params._meta``; every result says what kind of result it is
(``resultType``); a server that needs the user's input answers
``input_required`` and the client retries the request with the answers.

Example::

    >>> from mcp_nb.protocol.stateless import request_meta, with_meta, result_type
    >>> meta = request_meta("2026-07-28", {}, {"name": "demo", "version": "1"})
    >>> with_meta({"name": "add"}, meta)["_meta"]["io.modelcontextprotocol/protocolVersion"]
    '2026-07-28'
    >>> result_type({"content": []})   # absent means complete
    'complete'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..i18n import N_, _
from .errors import (
    ERROR_NAMES,
    HEADER_MISMATCH,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from .versions import STATELESS_VERSIONS, VERSIONS

if TYPE_CHECKING:
    from .models import DiscoverResult

# Reserved ``_meta`` keys of the stateless era.
META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

#: Keys a server must find on every request (it answers -32602 otherwise).
REQUIRED_REQUEST_META = (META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES)

RESULT_COMPLETE = "complete"
RESULT_INPUT_REQUIRED = "input_required"
RESULT_TYPES = frozenset({RESULT_COMPLETE, RESULT_INPUT_REQUIRED})

#: The only requests a server may answer with ``input_required``.
MRTR_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})

#: What a server may ask for inside ``inputRequests``, and the client capability each needs.
INPUT_REQUEST_CAPABILITY = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}

#: Handshake-era messages the 2026-07-28 revision removed, and what replaced them.
REMOVED_METHODS: dict[str, str] = {
    "initialize": N_("there is no handshake; every request carries its version and capabilities "
                     "in _meta (server/discover tells what a server supports)"),
    "notifications/initialized": N_("there is no handshake to confirm"),
    "ping": N_("ping was removed; any request (server/discover, say) shows the server is alive"),
    "logging/setLevel": N_("the log level is per request: pass log_level= (it travels as "
                           "io.modelcontextprotocol/logLevel in _meta)"),
    "resources/subscribe": N_("subscriptions/listen replaced it (resourceSubscriptions)"),
    "resources/unsubscribe": N_("closing the subscriptions/listen request replaced it"),
    "notifications/roots/list_changed": N_("roots are asked for per request (inputRequests)"),
}

#: Notifications a client may opt in to on ``subscriptions/listen`` (filter key → method).
SUBSCRIPTION_FILTERS = {
    "toolsListChanged": "notifications/tools/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
    "resourceSubscriptions": "notifications/resources/updated",
}


def request_meta(version: str, capabilities: Mapping[str, Any],
                 client_info: Mapping[str, Any] | None,
                 log_level: str | None = None) -> dict[str, Any]:
    """The ``_meta`` fields one stateless request carries."""
    meta: dict[str, Any] = {
        META_PROTOCOL_VERSION: version,
        META_CLIENT_CAPABILITIES: dict(capabilities),
    }
    if client_info is not None:
        meta[META_CLIENT_INFO] = dict(client_info)
    if log_level is not None:
        meta[META_LOG_LEVEL] = log_level
    return meta


def with_meta(params: Mapping[str, Any] | None, meta: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with ``meta`` merged into its ``_meta`` (keys already there win).

    A caller's own ``_meta`` keys (``progressToken``, trace context) survive.
    """
    merged = dict(params or {})
    existing = merged.get("_meta")
    merged["_meta"] = {**meta, **existing} if isinstance(existing, Mapping) else dict(meta)
    return merged


def missing_request_meta(params: Mapping[str, Any] | None) -> list[str]:
    """Required ``_meta`` keys a request lacks (a server answers -32602 for any)."""
    meta = (params or {}).get("_meta")
    if not isinstance(meta, Mapping):
        return list(REQUIRED_REQUEST_META)
    return [key for key in REQUIRED_REQUEST_META if key not in meta]


def is_stateless_request(params: Mapping[str, Any] | None) -> bool:
    """True if a request declares its protocol version in ``_meta`` (how a dual-era
    server tells a stateless request from a handshake-era one)."""
    meta = (params or {}).get("_meta")
    return isinstance(meta, Mapping) and META_PROTOCOL_VERSION in meta


def result_type(result: Mapping[str, Any]) -> str:
    """A result's ``resultType``; absent means ``complete`` (earlier servers omit it)."""
    value = result.get("resultType", RESULT_COMPLETE)
    return value if isinstance(value, str) else repr(value)


def server_info_of(result: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``io.modelcontextprotocol/serverInfo`` a result carries in ``_meta``, if any."""
    meta = result.get("_meta")
    info = meta.get(META_SERVER_INFO) if isinstance(meta, Mapping) else None
    return info if isinstance(info, dict) else None


@dataclass(frozen=True)
class InputRequired:
    """An ``input_required`` result: what the server asks for, and its opaque state."""

    #: Server-chosen key → ``{"method": …, "params": …}``.
    requests: dict[str, dict[str, Any]]
    #: Echoed back unchanged on the retry; never inspected.
    request_state: str | None


def parse_input_required(result: Mapping[str, Any]) -> InputRequired:
    """Validate an ``input_required`` result; :class:`ValueError` says what is wrong."""
    requests = result.get("inputRequests")
    state = result.get("requestState")
    if requests is None and state is None:
        raise ValueError("an input_required result must carry inputRequests or requestState")
    if state is not None and not isinstance(state, str):
        raise ValueError(f"requestState must be a string, not {type(state).__name__}")
    if requests is None:
        requests = {}
    if not isinstance(requests, Mapping):
        raise ValueError(f"inputRequests must be an object, not {type(requests).__name__}")
    checked: dict[str, dict[str, Any]] = {}
    for key, request in requests.items():
        if not isinstance(request, Mapping) or not isinstance(request.get("method"), str):
            raise ValueError(f"input request {key!r} is not a {{method, params}} object")
        if request["method"] not in INPUT_REQUEST_CAPABILITY:
            raise ValueError(
                f"input request {key!r} asks for {request['method']!r}; only "
                f"{', '.join(INPUT_REQUEST_CAPABILITY)} may be asked for")
        params = request.get("params")
        if params is not None and not isinstance(params, Mapping):
            raise ValueError(f"input request {key!r} has params that are not an object")
        checked[str(key)] = {"method": request["method"], "params": dict(params or {})}
    return InputRequired(checked, state)


def retry_params(params: Mapping[str, Any] | None, responses: Mapping[str, Any],
                 request_state: str | None) -> dict[str, Any]:
    """The original request's params plus the answers, for the retry (a new id)."""
    retried = {k: v for k, v in (params or {}).items()
               if k not in ("inputResponses", "requestState")}
    if responses:
        retried["inputResponses"] = dict(responses)
    if request_state is not None:
        retried["requestState"] = request_state
    return retried


def supported_from_error(data: Any) -> list[str] | None:
    """``data.supported`` of an UnsupportedProtocolVersion error, if it is a list of strings."""
    if isinstance(data, Mapping):
        supported = data.get("supported")
        if isinstance(supported, list) and all(isinstance(v, str) for v in supported):
            return supported
    return None


# -- the era probe ---------------------------------------------------------------------------

Verdict = Literal["stateless", "handshake", "retry", "fail"]


@dataclass(frozen=True)
class ProbeVerdict:
    """What one ``server/discover`` probe says about the server's era.

    ``retry``: the server is modern and named a version both sides speak;
    probe again with ``version``.  ``fail``: the server is modern but nothing
    can be agreed (or it rejected the request itself); ``reason`` says why.
    """

    verdict: Verdict
    reason: str
    version: str | None = None
    discover: DiscoverResult | None = None


def judge_probe(offered: str, *, result: Mapping[str, Any] | None = None,
                error: tuple[int | None, str, Any] | None = None, timed_out: bool = False,
                http_status: int | None = None,
                speaks: tuple[str, ...] = STATELESS_VERSIONS) -> ProbeVerdict:
    """Decide the era from the answer to ``server/discover`` sent at ``offered``.

    The rule (2026-07-28, basic/versioning#backward-compatibility): a recognised
    modern answer (a discover result, or one of the stateless era's own error
    codes) means a modern server; *anything else* — any other error, silence,
    a result that is not a discover result — means a handshake-era server, so
    fall back to ``initialize``.  The verdict is not keyed to one error code.
    ``error`` is ``(code, message, data)``; over HTTP a refusal without a
    JSON-RPC body has code ``None`` and its ``http_status``.
    """
    if timed_out:
        return ProbeVerdict(
            "handshake",
            _("no answer to server/discover within the probe timeout: a handshake-era server may "
              "ignore unknown requests before initialize"))
    if error is not None:
        code, message, data = error
        if http_status == 401:
            # An authorization challenge says nothing about the era: never fall back on it.
            return ProbeVerdict(
                "fail",
                _("server/discover was answered 401 Unauthorized: the server wants authorization "
                  "(MCP basic/authorization), which says nothing about its era; connect with an "
                  "OAuth client, e.g. http_transport(url, auth=mcp_nb.auth.OAuth())"))
        if code is None:
            return ProbeVerdict(
                "handshake",
                _("server/discover was refused with HTTP {http_status} and no JSON-RPC error: not "
                  "a stateless-era server").format(http_status=http_status))
        name = ERROR_NAMES.get(code, "error")
        if code == UNSUPPORTED_PROTOCOL_VERSION:
            supported = supported_from_error(data) or []
            mutual = [v for v in speaks if v in supported]
            if mutual and mutual[-1] != offered:
                return ProbeVerdict(
                    "retry",
                    _("the server is modern but does not speak {offered}; it lists "
                      "{supported}").format(offered=offered, supported=", ".join(supported)),
                    mutual[-1])
            if mutual:  # it refused the very version it lists: worth one more try as it is
                return ProbeVerdict(
                    "retry",
                    _("the server refused {offered} although it lists it among the versions it "
                      "supports ({supported}); trying {offered} once more").format(
                        offered=offered, supported=", ".join(supported)),
                    offered)
            if any(v in VERSIONS for v in supported):
                return ProbeVerdict(
                    "handshake",
                    _("the server lists only handshake-era versions it shares with us "
                      "({supported})").format(supported=", ".join(supported)))
            return ProbeVerdict(
                "fail",
                _("the server is stateless-era but supports {supported}, none of which this "
                  "client speaks ({speaks})").format(
                    supported=", ".join(supported) or _("no version"), speaks=", ".join(speaks)))
        if code in (HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY):
            return ProbeVerdict(
                "fail",
                _("the server is stateless-era but rejected the probe with {code} {name}: "
                  "{message}").format(code=code, name=name, message=message))
        return ProbeVerdict(
            "handshake",
            _("server/discover was answered with error {code} ({message}), not a stateless-era "
              "error: a handshake-era server").format(code=code, message=message))
    try:
        from .models import DiscoverResult  # pydantic: not on the servers' (the lab's) start

        discover = DiscoverResult.model_validate(result or {})
    except ValueError:
        return ProbeVerdict(
            "handshake",
            _("the answer to server/discover is not a discover result: not evidence of a "
              "stateless-era server"))
    mutual = [v for v in speaks if v in discover.supportedVersions]
    if not mutual:
        return ProbeVerdict(
            "handshake",
            _("server/discover answered, but it lists no stateless-era version "
              "({supportedVersions})").format(
                supportedVersions=", ".join(discover.supportedVersions)),
            discover=discover)
    return ProbeVerdict(
        "stateless",
        _("server/discover answered: the server speaks {supportedVersions}").format(
            supportedVersions=", ".join(discover.supportedVersions)),
        mutual[-1],
        discover)
