"""MCP Apps, the host's side without a browser: discovery, the resource check, the sandbox
policy, the lifecycle table, and AppHost driven with the JSON messages an App posts.

Each rule of the extension's specification (2026-01-26) that the host enforces has a
test here; the browser tests (test_apps_browser.py) show the same host working with a
real App in JupyterLab and Notebook 7.
"""

from __future__ import annotations

import base64
from typing import Any

import anyio
import pytest

from mcp_nb.apps import meta
from mcp_nb.apps.csp import DEFAULT_DIRECTIVES, proxy_document, sandbox_policy
from mcp_nb.apps.host import (
    AppHost,
    Exchange,
    Forward,
    RemoveFrame,
    Resize,
    Show,
    ToFrame,
)
from mcp_nb.apps.lifecycle import APP_TRANSITIONS, AppEvent, AppLifecycle, AppState
from mcp_nb.client import ClientSession, lab_command
from mcp_nb.protocol.errors import LifecycleError
from mcp_nb.transports import StdioTransport

URI = "ui://clock/app.html"
HTML = "<!DOCTYPE html><html><head></head><body><p>clock</p></body></html>"
APP_TOOL = {"name": "clock", "inputSchema": {"type": "object"},
            "_meta": {"ui": {"resourceUri": URI}}}
TOOLS = {
    "clock": APP_TOOL,
    "refresh": {"name": "refresh", "inputSchema": {"type": "object"},
                "_meta": {"ui": {"resourceUri": URI, "visibility": ["app"]}}},
    "delete_all": {"name": "delete_all", "inputSchema": {"type": "object"},
                   "_meta": {"ui": {"visibility": ["model"]}}},
}


def _read_result(**content: Any) -> dict[str, Any]:
    block = {"uri": URI, "mimeType": meta.MIME_TYPE, "text": HTML, **content}
    return {"contents": [{k: v for k, v in block.items() if v is not None}]}


# -- discovery and visibility ----------------------------------------------------------------

def test_an_app_tool_names_its_resource_in_meta_ui_or_the_deprecated_flat_key() -> None:
    assert meta.resource_uri(APP_TOOL) == URI
    flat = {"name": "old", "_meta": {"ui/resourceUri": URI}}
    assert meta.resource_uri(flat) == URI
    assert meta.uses_deprecated_key(flat) and not meta.uses_deprecated_key(APP_TOOL)
    assert meta.resource_uri({"name": "plain"}) is None
    assert meta.resource_uri({"name": "odd", "_meta": {"ui": "not an object"}}) is None


def test_visibility_defaults_to_model_and_app() -> None:
    assert meta.visibility(APP_TOOL) == ("model", "app")
    assert meta.app_callable(TOOLS["refresh"]) and not meta.model_visible(TOOLS["refresh"])
    assert meta.model_visible(TOOLS["delete_all"]) and not meta.app_callable(TOOLS["delete_all"])
    # Not a list of strings: the spec's default, not a guess at what was meant.
    assert meta.visibility({"_meta": {"ui": {"visibility": "app"}}}) == ("model", "app")


def test_tool_models_from_the_session_keep_their_meta() -> None:
    from mcp_nb.protocol.models import Tool

    tool = Tool.model_validate(TOOLS["refresh"])
    assert meta.resource_uri(tool) == URI and meta.visibility(tool) == ("app",)


# -- the resource check ------------------------------------------------------------------------

def test_a_good_resource_is_read_with_its_ui_meta() -> None:
    ui = {"csp": {"connectDomains": ["https://api.example.com"]}, "prefersBorder": False,
          "permissions": {"camera": {}}}
    resource = meta.ui_resource(URI, _read_result(_meta={"ui": ui}))
    assert resource.html == HTML and resource.prefers_border is False
    assert resource.csp == ui["csp"] and resource.permissions == {"camera": {}}


def test_a_blob_is_base64_of_utf8_html() -> None:
    blob = base64.b64encode(HTML.encode()).decode()
    assert meta.ui_resource(URI, _read_result(text=None, blob=blob)).html == HTML


