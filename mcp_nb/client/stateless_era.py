"""The stateless era (2026-07-28): the era probe, per-request ``_meta``, input-required rounds.

Where this era differs from the handshake era, it differs here: no
initialize (``server/discover`` probes, and a handshake-era answer falls back
to initialize), every request carries version, capabilities and client info
in ``_meta`` (a -32022 answer renegotiates the version once), server→client
requests arrive as ``input_required`` results that are answered and retried,
and ``subscriptions/listen`` replaces the handshake era's standing
notifications.  The rules themselves (sans-I/O) are in
:mod:`mcp_nb.protocol.stateless`.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from ..i18n import _
from ..protocol import stateless, tasks, tool_headers
from ..protocol.errors import (
    UNSUPPORTED_PROTOCOL_VERSION,
    LifecycleError,
    McpError,
    UnsupportedProtocolVersionError,
)
from ..protocol.lifecycle import Event
from ..protocol.models import DiscoverResult, InitializeResult
from ..protocol.negotiation import Capabilities
from ..protocol.versions import STATELESS_VERSIONS, Era
from .errors import (
    EraProbeFailed,
    InputRequestFailed,
    InvalidResult,
    RequestRefused,
    RequestTimeout,
    ServerError,
    SessionClosed,
)
from .requests import UNSET
from .tasks import task_handle_problem

if TYPE_CHECKING:
    from .parts import SessionParts
    from .session import ClientSession


@dataclass
class EraStep:
    """One step of settling the era: a probe, its verdict, a fallback, the adoption."""

    time: float
    #: "probe", "verdict", "fallback", "adopt" or "version".
    kind: str
    detail: str


@dataclass
class Subscription:
    """One ``subscriptions/listen`` request (stateless era): open until cancelled.

    ``acknowledged`` is what the server agreed to send (None until it says so);
    ``notifications`` collects the notifications tagged with this subscription.
    """

    request_id: int
    requested: dict[str, Any]
    acknowledged: dict[str, Any] | None = None
    notifications: list[dict[str, Any]] = field(default_factory=list)
    #: Why the subscription ended (None while it is open).
    ended: str | None = None
    #: Set once the server acknowledged it, or once it ended.
    settled: anyio.Event | None = field(default=None, repr=False, compare=False)


class StatelessEra:
    """Settles a session by ``server/discover`` and sends its requests the stateless way."""

    def __init__(self, session: ClientSession, parts: SessionParts) -> None:
        self._session = session
        self._record = parts.record
        self._request_once = parts.request_once
        self._server_requests = parts.server_requests
        self._table = parts.table
        self._start_soon = parts.lifetime.start_soon

    def _step(self, kind: str, detail: str) -> None:
        session = self._session
        session.era_steps.append(EraStep(session.lifecycle.elapsed(), kind, detail))
        self._record.note(f"era {kind}", detail)

    async def probe(self, handshake_version: str | None, *, fall_back: bool,
                    within: float | None = None) -> InitializeResult | DiscoverResult:
        """Ask ``server/discover``; adopt the stateless era, fall back, or give up (all of it
        in ``within`` seconds when given: each request waits at most what is left)."""
        session = self._session
        version = session.stateless_version
        deadline = math.inf if within is None else anyio.current_time() + within

        def left(timeout: float | None) -> float:
            # Never 0: a request's timeout of 0 (or None) means no timeout at all.
            return max(0.01, min(timeout or math.inf, deadline - anyio.current_time()))

        for attempt in range(2):
            self._step("probe", _("server/discover at {version}: a stateless-era server "
                                  "answers it, a handshake-era one refuses or ignores it").format(
                version=version))
            try:
                result = await self.request(
                    "server/discover", None, version=version, negotiate=False,
                    timeout=left(session.probe_timeout))
                verdict = stateless.judge_probe(version, result=result)
            except RequestTimeout:
                verdict = stateless.judge_probe(version, timed_out=True)
            except RequestRefused as exc:
                verdict = stateless.judge_probe(version, error=(exc.code, exc.message, exc.data),
                                                http_status=exc.status)
            except ServerError as exc:
                verdict = stateless.judge_probe(version, error=(exc.code, exc.message, exc.data))
            self._step("verdict", f"{verdict.verdict}: {verdict.reason}")
            if verdict.verdict == "retry" and attempt == 0 and verdict.version:
                version = verdict.version
                continue
            if verdict.verdict == "stateless":
                assert verdict.discover is not None and verdict.version is not None
                self._adopt(verdict.version, verdict.discover)
                return verdict.discover
            if verdict.verdict == "handshake":
                if not fall_back:
                    await session.shutdown(reason="not a stateless-era server")
                    raise EraProbeFailed(_(
                        "the server does not speak the stateless era: {reason}; connect with "
                        "era='auto' (or 'handshake') to reach it").format(reason=verdict.reason))
                self._step("fallback", _("falling back to the initialize handshake"))
                initialized = await session.initialize(
                    handshake_version, timeout=left(session.default_timeout))
                await session.send_initialized()
                return initialized
            break
        await session.shutdown(reason="era negotiation failed")
        reason = verdict.reason
        if verdict.verdict == "retry":  # refused again after the one retry
            reason = _("the server refused server/discover at {version} again, although it "
                       "lists that version as supported").format(version=version)
        raise EraProbeFailed(_("cannot agree on a protocol version: {reason}").format(
            reason=reason))

    def _adopt(self, version: str, discover: DiscoverResult) -> None:
        session = self._session
        session.era = Era.STATELESS
        session.stateless_version = version
        session.discover_result = discover
        session.capabilities = Capabilities(
            client=session.client_capabilities,
            server=discover.capabilities.model_dump(exclude_none=True), version=version)
        session.transport.set_protocol_version(version)
        self._step("adopt", _("stateless era, protocol {version}: no handshake; every request "
                              "carries version, capabilities and client info in _meta").format(
            version=version))
        session.lifecycle.fire(Event.ADOPT_STATELESS,
                               f"server/discover answered; speaking {version}")

    async def discover(self, version: str | None = None, **options: Any) -> DiscoverResult:
        result = await self.request("server/discover", None, version=version, **options)
        try:
            parsed = DiscoverResult.model_validate(result)
        except ValueError as exc:
            raise InvalidResult(f"server/discover: the result is not a discover result "
                                f"({str(exc).splitlines()[0]})") from None
        if self._session.era is Era.STATELESS:
            self._session.discover_result = parsed
        return parsed

    async def request(self, method: str, params: dict[str, Any] | None, *,
                      version: str | None = None, log_level: str | None = UNSET,
                      negotiate: bool = True, **options: Any) -> dict[str, Any]:
        """A stateless-era request: ``_meta`` on it, -32022 renegotiation, input rounds.

        ``negotiate=False`` is the era probe: errors and results come back raw,
        for :func:`~mcp_nb.protocol.stateless.judge_probe` to read.
        """
        session = self._session
        version = version or session.stateless_version
        level = session.log_level if log_level is UNSET else log_level
        meta = stateless.request_meta(
            version, session.client_capabilities,
            session.client_info.model_dump(exclude_none=True), level)
        current = stateless.with_meta(params, meta)
        renegotiated = False
        rounds = 0
        while True:
            try:
                result = await self._request_once(method, current, **options)
            except ServerError as exc:
                if not negotiate or exc.code != UNSUPPORTED_PROTOCOL_VERSION:
                    raise
                supported = stateless.supported_from_error(exc.data) or []
                mutual = [v for v in STATELESS_VERSIONS if v in supported]
                if renegotiated or not mutual:
                    raise UnsupportedProtocolVersionError(
                        requested=version, server_supported=supported,
                        supported=STATELESS_VERSIONS,
                        hint="" if version in supported else
                        _("if it lists handshake-era versions, connect with era='auto'")
                    ) from exc
                renegotiated = True
                if mutual[-1] == version:
                    self._step("version", _(
                        "{method}: the server refused {version} although it lists it as "
                        "supported; retrying once at the same version").format(
                        method=method, version=version))
                else:
                    self._step("version", _(
                        "{method}: the server does not speak {version}; retrying at {retry}, "
                        "which it lists").format(method=method, version=version,
                                                 retry=mutual[-1]))
                version = session.stateless_version = mutual[-1]
                current = {**current, "_meta": {**current["_meta"],
                                                stateless.META_PROTOCOL_VERSION: version}}
                continue
            if not negotiate:
                return result
            needed = self._input_required(method, result)
            if needed is None:
                return result
            rounds += 1
            if rounds > session.max_input_rounds:
                raise InputRequestFailed(_(
                    "{method}: the server still asks for input after {rounds} rounds; giving "
                    "up (raise max_input_rounds if that is expected)").format(
                    method=method, rounds=session.max_input_rounds))
            answers = await self.answer_input_requests(method, needed.requests)
            current = stateless.retry_params(current, answers, needed.request_state)

    def _input_required(self, method: str,
                        result: dict[str, Any]) -> stateless.InputRequired | None:
        """What an ``input_required`` result asks for; None for a complete result.

        Records what breaks the rules as findings; an unusable result raises
        :class:`InvalidResult`.
        """
        session = self._session
        record = self._record
        info = stateless.server_info_of(result)
        if info is not None:
            session.last_server_info = info
        if "resultType" not in result:
            record.finding(
                "result-type-missing",
                "server",
                _("the {method} result has no resultType; read as complete").format(method=method),
                result)
            return None
        kind = stateless.result_type(result)
        if kind == tasks.RESULT_TYPE_TASK:
            problem = task_handle_problem(session, method)
            if problem is None:
                return None  # a task handle: the caller follows it (mcp_nb.client.tasks)
            record.finding("task-result-invalid", "server", problem, result)
            raise InvalidResult(f"{method}: {problem}")
        if kind not in stateless.RESULT_TYPES:
            detail = (f"the {method} result has resultType {kind!r}, which this client does "
                      "not know (complete, input_required): the result is invalid")
            record.finding("result-type-unknown", "server", detail, result)
            raise InvalidResult(f"{method}: {detail}")
        if kind == stateless.RESULT_COMPLETE:
            return None
        if method not in stateless.MRTR_METHODS:
            problem = (f"{method} may not answer input_required (only "
                       f"{', '.join(sorted(stateless.MRTR_METHODS))} may)")
        else:
            try:
                return stateless.parse_input_required(result)
            except ValueError as exc:
                problem = str(exc)
        record.finding("input-required-not-allowed", "server", problem, result)
        raise InvalidResult(f"{method}: {problem}")

    async def answer_input_requests(self, method: str,
                                    requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """Answer each input request with the handler the handshake era would use.

        ``method`` names what asked (a request, or a task) in messages.  Also
        used for a task's input requests (:mod:`mcp_nb.client.tasks`).
        """
        session = self._session
        asked = ", ".join(f"{key} ({request.get('method')})"
                          for key, request in requests.items())
        self._record.note(
            "input required",
            _("{method} needs input before it can complete: {asked}; the client answers, then "
              "retries with a new id").format(
                method=method, asked=asked or _("nothing asked, only requestState to echo")))
        answers: dict[str, Any] = {}
        for key, request in requests.items():
            wanted = request.get("method")
            capability = stateless.INPUT_REQUEST_CAPABILITY.get(wanted)  # type: ignore[arg-type]
            if capability is None:
                raise InputRequestFailed(_("{method} asked for {wanted} (input {key}), which "
                                           "no client answers").format(
                    method=method, wanted=repr(wanted), key=repr(key)))
            if not session.capabilities.client_supports(wanted):
                detail = (f"{method} asked for {wanted} (input {key!r}), but this client did "
                          f"not declare the {capability!r} capability")
                self._record.finding("input-request-undeclared", "server", detail, request)
                raise InputRequestFailed(_(
                    "{method} asked for {wanted} (input {key}), but this client did not "
                    "declare the {capability} capability; declare it (pass on_{name}=…) to "
                    "answer such requests").format(method=method, wanted=wanted, key=repr(key),
                                                   capability=repr(capability), name=capability))
            handler = self._server_requests.handler_for(wanted)
            if handler is None:
                raise InputRequestFailed(_(
                    "{method} asked for {wanted} (input {key}): the client declared "
                    "{capability} but has no handler (pass on_{name}=…)").format(
                    method=method, wanted=wanted, key=repr(key), capability=repr(capability),
                    name=capability))
            try:
                answer = handler(request.get("params") or {})
                if inspect.isawaitable(answer):
                    answer = await answer
            except Exception as exc:
                raise InputRequestFailed(_(
                    "{method}: answering {wanted} (input {key}) failed: {error}").format(
                    method=method, wanted=wanted, key=repr(key),
                    error=f"{type(exc).__name__}: {exc}")) from exc
            answers[key] = answer
        if answers:
            self._record.note(
                "input answered",
                _("answered {answers}; retrying {method}").format(
                    answers=', '.join(answers), method=method))
        return answers

    async def listen(self, wanted: dict[str, Any], timeout: float | None) -> Subscription:
        session = self._session
        if session.era is not Era.STATELESS:
            raise LifecycleError(_(
                "subscriptions/listen belongs to the stateless era; in the handshake era the "
                "server sends list_changed on its own and resources/subscribe asks for updates"))
        sent = anyio.Event()
        holder: list[Subscription] = []

        def on_sent(request_id: int) -> None:
            subscription = Subscription(request_id, wanted, settled=anyio.Event())
            session.subscriptions[request_id] = subscription
            holder.append(subscription)
            sent.set()

        async def run() -> None:
            try:
                await self.request(
                    "subscriptions/listen", {"notifications": wanted}, timeout=None,
                    max_timeout=math.inf, on_sent=on_sent)
                reason = "the server ended the subscription"
            except McpError as exc:
                reason = str(exc)
            if holder:
                holder[0].ended = reason
                assert holder[0].settled is not None
                holder[0].settled.set()
            sent.set()

        self._start_soon(run)
        await sent.wait()
        if not holder:
            raise SessionClosed(_("subscriptions/listen could not be sent"))
        subscription = holder[0]
        assert subscription.settled is not None
        with anyio.move_on_after(session.probe_timeout if timeout is None else timeout):
            await subscription.settled.wait()
        return subscription

    async def unlisten(self, subscription: Subscription) -> None:
        session = self._session
        if subscription.ended is None and subscription.request_id in self._table.pending:
            await session.cancel(subscription.request_id, "the client ended the subscription")
        subscription.ended = subscription.ended or "the client ended the subscription"

    def screen_tools(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Leave out tools whose ``x-mcp-header`` annotations are invalid (SEP-2243).

        Each one left out is a ``tool-header-invalid`` finding; the transport
        (if it sends headers) learns the annotations of every tool kept.
        """
        session = self._session
        tell_transport = session.transport.set_param_headers
        kept = []
        for tool in tools:
            if not isinstance(tool, dict):
                kept.append(tool)  # not a tool at all: the model says so
                continue
            schema, name = tool.get("inputSchema"), tool.get("name")
            problems = tool_headers.header_problems(schema)
            if problems:
                self._record.finding(
                    "tool-header-invalid",
                    "server",
                    _("tool {name} is left out of the tool list and will not be called: "
                      "{problems}").format(name=repr(name), problems="; ".join(problems)),
                    tool)
                continue
            if isinstance(name, str):
                tell_transport(name, tool_headers.header_annotations(schema))
            kept.append(tool)
        return kept

    def route(self, method: str, params: dict[str, Any]) -> None:
        """File a notification tagged with a subscription id under its subscription."""
        meta = params.get("_meta")
        sub_id = meta.get(stateless.META_SUBSCRIPTION_ID) if isinstance(meta, dict) else None
        subscription = self._session.subscriptions.get(sub_id)  # type: ignore[arg-type]
        if subscription is None:
            return
        if method == "notifications/subscriptions/acknowledged":
            agreed = params.get("notifications")
            subscription.acknowledged = agreed if isinstance(agreed, dict) else {}
            if subscription.settled is not None:
                subscription.settled.set()
        else:
            subscription.notifications.append({"method": method, "params": params})
