"""MCP Apps in a cell: the anywidget frame, the view around it, and the host's plumbing.

The host's protocol is :class:`mcp_nb.apps.AppHost` (sans I/O); this module carries
its actions out:

* :class:`AppFrame` is an anywidget whose ES module (``static/app_frame.js``, shipped in
  the package: no build step, nothing fetched at run time) renders the sandbox proxy
  iframe and relays ``postMessage`` traffic to the kernel and back;
* :class:`AppView` is what ``%mcp call`` shows for an App tool: the App's name, its
  ``ui://`` resource and the CSP applied, the frame, what the App asked the host to
  show (``ui/message``, ``ui/update-model-context``, links, logs), the tool's result and
  the App's lifecycle diagram.  Its ``text/plain`` and static HTML say all of that
  without a kernel (saved notebooks, nbval);
* every message both ways is written into the session's transcript as the App lane
  (``app→host`` / ``host→app``), beside the MCP wire.

The App's ``tools/call`` and ``resources/read`` go to the session the App came from,
on the session's loop, without blocking the kernel: the answer is posted back when
it arrives.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anywidget
import ipywidgets as w
import traitlets
from IPython.display import display

from .. import __version__
from ..apps import meta
from ..apps.csp import describe_policy, proxy_document, sandbox_policy
from ..apps.host import (
    Action,
    AppHost,
    Exchange,
    Forward,
    RemoveFrame,
    Resize,
    Show,
    ToFrame,
)
from ..apps.lifecycle import AppEvent, AppLifecycle, AppState, AppTransitionRecord
from ..client.errors import ServerError
from ..client.transcript import APP_LANE
from ..i18n import _
from ..protocol.errors import McpError
from ..protocol.lifecycle import State, TransitionRecord
from ..protocol.models import CallToolResult
from . import render
from .app_diagram import app_diagram_svg, app_sequence_svg
from .widgets import _Described

STATIC = Path(__file__).parent / "static"
#: The sandbox proxy's script, inlined into the proxy document the host builds.
PROXY_SCRIPT = (STATIC / "sandbox_proxy.js").read_text(encoding="utf-8")
#: Seconds the host waits for the View's answer to ui/resource-teardown (it SHOULD wait).
TEARDOWN_WAIT = 2.0
#: Seconds after the frame appears before the cell says the View has not initialized.
INITIALIZED_WAIT = 5.0
#: Starts the model-context note, which a newer one replaces (found by this, in any language).
_MODEL_CONTEXT = "<!--model context-->"
#: The frame's height before the View reports its size, and the most it may grow to.
INITIAL_HEIGHT, MAX_HEIGHT = 160, 600


class AppFrame(anywidget.AnyWidget):
    """The sandboxed iframe (sandbox proxy around the View) and its message relay."""

    _esm = STATIC / "app_frame.js"
    proxy_doc = traitlets.Unicode("").tag(sync=True)
    sandbox = traitlets.Unicode("allow-scripts").tag(sync=True)
    allow = traitlets.Unicode("").tag(sync=True)
    title = traitlets.Unicode("MCP App").tag(sync=True)
    border = traitlets.Bool(True).tag(sync=True)
    height = traitlets.Int(INITIAL_HEIGHT).tag(sync=True)
    display_mode = traitlets.Unicode("inline").tag(sync=True)
    removed = traitlets.Bool(False).tag(sync=True)
    #: ui/notifications/sandbox-resource-ready, posted by the page when the proxy is ready.
    resource_message = traitlets.Dict().tag(sync=True)
    #: The frame's own words (a note, a button), in the kit's language when it was made.
    labels = traitlets.Dict().tag(sync=True)


def frame_labels() -> dict[str, str]:
    """What app_frame.js writes itself, translated here (the page has no catalog)."""
    return {"other_view": _("(this MCP App is shown in another view of this output)"),
            "back_inline": _("Back inline"),
            "fullscreen": _("fullscreen (asked by the App) · Esc or "),
            "torn_down": _("(App torn down)")}


def declares_apps(session: Any) -> bool:
    """True when the session told the server it renders MCP Apps."""
    extensions = session.client_capabilities.get("extensions") or {}
    return meta.EXTENSION in extensions


def _tool_dict(tool: Any) -> dict[str, Any]:
    return tool.model_dump(exclude_none=True) if hasattr(tool, "model_dump") else dict(tool)


class AppView(_Described, w.VBox):
    """One App rendered in a cell, hosted by the kernel for the session it came from."""

    def __init__(self, hosted: Any, tool: Any, arguments: Mapping[str, Any], *,
                 call_id: int | None = None, result: CallToolResult | None = None,
                 deliver: bool = True) -> None:
        super().__init__()
        self.hosted = hosted
        self.tool = tool
        self.tool_name = tool.name if hasattr(tool, "name") else str(tool.get("name"))
        self.uri = meta.resource_uri(tool) or ""
        self.arguments = dict(arguments)
        self.call_id = call_id
        self.result = result
        self.deliver = deliver
        self.lifecycle = AppLifecycle()
        self.host: AppHost | None = None
        self.problem: str | None = None
        self.policy_lines: list[str] = []
        self._notes: list[str] = []
        self._lock = threading.RLock()
        self.frame: AppFrame | None = None
        self.header = w.HTML()
        self.notes = w.HTML()
        self.diagram = w.HTML()
        self.result_html = w.HTML()
        self._unsubscribe: Any = None
        self.lifecycle.observers.add(self._on_transition)
        self._draw_diagram()
        if result is not None:
            self.result_html.value = render.content_blocks_html(
                result.content, result.isError, result.structuredContent)

    # -- steps (each one cell in --step mode; all at once from %mcp call) ------------------

    def read_resource(self) -> None:
        """``resources/read`` of the ``ui://`` resource, checked; the CSP built from it."""
        try:
            contents = self.hosted.run(self.hosted.session.read_resource(self.uri))
            resource = meta.ui_resource(self.uri, {"contents": contents})
        except meta.AppResourceError as exc:
            self._refuse(str(exc))
            return
        except ServerError as exc:
            self._refuse(_("{uri}: resources/read failed: {code} {message} (MCP Apps "
                           "2026-01-26: Resource MUST exist on the server)").format(
                uri=self.uri, code=exc.code, message=exc.message))
            return
        policy = sandbox_policy(resource.csp, resource.permissions)
        self.policy_lines = describe_policy(policy)
        self.host = AppHost(
            _tool_dict(self.tool), resource, policy, arguments=self.arguments,
            call_id=self.call_id, find_tool=self._find_tool,
            host_info={"name": "mcp_nb", "version": __version__},
            deliver=self.deliver, lifecycle=self.lifecycle)
        self.host.exchanges.add(self._record)
        if self.result is not None:
            self.host.set_result(self.result.model_dump(exclude_none=True))
        self._unsubscribe = self.hosted.session.on_transition(self._on_session_transition)
        self._draw_header()

    def load(self) -> None:
        """Create the frame (the sandbox proxy with the CSP in place) and show it."""
        if self.host is None:
            return
        border = self.host.resource.prefers_border
        self.frame = AppFrame(
            proxy_doc=proxy_document(self.host.policy, PROXY_SCRIPT),
            sandbox=self.host.policy.sandbox, allow=self.host.policy.allow,
            title=f"MCP App {self.tool_name} ({self.uri})", labels=frame_labels(),
            border=True if border is None else border,
            resource_message=self.host.resource_message())
        self.host.page_posts_resource = True
        self.frame.on_msg(self._on_frame_message)
        # The result folds away under the App (structuredContent is for the App to draw; a
        # text-only host would show this), beside the lifecycle diagram.
        self.children = [self.header, self.frame, self.notes,
                         w.Accordion([self.result_html, self.diagram],
                                     titles=(_("tool result"), _("App lifecycle")))]

    def send_tool_input(self) -> None:
        self._apply(self._host().send_tool_input())

    def send_tool_result(self) -> None:
        self._apply(self._host().send_tool_result())

    def set_result(self, result: CallToolResult) -> None:
        """The call that renders the App completed (step mode, or a background call)."""
        self.result = result
        self.result_html.value = render.content_blocks_html(
            result.content, result.isError, result.structuredContent)
        if self.host is not None:
            with self._lock:
                self._apply(self.host.set_result(result.model_dump(exclude_none=True)))

    def cancelled(self, reason: str) -> None:
        if self.host is not None:
            with self._lock:
                self._apply(self.host.set_cancelled(reason))

    def teardown(self, reason: str = "torn down from the notebook") -> None:
        """``ui/resource-teardown``, then the frame goes (after the answer, or a wait)."""
        if self.host is None:
            return
        with self._lock:
            self._apply(self.host.teardown(reason))

    # -- what the App and the browser say ---------------------------------------------------

    def _on_frame_message(self, widget: Any, content: Any, buffers: Any) -> None:
        if not isinstance(content, Mapping) or self.host is None:
            return
        kind = content.get("kind")
        with self._lock:
            if kind == "created":
                if not self.lifecycle.can_fire(AppEvent.FRAME_CREATED) \
                        and self.lifecycle.state is not AppState.REQUESTED:
                    # A new page shows this output (reloaded, or reopened while the kernel
                    # lives): the old View is gone with its page; a new View, a new lifecycle.
                    self._restart()
                context = self.host.context
                context.theme = "dark" if content.get("theme") == "dark" else "light"
                width = content.get("width")
                context.width = int(width) if isinstance(width, int | float) and width else None
                context.locale = str(content.get("locale") or "") or None
                context.time_zone = str(content.get("timeZone") or "") or None
                if self.lifecycle.can_fire(AppEvent.FRAME_CREATED):
                    self._apply(self.host.frame_created())
                    timer = threading.Timer(INITIALIZED_WAIT, self._still_waiting)
                    timer.daemon = True
                    timer.start()
            elif kind == "frame":
                self._apply(self.host.receive(content.get("message")))
            elif kind == "theme":
                self._apply(self.host.context_changed(
                    theme="dark" if content.get("theme") == "dark" else "light"))
            elif kind == "escape" and self.frame is not None:
                self.host.context.display_mode = "inline"
                self.frame.display_mode = "inline"
                self._apply(self.host.context_changed())
            elif kind == "view-removed":
                # The output was cleared or the cell re-run: the frame is already gone.
                self._apply(self.host.give_up_teardown("the output was cleared"))

    def _apply(self, actions: list[Action]) -> None:
        for action in actions:
            if isinstance(action, ToFrame):
                if self.frame is not None:
                    self.frame.send({"kind": "frame", "message": action.message})
                if action.message.get("method") == "ui/resource-teardown":
                    # The host SHOULD wait for the answer, but not forever.
                    timer = threading.Timer(TEARDOWN_WAIT, self._give_up, args=(
                        f"no answer to ui/resource-teardown within {TEARDOWN_WAIT:g} s",))
                    timer.daemon = True
                    timer.start()
            elif isinstance(action, Forward):
                self._forward(action)
            elif isinstance(action, Show):
                self._show(action)
            elif isinstance(action, Resize):
                if action.height is not None and self.frame is not None:
                    self.frame.height = max(40, min(MAX_HEIGHT, round(action.height)))
            elif isinstance(action, RemoveFrame) and self.frame is not None:
                self.frame.removed = True

    def _forward(self, action: Forward) -> None:
        """The App's request, sent on the session's loop; the answer is posted back later."""
        session = self.hosted.session

        async def send() -> dict[str, Any]:
            return await session.request(action.method, action.params)

        future = self.hosted.loop.submit(send())

        def done(finished: Any) -> None:
            error: dict[str, Any] | None = None
            result: dict[str, Any] | None = None
            try:
                result = finished.result()
            except ServerError as exc:
                error = {"code": exc.code, "message": exc.message}
                if exc.data is not None:
                    error["data"] = exc.data
            except (McpError, Exception) as exc:  # the App gets an answer whatever happened
                error = {"code": -32603, "message": f"{type(exc).__name__}: {exc}"}
            assert self.host is not None
            with self._lock:
                self._apply(self.host.forwarded(action.app_id, result, error))

        future.add_done_callback(done)

    def _find_tool(self, name: str) -> Any:
        try:
            return self.hosted.tool(name)
        except McpError:
            return None

    def _restart(self) -> None:
        old = self._host()
        self._show(Show("waiting", {"text": _(
            "a new page shows this App (the previous View, {state}, went with its page): "
            "it starts again with a new lifecycle").format(state=old.state)}))
        self.lifecycle = AppLifecycle()
        self.lifecycle.observers.add(self._on_transition)
        self.host = AppHost(old.tool, old.resource, old.policy, arguments=old.arguments,
                            call_id=old.call_id, find_tool=self._find_tool,
                            host_info=old.host_info, deliver=True, lifecycle=self.lifecycle)
        self.host.exchanges.add(self._record)
        self.host.page_posts_resource = old.page_posts_resource
        if self.result is not None:
            self.host.set_result(self.result.model_dump(exclude_none=True))
        elif old.cancelled is not None:
            self.host.set_cancelled(old.cancelled)
        if self.frame is not None:
            self.frame.removed = False
            self.frame.display_mode = "inline"
        self._draw_diagram()

    def _still_waiting(self) -> None:
        """Say so in the cell when the View has not said ``initialized`` in good time."""
        state = self.lifecycle.state
        if state in (AppState.LOADING, AppState.LOADED, AppState.INITIALIZING):
            self._show(Show("waiting", {"text": _(
                "the App is {state} after {seconds} s: no ui/notifications/initialized yet, "
                "so its input and result are held (the host MUST NOT send the View anything "
                "before it)").format(state=state, seconds=f"{INITIALIZED_WAIT:g}")}))

    def _give_up(self, why: str) -> None:
        if self.host is not None:
            with self._lock:
                self._apply(self.host.give_up_teardown(why))

    def _on_session_transition(self, record: TransitionRecord) -> None:
        if record.target in (State.SHUTTING_DOWN, State.TERMINATED) and self.host is not None \
                and self.lifecycle.state not in (AppState.TEARING_DOWN, AppState.TORN_DOWN):
            self.teardown("the MCP session closed")

    def _record(self, exchange: Exchange) -> None:
        """Write one postMessage message into the session's transcript (the App lane).

        Added on the session's loop, the one thread that writes the transcript.
        """
        session = self.hosted.session
        message = exchange.message
        if isinstance(message, Mapping):
            method = message.get("method") if isinstance(message.get("method"), str) else None
            request_id = message.get("id") if isinstance(message.get("id"), str | int) else None
            kind = ("request" if method and request_id is not None else "notification"
                    if method else "error" if "error" in message else "response")
        else:
            method = request_id = None
            kind = "invalid"
        if exchange.note.startswith("malformed"):
            kind = "invalid"
        size = len(json.dumps(message, default=repr).encode())
        note = f"App {self.tool_name}" + (f": {exchange.note}" if exchange.note else "")
        entry = {"size": size, "method": method, "id": request_id, "note": note,
                 "message": dict(message) if isinstance(message, Mapping) else None,
                 "text": None if isinstance(message, Mapping) else repr(message)}
        elapsed = session.lifecycle.elapsed()
        self.hosted.loop.call_soon(lambda: session.transcript.add(
            elapsed, exchange.direction, kind, session.state.value, **entry))

    # -- drawing -----------------------------------------------------------------------------

    def _host(self) -> AppHost:
        if self.host is None:
            raise McpError(self.problem or _("the App's resource has not been read yet"))
        return self.host

    def _refuse(self, problem: str) -> None:
        self.problem = problem
        self.lifecycle.fire(AppEvent.RESOURCE_REFUSED, problem)
        self._draw_header()
        self.children = [self.header, self.result_html]

    def _show(self, action: Show) -> None:
        data = action.data
        if action.kind == "open-link":
            url = str(data.get("url"))
            link = (f'<a href="{render.esc(url)}" target="_blank" '
                    f'rel="noopener noreferrer">{render.esc(url)}</a>')
            note = render.esc(_("the App asks to open {link} (opens on your click)")).format(
                link=link)
        elif action.kind == "message":
            text = render.content_summary(data.get("content") or [])
            note = render.esc(_("ui/message ({role}) — would go to the conversation: "
                                "{text}")).format(role=render.esc(data.get("role")),
                                                  text=f"<b>{render.esc(text)}</b>")
        elif action.kind == "model-context":
            shown = json.dumps(data, ensure_ascii=False)[:400]
            self._notes = [n for n in self._notes if not n.startswith(_MODEL_CONTEXT)]
            note = _MODEL_CONTEXT + render.esc(_(
                "model context (replaces the previous one): {context}")).format(
                context=f"<code>{render.esc(shown)}</code>")
        elif action.kind == "log":
            note = (f"log [{render.esc(data.get('level', ''))}] "
                    f"{render.esc(json.dumps(data.get('data'), ensure_ascii=False)[:300])}")
        elif action.kind == "display-mode":
            mode = str(data.get("mode"))
            if self.frame is not None:
                self.frame.display_mode = mode
            note = render.esc(_("display mode: {mode} (asked by the App)")).format(
                mode=render.esc(mode))
        elif action.kind == "waiting":
            note = f'<span class="finding">{render.esc(data.get("text"))}</span>'
        else:
            note = '<span class="finding">' + render.esc(_("refused {method}: {reason}").format(
                method=data.get("method"), reason=data.get("reason"))) + "</span>"
        self._notes.append(note)
        self.notes.value = render.STYLE + '<div class="mcpnb">' + "".join(
            f"<div>{n}</div>" for n in self._notes[-20:]) + "</div>"

    def _on_transition(self, record: AppTransitionRecord) -> None:
        self._draw_diagram()
        if record.target is AppState.TORN_DOWN and self._unsubscribe is not None:
            self._unsubscribe()  # a torn-down App no longer follows its session
            self._unsubscribe = None

    def _draw_diagram(self) -> None:
        self.diagram.value = app_diagram_svg(self.lifecycle.state, self.lifecycle.path)

    def _draw_header(self) -> None:
        rows = [f"<b>MCP App</b> {render.esc(self.tool_name)} · "
                f"<code>{render.esc(self.uri)}</code>"]
        if self.problem:
            rows.append('<span class="finding">' + render.esc(
                _("not rendered: {problem}").format(problem=self.problem)) + "</span>")
        rows += [f"<code>{render.esc(line)}</code>" for line in self.policy_lines]
        self.header.value = render.STYLE + '<div class="mcpnb">' + "".join(
            f"<div>{row}</div>" for row in rows) + "</div>"

    def describe(self) -> str:
        parts = [f"App {self.tool_name} ({self.uri}): {self.lifecycle.state.value}"]
        if self.problem:
            parts.append(_("not rendered: {problem}").format(problem=self.problem))
        if self.host is not None:
            parts.append(f"CSP {self.host.policy.csp}")
        if self.result is not None:
            text = render.content_summary(self.result.content)
            parts.append(_("result: {text}").format(
                text=text if len(text) <= 80 else text[:79] + "…"))
        return "; ".join(parts)

    def static_html(self) -> str:
        result = self.result_html.value if self.result is not None else ""
        return (self.header.value or render.STYLE) + result + render.svg_image_html(
            app_diagram_svg(self.lifecycle.state, self.lifecycle.path),
            _("App lifecycle: {state}").format(state=self.lifecycle.state.value))


