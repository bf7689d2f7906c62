"""The MCP lifecycle as an explicit state machine.

States, events and allowed transitions are a table (:data:`TRANSITIONS`): the
code below enforces exactly that table and the notebook's state diagram draws
exactly that table, so the picture cannot drift from the behaviour.

Handshake-era lifecycle, client's view::

    Uninitialized --send initialize--> Initializing --initialize result--> Initialized
    Initialized --send notifications/initialized--> Operating
    any live state --shutdown--> ShuttingDown ; any state --transport closed--> Terminated

The stateless era (2026-07-28) has no handshake: a client that chose it goes
straight from Uninitialized to Operating (:attr:`Event.ADOPT_STATELESS`), and
from then on each request carries what the handshake used to settle.  That
edge is marked ``era="stateless"`` so the handshake diagram leaves it out.

Example::

    >>> from mcp_nb.protocol.lifecycle import Lifecycle, Event, State
    >>> lc = Lifecycle()
    >>> lc.fire(Event.SEND_INITIALIZE, "client sent initialize").target
    <State.INITIALIZING: 'Initializing'>
    >>> lc.check_client_request("tools/list")
    Traceback (most recent call last):
    ...
    mcp_nb.protocol.errors.LifecycleError: cannot send 'tools/list' while Initializing: ...
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..i18n import N_, _
from .errors import LifecycleError
from .observers import Observers


class State(enum.Enum):
    UNINITIALIZED = "Uninitialized"
    INITIALIZING = "Initializing"
    INITIALIZED = "Initialized"
    OPERATING = "Operating"
    SHUTTING_DOWN = "ShuttingDown"
    TERMINATED = "Terminated"

    def __str__(self) -> str:
        return self.value


class Event(enum.Enum):
    SEND_INITIALIZE = "send initialize"
    INITIALIZE_RESULT = "initialize result"
    SEND_INITIALIZED = "send notifications/initialized"
    ADOPT_STATELESS = "adopt the stateless era"
    SHUTDOWN = "shutdown"
    TRANSPORT_CLOSED = "transport closed"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Transition:
    source: State
    event: Event
    target: State
    #: Why the spec has this edge, for diagrams and docs.
    meaning: str
    #: "stateless" for the edge only the stateless era takes; None for edges of both.
    era: str | None = None


_LIVE = (State.UNINITIALIZED, State.INITIALIZING, State.INITIALIZED, State.OPERATING)

#: The whole lifecycle. Every edge a session can take is a row here.
TRANSITIONS: tuple[Transition, ...] = (
    Transition(State.UNINITIALIZED, Event.SEND_INITIALIZE, State.INITIALIZING,
               N_("the client offers a protocol version and its capabilities")),
    Transition(State.INITIALIZING, Event.INITIALIZE_RESULT, State.INITIALIZED,
               N_("the server answered with its version, capabilities and info")),
    Transition(State.INITIALIZED, Event.SEND_INITIALIZED, State.OPERATING,
               N_("the client confirms; normal operation may begin")),
    Transition(State.UNINITIALIZED, Event.ADOPT_STATELESS, State.OPERATING,
               N_("stateless era: no handshake; every request carries version and capabilities"),
               era="stateless"),
    *(
        Transition(state, Event.SHUTDOWN, State.SHUTTING_DOWN,
                   N_("the client ends the session (or negotiation failed)"))
        for state in _LIVE
    ),
    *(
        Transition(state, Event.TRANSPORT_CLOSED, State.TERMINATED,
                   N_("the connection is gone (server exited, crashed or was stopped)"))
        for state in (*_LIVE, State.SHUTTING_DOWN)
    ),
)

_TABLE: dict[tuple[State, Event], Transition] = {(t.source, t.event): t for t in TRANSITIONS}


@dataclass(frozen=True)
class TransitionRecord:
    """One transition that happened: from, to, what caused it, and when."""

    source: State
    target: State
    event: Event
    cause: str
    #: Seconds since the lifecycle started.
    time: float

    def __str__(self) -> str:
        return f"{self.source} → {self.target} ({self.cause}) at {self.time:.3f}s"


Observer = Callable[[TransitionRecord], None]

# Requests the client may send in each state. ``None`` means "anything but the
# exceptions in _FORBIDDEN_WHILE_OPERATING".
_CLIENT_REQUESTS: dict[State, frozenset[str] | None] = {
    # server/discover is the stateless era's probe, sent before any handshake.
    State.UNINITIALIZED: frozenset({"initialize", "server/discover"}),
    State.INITIALIZING: frozenset({"ping"}),
    State.INITIALIZED: frozenset({"ping"}),
    State.OPERATING: None,
    State.SHUTTING_DOWN: frozenset(),
    State.TERMINATED: frozenset(),
}
_CLIENT_NOTIFICATIONS: dict[State, frozenset[str] | None] = {
    State.UNINITIALIZED: frozenset(),
    State.INITIALIZING: frozenset(),
    State.INITIALIZED: frozenset({"notifications/initialized"}),
    State.OPERATING: None,
    # Pending requests are cancelled while shutting down.
    State.SHUTTING_DOWN: frozenset({"notifications/cancelled"}),
    State.TERMINATED: frozenset(),
}
_FORBIDDEN_WHILE_OPERATING = frozenset({"initialize", "notifications/initialized"})

# What each refusal means, as (rule id, advice) for findings and error messages.
_REFUSAL: dict[State, tuple[str, str]] = {
    State.UNINITIALIZED: (
        "client-message-before-initialize", N_("send initialize first")),
    State.INITIALIZING: (
        "client-request-while-initializing",
        N_("only ping may be sent until the initialize response arrives")),
    State.INITIALIZED: (
        "client-request-before-initialized",
        N_("send notifications/initialized first")),
    State.OPERATING: (
        "initialize-twice",
        N_("a session is initialized once; open a new session for a new lifecycle")),
    State.SHUTTING_DOWN: (
        "message-after-shutdown", N_("the session is shutting down; open a new session")),
    State.TERMINATED: (
        "message-after-shutdown", "the session has ended; open a new session"),
}

# Server messages allowed before the client has sent notifications/initialized.
_SERVER_EARLY_REQUESTS = frozenset({"ping"})
_SERVER_EARLY_NOTIFICATIONS = frozenset({"notifications/message"})


def allowed_events(state: State) -> list[Event]:
    """The events with an edge out of ``state`` (for diagrams and property tests)."""
    return [t.event for t in TRANSITIONS if t.source is state]


class Lifecycle:
    """Enforces :data:`TRANSITIONS` and tells observers about each transition."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._t0 = clock()
        self.state = State.UNINITIALIZED
        self.history: list[TransitionRecord] = []
        #: Told of every transition; an observer that raises is contained (see Observers).
        self.observers: Observers[TransitionRecord] = Observers()

    def elapsed(self) -> float:
        return self._clock() - self._t0

    def restart_clock(self) -> None:
        """Measure times from now (a session calls this when it opens its transport)."""
        self._t0 = self._clock()

    def subscribe(self, observer: Observer) -> Callable[[], None]:
        """Call ``observer`` on every transition; returns a function that unsubscribes."""
        return self.observers.add(observer)

    def can_fire(self, event: Event) -> bool:
        return (self.state, event) in _TABLE

    def fire(self, event: Event, cause: str) -> TransitionRecord:
        """Take the edge for ``event``; :class:`LifecycleError` if the table has none."""
        transition = _TABLE.get((self.state, event))
        if transition is None:
            raise LifecycleError(
                f"no transition for {event.value!r} from {self.state.value}; "
                f"allowed here: {', '.join(e.value for e in allowed_events(self.state)) or 'none'}"
            )
        record = TransitionRecord(self.state, transition.target, event, cause, self.elapsed())
        self.state = transition.target
        self.history.append(record)
        self.observers.notify(record)
        return record

    @property
    def path(self) -> list[State]:
        """States visited so far, in order (the path the diagram highlights)."""
        return [State.UNINITIALIZED, *(r.target for r in self.history)]

    # -- guards -----------------------------------------------------------------

    def client_refusal(self, method: str, *, is_request: bool) -> tuple[str, str] | None:
        """``(rule id, explanation)`` if the client may not send ``method`` now, else None."""
        table = _CLIENT_REQUESTS if is_request else _CLIENT_NOTIFICATIONS
        allowed = table[self.state]
        if allowed is None:
            if method not in _FORBIDDEN_WHILE_OPERATING:
                return None
        elif method in allowed:
            return None
        if not is_request and method == "initialized" and self.state is State.INITIALIZED:
            return ("initialized-without-prefix", _(
                "cannot send {method} while {state}: the method is {correct}").format(
                method="'initialized'", state=self.state.value,
                correct="'notifications/initialized'"))
        rule_id, advice = _REFUSAL[self.state]
        return rule_id, _("cannot send {method} while {state}: {advice}").format(
            method=repr(method), state=self.state.value, advice=_(advice))

    def check_client_request(self, method: str) -> None:
        """Raise :class:`LifecycleError` if the client may not send request ``method`` now."""
        refusal = self.client_refusal(method, is_request=True)
        if refusal:
            raise LifecycleError(refusal[1], rule=refusal[0])

    def check_client_notification(self, method: str) -> None:
        refusal = self.client_refusal(method, is_request=False)
        if refusal:
            raise LifecycleError(refusal[1], rule=refusal[0])

    def server_violation(self, method: str, *, is_request: bool) -> str | None:
        """Why a server message is out of order now (a finding), or None if it is fine.

        Before the client has sent ``notifications/initialized`` a server may
        send only pings and log messages.
        """
        if self.state not in (State.UNINITIALIZED, State.INITIALIZING, State.INITIALIZED):
            return None
        allowed = _SERVER_EARLY_REQUESTS if is_request else _SERVER_EARLY_NOTIFICATIONS
        if method in allowed:
            return None
        kind = "request" if is_request else "notification"
        return (
            f"server sent {kind} {method!r} while the client was {self.state.value}; "
            "before notifications/initialized a server may send only ping and logging"
        )
