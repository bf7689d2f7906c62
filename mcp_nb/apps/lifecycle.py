"""An App's lifecycle in the host, as a transition table the host enforces and the notebook draws.

The specification describes the lifecycle as sequence diagrams (discovery, UI
initialization, interactive phase, cleanup); these states are the host's view of
them, one per thing a learner can watch happen::

    Requested --resources/read ok--> ResourceRead --frame created--> Loading
    Loading --sandbox-proxy-ready / sandbox-resource-ready--> Loaded
    Loaded --ui/initialize answered--> Initializing --ui/notifications/initialized--> Initialized
    Initialized --tool-input--> InputSent --tool-result--> Interactive
    InputSent --tool-cancelled--> Cancelled
    Initialized … Cancelled --ui/resource-teardown sent--> TearingDown --answered--> TornDown
    Loading … TearingDown --output cleared--> TornDown

Two rules of the spec shape the table: the host MUST NOT send the View any request or
notification before ``ui/notifications/initialized`` (it answers the View's
``ui/initialize`` request before then: an answer is a response, neither of the two; and a
View that never says ``initialized`` is removed without ``ui/resource-teardown``, a
request: the ``REMOVE`` edges), and
``tool-input`` is sent at most once and is required before ``tool-result``.  One edge is
the person's, not the host's: clearing the output (or re-running the cell) removes the frame
in the browser before the host can say anything (``CLEARED``, from any state with a frame).
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..i18n import N_
from ..protocol.errors import LifecycleError
from ..protocol.observers import Observers


class AppState(enum.Enum):
    REQUESTED = "Requested"
    REFUSED = "Refused"
    RESOURCE_READ = "ResourceRead"
    LOADING = "Loading"
    LOADED = "Loaded"
    INITIALIZING = "Initializing"
    INITIALIZED = "Initialized"
    INPUT_SENT = "InputSent"
    INTERACTIVE = "Interactive"
    CANCELLED = "Cancelled"
    TEARING_DOWN = "TearingDown"
    TORN_DOWN = "TornDown"

    def __str__(self) -> str:
        return self.value


class AppEvent(enum.Enum):
    RESOURCE_READ = "resources/read checked"
    RESOURCE_REFUSED = "resource refused"
    FRAME_CREATED = "sandbox frame created"
    RESOURCE_SENT = "sandbox-resource-ready sent"
    INITIALIZE = "ui/initialize answered"
    INITIALIZED = "ui/notifications/initialized"
    TOOL_INPUT = "tool-input sent"
    TOOL_RESULT = "tool-result sent"
    TOOL_CANCELLED = "tool-cancelled sent"
    TEARDOWN = "ui/resource-teardown sent"
    TEARDOWN_ANSWERED = "ui/resource-teardown answered"
    REMOVE = "frame removed"
    CLEARED = "output cleared"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class AppTransition:
    source: AppState
    event: AppEvent
    target: AppState
    #: Why the edge exists, in the spec's terms (diagram tooltips, docs).
    meaning: str


_BEFORE_INITIALIZED = (AppState.RESOURCE_READ, AppState.LOADING, AppState.LOADED,
                       AppState.INITIALIZING)
_AFTER_INITIALIZED = (AppState.INITIALIZED, AppState.INPUT_SENT, AppState.INTERACTIVE,
                      AppState.CANCELLED)

#: Every edge an App can take in this host.
APP_TRANSITIONS: tuple[AppTransition, ...] = (
    AppTransition(AppState.REQUESTED, AppEvent.RESOURCE_READ, AppState.RESOURCE_READ,
                  N_("the host MUST use resources/read; mimeType and content checked")),
    AppTransition(AppState.REQUESTED, AppEvent.RESOURCE_REFUSED, AppState.REFUSED,
                  N_("missing resource, wrong mimeType or no content: the App is not rendered")),
    *(AppTransition(state, AppEvent.RESOURCE_REFUSED, AppState.REFUSED,
                    N_("the host's page found its own origin among those the CSP lets the App "
                       "reach: it never loads the View"))
      for state in (AppState.RESOURCE_READ, AppState.LOADING)),
    AppTransition(AppState.RESOURCE_READ, AppEvent.FRAME_CREATED, AppState.LOADING,
                  N_("the sandbox proxy iframe (opaque origin, CSP in place) is created")),
    AppTransition(AppState.LOADING, AppEvent.RESOURCE_SENT, AppState.LOADED,
                  N_("the proxy said sandbox-proxy-ready; the host sent the HTML")),
    AppTransition(AppState.LOADED, AppEvent.INITIALIZE, AppState.INITIALIZING,
                  N_("the View sent ui/initialize; the host answered with its context")),
    AppTransition(AppState.INITIALIZING, AppEvent.INITIALIZED, AppState.INITIALIZED,
                  N_("the View confirmed; the host may now send it notifications")),
    AppTransition(AppState.INITIALIZED, AppEvent.TOOL_INPUT, AppState.INPUT_SENT,
                  N_("the complete tool arguments (sent at most once)")),
    AppTransition(AppState.INPUT_SENT, AppEvent.TOOL_RESULT, AppState.INTERACTIVE,
                  N_("the tool's result; the View may call tools from here on")),
    AppTransition(AppState.INPUT_SENT, AppEvent.TOOL_CANCELLED, AppState.CANCELLED,
                  N_("the tool call was cancelled (the host MUST say so)")),
    *(AppTransition(state, AppEvent.TEARDOWN, AppState.TEARING_DOWN,
                    N_("the host MUST send ui/resource-teardown before tearing down"))
      for state in _AFTER_INITIALIZED),
    AppTransition(AppState.TEARING_DOWN, AppEvent.TEARDOWN_ANSWERED, AppState.TORN_DOWN,
                  N_("the View answered (the host SHOULD wait for it); the frame goes")),
    AppTransition(AppState.TEARING_DOWN, AppEvent.REMOVE, AppState.TORN_DOWN,
                  N_("no answer in time, or the output was cleared: the frame goes anyway")),
    *(AppTransition(state, AppEvent.REMOVE, AppState.TORN_DOWN,
                    N_("removed before initialized: no ui/resource-teardown, a request "
                       "the host MUST NOT send the View yet"))
      for state in _BEFORE_INITIALIZED),
    *(AppTransition(state, AppEvent.CLEARED, AppState.TORN_DOWN,
                    N_("the person cleared the output or re-ran the cell: the browser removed the "
                       "frame before the host could send anything"))
      for state in (*_BEFORE_INITIALIZED, *_AFTER_INITIALIZED, AppState.TEARING_DOWN)),
)

_TABLE: dict[tuple[AppState, AppEvent], AppTransition] = {
    (t.source, t.event): t for t in APP_TRANSITIONS}

#: States in which the View has said ``initialized`` and the host may write to it.
ADDRESSABLE = frozenset(_AFTER_INITIALIZED)


@dataclass(frozen=True)
class AppTransitionRecord:
    source: AppState
    target: AppState
    event: AppEvent
    cause: str
    time: float

    def __str__(self) -> str:
        return f"{self.source} → {self.target} ({self.cause}) at {self.time:.3f}s"


class AppLifecycle:
    """Enforces :data:`APP_TRANSITIONS` and tells observers of each transition."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._t0 = clock()
        self.state = AppState.REQUESTED
        self.history: list[AppTransitionRecord] = []
        self.observers: Observers[AppTransitionRecord] = Observers()

    def can_fire(self, event: AppEvent) -> bool:
        return (self.state, event) in _TABLE

    def fire(self, event: AppEvent, cause: str = "") -> AppTransitionRecord:
        transition = _TABLE.get((self.state, event))
        if transition is None:
            allowed = [t.event.value for t in APP_TRANSITIONS if t.source is self.state]
            raise LifecycleError(
                f"App: no transition for {event.value!r} from {self.state.value}; "
                f"allowed here: {', '.join(allowed) or 'none'}")
        record = AppTransitionRecord(self.state, transition.target, event,
                                     cause or event.value, self._clock() - self._t0)
        self.state = transition.target
        self.history.append(record)
        self.observers.notify(record)
        return record

    @property
    def path(self) -> list[AppState]:
        return [AppState.REQUESTED, *(r.target for r in self.history)]

    @property
    def addressable(self) -> bool:
        """True once the View said ``initialized`` and until teardown begins."""
        return self.state in ADDRESSABLE