def _app_tool(hosted: Any, tool_name: str) -> Any:
    """``tool_name``'s description when it is an App tool and the session declared the
    extension; else None (the text result is all there is)."""
    if not declares_apps(hosted.session):
        return None
    try:
        tool = hosted.tool(tool_name)
    except McpError:
        return None
    return tool if tool is not None and meta.resource_uri(tool) is not None else None


def app_view_while_running(hosted: Any, tool_name: str, arguments: Mapping[str, Any],
                           future: Any, call_id: int | None) -> AppView | None:
    """Show an App tool's App while its call runs (``%mcp call --background``).

    The spec draws the call and the View's initialization side by side: the View gets
    ``tool-result`` when the call completes, or ``tool-cancelled`` (the host MUST send
    it) when it is cancelled or fails.
    """
    tool = _app_tool(hosted, tool_name)
    if tool is None:
        return None
    view = AppView(hosted, tool, arguments, call_id=call_id)
    view.read_resource()
    view.load()

    def finished(done: Any) -> None:
        if done.cancelled():
            view.cancelled("the call was cancelled")
            return
        error = done.exception()
        if error is None:
            view.set_result(done.result())
        else:
            view.cancelled(f"the call failed: {type(error).__name__}: {error}")

    future.add_done_callback(finished)
    display(view)
    return view


