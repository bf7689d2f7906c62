"""The async MCP client session (anyio), driving the protocol core over a transport.

One session is one lifecycle.  It lives in one task group (entered by
``async with``): a reader task takes frames off the transport and dispatches
them; callers' requests wait on a pending-request table keyed by id.  Where
the transport offers it (stdio on asyncio), a response or notification is
handled right in the pipe's read callback instead (a response resumes its
caller there), and a frame the pipe takes at once is sent without a lock or
a coroutine: the round trip is the hot path (benchmarks/RESULTS.md).

Step-through (each step is one awaited call, so a notebook cell can show it)::

    async with ClientSession(StdioTransport([sys.executable, "-m", "mcp_nb.lab"])) as s:
        result = await s.initialize()          # Uninitialized → Initializing → Initialized
        await s.send_initialized()             # → Operating
        tools = await s.list_tools()
        print((await s.call_tool("add", {"a": 1, "b": 2})).text)
    # leaving the block shuts down: → ShuttingDown → Terminated

or all at once with ``await s.connect()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio
from anyio.abc import TaskGroup

from .. import __version__
from ..protocol import stateless
from ..protocol.envelope import (
    DEFAULT_MAX_MESSAGE_BYTES,
    ErrorResponse,
    IdAllocator,
    Message,
    Notification,
    Request,
    Response,
    decode,
    encode,
)
from ..protocol.errors import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    CapabilityError,
    EnvelopeError,
    LifecycleError,
    McpError,
    UnsupportedProtocolVersionError,
    UnsupportedVersionError,
)
from ..protocol.findings import Finding, make_finding
from ..protocol.lifecycle import Event, Lifecycle, State, TransitionRecord
from ..protocol.models import (
    CallToolResult,
    DiscoverResult,
    Implementation,
    InitializeResult,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
)
from ..protocol.negotiation import Capabilities, VersionOutcome, check_version, version_rejection
from ..protocol.versions import (
    LATEST_STATELESS_VERSION,
    LATEST_VERSION,
    STATELESS_VERSIONS,
    SUPPORTED_VERSIONS,
    VERSIONS,
    Era,
)
from ..transports.base import Transport, TransportClosed, TransportEvent
from ..transports.wakeup import InlineWakeup
from .errors import (
    EraProbeFailed,
    InputRequestFailed,
    InvalidResult,
    RequestCancelled,
    RequestRefused,
    RequestTimeout,
    ServerError,
    ServerExited,
    SessionClosed,
)
from .transcript import Transcript, TranscriptEntry

#: Handler for a server→client request: receives ``params``, returns the ``result``.
RequestHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]] | dict[str, Any]]
#: ``(progress, total, message)``; called on the session's event loop, must not block.
ProgressCallback = Callable[[float, float | None, str | None], Any]
NotificationCallback = Callable[[Notification], Any]

DEFAULT_TIMEOUT = 30.0
#: How long ``server/discover`` may stay unanswered before the era probe reads the
#: silence as a handshake-era server (the stdio binding's "reasonable timeout").
DEFAULT_PROBE_TIMEOUT = 10.0
#: ``input_required`` answers one request may get before the client gives up.
DEFAULT_MAX_INPUT_ROUNDS = 8
#: Even with reset-on-progress a request never waits longer than this (spec: always
#: enforce a maximum).
DEFAULT_MAX_TIMEOUT = 300.0

_UNSET: Any = object()

# Server→client requests and the client capability each one needs.
_CAPABILITY_OF_HANDLER = {
    "roots/list": "roots",
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
}

# Notifications the client understands (others are recorded as unknown).
KNOWN_SERVER_NOTIFICATIONS = frozenset({
    "notifications/cancelled",
    "notifications/progress",
    "notifications/message",
    "notifications/resources/updated",
    "notifications/resources/list_changed",
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/elicitation/complete",
    "notifications/subscriptions/acknowledged",
})

EraChoice = Era | str


_KIND_OF: dict[type, str] = {
    Request: "request", Notification: "notification", Response: "response",
    ErrorResponse: "error",
}


@dataclass
class RawExchange:
    """What one hand-written message did: transcript entries, findings, the state after."""

    entries: list[TranscriptEntry]
    findings: list[Finding]
    state: State
    #: For each request in the message: its result dict, or the error it produced.
    outcomes: list[dict[str, Any] | Exception] = field(default_factory=list)


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


class _Waiter(Protocol):
    """What a request's caller waits on: set once, by the response or the deadline watcher.

    An :class:`anyio.Event`; on asyncio an :class:`InlineWakeup`, which is
    cheaper and can resume the caller in the read callback that handled its
    response (see :meth:`ClientSession._take_inline`).
    """

    def set(self) -> None: ...

    def wait(self) -> Awaitable[Any]: ...


class _Pending:
    """One request in flight."""

    __slots__ = (
        "deadline", "deadline_cap", "done", "error", "id", "method", "on_progress",
        "reset", "result", "timeout", "waiter",
    )

    def __init__(self, request_id: int, method: str, on_progress: ProgressCallback | None,
                 waiter: _Waiter) -> None:
        self.id = request_id
        self.method = method
        self.waiter = waiter
        self.result: dict[str, Any] | None = None
        self.error: Exception | None = None
        self.done = False
        self.on_progress = on_progress
        #: When the deadline watcher gives up on it (event-loop clock).
        self.deadline = math.inf
        self.timeout = math.inf
        self.reset = False
        self.deadline_cap = math.inf

    def finish(self, result: dict[str, Any] | None = None, error: Exception | None = None) -> None:
        if self.done:
            return
        self.done = True
        self.result = result
        self.error = error
        # Last: handled in a read callback, this resumes the caller right here.
        self.waiter.set()


class ClientSession:
    """An MCP client session over any :class:`~mcp_nb.transports.base.Transport`.

    Parameters mirror what the spec lets a client choose: its identity
    (``client_info``), what it declares (``capabilities``; derived from the
    handlers you pass when omitted), the version it offers, and timeouts.

    ``on_roots``, ``on_sampling`` and ``on_elicitation`` answer the server's
    ``roots/list``, ``sampling/createMessage`` and ``elicitation/create``; each
    takes the request's params and returns the result (sync or async).
    """

    def __init__(
        self,
        transport: Transport,
        *,
        client_info: Implementation | Mapping[str, Any] | None = None,
        capabilities: Mapping[str, Any] | None = None,
        protocol_version: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_timeout: float = DEFAULT_MAX_TIMEOUT,
        reset_timeout_on_progress: bool = False,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        on_roots: RequestHandler | None = None,
        on_sampling: RequestHandler | None = None,
        on_elicitation: RequestHandler | None = None,
        log_level: str | None = None,
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        max_input_rounds: int = DEFAULT_MAX_INPUT_ROUNDS,
    ) -> None:
        self.transport = transport
        if client_info is None:
            client_info = Implementation(
                name="mcp_nb", version=__version__, title="mcp_nb notebook client"
            )
        elif not isinstance(client_info, Implementation):
            client_info = Implementation.model_validate(client_info)
        self.client_info: Implementation = client_info
        self._handlers: dict[str, RequestHandler] = {
            method: handler
            for method, handler in (
                ("roots/list", on_roots),
                ("sampling/createMessage", on_sampling),
                ("elicitation/create", on_elicitation),
            )
            if handler is not None
        }
        if capabilities is None:
            capabilities = {_CAPABILITY_OF_HANDLER[m]: {} for m in self._handlers}
        self.client_capabilities: dict[str, Any] = dict(capabilities)
        #: Version every stateless-era request carries (a -32022 answer may change it).
        self.stateless_version = LATEST_STATELESS_VERSION
        if protocol_version in STATELESS_VERSIONS:
            self.stateless_version, protocol_version = protocol_version, None
        #: Version offered by :meth:`initialize` unless it is given one.
        self.protocol_version = protocol_version or LATEST_VERSION
        #: Stateless era: the minimum log level each request asks for (None: no logs).
        self.log_level = log_level
        self.probe_timeout = probe_timeout
        self.max_input_rounds = max_input_rounds
        self.default_timeout = timeout
        self.max_timeout = max_timeout
        self.reset_timeout_on_progress = reset_timeout_on_progress
        self.max_message_bytes = max_message_bytes

        self.lifecycle = Lifecycle()
        self.transcript = Transcript()
        self.findings: list[Finding] = []
        #: ``notifications/message`` params received, in order.
        self.log_messages: list[dict[str, Any]] = []
        #: Set once the handshake succeeded.
        self.initialize_result: InitializeResult | None = None
        self.version_outcome: VersionOutcome | None = None
        #: The protocolVersion the initialize request carried.
        self.offered_version = self.protocol_version
        self.capabilities = Capabilities(client=self.client_capabilities, server={})
        #: The era this session speaks: None until initialize or the probe settles it.
        self.era: Era | None = None
        #: How the era was settled (probe, verdict, fallback), in order.
        self.era_steps: list[EraStep] = []
        #: What ``server/discover`` answered (stateless era).
        self.discover_result: DiscoverResult | None = None
        #: ``io.modelcontextprotocol/serverInfo`` of the latest result that carried one.
        self.last_server_info: dict[str, Any] | None = None
        self.subscriptions: dict[int, Subscription] = {}

        self._ids = IdAllocator()
        self._pending: dict[int, _Pending] = {}
        # Ids we stopped waiting for (timeout/cancel) → why; a late answer is then expected.
        self._abandoned: dict[int, str] = {}
        self._server_request_ids: set[str | int] = set()
        self._server_request_scopes: dict[str | int, anyio.CancelScope] = {}
        self._notification_callbacks: list[NotificationCallback] = []
        self._finding_callbacks: list[Callable[[Finding], Any]] = []
        self._allow_batch = False
        self._task_group: TaskGroup | None = None
        self._send_lock: anyio.Lock | None = None
        # The scope _watch_deadlines sleeps in; its deadline is the earliest request's.
        self._deadline_watch: anyio.CancelScope | None = None
        self._terminated: anyio.Event | None = None
        # Chosen in open(), per event loop (see _Waiter): what callers wait on, and
        # the event loop's clock (anyio's current_time() looks the backend up each call).
        self._new_waiter: Callable[[], _Waiter] = anyio.Event
        self._clock: Callable[[], float] = anyio.current_time
        # The transport's optional send_nowait (the sending fast path), on asyncio.
        self._send_nowait: Callable[[bytes], bool] | None = None
        # The frame _take_inline decoded and left to the reader, so it is decoded once.
        self._left_to_reader: tuple[bytes, Any, Message | list[Message]] | None = None
        self._shutdown_started = False
        self._exit_error: TransportClosed | None = None
        self.transport_events: list[TransportEvent] = []

    # -- context management ------------------------------------------------------

    async def __aenter__(self) -> ClientSession:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        try:
            await self.shutdown()
        finally:
            assert self._task_group is not None
            self._task_group.cancel_scope.cancel()
            # The body's own exception propagates as itself (not wrapped in an
            # ExceptionGroup), so `except ServerError` around the block works.
            await self._task_group.__aexit__(None, None, None)

    async def open(self) -> None:
        """Start the transport and the reader, without initializing (Uninitialized).

        Prefer ``async with``; :meth:`open` is for hosts (the notebook layer)
        that manage the task's lifetime themselves and call :meth:`aclose`.
        """
        if self._task_group is not None:
            raise SessionClosed("this session was already opened; a new lifecycle needs a new "
                                "ClientSession")
        self._send_lock = anyio.Lock()
        self._terminated = anyio.Event()
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        self.lifecycle.restart_clock()  # times are relative to opening the session
        try:
            await self.transport.start(self._task_group, self._on_transport_event)
        except BaseException:
            self._task_group.cancel_scope.cancel()
            await self._task_group.__aexit__(None, None, None)
            raise
        loop = _running_asyncio_loop()
        if loop is not None:
            self._new_waiter = functools.partial(InlineWakeup, loop=loop)
            self._clock = loop.time
            self._send_nowait = getattr(self.transport, "send_nowait", None)
            take_frames_inline = getattr(self.transport, "take_frames_inline", None)
            if take_frames_inline is not None:
                take_frames_inline(self._take_inline)
        self._task_group.start_soon(self._read_loop)
        self._task_group.start_soon(self._watch_deadlines)

    # -- observation ----------------------------------------------------------------

    @property
    def state(self) -> State:
        return self.lifecycle.state

    @property
    def negotiated_version(self) -> str | None:
        """The version in use: negotiated by initialize, or carried by every stateless request."""
        if self.era is Era.STATELESS:
            return self.stateless_version
        return self.initialize_result.protocolVersion if self.initialize_result else None

    @property
    def server_info(self) -> Implementation | None:
        """Who the server says it is (initialize result; stateless: discover or result _meta)."""
        if self.era is Era.STATELESS:
            info = self.last_server_info
            if info is None and self.discover_result is not None:
                return self.discover_result.serverInfo
            try:
                return Implementation.model_validate(info) if info is not None else None
            except ValueError:
                return None
        return self.initialize_result.serverInfo if self.initialize_result else None

    @property
    def in_flight(self) -> list[tuple[int, str]]:
        """``(id, method)`` of every request still awaiting its response."""
        return [(p.id, p.method) for p in self._pending.values()]

    def on_transition(self, callback: Callable[[TransitionRecord], Any]) -> Callable[[], None]:
        """Subscribe to lifecycle transitions; returns an unsubscribe function.

        Like transcript observers and :meth:`on_finding` callbacks, ``callback``
        is called synchronously, and possibly outside any task: on asyncio a
        response is handled in the transport's read callback.  Keep it quick
        and event-loop-agnostic (update state, a widget); to await something,
        hand it to a task of your own (``loop.create_task``).
        """
        return self.lifecycle.subscribe(callback)

    def on_notification(self, callback: NotificationCallback) -> Callable[[], None]:
        """Subscribe to every notification from the server."""
        self._notification_callbacks.append(callback)
        return lambda: self._notification_callbacks.remove(callback)

    def on_finding(self, callback: Callable[[Finding], Any]) -> Callable[[], None]:
        """Subscribe to findings (called synchronously, as :meth:`on_transition` says)."""
        self._finding_callbacks.append(callback)
        return lambda: self._finding_callbacks.remove(callback)

    def set_handler(self, method: str, handler: RequestHandler | None) -> None:
        """Install (or remove) the handler for a server→client request.

        The capability must still be declared at initialize time for the
        server to be allowed to use it.
        """
        if method not in _CAPABILITY_OF_HANDLER:
            raise ValueError(
                f"no server→client request {method!r}; choose one of "
                f"{', '.join(_CAPABILITY_OF_HANDLER)}"
            )
        if handler is None:
            self._handlers.pop(method, None)
        else:
            self._handlers[method] = handler

    def _elapsed(self) -> float:
        return self.lifecycle.elapsed()

    def _record_finding(self, rule_id: str, side: str, detail: str, evidence: Any) -> Finding:
        finding = make_finding(rule_id, side, detail, evidence, self._elapsed())  # type: ignore[arg-type]
        self.findings.append(finding)
        self.transcript.add(
            finding.time, "event", "finding", self.state.value, text=detail, note=rule_id
        )
        for callback in list(self._finding_callbacks):
            callback(finding)
        return finding

    def _on_transport_event(self, event: TransportEvent) -> None:
        self.transport_events.append(event)
        self.transcript.add(
            self._elapsed(), "event", event.kind, self.state.value, text=event.detail
        )
        if event.kind == "oversized line":
            self._record_finding("message-too-large", "server", event.detail, None)
        elif event.kind == "request refused":
            self._on_request_refused(event.data)

    def _on_request_refused(self, data: dict[str, Any]) -> None:
        """An HTTP refusal of a stateless request that carried no JSON-RPC answer."""
        pending = self._pending.pop(data.get("id"), None)  # type: ignore[arg-type]
        if pending is None:
            return
        error = data.get("error") if isinstance(data.get("error"), dict) else {}
        code = error.get("code") if isinstance(error.get("code"), int) else None
        message = str(error.get("message") or data.get("body") or "(empty body)")
        pending.finish(error=RequestRefused(pending.method, int(data.get("status", 0)), code,
                                            message, error.get("data")))

    def _note(self, kind: str, text: str) -> None:
        """A line of the client's own reasoning in the transcript (era, input rounds)."""
        self.transcript.add(self._elapsed(), "event", kind, self.state.value, text=text)

    def _era_step(self, kind: str, detail: str) -> None:
        self.era_steps.append(EraStep(self._elapsed(), kind, detail))
        self._note(f"era {kind}", detail)

    # -- handshake --------------------------------------------------------------------

    async def initialize(
        self, version: str | None = None, *, timeout: float | None = _UNSET
    ) -> InitializeResult:
        """Send ``initialize`` and wait for the answer (Uninitialized → Initialized).

        ``version`` is offered instead of the latest supported one; any string
        goes, so a learner can see how a server answers ``"1.0.0"``.  If the
        server answers with a version this client cannot speak, or rejects the
        offer with -32602, the session disconnects and
        :class:`~mcp_nb.protocol.errors.UnsupportedVersionError` names the
        offered, answered and supported versions.
        """
        offered = version or self.protocol_version
        params = {
            "protocolVersion": offered,
            "capabilities": self.client_capabilities,
            "clientInfo": self.client_info.model_dump(exclude_none=True),
        }
        try:
            await self.request("initialize", params, timeout=timeout)
        except UnsupportedVersionError:
            await self.shutdown(reason="version negotiation failed")
            raise
        except ServerError as exc:
            rejection = version_rejection(offered, exc.code, exc.message, exc.data)
            if rejection is None and exc.code == UNSUPPORTED_PROTOCOL_VERSION:
                rejection = UnsupportedProtocolVersionError(
                    requested=offered, server_supported=stateless.supported_from_error(exc.data)
                    or [], supported=SUPPORTED_VERSIONS,
                    hint="a stateless-era (2026-07-28) server has no initialize: connect with "
                         "era='auto' or era='stateless' (%mcp connect … --era auto)")
            await self.shutdown(reason="initialize failed")
            if rejection is not None:
                raise rejection from exc
            raise
        assert self.initialize_result is not None
        return self.initialize_result

    def _complete_initialize(self, pending: _Pending, result: dict[str, Any], offered: str) -> None:
        """Judge the initialize result inside the reader, so the state is exact."""
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
            self.version_outcome = VersionOutcome(offered, parsed.protocolVersion, "unsupported")
            self._record_finding("unsupported-version", "server", str(exc), result)
            pending.finish(error=exc)
            return
        self.version_outcome = outcome
        self.initialize_result = parsed
        self.era = Era.HANDSHAKE
        server_caps = parsed.capabilities.model_dump(exclude_none=True)
        self.capabilities = Capabilities(
            client=self.client_capabilities, server=server_caps, version=parsed.protocolVersion
        )
        self._allow_batch = VERSIONS[parsed.protocolVersion].allows_batching
        self.transport.set_protocol_version(parsed.protocolVersion)
        self.lifecycle.fire(
            Event.INITIALIZE_RESULT, f"server answered protocol {parsed.protocolVersion}"
        )
        pending.finish(result=result)

    async def send_initialized(self) -> None:
        """Send ``notifications/initialized`` (Initialized → Operating)."""
        await self.notify("notifications/initialized")

    async def connect(self, version: str | None = None, *,
                      era: EraChoice = Era.HANDSHAKE) -> InitializeResult | DiscoverResult:
        """Settle the era and get ready to operate, in one call.

        ``era="handshake"`` (the default): initialize, then initialized; returns
        the :class:`InitializeResult`.  ``era="stateless"``: ``server/discover``,
        and the session speaks 2026-07-28 per request; returns the
        :class:`DiscoverResult`.  ``era="auto"``: probe with ``server/discover``
        and fall back to the handshake unless the answer is a recognised
        stateless-era one (spec: basic/versioning#backward-compatibility).  Each
        step is in :attr:`era_steps` and the transcript.  ``version`` is offered
        in the era it belongs to.
        """
        choice = era if isinstance(era, Era) else _parse_era(era)
        offered = version
        if version in STATELESS_VERSIONS:
            self.stateless_version, offered = version, None
        if choice is Era.HANDSHAKE:
            result = await self.initialize(offered)
            await self.send_initialized()
            return result
        return await self._probe_era(offered, fall_back=choice == "auto")

    async def _probe_era(self, handshake_version: str | None, *,
                         fall_back: bool) -> InitializeResult | DiscoverResult:
        version = self.stateless_version
        for attempt in range(2):
            self._era_step("probe", f"server/discover at {version}: a stateless-era server "
                           "answers it, a handshake-era one refuses or ignores it")
            try:
                result = await self._stateless_request(
                    "server/discover", None, version=version, negotiate=False,
                    timeout=self.probe_timeout)
                verdict = stateless.judge_probe(version, result=result)
            except RequestTimeout:
                verdict = stateless.judge_probe(version, timed_out=True)
            except RequestRefused as exc:
                verdict = stateless.judge_probe(version, error=(exc.code, exc.message, exc.data),
                                                http_status=exc.status)
            except ServerError as exc:
                verdict = stateless.judge_probe(version, error=(exc.code, exc.message, exc.data))
            self._era_step("verdict", f"{verdict.verdict}: {verdict.reason}")
            if verdict.verdict == "retry" and attempt == 0 and verdict.version:
                version = verdict.version
                continue
            if verdict.verdict == "stateless":
                assert verdict.discover is not None and verdict.version is not None
                self._adopt_stateless(verdict.version, verdict.discover)
                return verdict.discover
            if verdict.verdict == "handshake":
                if not fall_back:
                    await self.shutdown(reason="not a stateless-era server")
                    raise EraProbeFailed(
                        f"the server does not speak the stateless era: {verdict.reason}; "
                        "connect with era='auto' (or 'handshake') to reach it")
                self._era_step("fallback", "falling back to the initialize handshake")
                result = await self.initialize(handshake_version)
                await self.send_initialized()
                return result
            break
        await self.shutdown(reason="era negotiation failed")
        raise EraProbeFailed(f"cannot agree on a protocol version: {verdict.reason}")

    def _adopt_stateless(self, version: str, discover: DiscoverResult) -> None:
        self.era = Era.STATELESS
        self.stateless_version = version
        self.discover_result = discover
        self.capabilities = Capabilities(
            client=self.client_capabilities,
            server=discover.capabilities.model_dump(exclude_none=True), version=version)
        self.transport.set_protocol_version(version)
        self._era_step("adopt", f"stateless era, protocol {version}: no handshake; every "
                       "request carries version, capabilities and client info in _meta")
        self.lifecycle.fire(Event.ADOPT_STATELESS, f"server/discover answered; speaking {version}")

    async def discover(self, version: str | None = None, **options: Any) -> DiscoverResult:
        """Send ``server/discover`` (any era's session may ask; it settles nothing).

        To *choose* the stateless era use ``connect(era="stateless")`` or
        ``connect(era="auto")``.
        """
        result = await self._stateless_request("server/discover", None, version=version,
                                               **options)
        try:
            parsed = DiscoverResult.model_validate(result)
        except ValueError as exc:
            raise InvalidResult(f"server/discover: the result is not a discover result "
                                f"({str(exc).splitlines()[0]})") from None
        if self.era is Era.STATELESS:
            self.discover_result = parsed
        return parsed

    # -- sending ------------------------------------------------------------------------

    def _guard(self, method: str, *, is_request: bool, force: bool) -> None:
        closing = self._shutdown_started or self.state is State.TERMINATED
        if closing and method != "notifications/cancelled":
            if self._exit_error is not None:
                raise self._closed_error()
            raise SessionClosed(
                f"cannot send {method!r}: the session is {self.state.value}; open a new session"
            )
        if self.era is Era.STATELESS and method in stateless.REMOVED_METHODS:
            text = (f"{method!r} does not exist in the stateless era ({self.stateless_version}): "
                    f"{stateless.REMOVED_METHODS[method]}")
            if not force:
                raise LifecycleError(f"{text} (pass force=True to send it anyway)")
            self._record_finding("removed-in-stateless-era", "client", f"sent anyway: {text}",
                                 method)
            return
        refusal = self.lifecycle.client_refusal(method, is_request=is_request)
        if refusal is not None:
            rule_id, text = refusal
            if not force:
                raise LifecycleError(f"{text} (pass force=True to send it anyway)")
            self._record_finding(rule_id, "client", f"sent anyway: {text}", method)
        if is_request and self.state is State.OPERATING:
            try:
                self.capabilities.check_request(method)
            except CapabilityError as exc:
                if not force:
                    raise
                self._record_finding("capability-not-negotiated", "client",
                                     f"sent anyway: {exc}", method)

    async def _send(self, message: dict[str, Any], kind: str, method: str | None,
                    request_id: int | str | None) -> None:
        data = encode(message)
        self.transcript.add(
            self._elapsed(), "send", kind, self.state.value, size=len(data), method=method,
            id=request_id, message=message,
        )
        send_nowait = self._send_nowait
        if send_nowait is not None and not self._send_lock.locked():  # type: ignore[union-attr]
            # Nobody is waiting to send before us, so the frame may go ahead at once.
            try:
                if send_nowait(data):
                    return
            except TransportClosed as exc:
                raise self._closed_error(exc) from None
        await self._transmit(data)

    async def _transmit(self, frame: bytes) -> None:
        """Hand one frame to the transport, one sender at a time.

        A free lock is taken without a checkpoint: ``async with anyio.Lock()``
        always yields to the event loop first, which cost an extra loop
        iteration on every request (benchmarks/RESULTS.md, "Profiling").
        """
        lock = self._send_lock
        assert lock is not None, "open the session first (async with ClientSession…)"
        try:
            lock.acquire_nowait()
        except anyio.WouldBlock:
            await lock.acquire()
        try:
            await self.transport.send(frame)
        except TransportClosed as exc:
            raise self._closed_error(exc) from None
        finally:
            lock.release()

    def _closed_error(self, exc: TransportClosed | None = None) -> SessionClosed:
        exc = exc or self._exit_error
        if exc is None:
            return SessionClosed(f"the session is {self.state.value}; open a new session")
        return ServerExited(str(exc), exit_code=exc.exit_code, stderr_tail=exc.stderr_tail,
                            transport_error=exc)

    async def notify(
        self, method: str, params: dict[str, Any] | None = None, *, force: bool = False
    ) -> None:
        """Send a notification (guarded by the lifecycle unless ``force``)."""
        self._guard(method, is_request=False, force=force)
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._send(message, "notification", method, None)
        self._after_sending(method)

    def _before_sending(self, method: str, params: dict[str, Any] | None) -> None:
        """Lifecycle effects of a message about to leave (initialize starts initializing)."""
        if method == "initialize" and self.state is State.UNINITIALIZED:
            self.offered_version = str((params or {}).get("protocolVersion"))
            self.lifecycle.fire(Event.SEND_INITIALIZE, "client sent initialize")

    def _after_sending(self, method: str) -> None:
        """Lifecycle effects of a message that left (initialized starts operating)."""
        if method == "notifications/initialized" and self.state is State.INITIALIZED:
            self.lifecycle.fire(Event.SEND_INITIALIZED, "client sent notifications/initialized")

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = _UNSET,
        on_progress: ProgressCallback | None = None,
        reset_timeout_on_progress: bool | None = None,
        max_timeout: float | None = None,
        force: bool = False,
        on_sent: Callable[[int], Any] | None = None,
        log_level: str | None = _UNSET,
    ) -> dict[str, Any]:
        """Send a request and wait for its result (a dict).

        ``timeout`` overrides the session default (``None`` = wait up to the
        maximum).  With ``on_progress`` a progress token is attached and
        ``notifications/progress`` for it are passed to the callback; with
        ``reset_timeout_on_progress`` each progress notification restarts the
        timeout, never beyond ``max_timeout``.  ``force`` sends a request the
        lifecycle or the negotiated capabilities forbid, recording a finding.
        ``on_sent`` is called with the request id once it is on the wire (for
        UIs that offer a Cancel button).

        Raises :class:`ServerError` for an error response,
        :class:`RequestTimeout` (-32001) after sending ``notifications/cancelled``,
        :class:`RequestCancelled` if :meth:`cancel` was called, and
        :class:`ServerExited` if the server went away meanwhile.

        In the stateless era the request also carries the ``_meta`` fields
        (version, capabilities, client info, and ``log_level`` or the session's
        :attr:`log_level`); an ``input_required`` result is answered through the
        same handlers as the handshake era's server→client requests and the
        request retried, until a complete result arrives.
        """
        if self.era is Era.STATELESS:
            return await self._stateless_request(
                method, params, log_level=log_level, timeout=timeout, on_progress=on_progress,
                reset_timeout_on_progress=reset_timeout_on_progress, max_timeout=max_timeout,
                force=force, on_sent=on_sent)
        return await self._request_once(
            method, params, timeout=timeout, on_progress=on_progress,
            reset_timeout_on_progress=reset_timeout_on_progress, max_timeout=max_timeout,
            force=force, on_sent=on_sent)

    async def _request_once(
        self,
        method: str,
        params: dict[str, Any] | None,
        *,
        timeout: float | None = _UNSET,
        on_progress: ProgressCallback | None = None,
        reset_timeout_on_progress: bool | None = None,
        max_timeout: float | None = None,
        force: bool = False,
        on_sent: Callable[[int], Any] | None = None,
    ) -> dict[str, Any]:
        """One request, one response: what both eras share."""
        self._guard(method, is_request=True, force=force)
        request_id = self._ids.allocate()
        if on_progress is not None:
            params = dict(params or {})
            meta = dict(params.get("_meta") or {})
            meta["progressToken"] = request_id
            params["_meta"] = meta
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        pending = _Pending(request_id, method, on_progress, self._new_waiter())
        pending.timeout = self.default_timeout if timeout is _UNSET else (timeout or math.inf)
        pending.reset = (
            self.reset_timeout_on_progress if reset_timeout_on_progress is None
            else reset_timeout_on_progress
        )
        self._pending[request_id] = pending
        self._before_sending(method, params)
        try:
            await self._send(message, "request", method, request_id)
        except BaseException:
            self._pending.pop(request_id, None)
            raise
        if on_sent is not None:
            on_sent(request_id)
        return await self._wait(pending, max_timeout)

    # -- the stateless era -------------------------------------------------------------------

    async def _stateless_request(self, method: str, params: dict[str, Any] | None, *,
                                 version: str | None = None, log_level: str | None = _UNSET,
                                 negotiate: bool = True, **options: Any) -> dict[str, Any]:
        """A stateless-era request: ``_meta`` on it, -32022 renegotiation, input rounds.

        ``negotiate=False`` is the era probe: errors and results come back raw,
        for :func:`~mcp_nb.protocol.stateless.judge_probe` to read.
        """
        version = version or self.stateless_version
        level = self.log_level if log_level is _UNSET else log_level
        meta = stateless.request_meta(
            version, self.client_capabilities,
            self.client_info.model_dump(exclude_none=True), level)
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
                mutual = [v for v in STATELESS_VERSIONS if v in supported and v != version]
                if renegotiated or not mutual:
                    raise UnsupportedProtocolVersionError(
                        requested=version, server_supported=supported,
                        supported=STATELESS_VERSIONS,
                        hint="if it lists handshake-era versions, connect with era='auto'"
                    ) from exc
                renegotiated = True
                self._era_step("version", f"{method}: the server does not speak {version}; "
                               f"retrying at {mutual[-1]}, which it lists")
                version = self.stateless_version = mutual[-1]
                current = {**current, "_meta": {**current["_meta"],
                                                stateless.META_PROTOCOL_VERSION: version}}
                continue
            if not negotiate:
                return result
            needed = self._input_required(method, result)
            if needed is None:
                return result
            rounds += 1
            if rounds > self.max_input_rounds:
                raise InputRequestFailed(
                    f"{method}: the server still asks for input after {self.max_input_rounds} "
                    "rounds; giving up (raise max_input_rounds if that is expected)")
            answers = await self._answer_input_requests(method, needed)
            current = stateless.retry_params(current, answers, needed.request_state)

    def _input_required(self, method: str,
                        result: dict[str, Any]) -> stateless.InputRequired | None:
        """What an ``input_required`` result asks for; None for a complete result.

        Records what breaks the rules as findings; an unusable result raises
        :class:`InvalidResult`.
        """
        info = stateless.server_info_of(result)
        if info is not None:
            self.last_server_info = info
        if "resultType" not in result:
            self._record_finding("result-type-missing", "server",
                                 f"the {method} result has no resultType; read as complete",
                                 result)
            return None
        kind = stateless.result_type(result)
        if kind not in stateless.RESULT_TYPES:
            detail = (f"the {method} result has resultType {kind!r}, which this client does "
                      "not know (complete, input_required): the result is invalid")
            self._record_finding("result-type-unknown", "server", detail, result)
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
        self._record_finding("input-required-not-allowed", "server", problem, result)
        raise InvalidResult(f"{method}: {problem}")

    async def _answer_input_requests(self, method: str,
                                     needed: stateless.InputRequired) -> dict[str, Any]:
        """Answer each input request with the handler the handshake era would use."""
        asked = ", ".join(f"{key} ({request['method']})"
                          for key, request in needed.requests.items())
        self._note("input required", f"{method} needs input before it can complete: "
                   f"{asked or 'nothing asked, only requestState to echo'}; the client "
                   "answers, then retries with a new id")
        answers: dict[str, Any] = {}
        for key, request in needed.requests.items():
            wanted = request["method"]
            capability = stateless.INPUT_REQUEST_CAPABILITY[wanted]
            if not self.capabilities.client_supports(wanted):
                detail = (f"{method} asked for {wanted} (input {key!r}), but this client did "
                          f"not declare the {capability!r} capability")
                self._record_finding("input-request-undeclared", "server", detail, request)
                raise InputRequestFailed(f"{detail}; declare it (pass on_{capability}=…) "
                                         "to answer such requests")
            handler = self._handlers.get(wanted)
            if handler is None:
                raise InputRequestFailed(
                    f"{method} asked for {wanted} (input {key!r}): the client declared "
                    f"{capability!r} but has no handler (pass on_{capability}=…)")
            try:
                answer = handler(request["params"])
                if inspect.isawaitable(answer):
                    answer = await answer
            except Exception as exc:
                raise InputRequestFailed(
                    f"{method}: answering {wanted} (input {key!r}) failed: "
                    f"{type(exc).__name__}: {exc}") from exc
            answers[key] = answer
        if answers:
            self._note("input answered", f"answered {', '.join(answers)}; retrying {method}")
        return answers

    async def listen(self, *, tools: bool = False, prompts: bool = False,
                     resources: bool = False, resource_uris: list[str] | tuple[str, ...] = (),
                     timeout: float | None = None) -> Subscription:
        """Open a ``subscriptions/listen`` request (stateless era) and wait for its ack.

        The request stays open; notifications tagged with its id collect in the
        returned :class:`Subscription` (and reach :meth:`on_notification`
        callbacks).  End it with :meth:`unlisten`.
        """
        if self.era is not Era.STATELESS:
            raise LifecycleError(
                "subscriptions/listen belongs to the stateless era; in the handshake era the "
                "server sends list_changed on its own and resources/subscribe asks for updates")
        wanted: dict[str, Any] = {}
        if tools:
            wanted["toolsListChanged"] = True
        if prompts:
            wanted["promptsListChanged"] = True
        if resources:
            wanted["resourcesListChanged"] = True
        if resource_uris:
            wanted["resourceSubscriptions"] = list(resource_uris)
        sent = anyio.Event()
        holder: list[Subscription] = []

        def on_sent(request_id: int) -> None:
            subscription = Subscription(request_id, wanted, settled=anyio.Event())
            self.subscriptions[request_id] = subscription
            holder.append(subscription)
            sent.set()

        async def run() -> None:
            try:
                await self._stateless_request(
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

        assert self._task_group is not None, "open the session first"
        self._task_group.start_soon(run)
        await sent.wait()
        if not holder:
            raise SessionClosed("subscriptions/listen could not be sent")
        subscription = holder[0]
        assert subscription.settled is not None
        with anyio.move_on_after(self.probe_timeout if timeout is None else timeout):
            await subscription.settled.wait()
        return subscription

    async def unlisten(self, subscription: Subscription) -> None:
        """End a subscription (cancels its ``subscriptions/listen`` request)."""
        if subscription.ended is None and subscription.request_id in self._pending:
            await self.cancel(subscription.request_id, "the client ended the subscription")
        subscription.ended = subscription.ended or "the client ended the subscription"

    async def send_raw(self, text: str | bytes, *, timeout: float | None = _UNSET) -> RawExchange:
        """Send ``text`` exactly as written — one message, a batch, or garbage.

        For hand-crafting messages (wrong ones included): nothing is refused,
        but every rule it breaks is recorded as a finding, and the lifecycle
        moves as the message says (a raw ``initialize`` starts initializing).
        Waits for the responses to any requests it contains and returns what
        happened meanwhile as a :class:`RawExchange`.
        """
        if self._shutdown_started or self.state is State.TERMINATED:
            raise self._closed_error()
        frame = text.encode() if isinstance(text, str) else text
        first_entry = len(self.transcript)
        first_finding = len(self.findings)
        try:
            raw, parsed = decode(frame, max_bytes=self.max_message_bytes, allow_batch=True)
        except EnvelopeError as exc:
            raw, parsed = None, None
            self._record_finding("invalid-message", "client", f"sent anyway: {exc.message}",
                                 frame[:2000].decode("utf-8", "replace"))
        messages = parsed if isinstance(parsed, list) else [parsed] if parsed else []
        if isinstance(parsed, list) and not self._allow_batch:
            self._record_finding("batch-not-allowed", "client",
                                 "sent a batch, which only protocol 2025-03-26 allows", raw)
        waiting: list[_Pending] = []
        for message in messages:
            if isinstance(message, (Request, Notification)):
                # Nothing is refused, but every broken rule becomes a finding.
                self._guard(message.method, is_request=isinstance(message, Request), force=True)
            if isinstance(message, Request):
                waiting.append(self._register_raw_request(message, timeout))
        single = messages[0] if len(messages) == 1 and not isinstance(parsed, list) else None
        kind = ("batch" if isinstance(parsed, list) else "invalid" if single is None
                else _KIND_OF[type(single)])
        method = getattr(single, "method", None)
        self.transcript.add(
            self._elapsed(), "send", kind, self.state.value, size=len(frame), method=method,
            id=getattr(single, "id", None), message=raw if isinstance(raw, dict) else None,
            text=None if isinstance(raw, dict) else frame[:2000].decode("utf-8", "replace"),
            note="raw",
        )
        await self._transmit(frame)
        for message in messages:
            if isinstance(message, Notification):
                self._after_sending(message.method)
        outcomes: list[dict[str, Any] | Exception] = []
        for pending in waiting:
            try:
                outcomes.append(await self._wait(pending, None))
            except McpError as exc:
                outcomes.append(exc)
        return RawExchange(
            entries=self.transcript.entries[first_entry:],
            findings=self.findings[first_finding:],
            state=self.state,
            outcomes=outcomes,
        )

    def _register_raw_request(self, message: Request, timeout: float | None) -> _Pending:
        if message.id in self._pending:
            raise ValueError(f"request id {message.id!r} is already in flight; pick another id")
        if self._ids.was_issued(message.id) or message.id in self._abandoned:
            self._record_finding("request-id-reused", "client",
                                 f"request id {message.id!r} was used before in this session",
                                 message.method)
        self._ids.reserve(message.id)
        pending = _Pending(message.id, message.method, None,  # type: ignore[arg-type]
                           self._new_waiter())
        pending.timeout = self.default_timeout if timeout is _UNSET else (timeout or math.inf)
        self._pending[message.id] = pending  # type: ignore[index]
        self._before_sending(message.method, message.params)
        return pending

    async def _wait(self, pending: _Pending, max_timeout: float | None) -> dict[str, Any]:
        now = self._clock()
        cap = max_timeout if max_timeout is not None else self.max_timeout
        pending.deadline_cap = now + cap
        pending.deadline = now + min(pending.timeout, cap)
        watch = self._deadline_watch
        if watch is not None and pending.deadline < watch.deadline:
            watch.deadline = pending.deadline
        try:
            await pending.waiter.wait()  # set by the response, or by the deadline watcher
        except anyio.get_cancelled_exc_class():
            # The caller was cancelled (task cancellation, a kernel interrupt).
            if not pending.done:
                with anyio.CancelScope(shield=True):
                    await self._abandon(pending, "the caller was cancelled")
            raise
        finally:
            self._pending.pop(pending.id, None)
        if not pending.done:
            elapsed = self._clock() - now
            cancel_sent = await self._abandon(pending, f"timed out after {elapsed:.3g}s")
            raise RequestTimeout(pending.method, pending.id, elapsed, cancelled=cancel_sent)
        if pending.error is not None:
            raise pending.error
        assert pending.result is not None
        return pending.result

    async def _watch_deadlines(self) -> None:
        """Wake the waiters of requests whose deadline passed, left not ``done`` (a timeout).

        One sleeping task serves every request: a cancel scope with a deadline
        per request cost more than the rest of a round trip's bookkeeping
        (benchmarks/RESULTS.md, "Profiling").  A request only moves this
        task's wake-up earlier; after each wake-up it sleeps until the earliest
        deadline still pending.
        """
        while True:
            earliest = min((p.deadline for p in self._pending.values()), default=math.inf)
            with anyio.CancelScope(deadline=earliest) as self._deadline_watch:
                await anyio.sleep_forever()
            now = self._clock()
            for pending in list(self._pending.values()):
                if pending.deadline <= now:
                    pending.deadline = math.inf  # its waiter owns it now; don't wake for it again
                    pending.waiter.set()

    async def _abandon(self, pending: _Pending, reason: str) -> bool:
        """Stop waiting for ``pending``; send notifications/cancelled unless it's initialize."""
        self._pending.pop(pending.id, None)
        self._abandoned[pending.id] = reason
        pending.finish(error=RequestCancelled(pending.method, pending.id, reason))
        if pending.method == "initialize" or (
                pending.method == "server/discover" and self.era is None):
            # Never cancelled: initialize by the spec's rule; the era probe because a
            # handshake-era server must not see a notification before initialize.
            return False
        try:
            await self._send_cancelled(pending.id, reason)
        except SessionClosed:
            return False
        return True

    async def _send_cancelled(self, request_id: int, reason: str) -> None:
        message = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request_id, "reason": reason},
        }
        await self._send(message, "notification", "notifications/cancelled", None)

    async def cancel(self, request_id: int | None = None, reason: str = "cancelled by user") -> int:
        """Cancel an in-flight request (the latest one when ``request_id`` is None).

        Sends ``notifications/cancelled``; the waiting call raises
        :class:`RequestCancelled`.  Returns the id that was cancelled.
        """
        if request_id is None:
            if not self._pending:
                raise ValueError("no request is in flight")
            request_id = max(self._pending)
        pending = self._pending.get(request_id)
        if pending is None:
            if self._ids.was_issued(request_id):
                raise ValueError(f"request {request_id} is not in flight any more "
                                 "(answered, timed out or cancelled already)")
            raise ValueError(f"no request with id {request_id} was sent in this session")
        if pending.method == "initialize":
            raise LifecycleError(
                "initialize cannot be cancelled: the spec forbids cancelling the initialize "
                "request; shut the session down instead (await session.shutdown())"
            )
        await self._abandon(pending, reason)
        return request_id

    # -- receiving --------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        transport = self.transport
        try:
            while True:
                frame = await transport.receive()
                await self._on_frame(frame)
        except TransportClosed as exc:
            await self._on_transport_closed(exc)

    def _take_inline(self, frame: bytes) -> bool:
        """Handle a response or notification in the transport's read callback, if it offers.

        Offered by transports that can (:meth:`StdioTransport.take_frames_inline
        <mcp_nb.transports.stdio.StdioTransport.take_frames_inline>`) while the
        reader sleeps with nothing queued, so nothing is overtaken.  Neither
        needs a task, and :meth:`_Pending.finish`, the last thing
        :meth:`_on_response` does, resumes the caller right here: a round trip
        takes one event-loop iteration instead of two (the reader task's
        hand-over to the caller was the other), also when log or progress
        notifications come first.  Server requests need a task (their handlers
        await) and malformed frames are reported by the reader: both are left
        to it, decoded once.
        """
        try:
            raw, parsed = decode(frame, max_bytes=self.max_message_bytes,
                                 allow_batch=self._allow_batch)
        except EnvelopeError:
            return False
        kind = type(parsed)
        if kind is Response or kind is ErrorResponse:
            self._on_response(parsed, raw, len(frame))  # type: ignore[arg-type]
            return True
        if kind is Notification:
            self._on_notification(parsed, raw, len(frame))  # type: ignore[arg-type]
            return True
        self._left_to_reader = (frame, raw, parsed)
        return False

    async def _on_frame(self, frame: bytes) -> None:
        decoded = self._left_to_reader
        if decoded is not None and decoded[0] is frame:
            self._left_to_reader = None
            raw, parsed = decoded[1], decoded[2]
        else:
            try:
                raw, parsed = decode(frame, max_bytes=self.max_message_bytes,
                                     allow_batch=self._allow_batch)
            except EnvelopeError as exc:
                self._on_invalid(frame, exc)
                return
        if not isinstance(parsed, list):  # the common case: one message per frame
            await self._dispatch(parsed, raw, len(frame))
            return
        for obj, message in zip(raw, parsed, strict=True):
            await self._dispatch(message, obj, len(frame) // len(parsed))

    def _on_invalid(self, frame: bytes, exc: EnvelopeError) -> None:
        text = frame[:2000].decode("utf-8", "replace")
        self.transcript.add(self._elapsed(), "recv", "invalid", self.state.value,
                            size=len(frame), text=text, note=exc.rule)
        self._record_finding(exc.rule, "server", exc.message, text)

    async def _dispatch(self, message: Message, raw: dict[str, Any], size: int) -> None:
        if isinstance(message, (Response, ErrorResponse)):
            self._on_response(message, raw, size)
        elif isinstance(message, Notification):
            self._on_notification(message, raw, size)
        else:
            await self._on_request(message, raw, size)

    def _on_response(self, message: Response | ErrorResponse, raw: dict[str, Any],
                     size: int) -> None:
        kind = "response" if isinstance(message, Response) else "error"
        # Popped at once: a duplicate arriving before the waiter wakes is still a duplicate.
        pending = self._pending.pop(message.id, None)  # type: ignore[arg-type]
        method = pending.method if pending else None
        note = None
        if pending is None:
            if message.id in self._abandoned:
                note = "late, ignored"
            elif self._ids.was_issued(message.id):
                note = "duplicate-response"
            else:
                note = "response-to-unknown-id"
        self.transcript.add(self._elapsed(), "recv", kind, self.state.value, size=size,
                            method=method, id=message.id, message=raw, note=note)
        if pending is None:
            if note == "duplicate-response":
                self._record_finding(note, "server",
                                     f"a second response for request {message.id}", raw)
            elif note == "response-to-unknown-id":
                if message.id is None and isinstance(message, ErrorResponse):
                    detail = (f"the server reported error {message.error.code} "
                              f"{message.error.message!r} without a request id")
                    self._record_finding("invalid-message", "client", detail, raw)
                else:
                    self._record_finding(note, "server",
                                         f"response for id {message.id!r}, never sent", raw)
            return
        if isinstance(message, ErrorResponse):
            error = message.error
            pending.finish(error=ServerError(pending.method, error.code, error.message,
                                             error.data))
        elif pending.method == "initialize" and self.state is State.INITIALIZING:
            self._complete_initialize(pending, message.result, self.offered_version)
        else:
            pending.finish(result=message.result)

    def _on_notification(self, message: Notification, raw: dict[str, Any], size: int) -> None:
        method = message.method
        note = None if method in KNOWN_SERVER_NOTIFICATIONS else "unknown notification"
        self.transcript.add(self._elapsed(), "recv", "notification", self.state.value,
                            size=size, method=method, message=raw, note=note)
        violation = self.lifecycle.server_violation(method, is_request=False)
        if violation:
            self._record_finding("server-request-before-initialized", "server", violation, raw)
        elif self.state is State.OPERATING and not self.capabilities.notification_allowed(method):
            self._record_finding(
                "capability-not-negotiated", "server",
                f"{method} sent, but the server did not declare the capability it belongs to",
                raw,
            )
        params = message.params or {}
        if method == "notifications/progress":
            self._on_progress(params, raw)
        elif method == "notifications/cancelled":
            scope = self._server_request_scopes.get(params.get("requestId"))  # type: ignore[arg-type]
            if scope is not None:
                scope.cancel()
        elif method == "notifications/message":
            self.log_messages.append(params)
        self._route_to_subscription(method, params)
        for callback in list(self._notification_callbacks):
            self._call_soon(callback, message)

    def _route_to_subscription(self, method: str, params: dict[str, Any]) -> None:
        meta = params.get("_meta")
        sub_id = meta.get(stateless.META_SUBSCRIPTION_ID) if isinstance(meta, dict) else None
        subscription = self.subscriptions.get(sub_id)  # type: ignore[arg-type]
        if subscription is None:
            return
        if method == "notifications/subscriptions/acknowledged":
            agreed = params.get("notifications")
            subscription.acknowledged = agreed if isinstance(agreed, dict) else {}
            if subscription.settled is not None:
                subscription.settled.set()
        else:
            subscription.notifications.append({"method": method, "params": params})

    def _on_progress(self, params: dict[str, Any], raw: dict[str, Any]) -> None:
        token = params.get("progressToken")
        pending = self._pending.get(token)  # type: ignore[arg-type]
        if pending is None or pending.on_progress is None:
            if token not in self._abandoned:
                self._record_finding("progress-unknown-token", "server",
                                     f"progress for token {token!r}, which no active request "
                                     "carries", raw)
            return
        if pending.reset:
            # Only ever later: the watcher wakes at the old deadline and sleeps on.
            pending.deadline = min(self._clock() + pending.timeout, pending.deadline_cap)
        self._call_soon(pending.on_progress, params.get("progress", 0), params.get("total"),
                        params.get("message"))

    def _call_soon(self, callback: Callable[..., Any], *args: Any) -> None:
        """Run a user callback; async ones become tasks so they can't stall the reader."""
        result = callback(*args)
        if inspect.isawaitable(result):
            assert self._task_group is not None

            async def _await() -> None:
                await result

            self._task_group.start_soon(_await)

    async def _on_request(self, message: Request, raw: dict[str, Any], size: int) -> None:
        method = message.method
        self.transcript.add(self._elapsed(), "recv", "request", self.state.value, size=size,
                            method=method, id=message.id, message=raw)
        if message.id in self._server_request_ids:
            self._record_finding("request-id-reused", "server",
                                 f"request id {message.id!r} was already used by the server", raw)
        self._server_request_ids.add(message.id)
        violation = self.lifecycle.server_violation(method, is_request=True)
        if violation:
            self._record_finding("server-request-before-initialized", "server", violation, raw)
        if method == "ping":
            await self._respond(message.id, method, result={})
            return
        capability = _CAPABILITY_OF_HANDLER.get(method)
        if capability is None:
            await self._respond(message.id, method, error=(
                METHOD_NOT_FOUND, f"Method not found: {method}"))
            return
        if not self.capabilities.client_supports(method):
            self._record_finding(
                "capability-not-negotiated", "server",
                f"{method} sent, but the client did not declare {capability!r}", raw,
            )
            await self._respond(message.id, method, error=(
                METHOD_NOT_FOUND,
                f"Method not found: {method} (this client did not declare the "
                f"{capability!r} capability)"))
            return
        handler = self._handlers.get(method)
        if handler is None:
            await self._respond(message.id, method, error=(
                INTERNAL_ERROR,
                f"the client declared {capability!r} but no handler is installed for {method}"))
            return
        assert self._task_group is not None
        self._task_group.start_soon(self._run_handler, message, handler)

    async def _run_handler(self, message: Request, handler: RequestHandler) -> None:
        with anyio.CancelScope() as scope:
            self._server_request_scopes[message.id] = scope
            try:
                result = handler(message.params or {})
                if inspect.isawaitable(result):
                    result = await result
            except McpError as exc:  # a handler that chose its error code (e.g. user rejected)
                await self._respond(message.id, message.method,
                                    error=(exc.code or INTERNAL_ERROR, str(exc)))
                return
            except Exception as exc:  # a user handler failing must not kill the session
                await self._respond(message.id, message.method,
                                    error=(INTERNAL_ERROR, f"{type(exc).__name__}: {exc}"))
                return
            finally:
                self._server_request_scopes.pop(message.id, None)
            await self._respond(message.id, message.method, result=result)
        if scope.cancelled_caught:
            # The server cancelled its own request: the spec says don't respond.
            self.transcript.add(self._elapsed(), "event", "handler cancelled", self.state.value,
                                text=f"server cancelled its request {message.id!r}")

    async def _respond(self, request_id: str | int, method: str, *,
                       result: dict[str, Any] | None = None,
                       error: tuple[int, str] | None = None) -> None:
        if error is not None:
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id,
                                       "error": {"code": error[0], "message": error[1]}}
            kind = "error"
        else:
            message = {"jsonrpc": "2.0", "id": request_id, "result": result}
            kind = "response"
        # If the server is gone, nobody is waiting for this answer.
        with contextlib.suppress(SessionClosed):
            await self._send(message, kind, method, request_id)

    async def _on_transport_closed(self, exc: TransportClosed) -> None:
        if self._shutdown_started:
            return  # shutdown() is closing the transport and will finish the lifecycle
        await self.transport.close()
        self._exit_error = self.transport.describe_exit()
        error = self._closed_error()
        for pending in list(self._pending.values()):
            pending.finish(error=error)
        self._pending.clear()
        if self.state is not State.TERMINATED:
            self.lifecycle.fire(Event.TRANSPORT_CLOSED, str(self._exit_error))
        assert self._terminated is not None
        self._terminated.set()

    # -- shutdown ---------------------------------------------------------------------------

    async def shutdown(self, reason: str = "client shutdown") -> None:
        """End the session: ShuttingDown, cancel pending requests, close the transport.

        Idempotent and safe from any state; returns once the session is Terminated.
        """
        if self._terminated is None:
            return  # never opened
        if self._shutdown_started or self.state is State.TERMINATED:
            await self._terminated.wait()
            return
        self._shutdown_started = True
        with anyio.CancelScope(shield=True):
            self.lifecycle.fire(Event.SHUTDOWN, reason)
            for pending in list(self._pending.values()):
                if pending.method != "initialize":
                    with contextlib.suppress(SessionClosed):
                        await self._send_cancelled(pending.id, "the client is shutting down")
                self._abandoned[pending.id] = "shutdown"
                pending.finish(error=SessionClosed(
                    f"{pending.method} (id {pending.id}) was abandoned: the session is "
                    "shutting down"))
            self._pending.clear()
            await self.transport.close()
            # The reader may have seen the server exit first and finished the lifecycle.
            if self.state is not State.TERMINATED:
                self.lifecycle.fire(Event.TRANSPORT_CLOSED, "transport closed by the client")
            self._terminated.set()

    async def aclose(self) -> None:
        """Shut down and stop the session's tasks (for hosts that used :meth:`open`)."""
        await self.__aexit__(None, None, None)

    async def wait_closed(self) -> None:
        """Wait until the session is Terminated (e.g. the server exits on its own)."""
        assert self._terminated is not None, "open the session first"
        await self._terminated.wait()

    # -- MCP operations -----------------------------------------------------------------------

    async def ping(self, **options: Any) -> float:
        """Send ``ping``; returns the round-trip time in seconds."""
        start = anyio.current_time()
        await self.request("ping", **options)
        return anyio.current_time() - start

    async def _list_all(self, method: str, key: str, **options: Any) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor = None
        while True:
            result = await self.request(method, {"cursor": cursor} if cursor else None,
                                        **options)
            items.extend(result.get(key) or [])
            cursor = result.get("nextCursor")
            if not cursor:
                return items

    async def list_tools(self, **options: Any) -> list[Tool]:
        """Every tool the server offers (follows ``nextCursor`` pagination)."""
        return [Tool.model_validate(t) for t in await self._list_all("tools/list", "tools",
                                                                      **options)]

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None,
                        **options: Any) -> CallToolResult:
        """Call a tool; a tool-level failure comes back as ``isError`` (not an exception)."""
        result = await self.request("tools/call", {"name": name, "arguments": arguments or {}},
                                    **options)
        return CallToolResult.model_validate(result)

    async def list_resources(self, **options: Any) -> list[Resource]:
        return [Resource.model_validate(r)
                for r in await self._list_all("resources/list", "resources", **options)]

    async def list_resource_templates(self, **options: Any) -> list[ResourceTemplate]:
        return [ResourceTemplate.model_validate(r) for r in
                await self._list_all("resources/templates/list", "resourceTemplates", **options)]

    async def read_resource(self, uri: str, **options: Any) -> list[dict[str, Any]]:
        """The resource's ``contents`` blocks (text or base64 blob)."""
        return (await self.request("resources/read", {"uri": uri}, **options)).get("contents", [])

    async def subscribe_resource(self, uri: str, **options: Any) -> None:
        await self.request("resources/subscribe", {"uri": uri}, **options)

    async def unsubscribe_resource(self, uri: str, **options: Any) -> None:
        await self.request("resources/unsubscribe", {"uri": uri}, **options)

    async def list_prompts(self, **options: Any) -> list[Prompt]:
        return [Prompt.model_validate(p)
                for p in await self._list_all("prompts/list", "prompts", **options)]

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None,
                         **options: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        return await self.request("prompts/get", params, **options)

    async def complete(self, ref: dict[str, Any], argument_name: str, value: str,
                       **options: Any) -> list[str]:
        """Completion values for one argument of a prompt or resource template."""
        result = await self.request(
            "completion/complete",
            {"ref": ref, "argument": {"name": argument_name, "value": value}}, **options)
        return list(result.get("completion", {}).get("values", []))

    async def set_logging_level(self, level: str, **options: Any) -> None:
        await self.request("logging/setLevel", {"level": level}, **options)


def _running_asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """The asyncio loop running this task, or None on another backend (trio)."""
    try:
        return asyncio.get_running_loop() if asyncio.current_task() is not None else None
    except RuntimeError:  # no asyncio event loop in this thread
        return None


def _parse_era(value: str) -> Era | str:
    """``"auto"``, or the :class:`Era` named by ``value``; a clear error otherwise."""
    if value == "auto":
        return "auto"
    try:
        return Era(value)
    except ValueError:
        raise ValueError(f"unknown era {value!r}: choose auto, handshake or stateless") from None