@pytest.mark.parametrize(("result", "rule"), [
    (_read_result(mimeType="text/html"), 'mimeType MUST be "text/html;profile=mcp-app"'),
    ({"contents": []}, "Resource MUST exist on the server"),
    ({"contents": [{"uri": "ui://other", "mimeType": meta.MIME_TYPE, "text": HTML}]},
     "matching UI resource URI"),
    (_read_result(text=None), "Content MUST be provided via either text or blob"),
    (_read_result(text=None, blob="not base64!"), "base64-encoded HTML"),
    (_read_result(text="  "), "Content MUST be valid HTML5 document"),
])
def test_a_bad_resource_is_refused_naming_the_rule(result: dict[str, Any], rule: str) -> None:
    with pytest.raises(meta.AppResourceError) as refused:
        meta.ui_resource(URI, result)
    assert rule in str(refused.value) and "MCP Apps 2026-01-26" in str(refused.value)


def test_only_ui_uris_are_apps() -> None:
    with pytest.raises(meta.AppResourceError, match="URI MUST start with ui://"):
        meta.ui_resource("https://example.com/app.html", _read_result())


def test_media_types_compare_as_rfc_9110_says() -> None:
    assert meta.same_media_type("Text/HTML; profile=mcp-app")
    assert not meta.same_media_type("text/html;profile=other")
    assert not meta.same_media_type(None)


# -- the sandbox policy --------------------------------------------------------------------------

def test_no_declared_csp_gives_the_spec_default_exactly_plus_the_sandbox_musts() -> None:
    policy = sandbox_policy(None)
    directives = dict(policy.directives())
    # The spec's restrictive default, verbatim.
    for name, sources in (("default-src", "'none'"), ("script-src", "'self' 'unsafe-inline'"),
                          ("style-src", "'self' 'unsafe-inline'"), ("img-src", "'self' data:"),
                          ("media-src", "'self' data:"), ("connect-src", "'none'")):
        assert directives[name] == sources
    # frame-src 'none', base-uri 'self', object-src 'none': what the sandbox MUST set.
    assert directives["frame-src"] == "'none'" and directives["base-uri"] == "'self'"
    assert directives["object-src"] == "'none'"
    assert policy.default and policy.allow == "" and policy.sandbox == "allow-scripts"


def test_declared_domains_are_allowed_and_nothing_else() -> None:
    policy = sandbox_policy({"connectDomains": ["https://api.example.com"],
                             "resourceDomains": ["https://*.cdn.example"],
                             "frameDomains": ["https://www.youtube.com"]})
    directives = dict(policy.directives())
    assert directives["connect-src"] == "https://api.example.com"
    assert directives["script-src"] == "'self' 'unsafe-inline' https://*.cdn.example"
    assert directives["font-src"] == "'self' https://*.cdn.example"
    assert directives["frame-src"] == "https://www.youtube.com"
    assert directives["default-src"] == "'none'" and directives["base-uri"] == "'self'"


@pytest.mark.parametrize("smuggled", [
    "*", "https:", "'unsafe-eval'", "https://a.example; script-src *",
    "https://a.example 'unsafe-eval'", "javascript:alert(1)", "data:", "https://*", 42,
])
def test_a_declared_value_that_is_not_an_origin_is_dropped_and_reported(smuggled: Any) -> None:
    policy = sandbox_policy({"connectDomains": [smuggled], "resourceDomains": [smuggled]})
    assert dict(policy.directives())["connect-src"] == "'none'"
    assert "unsafe-eval" not in policy.csp and " *" not in policy.csp
    assert len(policy.refused) == 2 and "MUST NOT allow undeclared domains" in policy.refused[0][1]


def test_the_person_is_warned_of_external_origins() -> None:
    from mcp_nb.apps.csp import describe_policy

    lines = describe_policy(sandbox_policy({"connectDomains": ["https://api.example.com"]}))
    assert "warning: this App may reach https://api.example.com" in lines
    assert not any(line.startswith("warning") for line in describe_policy(sandbox_policy(None)))


def test_permissions_map_to_the_allow_attribute() -> None:
    policy = sandbox_policy({}, {"camera": {}, "clipboardWrite": {}, "usb": {}})
    assert policy.allow == "camera; clipboard-write" and policy.permissions == (
        "camera", "clipboardWrite")