def app_note(tool: Any) -> str:
    """What ``%mcp tools`` says of an MCP Apps tool before its description ("" for others):
    its ``ui://`` resource, and who may call it when that is not both model and app."""
    uri = meta.resource_uri(tool)
    who = meta.visibility(tool)
    parts = [f"App {uri}"] if uri else []
    if who != meta.DEFAULT_VISIBILITY and set(who) != set(meta.DEFAULT_VISIBILITY):
        parts.append(_("app only") if who == ("app",) else _("model only")
                     if who == ("model",) else _("visibility {who}").format(
                         who=", ".join(who) or _("none")))
    return f"[{'; '.join(parts)}] " if parts else ""


def app_view_for_call(hosted: Any, tool_name: str, arguments: Mapping[str, Any],
                      result: CallToolResult, call_id: int | None) -> AppView | None:
    """The App to show for a completed ``tools/call``, or None when the tool is no App or
    the session did not declare the extension (then the text result is all there is)."""
    tool = _app_tool(hosted, tool_name)
    if tool is None:
        return None
    view = AppView(hosted, tool, arguments, call_id=call_id, result=result)
    view.read_resource()
    view.load()
    return view


class AppSequence:
    """``%mcp app --sequence``: the App lane and the MCP wire as one three-lane picture."""

    LAST = 60

    def __init__(self, transcript: Any) -> None:
        entries = list(transcript)
        first = next((i for i, e in enumerate(entries) if e.direction in APP_LANE), None)
        self.entries = [] if first is None else [
            e for e in entries[first:] if e.direction != "event"][-self.LAST:]

    def __repr__(self) -> str:
        lane = sum(1 for e in self.entries if e.direction in APP_LANE)
        return (_("App sequence: {count} messages, {lane} of them on the App lane").format(
            count=len(self.entries), lane=lane) if self.entries
            else _("App sequence: no App has exchanged a message yet"))

    def _repr_html_(self) -> str:
        return render.svg_image_html(app_sequence_svg(self.entries), repr(self))


