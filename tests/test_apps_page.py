"""The host's page brings the View up; the kernel judges and records after (issue 33).

Under Run All the widgets' messages reach the kernel only after every queued cell. The
page (``static/app_frame.js``) therefore answers ``ui/initialize`` and posts the tool's
input and result from the widget's ``bootstrap`` trait, and reports each message it relayed
with what it posted and when. These tests drive the kernel's side of that contract with the
messages the page sends (the page itself runs in tests/test_apps_browser.py): the kernel
records the page's answers in their place and sends no second copy, keeps judging by its
own rules, and never takes a late ``created`` for a new page.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from mcp_nb.apps import meta, sandbox_policy
from mcp_nb.apps.handoff import DELIVERED, HELD, TEARDOWN_HANDED
from mcp_nb.apps.host import AppHost, Exchange, ToFrame
from mcp_nb.apps.lifecycle import AppEvent, AppState
from mcp_nb.notebook.apps import AppView

PROXY_READY = {"jsonrpc": "2.0", "method": "ui/notifications/sandbox-proxy-ready"}
INITIALIZED = {"jsonrpc": "2.0", "method": "ui/notifications/initialized"}


def _initialize(request_id: Any = "v-7", **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "ui/initialize",
            "params": {"protocolVersion": "2026-01-26", "appCapabilities": {}, **params}}


def _sans_io_host() -> tuple[AppHost, list[Exchange]]:
    html = "<!doctype html><html><body>view</body></html>"
    resource = meta.ui_resource("ui://t/v.html", {"contents": [
        {"uri": "ui://t/v.html", "mimeType": meta.MIME_TYPE, "text": html}]})
    tool = {"name": "v", "inputSchema": {"type": "object"},
            "_meta": {"ui": {"resourceUri": "ui://t/v.html"}}}
    host = AppHost(tool, resource, sandbox_policy(None), arguments={"x": 1})
    seen: list[Exchange] = []
    host.exchanges.add(seen.append)
    host.frame_created()
    host.receive(PROXY_READY)
    return host, seen


# -- sans I/O --------------------------------------------------------------------------------

def test_an_answer_the_page_posted_is_recorded_as_the_pages_and_not_sent_again() -> None:
    host, seen = _sans_io_host()
    answer = {"jsonrpc": "2.0", "id": "v-7", "result": host.bootstrap()["initialize"]}
    actions = host.receive_from_page(_initialize(), [answer], at=1000.5)
    assert [a for a in actions if isinstance(a, ToFrame) and not a.posted] == []
    assert seen[-1].message == answer and seen[-1].note == "posted by the host's page"
    assert seen[-1].at == 1000.5 and seen[-2].at == 1000.5  # the page's time, both ways
    assert host.state is AppState.INITIALIZING


def test_a_page_answer_the_host_would_not_have_given_is_recorded_with_the_hosts_own() -> None:
    host, seen = _sans_io_host()
    wrong = {"jsonrpc": "2.0", "id": "v-7", "result": {"protocolVersion": "1999-01-01"}}
    host.receive_from_page(_initialize(), [wrong])
    assert seen[-1].message == wrong
    assert seen[-1].note.startswith("posted by the host's page; this host would have answered")


def test_initialize_without_app_capabilities_is_refused_and_the_page_leaves_it_to_the_host(
        ) -> None:
    host, _ = _sans_io_host()
    request = _initialize()
    del request["params"]["appCapabilities"]
    (reply, _shown) = host.receive_from_page(request, [])  # the page posted nothing
    assert isinstance(reply, ToFrame) and not reply.posted
    assert reply.message["error"]["code"] == -32602
    assert "MUST include its capabilities" in reply.message["error"]["message"]
    assert host.state is AppState.LOADED


def test_the_pages_input_and_result_move_the_lifecycle_and_the_host_sends_neither() -> None:
    host, seen = _sans_io_host()
    host.page_delivers = True
    host.receive_from_page(_initialize(), [{"jsonrpc": "2.0", "id": "v-7", "result": {}}])
    assert host.set_result({"content": []}) == []  # the page posts it, not the kernel
    input_ = {"jsonrpc": "2.0", "method": "ui/notifications/tool-input",
              "params": {"arguments": {"x": 1}}}
    result = {"jsonrpc": "2.0", "method": "ui/notifications/tool-result",
              "params": {"content": []}}
    actions = host.receive_from_page(INITIALIZED, [input_, result])
    assert actions == [] and host.state is AppState.INTERACTIVE
    assert [e.message for e in seen[-2:]] == [input_, result]


def test_a_result_the_page_posts_before_the_input_is_recorded_as_out_of_order() -> None:
    host, seen = _sans_io_host()
    host.page_delivers = True
    host.receive_from_page(_initialize(), [{"jsonrpc": "2.0", "id": "v-7", "result": {}}])
    host.receive_from_page(INITIALIZED, [])
    result = {"jsonrpc": "2.0", "method": "ui/notifications/tool-result", "params": {}}
    (said,) = host.page_posted(result)
    assert said.kind == "late" and host.state is AppState.INITIALIZED
    assert "this host would not have sent it" in seen[-1].note


def test_after_the_session_closed_the_view_is_kept_and_its_server_requests_are_refused(
        ) -> None:
    host, _ = _sans_io_host()
    host.receive(_initialize(1))
    host.receive(INITIALIZED)
    assert host.disconnect("the MCP session 'x' ended") == []
    assert host.state is AppState.INPUT_SENT
    (refusal, _shown) = host.receive({"jsonrpc": "2.0", "id": 2, "method": "resources/read",
                                     "params": {"uri": "ui://t/v.html"}})
    assert refusal.message["error"]["message"].startswith(
        "session closed: the MCP session 'x' ended")
    (pong,) = host.receive({"jsonrpc": "2.0", "id": 3, "method": "ping"})  # still the host's
    assert pong.message["result"] == {}


# -- the kernel's side, through the magics ------------------------------------------------------

@pytest.fixture
def app(mcp: Any) -> AppView:
    mcp("connect clock --lab=--apps")
    view = mcp("call clock label=Paris")
    assert isinstance(view, AppView)
    return view


class Page:
    """The messages one page sends the kernel (what app_frame.js sends), and what the
    kernel posts back to it."""

    def __init__(self, view: AppView, token: str, *, frame: bool = True) -> None:
        self.view, self.token = view, token
        self.sent: list[dict[str, Any]] = []
        assert view.frame is not None
        view.frame.send = lambda content, buffers=None: self.sent.append(content["message"])
        self.context = {"theme": "dark", "width": 700, "locale": "de-CH",
                        "timeZone": "Europe/Zurich"}
        self.say({"kind": "created", "page": token, "bootstrap": True, "frame": frame,
                  **self.context})

    def say(self, content: dict[str, Any]) -> None:
        assert self.view.frame is not None
        self.view._on_frame_message(self.view.frame, content, [])

    def relay(self, message: dict[str, Any], posted: list[dict[str, Any]] = (),  # type: ignore[assignment]
              at: float | None = None) -> None:
        self.say({"kind": "frame", "message": message, "posted": list(posted),
                  "at": (time.time() if at is None else at) * 1000, "page": self.token})

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """The page's own ui/initialize answer: the bootstrap's, with the browser's context."""
        assert self.view.frame is not None
        result = dict(self.view.frame.bootstrap["initialize"])
        context = dict(result["hostContext"])
        context.update(theme="dark", locale="de-CH", timeZone="Europe/Zurich")
        context["containerDimensions"] = {**context["containerDimensions"], "width": 700}
        result["hostContext"] = context
        return {"jsonrpc": "2.0", "id": request["id"], "result": result}

    def bring_up(self, at: float | None = None) -> None:
        boot = self.view.frame.bootstrap if self.view.frame is not None else {}
        self.relay(PROXY_READY, at=at)
        request = _initialize("view-1")
        self.relay(request, [self.answer(request)], at=at)
        self.relay(INITIALIZED, [
            {"jsonrpc": "2.0", "method": "ui/notifications/tool-input",
             "params": {"arguments": boot["arguments"]}},
            {"jsonrpc": "2.0", "method": "ui/notifications/tool-result",
             "params": boot["result"]}], at=at)


