"""MCP Apps through the magics, without a browser: ``%mcp call`` on the lab's App tool gives
an AppView whose frame messages are driven here as the browser would send them.

What is checked is what the kernel side owns: the declared extension, the text and static
HTML a saved notebook keeps, the App lane in the transcript, the App's tools/call going
through the real MCP session (to the lab server), and ``%mcp tools`` marking App tools.
"""

from __future__ import annotations

import html
import time
from typing import Any

import pytest
from apps_support import frame_says as _frame

from mcp_nb.apps.lifecycle import AppState
from mcp_nb.notebook.app_diagram import app_sequence_svg
from mcp_nb.notebook.apps import AppView


def _until(condition: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.fixture
def app(mcp: Any) -> AppView:
    mcp("connect clock --lab=--apps")
    view = mcp("call clock label=Paris")
    assert isinstance(view, AppView)
    return view


def test_connect_declares_the_extension_and_no_apps_does_not(mcp: Any) -> None:
    on = mcp("connect on")
    assert on.session.client_capabilities["extensions"] == {
        "io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
    off = mcp("connect off --no-apps")
    assert "extensions" not in off.session.client_capabilities


def test_call_renders_the_app_with_a_deterministic_text_and_a_static_fallback(
        app: AppView) -> None:
    text = repr(app)
    assert text.startswith("App clock (ui://lab/clock.html): ResourceRead; CSP default-src "
                           "'none'; script-src 'self' 'unsafe-inline'")
    assert "Paris" in text
    html = app._repr_mimebundle_()["text/html"]
    for shown in ("clock", "ui://lab/clock.html", "default-src &#x27;none&#x27;", "Paris",
                  'alt="App lifecycle: ResourceRead"'):
        assert shown in html


def test_without_the_extension_a_call_is_text_only(mcp: Any) -> None:
    mcp("connect plain --no-apps --lab=--apps")
    result = mcp("call echo text=hi")
    assert not isinstance(result, AppView)


def test_the_apps_own_tools_call_goes_through_the_session(app: AppView, mcp: Any) -> None:
    app._on_frame_message(app.frame, {"kind": "created", "theme": "dark", "width": 640,
                                      "locale": "en-GB", "timeZone": "Europe/Paris"}, [])
    _frame(app, {"jsonrpc": "2.0", "method": "ui/notifications/sandbox-proxy-ready"})
    (answer,) = _frame(app, {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize",
                             "params": {"protocolVersion": "2026-01-26",
                                        "appCapabilities": {}}})
    context = answer["result"]["hostContext"]
    assert context["theme"] == "dark" and context["locale"] == "en-GB"
    assert context["containerDimensions"]["width"] == 640
    sent = _frame(app, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
    assert [m["method"] for m in sent] == ["ui/notifications/tool-input",
                                          "ui/notifications/tool-result"]
    assert app.lifecycle.state is AppState.INTERACTIVE

    posted: list[dict[str, Any]] = []
    app.frame.send = lambda content, buffers=None: posted.append(content["message"])
    app._on_frame_message(app.frame, {"kind": "frame", "message": {
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "clock_refresh", "arguments": {}}}}, [])
    _until(lambda: posted)
    assert posted[0]["id"] == 2
    assert posted[0]["result"]["content"][0]["text"] == "tick 2 (UTC)"
    # The model-only tool is refused by the host: it never reaches the server.
    app._on_frame_message(app.frame, {"kind": "frame", "message": {
        "jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "clock_reset", "arguments": {}}}}, [])
    assert posted[1]["error"]["code"] == -32000

    session = app.hosted.session
    _until(lambda: any(e.direction == "host→app" and e.id == 3 for e in session.transcript))
    lane = [(e.direction, e.method or e.id) for e in session.transcript
            if e.direction in ("app→host", "host→app")]
    assert lane[:6] == [("app→host", "ui/notifications/sandbox-proxy-ready"),
                        ("host→app", "ui/notifications/sandbox-resource-ready"),
                        ("app→host", "ui/initialize"), ("host→app", 1),
                        ("app→host", "ui/notifications/initialized"),
                        ("host→app", "ui/notifications/tool-input")]
    # The App's tools/call travels app → host → server → host → app, in that order.
    entries = list(session.transcript)
    asked = next(i for i, e in enumerate(entries) if e.direction == "app→host" and e.id == 2)
    sent = next(i for i, e in enumerate(entries) if e.direction == "send"
                and e.method == "tools/call" and e.message["params"]["name"] == "clock_refresh")
    answered = next(i for i, e in enumerate(entries)
                    if e.direction == "recv" and e.id == entries[sent].id)
    passed_back = next(i for i, e in enumerate(entries)
                       if e.direction == "host→app" and e.id == 2)
    assert asked < sent < answered < passed_back
    picture = mcp("app --sequence")
    assert repr(picture).startswith("App sequence: ") and "App lane" in repr(picture)
    svg = app_sequence_svg(picture.entries)
    assert "tools/call #2" in svg and svg.count("<line") > 3
    refused = next(e for e in session.transcript if e.direction == "host→app" and e.id == 3)
    assert refused.note == "App clock: refused tools/call"
    assert not any(e.direction == "send" and e.message["params"].get("name") == "clock_reset"
                   for e in session.transcript if e.method == "tools/call")


def test_a_theme_switch_reaches_an_initialized_view(app: AppView) -> None:
    app._on_frame_message(app.frame, {"kind": "created", "theme": "light"}, [])
    _frame(app, {"jsonrpc": "2.0", "method": "ui/notifications/sandbox-proxy-ready"})
    posted: list[dict[str, Any]] = []
    app.frame.send = lambda content, buffers=None: posted.append(content["message"])
    app._on_frame_message(app.frame, {"kind": "theme", "theme": "dark"}, [])
    assert posted == []  # not initialized yet: no notification (host-context-changed is one)
    app.frame.send = type(app.frame).send.__get__(app.frame)
    _frame(app, {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize",
                 "params": {"appCapabilities": {}}})
    _frame(app, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
    app.frame.send = lambda content, buffers=None: posted.append(content["message"])
    app._on_frame_message(app.frame, {"kind": "theme", "theme": "light"}, [])
    assert posted[-1]["method"] == "ui/notifications/host-context-changed"
    assert posted[-1]["params"]["theme"] == "light"


def test_the_transcript_view_filters_the_app_lane(app: AppView, mcp: Any) -> None:
    _frame(app, {"jsonrpc": "2.0", "method": "ui/notifications/sandbox-proxy-ready"})
    view = mcp("transcript --direction app")
    _until(lambda: len(view._selected()) >= 1)
    assert {e.direction for e in view._selected()} <= {"app→host", "host→app"}


def test_closing_the_session_leaves_the_app_on_screen_disconnected(app: AppView,
                                                                    mcp: Any) -> None:
    # docs/apps.md, "When the session ends": no teardown (nothing tears the View down), the
    # App's later requests for the server are refused, and the cell says so.
    app._on_frame_message(app.frame, {"kind": "created"}, [])
    _frame(app, {"jsonrpc": "2.0", "method": "ui/notifications/sandbox-proxy-ready"})
    _frame(app, {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize",
                 "params": {"appCapabilities": {}}})
    _frame(app, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
    posted: list[dict[str, Any]] = []
    app.frame.send = lambda content, buffers=None: posted.append(content["message"])
    mcp("shutdown")
    assert posted == [] and not app.frame.removed
    assert app.lifecycle.state is AppState.INTERACTIVE
    assert "disconnected" in app.verdict_line.value and "✓" in app.verdict_line.value
    app.frame.send = type(app.frame).send.__get__(app.frame)
    (refusal,) = _frame(app, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                              "params": {"name": "clock_refresh", "arguments": {}}})
    assert refusal["error"]["code"] == -32000
    assert refusal["error"]["message"].startswith("session closed: the MCP session 'clock' ")


def test_tools_marks_app_tools(mcp: Any) -> None:
    mcp("connect clock --lab=--apps")
    listing = mcp("tools")
    rows = {row[0]: row[2] for row in listing.rows}
    assert rows["clock"].startswith("[App ui://lab/clock.html] ")
    assert rows["clock_refresh"].startswith("[App ui://lab/clock.html; app only] ")
    assert rows["clock_reset"].startswith("[model only] ")
    assert not rows["echo"].startswith("[")


@pytest.mark.parametrize(("fault", "said"), [
    ("wrong-mime", 'mimeType MUST be "text/html;profile=mcp-app"'),
    ("missing-resource", "Resource MUST exist on the server"),
])
def test_a_refused_resource_is_said_with_the_text_result(mcp: Any, fault: str,
                                                          said: str) -> None:
    mcp(f"connect bad --lab=--apps --lab=--app-fault={fault}")
    view = mcp("call clock")
    assert view.lifecycle.state is AppState.REFUSED
    assert said in repr(view) and html.escape(said) in view._repr_mimebundle_()["text/html"]
    assert repr(view).endswith("result: tick 1 (UTC)")  # the text result is still there


def test_app_step_walks_the_hosts_side_one_cell_at_a_time(mcp: Any) -> None:
    mcp("connect clock --lab=--apps")
    plan = mcp("app clock label=Oslo --step")
    assert repr(plan) == ("App step plan: clock renders ui://lab/clock.html; steps: call → "
                          "read → csp → load → input → result → teardown (each %mcp app "
                          "--next does one)")
    assert "Oslo" in repr(mcp("app --next"))  # call
    assert "text/html;profile=mcp-app" in repr(mcp("app --next"))  # read
    assert "connect-src 'none'" in repr(mcp("app --next"))  # csp
    view = mcp("app --next")  # load
    assert isinstance(view, AppView) and view.frame is not None
    held = mcp("app --next")  # input, before the View said initialized: held for it
    assert "held until the View says ui/notifications/initialized" in repr(held)
    # A page that does not post held steps itself (an older one): the kernel sends it at
    # initialized, and nothing before.
    view._on_frame_message(view.frame, {"kind": "created"}, [])
    _frame(view, {"jsonrpc": "2.0", "method": "ui/notifications/sandbox-proxy-ready"})
    _frame(view, {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize",
                 "params": {"appCapabilities": {}}})
    (posted,) = _frame(view, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
    assert posted["method"] == "ui/notifications/tool-input"
    assert "delivered at" in held.value
    assert repr(mcp("app --next")) == "App step result: ui/notifications/tool-result sent"
    assert "TearingDown" in repr(mcp("app --next"))
    with pytest.raises(Exception, match="every step is done"):
        mcp("app --next")


def test_app_renders_like_call_and_refuses_a_tool_that_is_no_app(mcp: Any) -> None:
    mcp("connect clock --lab=--apps")
    assert isinstance(mcp("app clock"), AppView)
    with pytest.raises(Exception, match="echo is not an App tool"):
        mcp("app echo text=hi")


def test_the_explorer_has_an_apps_tab_that_renders_one(mcp: Any) -> None:
    mcp("connect clock --lab=--apps")
    explorer = mcp("explore")
    panel = explorer.apps
    assert panel is not None and explorer.tabs.get_title(len(explorer.tabs.children) - 1) == "Apps"
    assert list(panel.picker.options) == ["clock", "clock_refresh"]
    assert "clock_reset" in panel.listing.value and "model" in panel.listing.value
    panel.arguments.value = '{"label": "Rome"}'
    view = panel.render()
    assert isinstance(view, AppView) and repr(view).endswith("result: tick 1 (Rome)")
    labels = [label for label, _key in explorer.tool_list.picker.options]
    assert "clock_refresh — [App ui://lab/clock.html; app only] Refresh the clock" in labels
    mcp("connect plain --no-apps")
    assert mcp("explore").apps is None


def test_a_background_call_shows_the_app_at_once_and_says_when_it_is_cancelled(
        mcp: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    hosted = mcp("connect clock --lab=--apps")
    shown: list[Any] = []
    monkeypatch.setattr("mcp_nb.notebook.apps.display", lambda *objects: shown.extend(objects))
    running = mcp("call clock wait=10 --background")
    (view,) = [o for o in shown if isinstance(o, AppView)]
    assert view.lifecycle.state is AppState.RESOURCE_READ and view.result is None
    view._on_frame_message(view.frame, {"kind": "created"}, [])
    _frame(view, {"jsonrpc": "2.0", "method": "ui/notifications/sandbox-proxy-ready"})
    _frame(view, {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize",
                 "params": {"appCapabilities": {}}})
    sent = _frame(view, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
    assert [m["method"] for m in sent] == ["ui/notifications/tool-input"]  # no result yet
    posted: list[dict[str, Any]] = []
    view.frame.send = lambda content, buffers=None: posted.append(content["message"])
    hosted.run(hosted.session.cancel(running.progress.request_id, "Cancel button"))
    _until(lambda: posted)
    assert posted[0]["method"] == "ui/notifications/tool-cancelled"
    assert view.lifecycle.state is AppState.CANCELLED


def test_what_an_app_says_is_escaped_in_the_cell(app: AppView) -> None:
    app._on_frame_message(app.frame, {"kind": "created"}, [])
    _frame(app, {"jsonrpc": "2.0", "method": "ui/notifications/sandbox-proxy-ready"})
    _frame(app, {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize",
                 "params": {"appCapabilities": {}}})
    _frame(app, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
    hostile = '<img src=x onerror="alert(1)">'
    _frame(app, {"jsonrpc": "2.0", "id": 2, "method": "ui/message",
                 "params": {"role": "user", "content": {"type": "text", "text": hostile}}})
    _frame(app, {"jsonrpc": "2.0", "method": "notifications/message",
                 "params": {"level": "info", "data": hostile}})
    _frame(app, {"jsonrpc": "2.0", "id": 3, "method": "ui/open-link",
                 "params": {"url": 'https://example.com/"><script>alert(1)</script>'}})
    _frame(app, {"jsonrpc": "2.0", "id": 4, "method": "ui/update-model-context",
                 "params": {"structuredContent": {"x": hostile}}})
    notes = app.notes.value
    assert "<img" not in notes and "<script" not in notes
    assert "&lt;img src=x onerror=" in notes
    assert 'href="https://example.com/&quot;&gt;&lt;script&gt;' in notes


def test_a_new_page_showing_the_app_starts_a_new_view(app: AppView) -> None:
    for _ in range(2):  # the first page, then the same output in a reloaded page
        app._on_frame_message(app.frame, {"kind": "created"}, [])
        _frame(app, {"jsonrpc": "2.0", "method": "ui/notifications/sandbox-proxy-ready"})
        _frame(app, {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize",
                 "params": {"appCapabilities": {}}})
        sent = _frame(app, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
        assert [m["method"] for m in sent] == ["ui/notifications/tool-input",
                                              "ui/notifications/tool-result"]
        assert app.lifecycle.state is AppState.INTERACTIVE
    assert "a new page shows this App" in app.notes.value
    assert len(app.lifecycle.history) == 7  # one lifecycle, the new one: not both