class StepOutcome:
    """What one ``%mcp app --next`` step did: a short text (nbval compares it) and HTML."""

    def __init__(self, step: str, text: str, detail: Any = None) -> None:
        self.step, self.text, self.detail = step, text, detail

    def __repr__(self) -> str:
        return render.plain(_("App step {step}: {text}").format(step=self.step, text=self.text))

    def _repr_html_(self) -> str:
        detail = "" if self.detail is None else render.pretty_json_html(self.detail)
        head = render.esc(_("App step {step}").format(step=self.step))
        return (render.STYLE + f'<div class="mcpnb"><b>{head}</b>: '
                f"{render.esc(self.text)}{detail}</div>")


class AppStepper:
    """``%mcp app TOOL --step``: the host's side of the App lifecycle, one cell per step.

    The steps are the host's: the call, ``resources/read``, the sandbox policy, the frame,
    ``tool-input``, ``tool-result``, ``ui/resource-teardown``.  Between *load* and *input*
    the View speaks (``ui/initialize``, ``ui/notifications/initialized``): in a browser it
    does so as soon as the cell that showed the frame has finished, so *input* is refused
    (the host MUST NOT send the View anything before initialized) until it has.
    """

    STEPS = ("call", "read", "csp", "load", "input", "result", "teardown")

    def __init__(self, hosted: Any, tool: Any, arguments: Mapping[str, Any]) -> None:
        self.hosted = hosted
        self.view = AppView(hosted, tool, arguments, deliver=False)
        self.done = 0

    @property
    def next_step(self) -> str | None:
        return self.STEPS[self.done] if self.done < len(self.STEPS) else None

    def plan(self) -> StepOutcome:
        return StepOutcome("plan", _("{tool} renders {uri}; steps: {steps} (each %mcp app "
                                     "--next does one)").format(
            tool=self.view.tool_name, uri=self.view.uri, steps=" → ".join(self.STEPS)))

    def step(self) -> Any:
        step = self.next_step
        if step is None:
            raise McpError(_("every step is done; %mcp app TOOL --step starts again"))
        outcome = getattr(self, f"_{step}")()
        self.done += 1
        return outcome

    def _call(self) -> StepOutcome:
        view = self.view
        result = self.hosted.run(self.hosted.session.call_tool(view.tool_name, view.arguments))
        view.result = result
        view.result_html.value = render.content_blocks_html(
            result.content, result.isError, result.structuredContent)
        text = render.content_summary(result.content)
        return StepOutcome("call", _("tools/call {tool} answered: {text} (held for the View: "
                                     "tool-result comes after tool-input)").format(
            tool=view.tool_name, text=text[:80]))

    def _read(self) -> StepOutcome:
        view = self.view
        view.read_resource()
        if view.host is None:
            self.done = len(self.STEPS) - 1  # nothing to load, input or tear down
            return StepOutcome("read", _("refused: {problem}").format(problem=view.problem))
        resource = view.host.resource
        return StepOutcome("read", _("resources/read {uri}: {mime_type}, {count} characters "
                                     "of HTML").format(uri=resource.uri,
                                                       mime_type=resource.mime_type,
                                                       count=f"{len(resource.html):,}"), {
                               "csp": resource.csp, "permissions": dict(resource.permissions),
                               "prefersBorder": resource.prefers_border})

    def _csp(self) -> StepOutcome:
        policy = self.view._host().policy
        return StepOutcome("csp", "; ".join(describe_policy(policy)) + "; " + _(
            "sandbox {sandbox} (never allow-same-origin: the frame's origin stays opaque)"
        ).format(sandbox=repr(policy.sandbox)), dict(policy.directives()))

    def _load(self) -> AppView:
        self.view.load()
        return self.view

    def _input(self) -> StepOutcome:
        view = self.view
        try:
            view.send_tool_input()
        except ValueError as exc:
            self.done -= 1  # not done: run it again once the View is initialized
            return StepOutcome("input", _("not sent: {reason}").format(reason=exc))
        return StepOutcome("input", _("{method} sent").format(
            method="ui/notifications/tool-input"), {
            "arguments": view.arguments})

    def _result(self) -> StepOutcome:
        self.view.send_tool_result()
        return StepOutcome("result", _("{method} sent").format(
            method="ui/notifications/tool-result"))

    def _teardown(self) -> StepOutcome:
        self.view.teardown("stepped to the end")
        return StepOutcome("teardown", _(
            "ui/resource-teardown sent; the App is {state} (the frame goes on the View's "
            "answer, or after {seconds} s)").format(state=self.view.lifecycle.state,
                                                   seconds=f"{TEARDOWN_WAIT:g}"))