def _lane(view: AppView) -> list[Any]:
    view.hosted.settle()
    return [e for e in view.hosted.session.transcript if e.direction in ("app→host", "host→app")]


def test_the_widget_carries_everything_the_page_needs(app: AppView) -> None:
    assert app.frame is not None
    boot = app.frame.bootstrap
    assert boot["deliver"] is True and boot["arguments"] == {"label": "Paris"}
    assert boot["result"]["content"][0]["text"] == "tick 1 (Paris)"
    assert boot["initialize"]["hostContext"]["toolInfo"]["tool"]["name"] == "clock"


def test_a_page_that_brought_the_view_up_gets_no_second_copy_and_every_step_is_recorded(
        app: AppView) -> None:
    page = Page(app, "p1")
    page.bring_up()
    assert page.sent == []  # nothing from the kernel: the page had posted it all
    assert app.lifecycle.state is AppState.INTERACTIVE
    lane = _lane(app)
    assert [(e.direction, e.method or e.id) for e in lane] == [
        ("app→host", "ui/notifications/sandbox-proxy-ready"),
        ("host→app", "ui/notifications/sandbox-resource-ready"),
        ("app→host", "ui/initialize"), ("host→app", "view-1"),
        ("app→host", "ui/notifications/initialized"),
        ("host→app", "ui/notifications/tool-input"),
        ("host→app", "ui/notifications/tool-result")]
    # The page's answer is the one the kernel's host would have given (same context).
    assert lane[3].note == "App clock: posted by the host's page"
    assert "✓" in app.verdict_line.value


