"""The lifecycle state machine, its guards, and the findings catalogue its refusals cite."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from mcp_nb.protocol.errors import INVALID_REQUEST, LifecycleError, McpError
from mcp_nb.protocol.findings import RULES, SPEC_BASE_URL, Finding, Rule, make_finding
from mcp_nb.protocol.lifecycle import (
    TRANSITIONS,
    Event,
    Lifecycle,
    State,
    Transition,
    TransitionRecord,
    allowed_events,
)

S = State
E = Event

HAPPY_PATH = [
    (E.SEND_INITIALIZE, S.INITIALIZING),
    (E.INITIALIZE_RESULT, S.INITIALIZED),
    (E.SEND_INITIALIZED, S.OPERATING),
    (E.SHUTDOWN, S.SHUTTING_DOWN),
    (E.TRANSPORT_CLOSED, S.TERMINATED),
]

# Shortest event sequence reaching each state from Uninitialized.
ROUTE: dict[State, list[Event]] = {
    S.UNINITIALIZED: [],
    S.INITIALIZING: [E.SEND_INITIALIZE],
    S.INITIALIZED: [E.SEND_INITIALIZE, E.INITIALIZE_RESULT],
    S.OPERATING: [E.SEND_INITIALIZE, E.INITIALIZE_RESULT, E.SEND_INITIALIZED],
    S.SHUTTING_DOWN: [E.SHUTDOWN],
    S.TERMINATED: [E.TRANSPORT_CLOSED],
}
PRE_OPERATING = (S.UNINITIALIZED, S.INITIALIZING, S.INITIALIZED)


class FakeClock:
    """A clock the test advances by hand."""

    def __init__(self, start: float = 100.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


def lifecycle_in(state: State) -> Lifecycle:
    lc = Lifecycle()
    for event in ROUTE[state]:
        lc.fire(event, "test setup")
    assert lc.state is state
    return lc


# -- the table -------------------------------------------------------------------------------


def _reachable() -> set[State]:
    seen = {S.UNINITIALIZED}
    frontier = [S.UNINITIALIZED]
    while frontier:
        state = frontier.pop()
        for t in TRANSITIONS:
            if t.source is state and t.target not in seen:
                seen.add(t.target)
                frontier.append(t.target)
    return seen


def test_exactly_the_six_states_are_reachable():
    assert _reachable() == set(State)
    assert [s.value for s in State] == [
        "Uninitialized", "Initializing", "Initialized", "Operating", "ShuttingDown", "Terminated",
    ]


def test_table_edges():
    edges = {(t.source, t.event): t.target for t in TRANSITIONS}
    assert len(edges) == len(TRANSITIONS) == 13  # no duplicate (state, event) rows
    live = (S.UNINITIALIZED, S.INITIALIZING, S.INITIALIZED, S.OPERATING)
    expected = {
        (S.UNINITIALIZED, E.SEND_INITIALIZE): S.INITIALIZING,
        (S.INITIALIZING, E.INITIALIZE_RESULT): S.INITIALIZED,
        (S.INITIALIZED, E.SEND_INITIALIZED): S.OPERATING,
        (S.UNINITIALIZED, E.ADOPT_STATELESS): S.OPERATING,
        **{(s, E.SHUTDOWN): S.SHUTTING_DOWN for s in live},
        **{(s, E.TRANSPORT_CLOSED): S.TERMINATED for s in (*live, S.SHUTTING_DOWN)},
    }
    assert edges == expected
    assert all(isinstance(t, Transition) and t.meaning for t in TRANSITIONS)
    # Only the stateless shortcut is era-specific; the handshake diagram omits it.
    assert [t.event for t in TRANSITIONS if t.era] == [E.ADOPT_STATELESS]


def test_terminated_has_no_outgoing_edges():
    assert [t for t in TRANSITIONS if t.source is S.TERMINATED] == []
    assert allowed_events(S.TERMINATED) == []


@pytest.mark.parametrize(
    ("state", "events"),
    [
        (S.UNINITIALIZED, [E.SEND_INITIALIZE, E.ADOPT_STATELESS, E.SHUTDOWN,
                           E.TRANSPORT_CLOSED]),
        (S.INITIALIZING, [E.INITIALIZE_RESULT, E.SHUTDOWN, E.TRANSPORT_CLOSED]),
        (S.INITIALIZED, [E.SEND_INITIALIZED, E.SHUTDOWN, E.TRANSPORT_CLOSED]),
        (S.OPERATING, [E.SHUTDOWN, E.TRANSPORT_CLOSED]),
        (S.SHUTTING_DOWN, [E.TRANSPORT_CLOSED]),
        (S.TERMINATED, []),
    ],
)
def test_allowed_events(state, events):
    assert allowed_events(state) == events
    lc = lifecycle_in(state)
    assert [e for e in Event if lc.can_fire(e)] == events


def test_str_of_states_and_events_is_their_value():
    assert str(S.SHUTTING_DOWN) == "ShuttingDown"
    assert str(E.SEND_INITIALIZED) == "send notifications/initialized"


# -- firing ----------------------------------------------------------------------------------


def test_happy_path_records_and_observers():
    clock = FakeClock()
    lc = Lifecycle(clock=clock)
    seen: list[TransitionRecord] = []
    also_seen: list[TransitionRecord] = []
    lc.subscribe(seen.append)
    unsubscribe = lc.subscribe(also_seen.append)

    records = []
    for step, (event, target) in enumerate(HAPPY_PATH):
        clock.now += 0.25 * step  # the clock may also stand still (step 0)
        source = lc.state
        record = lc.fire(event, f"cause {step}")
        assert record == TransitionRecord(source, target, event, f"cause {step}",
                                          clock.now - 100.0)
        assert lc.state is target
        records.append(record)
        if step == 1:
            unsubscribe()

    assert lc.history == records == seen
    assert also_seen == records[:2]
    times = [r.time for r in records]
    assert times[0] >= 0
    assert times == sorted(times)
    assert times == [0.0, 0.25, 0.75, 1.5, 2.5]
    assert lc.path == [S.UNINITIALIZED, S.INITIALIZING, S.INITIALIZED, S.OPERATING,
                       S.SHUTTING_DOWN, S.TERMINATED]


def test_real_clock_times_are_non_negative_and_non_decreasing():
    lc = Lifecycle()
    for event, _ in HAPPY_PATH:
        lc.fire(event, "real clock")
    times = [r.time for r in lc.history]
    assert times[0] >= 0
    assert all(a <= b for a, b in itertools.pairwise(times))


def test_observers_called_in_subscription_order():
    lc = Lifecycle()
    calls: list[tuple[str, State]] = []
    lc.subscribe(lambda r: calls.append(("first", r.target)))
    lc.subscribe(lambda r: calls.append(("second", r.target)))
    lc.fire(E.SEND_INITIALIZE, "x")
    lc.fire(E.TRANSPORT_CLOSED, "y")
    assert calls == [("first", S.INITIALIZING), ("second", S.INITIALIZING),
                     ("first", S.TERMINATED), ("second", S.TERMINATED)]


def test_observer_may_unsubscribe_itself_during_a_transition():
    lc = Lifecycle()
    calls: list[State] = []

    def once(record: TransitionRecord) -> None:
        calls.append(record.target)
        unsubscribe()

    unsubscribe = lc.subscribe(once)
    lc.fire(E.SEND_INITIALIZE, "x")
    lc.fire(E.INITIALIZE_RESULT, "y")
    assert calls == [S.INITIALIZING]


def test_restart_clock_measures_from_now():
    clock = FakeClock(10.0)
    lc = Lifecycle(clock=clock)
    clock.now = 15.0
    assert lc.elapsed() == 5.0
    lc.restart_clock()
    clock.now = 16.5
    assert lc.fire(E.SEND_INITIALIZE, "x").time == 1.5


def test_record_str():
    record = TransitionRecord(S.INITIALIZED, S.OPERATING, E.SEND_INITIALIZED, "confirmed", 1.23456)
    assert str(record) == "Initialized → Operating (confirmed) at 1.235s"


@pytest.mark.parametrize(
    ("state", "event"),
    [
        (S.UNINITIALIZED, E.INITIALIZE_RESULT),
        (S.UNINITIALIZED, E.SEND_INITIALIZED),
        (S.INITIALIZING, E.SEND_INITIALIZE),
        (S.INITIALIZED, E.INITIALIZE_RESULT),
        (S.OPERATING, E.SEND_INITIALIZE),
        (S.SHUTTING_DOWN, E.SHUTDOWN),
        (S.TERMINATED, E.TRANSPORT_CLOSED),
        (S.TERMINATED, E.SEND_INITIALIZE),
    ],
)
def test_fire_without_an_edge_raises_naming_the_state(state, event):
    lc = lifecycle_in(state)
    history = list(lc.history)
    seen: list[TransitionRecord] = []
    lc.subscribe(seen.append)
    with pytest.raises(LifecycleError) as info:
        lc.fire(event, "not allowed")
    message = str(info.value)
    assert f"no transition for {event.value!r} from {state.value}" in message
    allowed = ", ".join(e.value for e in allowed_events(state)) or "none"
    assert message.endswith(f"allowed here: {allowed}")
    assert info.value.code == INVALID_REQUEST
    assert isinstance(info.value, McpError)
    assert lc.state is state
    assert lc.history == history
    assert seen == []


def test_path_before_anything_happened():
    assert Lifecycle().path == [S.UNINITIALIZED]


def test_path_of_an_aborted_handshake():
    lc = Lifecycle()
    lc.fire(E.SEND_INITIALIZE, "offer")
    lc.fire(E.SHUTDOWN, "version rejected")
    lc.fire(E.TRANSPORT_CLOSED, "server exited")
    assert lc.path == [S.UNINITIALIZED, S.INITIALIZING, S.SHUTTING_DOWN, S.TERMINATED]


# -- guards: what the client may send -------------------------------------------------------

REQUESTS = ["initialize", "ping", "tools/list", "tools/call", "resources/read",
            "logging/setLevel", "completion/complete", "server/discover", "anything/else"]
NOTIFICATIONS = ["notifications/initialized", "notifications/cancelled",
                 "notifications/progress", "notifications/roots/list_changed"]

ALLOWED_REQUESTS: dict[State, set[str]] = {
    S.UNINITIALIZED: {"initialize", "server/discover"},
    S.INITIALIZING: {"ping"},
    S.INITIALIZED: {"ping"},
    S.OPERATING: set(REQUESTS) - {"initialize"},
    S.SHUTTING_DOWN: set(),
    S.TERMINATED: set(),
}
ALLOWED_NOTIFICATIONS: dict[State, set[str]] = {
    S.UNINITIALIZED: set(),
    S.INITIALIZING: set(),
    S.INITIALIZED: {"notifications/initialized"},
    S.OPERATING: set(NOTIFICATIONS) - {"notifications/initialized"},
    S.SHUTTING_DOWN: {"notifications/cancelled"},
    S.TERMINATED: set(),
}
REFUSAL_RULE: dict[State, str] = {
    S.UNINITIALIZED: "client-message-before-initialize",
    S.INITIALIZING: "client-request-while-initializing",
    S.INITIALIZED: "client-request-before-initialized",
    S.OPERATING: "initialize-twice",
    S.SHUTTING_DOWN: "message-after-shutdown",
    S.TERMINATED: "message-after-shutdown",
}


def test_a_bare_initialized_is_named_as_a_wrong_method_not_an_early_request() -> None:
    # Seed texts write the handshake's last message without its prefix; the spec has no rule
    # against client notifications at that point, so the finding names the method instead.
    rule_id, detail = lifecycle_in(S.INITIALIZED).client_refusal("initialized", is_request=False)
    assert rule_id == "initialized-without-prefix" and "notifications/initialized" in detail
    assert lifecycle_in(S.OPERATING).client_refusal("initialized", is_request=False) is None


@pytest.mark.parametrize("state", list(State))
@pytest.mark.parametrize("method", REQUESTS)
def test_client_request_guard(state, method):
    lc = lifecycle_in(state)
    refusal = lc.client_refusal(method, is_request=True)
    if method in ALLOWED_REQUESTS[state]:
        assert refusal is None
        lc.check_client_request(method)  # does not raise
    else:
        assert refusal is not None
        rule_id, text = refusal
        assert rule_id == REFUSAL_RULE[state]
        assert rule_id in RULES
        assert text.startswith(f"cannot send {method!r} while {state.value}: ")
        with pytest.raises(LifecycleError) as info:
            lc.check_client_request(method)
        assert str(info.value) == text
        assert (info.value.rule, info.value.override) == (rule_id, None)  # no force here
    assert lc.state is state  # guards never transition


@pytest.mark.parametrize("state", list(State))
@pytest.mark.parametrize("method", NOTIFICATIONS)
def test_client_notification_guard(state, method):
    lc = lifecycle_in(state)
    refusal = lc.client_refusal(method, is_request=False)
    if method in ALLOWED_NOTIFICATIONS[state]:
        assert refusal is None
        lc.check_client_notification(method)
    else:
        assert refusal is not None
        assert refusal[0] == REFUSAL_RULE[state]
        assert refusal[0] in RULES
        with pytest.raises(LifecycleError, match=f"cannot send {method!r} while {state.value}"):
            lc.check_client_notification(method)


def test_refusal_advice():
    assert Lifecycle().client_refusal("tools/list", is_request=True) == (
        "client-message-before-initialize",
        "cannot send 'tools/list' while Uninitialized: send initialize first",
    )
    _, text = lifecycle_in(S.INITIALIZING).client_refusal("tools/list", is_request=True)
    assert "only ping may be sent until the initialize response arrives" in text
    _, text = lifecycle_in(S.INITIALIZED).client_refusal("tools/list", is_request=True)
    assert "send notifications/initialized first" in text
    _, text = lifecycle_in(S.OPERATING).client_refusal("initialize", is_request=True)
    assert "open a new session" in text


def test_requests_and_notifications_are_separate_tables():
    # "initialize" is a request; as a notification name it is not allowed in Uninitialized.
    lc = Lifecycle()
    assert lc.client_refusal("initialize", is_request=True) is None
    assert lc.client_refusal("initialize", is_request=False) is not None
    # "notifications/cancelled" is fine as a notification while shutting down, not as a request.
    lc = lifecycle_in(S.SHUTTING_DOWN)
    assert lc.client_refusal("notifications/cancelled", is_request=False) is None
    assert lc.client_refusal("notifications/cancelled", is_request=True) is not None


# -- guards: what the server may send --------------------------------------------------------


@pytest.mark.parametrize("state", PRE_OPERATING)
def test_server_messages_before_operating(state):
    lc = lifecycle_in(state)
    assert lc.server_violation("ping", is_request=True) is None
    assert lc.server_violation("notifications/message", is_request=False) is None

    text = lc.server_violation("sampling/createMessage", is_request=True)
    assert text == (
        f"server sent request 'sampling/createMessage' while the client was {state.value}; "
        "before notifications/initialized a server may send only ping and logging"
    )
    text = lc.server_violation("notifications/tools/list_changed", is_request=False)
    assert text is not None
    assert text.startswith("server sent notification 'notifications/tools/list_changed'")
    # The kinds are not interchangeable.
    assert lc.server_violation("notifications/message", is_request=True) is not None
    assert lc.server_violation("ping", is_request=False) is not None


@pytest.mark.parametrize("state", [S.OPERATING, S.SHUTTING_DOWN, S.TERMINATED])
@pytest.mark.parametrize(
    ("method", "is_request"),
    [("sampling/createMessage", True), ("roots/list", True), ("ping", True),
     ("notifications/tools/list_changed", False), ("notifications/message", False)],
)
def test_server_messages_once_operating(state, method, is_request):
    assert lifecycle_in(state).server_violation(method, is_request=is_request) is None


def test_server_violation_rule_exists():
    rule_ = RULES["server-request-before-initialized"]
    assert rule_.section == "basic/lifecycle#initialization"


# -- property: random event sequences ----------------------------------------------------------


class LifecycleMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.clock = FakeClock(0.0)
        self.lc = Lifecycle(clock=self.clock)
        self.notified: list[TransitionRecord] = []
        self.lc.subscribe(self.notified.append)

    @rule(event=st.sampled_from(Event), dt=st.floats(0, 5, allow_nan=False))
    def fire(self, event: Event, dt: float) -> None:
        self.clock.now += dt
        before = self.lc.state
        history = list(self.lc.history)
        if self.lc.can_fire(event):
            assert before is not S.TERMINATED
            record = self.lc.fire(event, "random")
            assert record.source is before
            assert record.target is self.lc.state
            assert record.event is event
            assert self.lc.history == [*history, record]
        else:
            with pytest.raises(LifecycleError, match=before.value):
                self.lc.fire(event, "random")
            assert self.lc.state is before
            assert self.lc.history == history

    @invariant()
    def state_is_one_of_six(self) -> None:
        assert self.lc.state in set(State)

    @invariant()
    def history_chains(self) -> None:
        history = self.lc.history
        if history:
            assert history[0].source is S.UNINITIALIZED
            assert history[-1].target is self.lc.state
        for a, b in itertools.pairwise(history):
            assert a.target is b.source
            assert 0 <= a.time <= b.time
        assert self.lc.path == [S.UNINITIALIZED, *(r.target for r in history)]
        assert self.notified == history
        # Every record is an edge of the table.
        edges = {(t.source, t.event, t.target) for t in TRANSITIONS}
        assert all((r.source, r.event, r.target) in edges for r in history)

    @invariant()
    def terminated_is_final(self) -> None:
        if self.lc.state is S.TERMINATED:
            assert not any(self.lc.can_fire(e) for e in Event)
        assert S.TERMINATED not in [r.source for r in self.lc.history]

    @invariant()
    def can_fire_matches_allowed_events(self) -> None:
        assert [e for e in Event if self.lc.can_fire(e)] == allowed_events(self.lc.state)

    @invariant()
    def guards_hold(self) -> None:
        lc, state = self.lc, self.lc.state
        operating = state is S.OPERATING
        # Normal operation only while Operating.
        if operating:
            lc.check_client_request("tools/list")
            lc.check_client_notification("notifications/progress")
        else:
            with pytest.raises(LifecycleError):
                lc.check_client_request("tools/list")
            with pytest.raises(LifecycleError):
                lc.check_client_notification("notifications/progress")
        # initialize only before anything happened.
        if state is S.UNINITIALIZED:
            lc.check_client_request("initialize")
        else:
            with pytest.raises(LifecycleError):
                lc.check_client_request("initialize")
        # ping from Initializing until shutdown starts.
        ping_ok = state in (S.INITIALIZING, S.INITIALIZED, S.OPERATING)
        assert (lc.client_refusal("ping", is_request=True) is None) == ping_ok
        # Refusals always cite a catalogued rule.
        refusal = lc.client_refusal("no/such/method", is_request=not operating)
        if refusal is not None:
            assert refusal[0] in RULES
        # The server is constrained only before Operating.
        violation = lc.server_violation("roots/list", is_request=True)
        assert (violation is not None) == (state in PRE_OPERATING)


TestLifecycleMachine = LifecycleMachine.TestCase
TestLifecycleMachine.settings = settings(max_examples=60, stateful_step_count=20, deadline=None)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(Event), max_size=12))
def test_random_event_sequences(events):
    lc = Lifecycle()
    for event in events:
        before = lc.state
        if lc.can_fire(event):
            lc.fire(event, "random")
        else:
            with pytest.raises(LifecycleError):
                lc.fire(event, "random")
            assert lc.state is before
    assert lc.state in set(State)
    assert len(lc.history) <= 5  # the longest path has five edges
    assert lc.path[-1] is lc.state
    assert len(set(lc.path)) == len(lc.path)  # the graph has no cycles


# -- findings --------------------------------------------------------------------------------


def test_every_rule_id_is_its_key():
    assert all(key == r.id for key, r in RULES.items())
    assert all(r.summary and r.section for r in RULES.values())


def test_make_finding():
    finding = make_finding("initialize-twice", "client", "sent initialize again",
                           {"method": "initialize"}, 1.5)
    assert finding == Finding(RULES["initialize-twice"], "client", "sent initialize again",
                              {"method": "initialize"}, 1.5)
    assert finding.to_dict() == {
        "rule": "initialize-twice",
        "summary": RULES["initialize-twice"].summary,
        "section": "basic/lifecycle#initialization",
        "side": "client",
        "detail": "sent initialize again",
        "evidence": {"method": "initialize"},
        "time": 1.5,
    }


def test_make_finding_with_unknown_rule_raises_key_error():
    with pytest.raises(KeyError, match="no-such-rule"):
        make_finding("no-such-rule", "server", "whatever")


def test_rule_url():
    r = Rule("x", "summary", "basic/lifecycle#shutdown")
    assert SPEC_BASE_URL == "https://modelcontextprotocol.io/specification"
    assert r.url() == (
        "https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#shutdown"
    )
    assert r.url("2024-11-05") == (
        "https://modelcontextprotocol.io/specification/2024-11-05/basic/lifecycle#shutdown"
    )
    assert RULES["batch-not-allowed"].url("2025-03-26") == (
        "https://modelcontextprotocol.io/specification/2025-03-26/basic#messages"
    )


def test_finding_str_mentions_rule_and_section():
    finding = make_finding("response-to-unknown-id", "server", "id 99 was never sent")
    text = str(finding)
    assert text == "[server] response-to-unknown-id: id 99 was never sent (spec: basic#responses)"
