"""The host's side of the App protocol (JSON-RPC over ``postMessage``), sans I/O.

:class:`AppHost` takes each message the App's frame posts (:meth:`AppHost.receive`)
and returns what the host must do, as values: post a message to the frame, forward
a request to the MCP server, show something in the cell, resize or remove the
frame.  Nothing here touches a browser, a socket or an event loop, so a test drives
the whole protocol with dicts, and the notebook layer only carries actions out.

Every message both ways is told to :attr:`AppHost.exchanges` observers (the
notebook writes them into the session's transcript as the App lane).

The rules, with the specification's requirement levels (2026-01-26):

* the host MUST NOT send the View any request or notification before it receives
  ``ui/notifications/initialized`` (tool input, result, cancellation and host-context
  changes are held until then; a step asked for before then is held, and in a notebook
  the host's page posts it: :mod:`.handoff`); responses are neither, so the View's own
  requests are answered before it, ``ui/initialize`` first;
* ``ui/notifications/tool-input``: MUST be sent with the complete arguments after the
  View's initialize completes, at most once, and before ``tool-result``;
* ``ui/notifications/tool-result``: MUST be sent when the tool completes;
  ``ui/notifications/tool-cancelled``: MUST be sent if the call was cancelled;
* the host MUST reject an App's ``tools/call`` of a tool whose visibility lacks
  ``"app"``; it MAY block other messages or ask the user (this host forwards only
  ``tools/call``, ``resources/read`` and answers ``ping`` itself);
* ``ui/open-link``: SHOULD open the URL in a new tab (this host shows a link the
  person clicks: never silently, never a ``javascript:`` URL);
* ``ui/message``: SHOULD add it to the conversation; ``ui/update-model-context``:
  SHOULD give it to the model in later turns (a notebook has no model: both are
  shown in the cell, the latest context replacing the previous one);
* ``ui/request-display-mode``: MUST NOT switch to a mode the View did not declare in
  ``availableDisplayModes`` (if it declared any), MUST answer with the resulting mode,
  SHOULD answer the current mode when the request cannot be met;
* ``ui/resource-teardown``: MUST be sent before the frame is torn down; the host
  SHOULD wait for the answer;
* with flexible container dimensions the host MUST follow
  ``ui/notifications/size-changed``;
* validate every incoming message and reject malformed ones.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..i18n import _
from ..protocol.observers import Observers
from .actions import Action, Direction, Exchange, Forward, RemoveFrame, Resize, Show, ToFrame
from .actions import error_message as _error
from .actions import notification_message as _notification
from .actions import result_message as _result
from .csp import SandboxPolicy
from .download import DownloadFile
from .handoff import PageHandoff
from .lifecycle import AppEvent, AppLifecycle, AppState
from .meta import PROTOCOL_VERSION, UiResource, app_callable
from .page import PageBootstrap
from .view_requests import HOST_DISPLAY_MODES, REFUSED, ViewRequests

# JSON-RPC error codes this host answers with (-32000, REFUSED, in view_requests).
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602

#: App → host methods forwarded to the MCP session the App came from.
FORWARDED = frozenset({"tools/call", "resources/read"})
#: What the host's page (the sandbox proxy) reports about the App, never forwarded from it:
#: the proxy drops every ``ui/notifications/sandbox-*`` message the View posts.
PAGE_RECORDS = {
    "ui/notifications/sandbox-message-refused":
        "the host's page refused App messages (never forwarded)",
    "ui/notifications/sandbox-csp-violation": "a CSP violation in the App, reported by the page",
}


@dataclass
class HostContext:
    """``hostContext`` of the ``ui/initialize`` answer (the host SHOULD send it).

    The front end fills in what only the browser knows (theme, width, locale, time
    zone) before the View initializes.
    """

    theme: str = "light"
    display_mode: str = "inline"
    #: Flexible height up to this many pixels; width fixed to the cell's.
    max_height: int = 600
    width: int | None = None
    locale: str | None = None
    time_zone: str | None = None
    #: ``styles`` ({"variables": {…}}) from the page's theme (:mod:`.styles`), or None.
    styles: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        container: dict[str, Any] = {"maxHeight": self.max_height}
        if self.width:
            container["width"] = self.width
        context: dict[str, Any] = {
            "theme": self.theme, "displayMode": self.display_mode,
            "availableDisplayModes": list(HOST_DISPLAY_MODES),
            "containerDimensions": container, "platform": "web",
            "userAgent": "mcp_nb", **self.extra}
        if self.locale:
            context["locale"] = self.locale
        if self.time_zone:
            context["timeZone"] = self.time_zone
        if self.styles:
            context["styles"] = self.styles
        return context




#: States in which a step is held for ``initialized`` rather than refused.
_HOLDABLE = (AppState.RESOURCE_READ, AppState.LOADING, AppState.LOADED, AppState.INITIALIZING)


class AppHost(ViewRequests, PageBootstrap, PageHandoff):
    """One rendered App: its lifecycle, what is held for it, what it asked for.

    ``tool`` is the tool whose call renders the App (a dict as ``tools/list`` gave
    it); ``find_tool(name)`` returns the server's tool of that name (or None) for the
    visibility check of the App's own calls.  With ``deliver=False`` tool input and
    result wait for :meth:`send_tool_input` / :meth:`send_tool_result` (one step per
    cell) instead of going out as soon as the View is initialized.
    """

    def __init__(self, tool: Mapping[str, Any], resource: UiResource, policy: SandboxPolicy,
                 *, arguments: Mapping[str, Any] | None = None,
                 call_id: str | int | None = None,
                 find_tool: Callable[[str], Mapping[str, Any] | None] = lambda name: None,
                 host_info: Mapping[str, str] | None = None,
                 context: HostContext | None = None, deliver: bool = True,
                 lifecycle: AppLifecycle | None = None) -> None:
        self.tool = dict(tool)
        self.resource = resource
        self.policy = policy
        self.arguments = dict(arguments) if arguments is not None else None
        self.call_id = call_id
        self.find_tool = find_tool
        self.host_info = dict(host_info or {"name": "mcp_nb", "version": "0"})
        self.context = context or HostContext()
        self.deliver = deliver
        self.lifecycle = lifecycle or AppLifecycle()
        if self.lifecycle.state is AppState.REQUESTED:
            self.lifecycle.fire(AppEvent.RESOURCE_READ, f"read {resource.uri}")
        #: Told of every message both ways.
        self.exchanges: Observers[Exchange] = Observers()
        #: What the View said about itself in ui/initialize.
        self.app_info: dict[str, Any] | None = None
        self.app_capabilities: dict[str, Any] = {}
        #: The result (or cancellation reason) of the call that rendered the App, once known.
        self.result: dict[str, Any] | None = None
        self.cancelled: str | None = None
        #: The latest ui/update-model-context (each one replaces the previous).
        self.model_context: dict[str, Any] | None = None
        #: ui/message requests, in order.
        self.messages: list[dict[str, Any]] = []
        self.size: tuple[float | None, float | None] = (None, None)
        self.size_changes = 0
        #: The host's page holds :meth:`resource_message` and posts it itself the moment the
        #: proxy says ready (one crossing of the kernel's websocket fewer per render); the
        #: exchange is still recorded, in its place.
        self.page_posts_resource = False
        #: What the person agreed to in the cell (declared permissions, fullscreen).
        self.permissions_agreed = False
        self.fullscreen_agreed = False
        self._ids = itertools.count(1)
        self._pending: dict[str | int, str] = {}
        #: ui/download-file requests waiting for the person's click, by the App's id.
        self._downloads: dict[str | int, list[DownloadFile]] = {}

    @property
    def state(self) -> AppState:
        return self.lifecycle.state

    # -- the outside world -> actions -----------------------------------------------------

    def frame_created(self) -> list[Action]:
        """The sandbox proxy iframe exists (the widget was displayed)."""
        self.lifecycle.fire(AppEvent.FRAME_CREATED)
        return []

    def receive(self, message: Any) -> list[Action]:
        """One message the frame posted; returns what to do about it."""
        if not isinstance(message, Mapping) or message.get("jsonrpc") != "2.0":
            return self._reject(message, "not a JSON-RPC 2.0 message")
        method = message.get("method")
        has_id = "id" in message
        if method is None:
            if has_id and ("result" in message or "error" in message):
                return self._response(message)
            return self._reject(message, "neither a request, a notification nor a response")
        if not isinstance(method, str):
            return self._reject(message, "method is not a string")
        params = message.get("params", {})
        if not isinstance(params, Mapping):
            return self._reject(message, "params is not an object")
        if has_id:
            request_id = message["id"]
            if not isinstance(request_id, str | int) or isinstance(request_id, bool):
                return self._reject(message, "id is not a string or an integer")
            return self._request(request_id, method, dict(params), message)
        return self._notification(method, dict(params), message)

    def forwarded(self, app_id: str | int, result: Mapping[str, Any] | None = None,
                  error: Mapping[str, Any] | None = None) -> list[Action]:
        """The MCP server answered a :class:`Forward`: pass the answer back to the View."""
        if error is not None:
            reply = {"jsonrpc": "2.0", "id": app_id, "error": dict(error)}
        else:
            reply = _result(app_id, result or {})
        return [self._send(reply)]

    def set_result(self, result: Mapping[str, Any]) -> list[Action]:
        """The call that rendered the App completed: tool-result (now or once initialized)."""
        self.result = dict(result)
        return self._deliver() if self.deliver and not self.page_delivers else []

    def set_cancelled(self, reason: str) -> list[Action]:
        """The call was cancelled: tool-cancelled (now or once initialized)."""
        self.cancelled = reason
        return self._deliver() if self.deliver and not self.page_delivers else []

    def send_tool_input(self) -> list[Action]:
        """Step mode: send ``ui/notifications/tool-input`` now, or, before the View said
        ``initialized``, hold it for then (:meth:`~mcp_nb.apps.handoff.PageHandoff.hold`)."""
        if self.arguments is None:
            raise ValueError(_("the tool's arguments are not known yet"))
        if "input" in self.released:
            raise ValueError(_("tool-input was already handed to the host's page: it is sent "
                               "at most once"))
        if self.state in _HOLDABLE:
            return self.hold("input")
        self._require_addressable("tool-input")
        return self._post_step("input")

    def send_tool_result(self) -> list[Action]:
        """Step mode: send ``tool-result`` (or ``tool-cancelled``) now, or hold it behind
        the input when that is held."""
        if self.cancelled is None and self.result is None:
            raise ValueError(_("the tool call has not completed yet"))
        if "input" in self.held and "outcome" not in self.released:
            return self.hold("outcome")
        if self.state is not AppState.INPUT_SENT:
            raise ValueError(_("cannot send tool-result while the App is {state}: tool-input "
                               "is required before it, and it is sent once").format(
                state=self.state))
        return self._post_step("outcome")

    def _post_step(self, step: str) -> list[Action]:
        """Send the input, or the call's outcome, now (the View is initialized)."""
        if step == "input":
            self.lifecycle.fire(AppEvent.TOOL_INPUT)
            return [self._send(_notification("ui/notifications/tool-input",
                                             {"arguments": self.arguments}))]
        if self.cancelled is not None:
            self.lifecycle.fire(AppEvent.TOOL_CANCELLED, self.cancelled)
            return [self._send(_notification("ui/notifications/tool-cancelled",
                                             {"reason": self.cancelled}))]
        self.lifecycle.fire(AppEvent.TOOL_RESULT)
        return [self._send(_notification("ui/notifications/tool-result", self.result))]

    def teardown(self, reason: str) -> list[Action]:
        """Begin tearing the App down: ``ui/resource-teardown`` if the View may be told."""
        if self.state in (AppState.TORN_DOWN, AppState.TEARING_DOWN, AppState.REFUSED):
            return []
        if not self.lifecycle.addressable:
            # ui/resource-teardown is a request, and before initialized the host MUST NOT
            # send the View one: the frame just goes.
            self.lifecycle.fire(AppEvent.REMOVE, f"{reason} (before initialized)")
            return [RemoveFrame(reason)]
        request_id = next(self._ids)
        self._pending[request_id] = "ui/resource-teardown"
        self.lifecycle.fire(AppEvent.TEARDOWN, reason)
        return [self._send({"jsonrpc": "2.0", "id": request_id,
                            "method": "ui/resource-teardown", "params": {"reason": reason}})]

    def give_up_teardown(self, why: str) -> list[Action]:
        """No answer to ``ui/resource-teardown`` (or the frame is already gone)."""
        if self.state is AppState.TEARING_DOWN or self.lifecycle.can_fire(AppEvent.REMOVE):
            self.lifecycle.fire(AppEvent.REMOVE, why)
            return [RemoveFrame(why)]
        return []

    def context_changed(self, **changes: Any) -> list[Action]:
        """The front end's theme or size changed: ``host-context-changed`` if the View may
        be told (the host MAY send it; before initialized it MUST NOT)."""
        for key, value in changes.items():
            setattr(self.context, key, value)
        if not self.lifecycle.addressable:
            return []
        partial = {k: v for k, v in self.context.to_dict().items()
                   if k in {"theme", "displayMode", "containerDimensions", "locale", "styles"}}
        return [self._send(_notification("ui/notifications/host-context-changed", partial))]

    # -- what the host answers ------------------------------------------------------------

    def host_capabilities(self) -> dict[str, Any]:
        sandbox: dict[str, Any] = {"permissions": {key: {} for key in self.policy.permissions
                                                   if self.permissions_agreed}}
        if self.policy.approved:
            sandbox["csp"] = {key: list(values) for key, values in self.policy.approved.items()}
        return {"openLinks": {}, "downloadFile": {}, "serverTools": {}, "serverResources": {},
                "logging": {}, "sandbox": sandbox}

    def resource_message(self) -> dict[str, Any]:
        """``ui/notifications/sandbox-resource-ready``: the View's HTML and its sandbox, for
        the proxy (which applies them; the CSP itself is already in the proxy's head)."""
        return _notification("ui/notifications/sandbox-resource-ready", {
            "html": self.resource.html, "sandbox": self.policy.sandbox,
            "csp": dict(self.resource.csp or {}),
            "permissions": dict(self.resource.permissions) if self.permissions_agreed else {}})

    def initialize_result(self, requested_version: Any) -> dict[str, Any]:
        context = {**self.context.to_dict(), "toolInfo": {"tool": self.tool}}
        if self.call_id is not None:
            context["toolInfo"]["id"] = self.call_id
        return {"protocolVersion": PROTOCOL_VERSION, "hostInfo": self.host_info,
                "hostCapabilities": self.host_capabilities(), "hostContext": context}

    # -- internals ------------------------------------------------------------------------

    def _log(self, direction: Direction, message: Any, note: str = "",
             held: bool = False) -> None:
        if self.exchanges:
            self.exchanges.notify(Exchange(direction, message, note, self._page_time, held))

    def _send(self, message: dict[str, Any], note: str = "") -> ToFrame:
        posted = self._answered_by_page(message, note)
        if posted is not None:
            return posted
        self._log("host→app", message, note)
        return ToFrame(message)

    def _reject(self, message: Any, why: str) -> list[Action]:
        self._log("app→host", message, f"malformed, rejected: {why}")
        request_id = message.get("id") if isinstance(message, Mapping) else None
        if isinstance(request_id, str | int) and not isinstance(request_id, bool) \
                and "method" in message:
            return [self._send(_error(request_id, INVALID_REQUEST, why))]
        return []

    def _refuse(self, request_id: Any, code: int, why: str, method: str) -> list[Action]:
        reply = self._send(_error(request_id, code, why), f"refused {method}")
        if reply.posted:  # the page answered first: the transcript says what this host thought
            return [reply, Show("late", {"state": str(self.state), "method": method})]
        return [reply, Show("refused", {"method": method, "reason": why})]

    def _require_addressable(self, what: str) -> None:
        if not self.lifecycle.addressable:
            raise ValueError(_("cannot send {what} while the App is {state}: the View is "
                               "being torn down or gone").format(what=what, state=self.state))

    def _deliver(self) -> list[Action]:
        """Send whatever is due and allowed: input first (at most once), then the outcome."""
        if not self.lifecycle.addressable or self.page_delivers:
            return []
        actions: list[Action] = []
        if self.state is AppState.INITIALIZED and self.arguments is not None:
            actions += self._post_step("input")
        if self.state is AppState.INPUT_SENT and (self.result is not None
                                                  or self.cancelled is not None):
            actions += self._post_step("outcome")
        return actions

    def _response(self, message: Mapping[str, Any]) -> list[Action]:
        method = self._pending.pop(message["id"], None)
        if method is None:
            self._log("app→host", message, "answer to no request of the host's: ignored")
            return []
        self._log("app→host", message)
        if method == "ui/resource-teardown" and self.state is AppState.TEARING_DOWN:
            outcome = "error" if "error" in message else "answered"
            self.lifecycle.fire(AppEvent.TEARDOWN_ANSWERED, f"teardown {outcome}")
            return [RemoveFrame("teardown " + outcome)]
        return []

    def _notification(self, method: str, params: dict[str, Any],
                      message: Mapping[str, Any]) -> list[Action]:
        if method == "ui/notifications/sandbox-proxy-ready":
            if self.state is not AppState.LOADING:
                self._log("app→host", message, f"ignored: the App is {self.state}")
                return []
            self._log("app→host", message)
            self.lifecycle.fire(AppEvent.RESOURCE_SENT)
            if self.page_posts_resource:
                # Already posted by the host's page, the moment the proxy said ready.
                self._log("host→app", self.resource_message(),
                          "posted by the host's page as the proxy said ready")
                return []
            return [self._send(self.resource_message())]
        if method == "ui/notifications/initialized":
            if self.state is not AppState.INITIALIZING:
                self._log("app→host", message, f"ignored: the App is {self.state}, "
                                               "initialized comes after ui/initialize")
                return []
            self._log("app→host", message)
            self.lifecycle.fire(AppEvent.INITIALIZED)
            return self.release_held() + (self._deliver() if self.deliver else [])
        if method == "ui/notifications/size-changed":
            self._log("app→host", message)
            width, height = params.get("width"), params.get("height")
            numbers = [v if isinstance(v, int | float) and not isinstance(v, bool) and v >= 0
                       else None for v in (width, height)]
            self.size_changes += 1
            self.size = (numbers[0], numbers[1])
            return [Resize(numbers[0], numbers[1])]
        if method == "ui/notifications/request-teardown":
            # Draft revision: the host MAY ignore it; accepting it, it MUST send
            # ui/resource-teardown first (this host accepts once the View is addressable).
            self._log("app→host", message)
            return self.teardown("the View asked (ui/notifications/request-teardown)")
        if method == "notifications/message":
            self._log("app→host", message)
            return [Show("log", params)]
        if method in PAGE_RECORDS:  # the host's own page speaking (see PAGE_RECORDS)
            self._log("app→host", message, PAGE_RECORDS[method])
            return [Show(method.rsplit("sandbox-", 1)[1], params)]
        self._log("app→host", message, "notification not handled by this host: ignored")
        return []

    def _request(self, request_id: str | int, method: str, params: dict[str, Any],
                 message: Mapping[str, Any]) -> list[Action]:
        self._log("app→host", message)
        if method == "ping":
            return [self._send(_result(request_id, {}))]
        if method == "ui/initialize":
            if self.state is not AppState.LOADED:
                return self._refuse(request_id, INVALID_REQUEST,
                                    _("ui/initialize while the App is {state}: a View "
                                      "initializes once").format(state=self.state), method)
            info = params.get("appInfo")
            caps = params.get("appCapabilities")
            if not isinstance(caps, Mapping):
                return self._refuse(request_id, INVALID_PARAMS,
                                    _("ui/initialize without appCapabilities (MCP Apps "
                                      "2026-01-26: the View MUST include its capabilities)"),
                                    method)
            self.app_info = dict(info) if isinstance(info, Mapping) else None
            self.app_capabilities = dict(caps)
            reply = self._send(_result(request_id,
                                       self.initialize_result(params.get("protocolVersion"))))
            self.lifecycle.fire(AppEvent.INITIALIZE)
            return [reply]
        if self.state in (AppState.LOADING, AppState.LOADED):
            return self._refuse(request_id, INVALID_REQUEST,
                                _("{method} before ui/initialize: initialize first").format(
                                    method=method), method)
        if self.state in (AppState.TEARING_DOWN, AppState.TORN_DOWN):
            return self._refuse(request_id, REFUSED, _("{method} while the App is {state}").format(
                method=method, state=self.state), method)
        if self.disconnected is not None and method in FORWARDED:
            return self._refuse(request_id, REFUSED, _(
                "session closed: {why}; {method} cannot reach the server any more").format(
                why=self.disconnected, method=method), method)
        handler = self._HANDLERS.get(method)
        if handler is None:
            return [self._send(_error(request_id, METHOD_NOT_FOUND, _(
                "this host does not serve {method} to Apps").format(method=repr(method))))]
        return handler(self, request_id, params)

    def _tools_call(self, request_id: str | int, params: dict[str, Any]) -> list[Action]:
        name = params.get("name")
        if not isinstance(name, str):
            return self._refuse(request_id, INVALID_PARAMS, _("tools/call needs a tool name"),
                                "tools/call")
        tool = self.find_tool(name)
        if tool is None:
            return self._refuse(request_id, INVALID_PARAMS, _(
                "no tool {name} in the server's tools/list").format(name=repr(name)),
                "tools/call")
        if not app_callable(tool):
            return self._refuse(
                request_id, REFUSED,
                _("tool {name} is not callable by Apps: its visibility lacks \"app\" (MCP "
                  "Apps: the host MUST reject tools/call from apps for such tools)").format(
                    name=repr(name)), "tools/call")
        return [Forward(request_id, "tools/call", params)]

    def _resources_read(self, request_id: str | int, params: dict[str, Any]) -> list[Action]:
        if not isinstance(params.get("uri"), str):
            return self._refuse(request_id, INVALID_PARAMS, _("resources/read needs a uri"),
                                "resources/read")
        return [Forward(request_id, "resources/read", params)]

    _HANDLERS: ClassVar[dict[str, Callable[[AppHost, str | int, dict[str, Any]], list[Action]]]] = {
        "tools/call": _tools_call,
        "resources/read": _resources_read,
        "ui/open-link": ViewRequests._open_link,
        "ui/message": ViewRequests._message,
        "ui/update-model-context": ViewRequests._model_context,
        "ui/request-display-mode": ViewRequests._display_mode,
        "ui/download-file": ViewRequests._download_file,
    }