def test_steps_the_kernel_gets_to_late_keep_the_pages_time(app: AppView) -> None:
    page = Page(app, "p1")
    time.sleep(0.3)  # the kernel "gets to" the page's messages later than they happened
    page.bring_up(at=time.time() - 0.25)
    lane = _lane(app)
    now = app.hosted.session.lifecycle.elapsed()
    assert all(e.time <= now - 0.2 for e in lane)
    assert [e.time for e in lane] == sorted(e.time for e in lane)


def test_a_background_result_reaches_the_page_through_the_widget(mcp: Any,
                                                                 monkeypatch: Any) -> None:
    mcp("connect clock --lab=--apps")
    shown: list[Any] = []
    monkeypatch.setattr("mcp_nb.notebook.apps.display", lambda *objects: shown.extend(objects))
    mcp("call clock wait=0.5 --background")
    (view,) = [o for o in shown if isinstance(o, AppView)]
    page = Page(view, "p1")
    page.relay(PROXY_READY)
    request = _initialize("view-1")
    page.relay(request, [page.answer(request)])
    assert view.frame is not None and "result" not in view.frame.bootstrap
    page.relay(INITIALIZED, [{"jsonrpc": "2.0", "method": "ui/notifications/tool-input",
                              "params": {"arguments": {"wait": 0.5}}}])
    deadline = time.monotonic() + 10
    while "result" not in view.frame.bootstrap:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert page.sent == []  # the kernel leaves the result to the page …
    page.say({"kind": "posted", "page": "p1", "at": time.time() * 1000, "message": {
        "jsonrpc": "2.0", "method": "ui/notifications/tool-result",
        "params": view.frame.bootstrap["result"]}})
    assert view.lifecycle.state is AppState.INTERACTIVE  # … and records it when told


def test_a_teardown_decided_before_the_kernel_heard_the_page_is_the_pages(
        app: AppView) -> None:
    app.teardown("torn down by a later cell")  # before the kernel heard from any page
    assert app.frame is not None and not app.frame.removed  # the page decides
    handed = app.frame.teardown["message"]
    assert handed["method"] == "ui/resource-teardown" and app.frame.teardown["wait"] > 0
    assert app.lifecycle.state is AppState.RESOURCE_READ
    page = Page(app, "p1")  # the page's messages, read by the kernel only now
    page.bring_up()
    page.say({"kind": "teardown", "outcome": "sent", "at": time.time() * 1000, "page": "p1"})
    assert app.lifecycle.state is AppState.TEARING_DOWN
    page.relay({"jsonrpc": "2.0", "id": handed["id"], "result": {}})  # the View's answer
    assert app.lifecycle.state is AppState.TORN_DOWN and app.frame.removed
    assert page.sent == []  # the kernel sent the View nothing itself
    assert "a new page" not in app.notes.value and "this host would" not in app.notes.value
    lane = _lane(app)
    teardowns = [(e.kind, e.note) for e in lane if e.method == "ui/resource-teardown"]
    assert teardowns == [("held", "App clock: " + TEARDOWN_HANDED),
                         ("request", "App clock: posted by the host's page")]
    assert lane[-1].direction == "app→host" and lane[-1].id == handed["id"]
    # A reloaded page builds no frame for a torn-down App: still no new lifecycle.
    Page(app, "p2", frame=False)
    assert app.lifecycle.state is AppState.TORN_DOWN and "a new page" not in app.notes.value


def test_a_teardown_the_page_got_before_initialized_sends_nothing(app: AppView) -> None:
    app.teardown("torn down by a later cell")
    page = Page(app, "p1")
    page.relay(PROXY_READY)
    page.say({"kind": "teardown", "outcome": "removed", "at": time.time() * 1000,
              "page": "p1"})
    assert app.lifecycle.state is AppState.TORN_DOWN and app.frame is not None
    assert app.frame.removed
    assert [r.event for r in app.lifecycle.history][-1] is AppEvent.REMOVE
    assert [e.kind for e in _lane(app) if e.method == "ui/resource-teardown"] == ["held"]