def test_the_proxy_document_starts_with_the_policy() -> None:
    policy = sandbox_policy({"connectDomains": ["https://api.example.com"]})
    document = proxy_document(policy, "/* proxy */")
    head = document.split("<head>", 1)[1]
    assert head.startswith('<meta http-equiv="Content-Security-Policy" content="default-src')
    assert "&#x27;none&#x27;" in head  # quotes escaped inside the attribute
    with pytest.raises(ValueError):
        proxy_document(policy, "</script><script>alert(1)")


def test_the_default_table_has_each_directive_once() -> None:
    names = [name for name, _ in DEFAULT_DIRECTIVES]
    assert len(names) == len(set(names))


# -- the lifecycle table ---------------------------------------------------------------------------

def test_every_state_is_reachable_and_only_torn_down_and_refused_are_final() -> None:
    reachable, frontier = {AppState.REQUESTED}, [AppState.REQUESTED]
    while frontier:
        state = frontier.pop()
        for transition in APP_TRANSITIONS:
            if transition.source is state and transition.target not in reachable:
                reachable.add(transition.target)
                frontier.append(transition.target)
    assert reachable == set(AppState)
    final = {s for s in AppState if not any(t.source is s for t in APP_TRANSITIONS)}
    assert final == {AppState.TORN_DOWN, AppState.REFUSED}


def test_an_edge_the_table_lacks_is_refused() -> None:
    lifecycle = AppLifecycle()
    with pytest.raises(LifecycleError, match="no transition for 'tool-input sent' from Requested"):
        lifecycle.fire(AppEvent.TOOL_INPUT)


def test_no_teardown_request_before_initialized() -> None:
    # ui/resource-teardown is a request, and the host MUST NOT send the View one before
    # initialized: no TEARDOWN edge there.
    for transition in APP_TRANSITIONS:
        if transition.event is AppEvent.TEARDOWN:
            assert transition.source in {AppState.INITIALIZED, AppState.INPUT_SENT,
                                         AppState.INTERACTIVE, AppState.CANCELLED}


# -- AppHost, driven with JSON messages ---------------------------------------------------

def _host(**options: Any) -> tuple[AppHost, list[Exchange]]:
    resource = meta.ui_resource(URI, _read_result())
    host = AppHost(APP_TOOL, resource, sandbox_policy(None), arguments={"zone": "UTC"},
                   call_id=3, find_tool=TOOLS.get, **options)
    seen: list[Exchange] = []
    host.exchanges.add(seen.append)
    return host, seen


