"""The async MCP client session: a façade over the parts that do the work.

One session is one lifecycle.  It lives in one task group (entered by
``async with``); the work is done by parts with one job each, all in this
package (docs/architecture.md has the picture):

- :mod:`.requests`: the request table (ids, requests in flight, deadlines,
  timeouts with reset-on-progress, cancellation, the inline wake-up);
- :mod:`.outbound`: what may be sent now, and frames onto the wire;
- :mod:`.inbound`: frames from the wire to responses, notifications and
  server requests (in the transport's read callback where it offers that);
- :mod:`.server_requests`: the handlers answering server→client requests;
- :mod:`.handshake_era` and :mod:`.stateless_era`: how each era settles a
  session and sends its requests;
- :mod:`.lifetime`: the task group, opening, shutdown and the transport's end;
- :mod:`.raw`: hand-written messages; :mod:`.api`: the typed operations;
  :mod:`.recorder`: findings and notes.

The parts reach each other through one declared seam,
:class:`~mcp_nb.client.parts.SessionParts`, never through the session's
private members; of the session they use only its public state.

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

from collections.abc import Callable, Mapping
from typing import Any

from .. import __version__
from ..apps.meta import EXTENSION as APPS_EXTENSION
from ..apps.meta import MIME_TYPE as APPS_MIME_TYPE
from ..protocol.findings import Finding
from ..protocol.lifecycle import Lifecycle, State, TransitionRecord
from ..protocol.models import DiscoverResult, Implementation, InitializeResult
from ..protocol.negotiation import Capabilities, VersionOutcome
from ..protocol.tasks import EXTENSION as TASKS_EXTENSION
from ..protocol.versions import LATEST_STATELESS_VERSION, LATEST_VERSION, STATELESS_VERSIONS, Era
from ..transports.base import Transport, TransportEvent
from .api import TypedApi
from .bounded import RecentList
from .handshake_era import HandshakeEra
from .inbound import Inbound, NotificationCallback
from .lifetime import Lifetime
from .outbound import Outbound
from .parts import SessionParts
from .raw import RawExchange, send_raw
from .recorder import Recorder
from .requests import UNSET, ProgressCallback, RequestTable
from .server_requests import CAPABILITY_OF_HANDLER, RequestHandler, ServerRequests
from .stateless_era import EraStep, StatelessEra, Subscription
from .tasks import Task, open_task
from .transcript import DEFAULT_TRANSCRIPT_LIMIT, Transcript

__all__ = ["ClientSession", "EraStep", "RawExchange", "Subscription", "Task"]

DEFAULT_TIMEOUT = 30.0
#: How long ``server/discover`` may stay unanswered before the era probe reads the
#: silence as a handshake-era server (the stdio binding's "reasonable timeout").
DEFAULT_PROBE_TIMEOUT = 10.0
#: ``input_required`` answers one request may get before the client gives up.
DEFAULT_MAX_INPUT_ROUNDS = 8
#: Even with reset-on-progress a request never waits longer than this (spec: always
#: enforce a maximum).
DEFAULT_MAX_TIMEOUT = 300.0

EraChoice = Era | str


def assemble_parts(session: ClientSession,
                   handlers: Mapping[str, RequestHandler]) -> SessionParts:
    """The session's parts, each handed the session (its public state) and the parts object
    (:mod:`mcp_nb.client.parts`), which is filled in the order the parts take from it."""
    parts = SessionParts()
    parts.record = Recorder(session)
    parts.lifetime = Lifetime(session, parts)
    parts.outbound = Outbound(session, parts)
    parts.table = RequestTable(session, parts)
    parts.request_once = session._request_once
    parts.server_requests = ServerRequests(session, parts, dict(handlers))
    parts.handshake = HandshakeEra(session, parts)
    parts.stateless = StatelessEra(session, parts)
    parts.inbound = Inbound(session, parts)
    return parts


def declared_capabilities(capabilities: Mapping[str, Any] | None,
                          handlers: Mapping[str, RequestHandler], *,
                          tasks: bool, apps: bool) -> dict[str, Any]:
    """What the client declares: the capabilities given, or those its handlers imply
    (registering a handler is what declares it), plus the extensions asked for."""
    if capabilities is None:
        capabilities = {CAPABILITY_OF_HANDLER[method]: {} for method in handlers}
    declared: dict[str, Any] = dict(capabilities)
    extensions = dict(declared.get("extensions") or {})
    if tasks:  # the tasks extension (SEP-2663): the server may answer with tasks
        extensions[TASKS_EXTENSION] = {}
    if apps:  # MCP Apps: servers SHOULD check this before registering UI tools
        extensions[APPS_EXTENSION] = {"mimeTypes": [APPS_MIME_TYPE]}
    if extensions:
        declared["extensions"] = extensions
    return declared


class ClientSession(TypedApi):
    """An MCP client session over any :class:`~mcp_nb.transports.base.Transport`.

    Parameters mirror what the spec lets a client choose: its identity
    (``client_info``), what it declares (``capabilities``; derived from the
    handlers you pass when omitted), the version it offers, and timeouts.

    ``on_roots``, ``on_sampling`` and ``on_elicitation`` answer the server's
    ``roots/list``, ``sampling/createMessage`` and ``elicitation/create``; each
    takes the request's params and returns the result (sync or async).

    ``tasks=True`` declares the tasks extension (SEP-2663): the server may
    then answer ``tools/call`` with a task (:meth:`call_tool` follows it,
    :meth:`start_tool` hands it out; :attr:`tasks` holds them).

    ``apps=True`` declares the MCP Apps extension (``io.modelcontextprotocol/ui`` with
    ``mimeTypes: ["text/html;profile=mcp-app"]``): say so only where something renders
    Apps (the notebook's sessions do; :mod:`mcp_nb.notebook.apps`).

    ``transcript_limit`` bounds what the session keeps of what it saw: the
    most recent that many transcript entries, and as many log messages,
    findings and transport events (the transcript counts what it dropped).
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
        max_message_bytes: int | None = None,
        on_roots: RequestHandler | None = None,
        on_sampling: RequestHandler | None = None,
        on_elicitation: RequestHandler | None = None,
        log_level: str | None = None,
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        max_input_rounds: int = DEFAULT_MAX_INPUT_ROUNDS,
        transcript_limit: int = DEFAULT_TRANSCRIPT_LIMIT,
        tasks: bool = False,
        apps: bool = False,
    ) -> None:
        if not isinstance(transport, Transport):
            raise TypeError(
                f"transport must be a mcp_nb.transports.Transport, not {type(transport).__name__}"
                ": subclass Transport (its docstring shows how), so the session knows which "
                "optional abilities your transport has")
        self.transport = transport
        if client_info is None:
            client_info = Implementation(
                name="mcp_nb", version=__version__, title="mcp_nb notebook client"
            )
        elif not isinstance(client_info, Implementation):
            client_info = Implementation.model_validate(client_info)
        self.client_info: Implementation = client_info
        handlers = {method: handler for method, handler in (
            ("roots/list", on_roots), ("sampling/createMessage", on_sampling),
            ("elicitation/create", on_elicitation)) if handler is not None}
        self.client_capabilities = declared_capabilities(
            capabilities, handlers, tasks=tasks, apps=apps)
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
        #: The largest message decoded; by default the transport's own limit, so that one
        #: setting (``StdioTransport(max_message_bytes=…)``) rules both.
        self.max_message_bytes: int = (
            max_message_bytes if max_message_bytes is not None
            else transport.max_message_bytes)

        self.lifecycle = Lifecycle()
        self.transcript = Transcript(transcript_limit)
        self.findings: list[Finding] = RecentList(limit=transcript_limit)
        #: ``notifications/message`` params received, in order (the most recent ones).
        self.log_messages: list[dict[str, Any]] = RecentList(limit=transcript_limit)
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
        #: Tasks the server made (tasks extension), by task id.
        self.tasks: dict[str, Task] = {}
        self.transport_events: list[TransportEvent] = RecentList(limit=transcript_limit)

        self._parts = assemble_parts(self, handlers)

    # -- context management ------------------------------------------------------

    async def __aenter__(self) -> ClientSession:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._parts.lifetime.close()

    async def open(self) -> None:
        """Start the transport and the reader, without initializing (Uninitialized).

        Prefer ``async with``; :meth:`open` is for hosts (the notebook layer)
        that manage the task's lifetime themselves and call :meth:`aclose`.
        """
        await self._parts.lifetime.open()

    async def aclose(self) -> None:
        """Shut down and stop the session's tasks (for hosts that used :meth:`open`)."""
        await self._parts.lifetime.close()

    async def shutdown(self, reason: str = "client shutdown") -> None:
        """End the session: ShuttingDown, cancel pending requests, close the transport.

        Idempotent and safe from any state; returns once the session is Terminated.
        """
        await self._parts.lifetime.shutdown(reason)

    async def wait_closed(self) -> None:
        """Wait until the session is Terminated (e.g. the server exits on its own)."""
        await self._parts.lifetime.wait_closed()

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
        return self._parts.table.in_flight

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
        callbacks = self._parts.inbound.notification_callbacks
        callbacks.append(callback)
        return lambda: callbacks.remove(callback)

    def on_finding(self, callback: Callable[[Finding], Any]) -> Callable[[], None]:
        """Subscribe to findings (called synchronously, as :meth:`on_transition` says)."""
        return self._parts.record.finding_callbacks.add(callback)

    def hold_deadlines(self) -> Callable[[], None]:
        """Stop the timeouts of the requests in flight until the returned ``release()``.

        For a person answering a server→client request (an elicitation form):
        the request that caused it must not time out under them.  Each held
        request gets back the time it had left on release; holds may overlap.
        """
        return self._parts.table.hold()

    def set_handler(self, method: str, handler: RequestHandler | None) -> None:
        """Install (or remove) the handler for a server→client request.

        The capability must still be declared at initialize time for the
        server to be allowed to use it.
        """
        self._parts.server_requests.set_handler(method, handler)

    # -- settling the era -------------------------------------------------------------

    async def initialize(self, version: str | None = None, *,
                         timeout: float | None = UNSET) -> InitializeResult:
        """Send ``initialize`` and wait for the answer (Uninitialized → Initialized).

        ``version`` is offered instead of the latest supported one; any string
        goes, so a learner can see how a server answers ``"1.0.0"``.  If the
        server answers with a version this client cannot speak, or rejects the
        offer with -32602, the session disconnects and
        :class:`~mcp_nb.protocol.errors.UnsupportedVersionError` names the
        offered, answered and supported versions.
        """
        return await self._parts.handshake.initialize(version, timeout=timeout)

    async def send_initialized(self) -> None:
        """Send ``notifications/initialized`` (Initialized → Operating)."""
        await self._parts.handshake.send_initialized()

    async def connect(self, version: str | None = None, *, era: EraChoice = Era.HANDSHAKE,
                      within: float | None = None) -> InitializeResult | DiscoverResult:
        """Settle the era and get ready to operate, in one call.

        ``era="handshake"`` (the default): initialize, then initialized; returns
        the :class:`InitializeResult`.  ``era="stateless"``: ``server/discover``,
        and the session speaks 2026-07-28 per request; returns the
        :class:`DiscoverResult`.  ``era="auto"``: probe with ``server/discover``
        and fall back to the handshake unless the answer is a recognised
        stateless-era one (spec: basic/versioning#backward-compatibility).  Each
        step is in :attr:`era_steps` and the transcript.  ``version`` is offered
        in the era it belongs to.  ``within``: seconds for the whole of it (each
        request still waits no longer than its own timeout), so a silent server
        costs one budget, not the probe's timeout and then initialize's.
        """
        choice = era if isinstance(era, Era) else _parse_era(era)
        offered = version
        if version in STATELESS_VERSIONS:
            self.stateless_version, offered = version, None
        if choice is Era.HANDSHAKE:
            result = await self.initialize(offered, timeout=UNSET if within is None else min(
                self.default_timeout or within, within))
            await self.send_initialized()
            return result
        return await self._parts.stateless.probe(offered, fall_back=choice == "auto",
                                                 within=within)

    async def discover(self, version: str | None = None, **options: Any) -> DiscoverResult:
        """Send ``server/discover`` (any era's session may ask; it settles nothing).

        To *choose* the stateless era use ``connect(era="stateless")`` or
        ``connect(era="auto")``.
        """
        return await self._parts.stateless.discover(version, **options)

    # -- sending --------------------------------------------------------------------------

    async def notify(
        self, method: str, params: dict[str, Any] | None = None, *, force: bool = False
    ) -> None:
        """Send a notification (guarded by the lifecycle unless ``force``)."""
        await self._parts.outbound.notify(method, params, force=force)

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = UNSET,
        on_progress: ProgressCallback | None = None,
        reset_timeout_on_progress: bool | None = None,
        max_timeout: float | None = None,
        force: bool = False,
        on_sent: Callable[[int], Any] | None = None,
        log_level: str | None = UNSET,
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
            return await self._parts.stateless.request(
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
        timeout: float | None = UNSET,
        on_progress: ProgressCallback | None = None,
        reset_timeout_on_progress: bool | None = None,
        max_timeout: float | None = None,
        force: bool = False,
        on_sent: Callable[[int], Any] | None = None,
    ) -> dict[str, Any]:
        """One request, one response, the path both eras share: guard, table, wire, wait."""
        parts = self._parts
        outbound = parts.outbound
        table = parts.table
        outbound.guard(method, is_request=True, force=force)
        request_id = table.ids.allocate()
        if on_progress is not None:
            params = dict(params or {})
            params["_meta"] = {**(params.get("_meta") or {}), "progressToken": request_id}
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        pending = table.register(request_id, method, timeout=timeout, on_progress=on_progress,
                                 reset=reset_timeout_on_progress)
        outbound.before_sending(method, params)
        try:
            await outbound.send(message, "request", method, request_id)
        except BaseException:
            table.pending.pop(request_id, None)
            raise
        if on_sent is not None:
            on_sent(request_id)
        return await table.wait(pending, max_timeout)

    def _open_task(self, method: str, result: dict[str, Any]) -> Task:
        return open_task(self, self._parts, method, result)

    def _screen_tools(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """What :meth:`list_tools` returns of the tools listed (the stateless era screens)."""
        return self._parts.stateless.screen_tools(tools) if self.era is Era.STATELESS else tools

    async def cancel(self, request_id: int | None = None, reason: str = "cancelled by user") -> int:
        """Cancel an in-flight request (the latest one when ``request_id`` is None).

        Sends ``notifications/cancelled``; the waiting call raises
        :class:`RequestCancelled`.  Returns the id that was cancelled.
        """
        return await self._parts.table.cancel(request_id, reason)

    async def listen(self, *, tools: bool = False, prompts: bool = False,
                     resources: bool = False, resource_uris: list[str] | tuple[str, ...] = (),
                     timeout: float | None = None) -> Subscription:
        """Open a ``subscriptions/listen`` request (stateless era) and wait for its ack.

        The request stays open; notifications tagged with its id collect in the
        returned :class:`Subscription` (and reach :meth:`on_notification`
        callbacks).  End it with :meth:`unlisten`.
        """
        return await self._parts.stateless.listen(
            {key: value for key, value in (
                ("toolsListChanged", tools), ("promptsListChanged", prompts),
                ("resourcesListChanged", resources),
                ("resourceSubscriptions", list(resource_uris))) if value}, timeout)

    async def unlisten(self, subscription: Subscription) -> None:
        """End a subscription (cancels its ``subscriptions/listen`` request)."""
        await self._parts.stateless.unlisten(subscription)

    async def send_raw(self, text: str | bytes, *, timeout: float | None = UNSET) -> RawExchange:
        """Send ``text`` exactly as written — one message, a batch, or garbage.

        For hand-crafting messages (wrong ones included): nothing is refused,
        but every rule it breaks is recorded as a finding, and the lifecycle
        moves as the message says (a raw ``initialize`` starts initializing).
        Waits for the responses to any requests it contains and returns what
        happened meanwhile as a :class:`RawExchange`.
        """
        return await send_raw(self, self._parts, text, timeout)


def _parse_era(value: str) -> Era | str:
    """``"auto"``, or the :class:`Era` named by ``value``; a clear error otherwise."""
    if value == "auto":
        return "auto"
    try:
        return Era(value)
    except ValueError:
        raise ValueError(f"unknown era {value!r}: choose auto, handshake or stateless") from None