def test_clearing_an_initialized_views_output_tears_its_lifecycle_down(app: AppView) -> None:
    page = Page(app, "p1")
    page.bring_up()
    assert app.lifecycle.state is AppState.INTERACTIVE
    page.say({"kind": "view-removed"})
    assert app.lifecycle.state is AppState.TORN_DOWN
    record = app.lifecycle.history[-1]
    assert record.event is AppEvent.CLEARED
    assert record.cause == "the output was cleared or the cell re-run"


def test_closing_the_frames_widget_tears_its_lifecycle_down(app: AppView) -> None:
    Page(app, "p1").bring_up()
    assert app.frame is not None
    app.frame.close()
    assert app.lifecycle.state is AppState.TORN_DOWN
    assert app.lifecycle.history[-1].cause == "the App's widget was closed"


def test_an_app_the_page_refuses_for_its_own_origin_is_refused_and_said(app: AppView) -> None:
    page = Page(app, "p1")  # the frame exists: the page checks before loading it
    page.say({"kind": "page-origin-refused", "origin": "http://127.0.0.1:9"})
    assert app.lifecycle.state is AppState.REFUSED
    assert "own origin http://127.0.0.1:9" in app.header.value
    assert app.verdict()[0] == "failed"


def test_a_second_page_that_builds_the_frame_starts_a_new_lifecycle(app: AppView) -> None:
    Page(app, "p1").bring_up()
    Page(app, "p1").relay(PROXY_READY)  # the same page again: nothing new
    assert app.lifecycle.state is AppState.INTERACTIVE
    reloaded = Page(app, "p2")
    assert "a new page shows this App" in app.notes.value
    reloaded.bring_up()
    assert app.lifecycle.state is AppState.INTERACTIVE and reloaded.sent == []


def _stepped(mcp: Any) -> AppView:
    mcp("connect clock --lab=--apps")
    mcp("app clock label=Oslo --step")
    for _ in range(4):
        view = mcp("app --next")  # call, read, csp, load
    assert isinstance(view, AppView) and view.frame is not None
    return view


def test_a_step_app_leaves_input_and_result_to_the_kernel(mcp: Any) -> None:
    view = _stepped(mcp)
    assert view.frame is not None and view.frame.bootstrap["deliver"] is False
    page = Page(view, "p1")
    page.relay(PROXY_READY)
    request = _initialize("view-1")
    page.relay(request, [page.answer(request)])  # the page still answers ui/initialize
    page.relay(INITIALIZED, [])  # … but posts no input: that is a step of its own
    assert view.lifecycle.state is AppState.INITIALIZED
    assert repr(mcp("app --next")) == "App step input: ui/notifications/tool-input sent"
    assert page.sent[-1]["method"] == "ui/notifications/tool-input"
    assert "release" not in view.frame.bootstrap  # nothing was handed to the page


def test_a_step_asked_for_before_the_kernel_heard_initialized_is_held_for_the_page(
        mcp: Any) -> None:
    """Run All: the input and result steps run before the kernel read the page."""
    view = _stepped(mcp)
    held = mcp("app --next")  # input
    assert repr(held) == ("App step input: held until the View says "
                          "ui/notifications/initialized (the host MUST NOT send it before); "
                          "the host's page posts it then")
    result = mcp("app --next")  # result, behind the held input
    assert repr(result).startswith("App step result: held behind tool-input")
    assert view.frame is not None and view.frame.bootstrap["release"] == ["input", "outcome"]
    # Now the kernel reads what the page did meanwhile: it posted both at initialized.
    page = Page(view, "p1")
    page.relay(PROXY_READY)
    request = _initialize("view-1")
    page.relay(request, [page.answer(request)])
    at = time.time() - 0.05
    page.relay(INITIALIZED, [
        {"jsonrpc": "2.0", "method": "ui/notifications/tool-input",
         "params": {"arguments": {"label": "Oslo"}}},
        {"jsonrpc": "2.0", "method": "ui/notifications/tool-result",
         "params": view.frame.bootstrap["result"]}], at=at)
    assert view.lifecycle.state is AppState.INTERACTIVE and page.sent == []
    # The cells say so, live.
    assert "delivered at " in held.value and "once the View had said initialized" in held.value
    assert "delivered at " in result.value and "right after tool-input" in result.value
    lane = [(e.kind, e.method, e.note) for e in _lane(view)
            if e.method in ("ui/notifications/tool-input", "ui/notifications/tool-result")]
    assert lane == [
        ("held", "ui/notifications/tool-input", "App clock: " + HELD),
        ("held", "ui/notifications/tool-result", "App clock: " + HELD),
        ("notification", "ui/notifications/tool-input", "App clock: " + DELIVERED),
        ("notification", "ui/notifications/tool-result", "App clock: " + DELIVERED)]
    # The stepper's teardown: the kernel has heard initialized now, so it sends it.
    assert "ui/resource-teardown sent" in repr(mcp("app --next"))
    assert page.sent[-1]["method"] == "ui/resource-teardown"