def _request(request_id: int, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def _notify(method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def _sent(actions: list[Any]) -> list[dict[str, Any]]:
    return [a.message for a in actions if isinstance(a, ToFrame)]


def _initialized(host: AppHost, **capabilities: Any) -> None:
    host.frame_created()
    host.receive(_notify("ui/notifications/sandbox-proxy-ready"))
    host.receive(_request(1, "ui/initialize", protocolVersion="2026-01-26",
                          appInfo={"name": "clock-view", "version": "1"},
                          appCapabilities=capabilities))
    host.receive(_notify("ui/notifications/initialized"))


def test_the_proxy_gets_the_html_when_it_says_ready() -> None:
    host, _ = _host()
    host.frame_created()
    (ready,) = _sent(host.receive(_notify("ui/notifications/sandbox-proxy-ready")))
    assert ready["method"] == "ui/notifications/sandbox-resource-ready"
    assert ready["params"]["html"] == HTML and ready["params"]["sandbox"] == "allow-scripts"
    assert host.state is AppState.LOADED


def test_a_page_that_posts_the_html_itself_still_has_it_recorded() -> None:
    host, seen = _host()
    host.page_posts_resource = True
    host.frame_created()
    assert host.receive(_notify("ui/notifications/sandbox-proxy-ready")) == []
    assert seen[-1].message == host.resource_message()
    assert seen[-1].note == "posted by the host's page as the proxy said ready"
    assert host.state is AppState.LOADED


def test_initialize_answers_host_info_capabilities_and_context() -> None:
    host, _ = _host()
    host.frame_created()
    host.receive(_notify("ui/notifications/sandbox-proxy-ready"))
    host.context.theme = "dark"
    (answer,) = _sent(host.receive(_request(1, "ui/initialize", protocolVersion="2026-01-26",
                                            appCapabilities={})))
    result = answer["result"]
    assert answer["id"] == 1 and result["protocolVersion"] == "2026-01-26"
    assert result["hostInfo"]["name"] == "mcp_nb"
    assert set(result["hostCapabilities"]) >= {"openLinks", "serverTools", "serverResources",
                                               "logging", "sandbox"}
    context = result["hostContext"]
    assert context["theme"] == "dark" and context["displayMode"] == "inline"
    assert context["toolInfo"] == {"id": 3, "tool": APP_TOOL}
    assert context["containerDimensions"] == {"maxHeight": 600}


def test_input_and_result_are_held_until_initialized_then_sent_in_order() -> None:
    host, _ = _host()
    host.frame_created()
    host.receive(_notify("ui/notifications/sandbox-proxy-ready"))
    host.receive(_request(1, "ui/initialize", protocolVersion="2026-01-26",
                          appCapabilities={}))
    # The call completed before the View said initialized: nothing may go out yet.
    assert host.set_result({"content": [{"type": "text", "text": "12:00"}]}) == []
    sent = _sent(host.receive(_notify("ui/notifications/initialized")))
    assert [m["method"] for m in sent] == ["ui/notifications/tool-input",
                                          "ui/notifications/tool-result"]
    assert sent[0]["params"] == {"arguments": {"zone": "UTC"}}
    assert host.state is AppState.INTERACTIVE
    # At most once.
    assert host.set_result({"content": []}) == []


def test_a_cancelled_call_is_said_after_the_input() -> None:
    host, _ = _host()
    _initialized(host)
    (cancelled,) = _sent(host.set_cancelled("Cancel button"))
    assert cancelled == {"jsonrpc": "2.0", "method": "ui/notifications/tool-cancelled",
                         "params": {"reason": "Cancel button"}}
    assert host.state is AppState.CANCELLED


def test_step_mode_sends_input_and_result_one_call_each() -> None:
    host, _ = _host(deliver=False)
    _initialized(host)
    host.set_result({"content": []})
    assert host.state is AppState.INITIALIZED
    with pytest.raises(ValueError, match="tool-input is required before it"):
        host.send_tool_result()
    assert _sent(host.send_tool_input())[0]["method"] == "ui/notifications/tool-input"
    assert _sent(host.send_tool_result())[0]["method"] == "ui/notifications/tool-result"


def test_nothing_is_sent_to_a_view_that_is_not_initialized() -> None:
    host, seen = _host(deliver=False)
    host.frame_created()
    # Asked for before initialized, the input is held (recorded as such), not sent.
    assert host.send_tool_input() == [] and host.state is AppState.LOADING
    assert seen[-1].held and seen[-1].message["method"] == "ui/notifications/tool-input"
    with pytest.raises(ValueError, match="sent at most once"):
        host.send_tool_input()
    # Teardown without the request: the frame is just removed.
    assert host.teardown("cell re-run") == [RemoveFrame("cell re-run")]
    assert host.state is AppState.TORN_DOWN


def test_before_initialized_the_view_gets_answers_and_nothing_else() -> None:
    # The rule covers requests and notifications: the View's own requests are answered
    # before it says initialized, ui/initialize first, and nothing else reaches it.
    host, seen = _host()
    host.frame_created()
    host.receive(_notify("ui/notifications/sandbox-proxy-ready"))
    to_view: list[dict[str, Any]] = []
    to_view += _sent(host.receive(_request(7, "ui/initialize", protocolVersion="2026-01-26",
                                           appCapabilities={})))
    to_view += _sent(host.receive(_request(8, "ping")))
    to_view += _sent(host.set_result({"content": [{"type": "text", "text": "12:00"}]}))
    to_view += _sent(host.context_changed(theme="dark"))
    assert [(m["id"], "result" in m) for m in to_view] == [(7, True), (8, True)]
    assert not any("method" in m for m in to_view)
    assert host.state is AppState.INITIALIZING
    assert [e.message.get("method") for e in seen if e.direction == "host→app"] == [
        "ui/notifications/sandbox-resource-ready", None, None]  # to the proxy, then answers
    sent = _sent(host.receive(_notify("ui/notifications/initialized")))
    assert [m["method"] for m in sent] == ["ui/notifications/tool-input",
                                          "ui/notifications/tool-result"]
def test_a_held_step_goes_out_at_initialized_when_no_page_posts_it() -> None:
    host, seen = _host(deliver=False)
    host.frame_created()
    host.receive(_notify("ui/notifications/sandbox-proxy-ready"))
    host.set_result({"content": [{"type": "text", "text": "12:00"}]})
    host.send_tool_input()
    host.send_tool_result()  # held behind the input
    assert host.held == ("input", "outcome")
    assert host.bootstrap()["release"] == ["input", "outcome"]
    host.receive(_request(1, "ui/initialize", appCapabilities={}))
    sent = _sent(host.receive(_notify("ui/notifications/initialized")))
    assert [m["method"] for m in sent] == ["ui/notifications/tool-input",
                                           "ui/notifications/tool-result"]
    assert host.state is AppState.INTERACTIVE and host.held == ()
    # Each is in the lane twice: held when asked for, then sent.
    lane = [(e.message.get("method"), e.held) for e in seen if e.direction == "host→app"
            and e.message.get("method", "").startswith("ui/notifications/tool-")]
    assert lane == [("ui/notifications/tool-input", True),
                    ("ui/notifications/tool-result", True),
                    ("ui/notifications/tool-input", False),
                    ("ui/notifications/tool-result", False)]


def test_a_page_that_posts_held_steps_gets_them_recorded_as_delivered() -> None:
    host, seen = _host(deliver=False)
    host.page_releases = True
    host.frame_created()
    host.receive(_notify("ui/notifications/sandbox-proxy-ready"))
    host.send_tool_input()
    host.receive(_request(1, "ui/initialize", appCapabilities={}))
    assert host.receive(_notify("ui/notifications/initialized")) == []  # the page posts it
    assert host.held == ("input",) and host.state is AppState.INITIALIZED
    host.page_posted(_notify("ui/notifications/tool-input", arguments={"zone": "UTC"}),
                     at=1234.5)
    assert host.state is AppState.INPUT_SENT and host.held == ()
    assert seen[-1].note == "posted by the host's page, held until the View said initialized"
    assert seen[-1].at == 1234.5
    with pytest.raises(ValueError, match="not completed"):
        host.send_tool_result()


def test_the_apps_tools_call_is_forwarded_when_visibility_has_app() -> None:
    host, _ = _host()
    _initialized(host)
    (forward,) = host.receive(_request(7, "tools/call", name="refresh", arguments={}))
    assert forward == Forward(7, "tools/call", {"name": "refresh", "arguments": {}})
    (answer,) = _sent(host.forwarded(7, {"content": [{"type": "text", "text": "ok"}]}))
    assert answer == {"jsonrpc": "2.0", "id": 7,
                      "result": {"content": [{"type": "text", "text": "ok"}]}}


def test_a_model_only_tool_is_refused_to_the_app() -> None:
    host, seen = _host()
    _initialized(host)
    actions = host.receive(_request(8, "tools/call", name="delete_all", arguments={}))
    (refusal,) = _sent(actions)
    assert refusal["id"] == 8 and refusal["error"]["code"] == -32000
    assert "MUST reject tools/call from apps" in refusal["error"]["message"]
    assert not any(isinstance(a, Forward) for a in actions)
    assert any(isinstance(a, Show) and a.kind == "refused" for a in actions)
    assert seen[-1].note == "refused tools/call"


def test_an_unknown_tool_is_refused_and_a_server_error_passes_through() -> None:
    host, _ = _host()
    _initialized(host)
    (refusal,) = _sent(host.receive(_request(9, "tools/call", name="nope")))
    assert refusal["error"]["code"] == -32602
    (error,) = _sent(host.forwarded(10, error={"code": -32602, "message": "bad"}))
    assert error == {"jsonrpc": "2.0", "id": 10, "error": {"code": -32602, "message": "bad"}}


def test_resources_read_is_forwarded() -> None:
    host, _ = _host()
    _initialized(host)
    assert host.receive(_request(4, "resources/read", uri="ui://x")) == [
        Forward(4, "resources/read", {"uri": "ui://x"})]


def test_open_link_is_offered_never_silently_and_only_for_web_links() -> None:
    host, _ = _host()
    _initialized(host)
    actions = host.receive(_request(5, "ui/open-link", url="https://example.com/a?b=1"))
    assert _sent(actions)[0]["result"] == {}
    assert Show("open-link", {"url": "https://example.com/a?b=1"}) in actions
    (refusal,) = _sent(host.receive(_request(6, "ui/open-link", url="javascript:alert(1)")))
    assert refusal["error"]["message"].startswith("Invalid URL")


def test_message_and_model_context_are_shown_in_the_cell() -> None:
    host, _ = _host()
    _initialized(host)
    actions = host.receive(_request(11, "ui/message", role="user",
                                    content={"type": "text", "text": "hello"}))
    assert Show("message", {"role": "user", "content": [{"type": "text", "text": "hello"}]}) \
        in actions
    (bad,) = _sent(host.receive(_request(12, "ui/message", role="user", content="hello")))
    assert bad["error"]["code"] == -32000
    host.receive(_request(13, "ui/update-model-context", structuredContent={"a": 1}))
    host.receive(_request(14, "ui/update-model-context", structuredContent={"a": 2}))
    assert host.model_context == {"structuredContent": {"a": 2}}  # each replaces the last


def test_display_mode_follows_what_the_view_declared() -> None:
    host, _ = _host()
    _initialized(host, availableDisplayModes=["inline"])
    (answer,) = _sent(host.receive(_request(15, "ui/request-display-mode", mode="fullscreen")))
    assert answer["result"] == {"mode": "inline"}  # not declared: the current mode
    other, _ = _host()
    _initialized(other, availableDisplayModes=["inline", "fullscreen"])
    # Fullscreen waits for the person: the current mode now, a button in the cell …
    actions = other.receive(_request(16, "ui/request-display-mode", mode="fullscreen"))
    assert _sent(actions)[0]["result"] == {"mode": "inline"}
    assert Show("ask-fullscreen", {}) in actions
    # … whose click switches the View, which is told so.
    granted = other.grant_fullscreen()
    assert _sent(granted) == [{"jsonrpc": "2.0",
                               "method": "ui/notifications/host-context-changed",
                               "params": {"displayMode": "fullscreen"}}]
    back = other.receive(_request(18, "ui/request-display-mode", mode="inline"))
    assert _sent(back)[0]["result"] == {"mode": "inline"}
    again = other.receive(_request(19, "ui/request-display-mode", mode="fullscreen"))
    assert _sent(again)[0]["result"] == {"mode": "fullscreen"}  # agreed once, for this View
    pip, _ = _host()
    _initialized(pip)
    assert _sent(pip.receive(_request(17, "ui/request-display-mode", mode="pip")))[0][
        "result"] == {"mode": "inline"}  # this host has no pip


def test_size_changed_resizes_and_logs_are_shown() -> None:
    host, _ = _host()
    _initialized(host)
    assert host.receive(_notify("ui/notifications/size-changed", width=300, height=120)) == [
        Resize(300, 120)]
    assert host.receive(_notify("ui/notifications/size-changed", width="x", height=-1)) == [
        Resize(None, None)]
    assert host.receive(_notify("notifications/message", level="info", data="hi")) == [
        Show("log", {"level": "info", "data": "hi"})]


def test_teardown_waits_for_the_answer() -> None:
    host, _ = _host()
    _initialized(host)
    (request,) = _sent(host.teardown("session closed"))
    assert request["method"] == "ui/resource-teardown"
    assert request["params"] == {"reason": "session closed"}
    assert host.state is AppState.TEARING_DOWN
    assert host.receive({"jsonrpc": "2.0", "id": request["id"], "result": {}}) == [
        RemoveFrame("teardown answered")]
    assert host.state is AppState.TORN_DOWN


def test_the_view_may_ask_to_be_torn_down() -> None:
    host, _ = _host()
    _initialized(host)
    (request,) = _sent(host.receive(_notify("ui/notifications/request-teardown")))
    assert request["method"] == "ui/resource-teardown" and host.state is AppState.TEARING_DOWN


def test_an_unanswered_teardown_gives_up() -> None:
    host, _ = _host()
    _initialized(host)
    host.teardown("closing")
    assert host.give_up_teardown("no answer") == [RemoveFrame("no answer")]
    assert host.state is AppState.TORN_DOWN


@pytest.mark.parametrize("message", [
    "not json-rpc", {"id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 1},
    {"jsonrpc": "2.0", "id": 1, "method": 5}, {"jsonrpc": "2.0", "id": [1], "method": "ping"},
    {"jsonrpc": "2.0", "id": 2, "method": "ping", "params": [1]},
])
def test_malformed_messages_are_rejected_and_recorded(message: Any) -> None:
    host, seen = _host()
    _initialized(host)
    actions = host.receive(message)
    assert seen[-1 - len(actions)].note.startswith("malformed, rejected")
    for sent in _sent(actions):
        assert sent["error"]["code"] == -32600


def test_requests_before_initialize_are_refused_except_ping() -> None:
    host, _ = _host()
    host.frame_created()
    host.receive(_notify("ui/notifications/sandbox-proxy-ready"))
    assert _sent(host.receive(_request(1, "ping")))[0]["result"] == {}
    (refusal,) = _sent(host.receive(_request(2, "tools/call", name="clock")))
    assert "before ui/initialize" in refusal["error"]["message"]


def test_an_unknown_method_is_method_not_found_and_a_second_initialize_is_refused() -> None:
    host, _ = _host()
    _initialized(host)
    assert _sent(host.receive(_request(20, "sampling/createMessage")))[0]["error"][
        "code"] == -32601
    assert _sent(host.receive(_request(21, "ui/initialize")))[0]["error"]["code"] == -32600


def test_every_message_both_ways_is_an_exchange() -> None:
    host, seen = _host()
    _initialized(host)
    assert [(e.direction, e.message.get("method") or e.message.get("id")) for e in seen] == [
        ("app→host", "ui/notifications/sandbox-proxy-ready"),
        ("host→app", "ui/notifications/sandbox-resource-ready"),
        ("app→host", "ui/initialize"),
        ("host→app", 1),
        ("app→host", "ui/notifications/initialized"),
        ("host→app", "ui/notifications/tool-input"),
    ]


# -- the capability, on the wire ----------------------------------------------------------

def test_the_client_declares_the_extension_only_when_asked() -> None:
    async def offered(**options: Any) -> dict[str, Any]:
        async with ClientSession(StdioTransport(lab_command()), **options) as session:
            await session.connect()
            sent = next(e for e in session.transcript if e.method == "initialize")
            return sent.message["params"]["capabilities"]

    assert anyio.run(lambda: offered(apps=True))["extensions"] == {
        "io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
    assert "extensions" not in anyio.run(offered)


def test_the_lab_offers_its_app_only_to_a_client_that_declared_the_extension() -> None:
    async def listed(**options: Any) -> tuple[list[Any], list[Any]]:
        async with ClientSession(StdioTransport(lab_command("--apps")), **options) as session:
            await session.connect()
            tools = await session.list_tools()
            contents = await session.read_resource("ui://lab/clock.html") \
                if options.get("apps") else []
            return tools, contents

    tools, contents = anyio.run(lambda: listed(apps=True))
    by_name = {tool.name: tool for tool in tools}
    assert meta.visibility(by_name["clock"]) == ("model", "app")
    assert meta.visibility(by_name["clock_refresh"]) == ("app",)
    assert meta.visibility(by_name["clock_reset"]) == ("model",)
    resource = meta.ui_resource("ui://lab/clock.html", {"contents": contents})
    assert "ui/initialize" in resource.html and resource.prefers_border is True
    plain, _ = anyio.run(listed)
    assert not {"clock", "clock_refresh", "clock_reset"} & {tool.name for tool in plain}


def test_the_stateless_era_carries_the_extension_in_every_requests_meta() -> None:
    async def listed() -> tuple[list[str], dict[str, Any]]:
        async with ClientSession(StdioTransport(lab_command("--apps")), apps=True) as session:
            await session.connect(era="stateless")
            tools = [tool.name for tool in await session.list_tools()]
            sent = next(e for e in session.transcript if e.method == "tools/list")
            return tools, sent.message["params"]["_meta"]

    tools, meta_sent = anyio.run(listed)
    assert "clock" in tools
    assert meta_sent["io.modelcontextprotocol/clientCapabilities"]["extensions"] == {
        meta.EXTENSION: {"mimeTypes": [meta.MIME_TYPE]}}


# -- what the host hands to its page (mcp_nb.apps.handoff) -----------------------------------

def test_a_teardown_handed_to_the_page_is_recorded_as_the_page_carried_it_out() -> None:
    # The page had seen the View initialize; the host had not heard yet when it decided.
    host, seen = _host()
    host.frame_created()
    request = host.teardown_by_page("torn down by a later cell")
    assert request is not None and request["method"] == "ui/resource-teardown"
    assert host.teardown_by_page("again") is None  # handed once
    assert seen[-1].held and host.state is AppState.LOADING
    _initialized_after(host)
    assert host.page_tore_down("sent", at=99.0) == []
    assert host.state is AppState.TEARING_DOWN and seen[-1].note == "posted by the host's page"
    assert seen[-1].at == 99.0
    (removed,) = host.receive({"jsonrpc": "2.0", "id": request["id"], "result": {}})
    assert removed == RemoveFrame("teardown answered") and host.state is AppState.TORN_DOWN
    assert [r.event for r in host.lifecycle.history][-2:] == [AppEvent.TEARDOWN,
                                                              AppEvent.TEARDOWN_ANSWERED]


def test_a_teardown_the_page_could_not_send_removes_the_frame_and_sends_nothing() -> None:
    host, seen = _host()
    host.frame_created()
    request = host.teardown_by_page("torn down by a later cell")
    assert request is not None
    host.receive(_notify("ui/notifications/sandbox-proxy-ready"))  # what the page saw first
    (removed,) = host.page_tore_down("removed")
    assert isinstance(removed, RemoveFrame) and host.state is AppState.TORN_DOWN
    assert host.lifecycle.history[-1].event is AppEvent.REMOVE
    assert "the View had not said initialized" in host.lifecycle.history[-1].cause
    # Its id is no longer awaited: an answer with it is no teardown's.
    host.receive({"jsonrpc": "2.0", "id": request["id"], "result": {}})
    assert seen[-1].note == "answer to no request of the host's: ignored"


def test_no_answer_within_the_pages_wait_removes_the_frame() -> None:
    host, _ = _host()
    host.frame_created()
    host.teardown_by_page("done")
    _initialized_after(host)
    host.page_tore_down("sent")
    assert host.page_tore_down("no-answer") == [
        RemoveFrame("no answer to ui/resource-teardown within the page's wait")]
    assert host.state is AppState.TORN_DOWN
    assert host.page_tore_down("bogus") == []  # not an outcome a page may report


def test_clearing_the_output_ends_the_lifecycle_in_any_state() -> None:
    host, _ = _host()
    _initialized(host)
    assert host.state is AppState.INPUT_SENT
    assert host.output_cleared("the output was cleared") == [
        RemoveFrame("the output was cleared")]
    assert host.state is AppState.TORN_DOWN
    assert host.lifecycle.history[-1].event is AppEvent.CLEARED
    assert host.output_cleared("again") == []  # already gone


def _initialized_after(host: AppHost) -> None:
    """The View's side of initialization, on a host whose frame exists already."""
    host.receive(_notify("ui/notifications/sandbox-proxy-ready"))
    host.receive(_request(1, "ui/initialize", appCapabilities={}))
    host.receive(_notify("ui/notifications/initialized"))