class AppsPanel(w.VBox):
    """The explorer's Apps tab: the server's App tools, and one rendered on demand.

    Render runs on the kernel's thread (the call, ``resources/read``, then the frame), so
    the kernel is busy for the length of the call: App tools answer quickly, and the App's
    own traffic flows once the click's handler has returned.
    """

    def __init__(self, hosted: Any) -> None:
        super().__init__()
        self.hosted = hosted
        self.tools: dict[str, Any] = {}
        self.listing = w.HTML()
        self.picker = w.Dropdown(options=[], description=_("App tool"))
        self.arguments = w.Text(value="{}", description=_("arguments"),
                                placeholder=_('JSON, e.g. {"label": "Paris"}'))
        self.render_button = w.Button(description=_("Render"), button_style="primary")
        self.status = w.Label()
        self.shown = w.VBox()
        self.render_button.on_click(lambda button: self.render())
        self.children = [self.listing, w.HBox([self.picker, self.arguments,
                                               self.render_button]), self.status, self.shown]

    def set_tools(self, tools: list[Any]) -> None:
        """A fresh tools/list: keep the App tools (and say who may call each)."""
        self.tools = {t.name: t for t in tools if meta.resource_uri(t) is not None}
        rows = [(t.name, meta.resource_uri(t), ", ".join(meta.visibility(t)))
                for t in tools if meta.resource_uri(t) is not None or not meta.app_callable(t)
                or not meta.model_visible(t)]
        self.listing.value = render.STYLE + '<div class="mcpnb">' + (
            render.table_html((_("tool"), _("ui:// resource"), _("visibility")),
                              [(n, u or "", v) for n, u, v in rows]) if rows
            else render.esc(_("no App tools on this server"))) + "</div>"
        self.picker.options = list(self.tools)
        if self.tools and self.picker.value not in self.tools:
            self.picker.value = next(iter(self.tools))

    def render(self) -> AppView | None:
        name = self.picker.value
        if not name:
            return None
        try:
            arguments = json.loads(self.arguments.value or "{}")
            if not isinstance(arguments, dict):
                raise ValueError(_("the arguments must be a JSON object"))
            self.status.value = _("calling {tool}…").format(tool=name)
            result = self.hosted.run(self.hosted.session.call_tool(name, arguments))
        except (ValueError, McpError) as exc:
            self.status.value = _("failed: {error}").format(
                error=f"{type(exc).__name__}: {exc}")
            return None
        view = AppView(self.hosted, self.tools[name], arguments, result=result)
        view.read_resource()
        view.load()
        for old in self.shown.children:
            if isinstance(old, AppView):
                old.teardown("another App was rendered in the explorer")
        self.shown.children = [view]
        self.status.value = ""
        return view