def test_a_held_step_the_page_posts_later_is_recorded_when_reported(mcp: Any) -> None:
    """The page saw initialized before the kernel handed it the input: it posts it then."""
    view = _stepped(mcp)
    page = Page(view, "p1")
    page.relay(PROXY_READY)
    request = _initialize("view-1")
    page.relay(request, [page.answer(request)])
    held = mcp("app --next")  # the kernel has not read "initialized" yet …
    page.relay(INITIALIZED, [])  # … which the page had said before the step reached it
    assert view.lifecycle.state is AppState.INITIALIZED and page.sent == []
    page.say({"kind": "posted", "page": "p1", "at": time.time() * 1000, "message": {
        "jsonrpc": "2.0", "method": "ui/notifications/tool-input",
        "params": {"arguments": {"label": "Oslo"}}}})
    assert view.lifecycle.state is AppState.INPUT_SENT
    assert "delivered at" in held.value
    # The result step: the kernel now knows the View is initialized: sent at once.
    assert repr(mcp("app --next")) == "App step result: ui/notifications/tool-result sent"


def test_a_held_step_that_never_goes_out_says_why(mcp: Any) -> None:
    view = _stepped(mcp)
    held = mcp("app --next")  # input, held
    teardown = mcp("app --next")  # result, held behind it
    teardown = mcp("app --next")  # teardown: handed to the page
    assert repr(teardown).startswith("App step teardown: handed to the host's page")
    page = Page(view, "p1")
    page.relay(PROXY_READY)
    page.say({"kind": "teardown", "outcome": "removed", "at": time.time() * 1000,
              "page": "p1"})
    assert view.lifecycle.state is AppState.TORN_DOWN
    assert "never delivered: the App went at" in held.value
    assert "the frame was removed at" in teardown.value


def test_the_app_lane_view_follows_the_transcript(app: AppView, mcp: Any) -> None:
    view = mcp("transcript --direction app")
    assert "follows the transcript" in repr(view)
    assert view._selected() == []
    Page(app, "p1").bring_up()
    deadline = time.monotonic() + 5
    while len(view._selected()) < 7:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    view.flush()
    assert "tool-result" in view.table.value


def test_a_view_that_never_initializes_gets_a_failing_verdict(
        app: AppView, monkeypatch: Any) -> None:
    monkeypatch.setattr("mcp_nb.notebook.app_host.INITIALIZED_WAIT", 0.2)
    page = Page(app, "p1")
    page.relay(PROXY_READY)
    deadline = time.monotonic() + 5
    while "✗" not in app.verdict_line.value:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert "no ui/notifications/initialized" in app.verdict_line.value
    # It was only late (the kernel got to it after the wait): the verdict follows.
    request = _initialize("view-1")
    page.relay(request, [page.answer(request)])
    page.relay(INITIALIZED, [
        {"jsonrpc": "2.0", "method": "ui/notifications/tool-input",
         "params": {"arguments": {"label": "Paris"}}},
        {"jsonrpc": "2.0", "method": "ui/notifications/tool-result",
         "params": app.frame.bootstrap["result"]}])
    assert "✓" in app.verdict_line.value and "no ui/notifications" not in app.verdict_line.value


def test_a_csp_violation_of_an_app_that_came_up_is_a_warning(app: AppView) -> None:
    # The official examples probe eval under the default CSP and work without it: the App is
    # up, and the cell says what was blocked, without calling the App failed.
    Page(app, "p1").bring_up()
    app.csp_violation("connect-src", "https://undeclared.example/data.json")
    assert app.verdict()[0] == "warning"
    assert "⚠" in app.verdict_line.value and "✗" not in app.verdict_line.value
    assert "the App is up" in app.verdict_line.value
    assert "the CSP blocked https://undeclared.example/data.json (connect-src)" in \
        app.verdict_line.value


def test_a_csp_violation_of_an_app_that_never_came_up_is_its_failure(app: AppView) -> None:
    app.csp_violation("script-src", "eval")
    assert app.verdict()[0] == "failed"
    assert "✗ the CSP blocked eval (script-src)" in app.verdict_line.value
