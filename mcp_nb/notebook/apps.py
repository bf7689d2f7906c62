"""MCP Apps in a cell, drawn: the anywidget frame, the view around it, and the Apps tab.

* :class:`AppFrame` is an anywidget whose ES module (``static/app_frame.js``, shipped in
  the package: no build step, nothing fetched at run time) renders the sandbox proxy
  iframe and relays ``postMessage`` traffic to the kernel and back;
* :class:`AppView` is what ``%mcp call`` shows for an App tool: the App's name, its
  ``ui://`` resource and the CSP applied, the frame, what the App asked the host to
  show (``ui/message``, ``ui/update-model-context``, links, logs), the tool's result and
  the App's lifecycle diagram.  Its ``text/plain`` and static HTML say all of that
  without a kernel (saved notebooks, nbval);
* :class:`AppSequence` draws the App lane beside the MCP wire; :class:`AppsPanel` is
  the explorer's Apps tab.

The host's side of the messages (what is sent, received, forwarded, refused, and the
transcript's App lane) is :class:`~mcp_nb.notebook.app_host.AppHosting`, which
:class:`AppView` mixes in; ``%mcp app --step`` is :mod:`mcp_nb.notebook.app_stepper`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anywidget
import ipywidgets as w
import traitlets
from IPython.display import display
from ipywidgets.widgets.widget_string import HTMLStyle

from ..apps import meta
from ..apps.host import Show
from ..apps.styles import JUPYTERLAB_SOURCES
from ..client.transcript import APP_LANE
from ..i18n import _
from ..protocol.errors import McpError
from ..protocol.models import CallToolResult
from . import render
from .app_channel import AppChannel, kernel_channel
from .app_diagram import app_diagram_svg, app_sequence_svg
from .app_host import AppHosting, declares_apps
from .app_levers import lever, page_levers
from .described import _Described

#: Starts the model-context note, which a newer one replaces (found by this, in any language).
_MODEL_CONTEXT = "<!--model context-->"
#: The frame's height before the View reports its size.
INITIAL_HEIGHT = 160


class AppFrame(anywidget.AnyWidget):
    """The sandboxed iframe (sandbox proxy around the View) and its message relay."""

    _esm = Path(__file__).parent / "static" / "app_frame.js"
    proxy_doc = traitlets.Unicode("").tag(sync=True)
    sandbox = traitlets.Unicode("allow-scripts").tag(sync=True)
    allow = traitlets.Unicode("").tag(sync=True)
    #: Origins the CSP lets the App reach: the page refuses to load it if its own is one.
    reach = traitlets.List(traitlets.Unicode()).tag(sync=True)
    title = traitlets.Unicode("MCP App").tag(sync=True)
    border = traitlets.Bool(True).tag(sync=True)
    height = traitlets.Int(INITIAL_HEIGHT).tag(sync=True)
    display_mode = traitlets.Unicode("inline").tag(sync=True)
    removed = traitlets.Bool(False).tag(sync=True)
    #: ui/notifications/sandbox-resource-ready, posted by the page when the proxy is ready.
    resource_message = traitlets.Dict().tag(sync=True)
    #: What the page needs to make the host's opening moves itself (AppHost.bootstrap): the
    #: ui/initialize answer, the tool's input and, once known, its result.
    bootstrap = traitlets.Dict().tag(sync=True)
    #: A teardown the kernel hands to the page ({"message": the ui/resource-teardown request,
    #: "wait": seconds}): the page sends it if the View said initialized, else removes the
    #: frame, and reports which (mcp_nb.apps.handoff).
    teardown = traitlets.Dict().tag(sync=True)
    #: The frame's own words (a note, a button), in the kit's language when it was made.
    labels = traitlets.Dict().tag(sync=True)
    #: hostContext.styles: spec variable → the page's theme variable it is read from.
    style_sources = traitlets.Dict(JUPYTERLAB_SOURCES).tag(sync=True)
    #: Called once when the widget is closed (its views go from every page with it).
    on_close: Any = None

    #: The page's speed levers that are on (mcp_nb.notebook.app_levers).
    levers = traitlets.Dict().tag(sync=True)
    #: The App channel, if this kernel has one ({"kernel", "frame", "secret"}; mcp_nb.notebook.
    #: app_channel): the page sends this frame's messages through it when it can.
    channel = traitlets.Dict().tag(sync=True)
    #: The kernel's end of that channel (None: widget messages only).
    channel_end: AppChannel | None = None

    def send(self, content: Any, buffers: Any = None) -> None:
        """To the page: through the App channel once the page speaks through it, else as a
        widget message."""
        if self.channel_end is not None and not buffers \
                and self.channel_end.send(self.channel["frame"], content):
            return
        super().send(content, buffers)

    def close(self) -> None:
        closing = self.comm is not None
        super().close()
        if self.channel_end is not None:
            self.channel_end.unregister(self.channel["frame"])
        if closing and self.on_close is not None:
            self.on_close()


def frame_labels() -> dict[str, str]:
    """What app_frame.js writes itself, translated here (the page has no catalog)."""
    return {"other_view": _("(this MCP App is shown in another view of this output)"),
            "back_inline": _("Back inline"),
            "fullscreen": _("fullscreen (asked by the App) · Esc or "),
            "torn_down": _("(App torn down)")}


class _Draft:
    """One part of an App's view (an HTML part, or the consent buttons' box) drawn before
    its widget is made: with the ``frame_first`` lever the frame's widget goes to the page
    first, and each part follows as one widget made with what was drawn on it."""

    def __init__(self) -> None:
        self.value = ""
        self.children: tuple[Any, ...] | list[Any] = ()


class AppView(AppHosting, _Described, w.VBox):
    """One App rendered in a cell, hosted by the kernel for the session it came from."""

    def __init__(self, hosted: Any, tool: Any, arguments: Mapping[str, Any], *,
                 call_id: int | None = None, result: CallToolResult | None = None,
                 deliver: bool = True) -> None:
        super().__init__(hosted, tool, arguments, call_id=call_id, result=result,
                         deliver=deliver)
        self._notes: list[str] = []
        #: frame_first: the parts are drafts until :meth:`_make_parts` (after the frame).
        self._drafted = lever("frame_first")
        part: Any = _Draft if self._drafted else w.HTML
        self.header = part()
        #: One line: did the App come up, or why not (and whether its session is gone).
        self.verdict_line = part()
        self.notes = part()
        self.diagram = part()
        self.result_html = part()
        #: Buttons for what only the person may give the App (drawn by _draw_consent).
        self.consent = _Draft() if self._drafted else w.HBox()
        self._fullscreen_asked = False
        self._draw_diagram()
        if result is not None:
            self._draw_result()

    def load(self) -> None:
        """Create the frame (the sandbox proxy with the CSP in place) and show it."""
        if self.host is None:
            return
        border = self.host.resource.prefers_border
        shared = {"layout": self.layout} if self._drafted else {}
        channel = kernel_channel(self.hosted.loop) if lever("channel") else None
        route = channel.register(self._on_channel_message) if channel is not None else {}
        settings, levers = self._frame_settings(), page_levers()
        if channel is not None and levers["prestart"]:
            # The page may start the View now, before this widget has made its way through
            # JupyterLab and anywidget (app_frame.js: startAhead).
            channel.ahead(route["frame"], {"kind": "ahead", "levers": levers,
                                           "height": INITIAL_HEIGHT, **{
                name: settings[name] for name in (
                    "proxy_doc", "sandbox", "allow", "reach", "resource_message")}})
        self._relay(AppFrame(
            **settings, title=f"MCP App {self.tool_name} ({self.uri})",
            labels=frame_labels(), border=True if border is None else border,
            levers=levers, channel=route, **shared))
        if self.frame is not None:
            self.frame.channel_end = channel
        self._make_parts()
        # The result folds away under the App (structuredContent is for the App to draw; a
        # text-only host would show this), beside the lifecycle diagram.
        self._draw_consent()
        self.children = [self.header, self.verdict_line, self.consent, self.frame, self.notes,
                         w.Accordion([self.result_html, self.diagram],
                                     titles=(_("tool result"), _("App lifecycle")), **shared)]

    def _on_channel_message(self, content: Mapping[str, Any]) -> None:
        """What the page sent through the App channel: as if it came as a widget message."""
        self._on_frame_message(self.frame, content, [])

    def _make_parts(self) -> None:
        """The parts' widgets, made from their drafts (``frame_first``): one model each, with
        its drawn value, and one layout (the view's own) and one style for all of them."""
        if not self._drafted:
            return
        self._drafted = False
        style = HTMLStyle()
        for name in ("header", "verdict_line", "notes", "result_html", "diagram"):
            setattr(self, name, w.HTML(getattr(self, name).value, layout=self.layout,
                                       style=style))
        self.consent = w.HBox(list(self.consent.children), layout=self.layout)

    # -- drawing -----------------------------------------------------------------------------

    def _draw_refused(self) -> None:
        self._make_parts()
        self._draw_header()
        self._draw_verdict()
        self.children = [self.header, self.verdict_line, self.result_html]

    def _draw_verdict(self) -> None:
        mark, text = self.verdict()
        sign = {"ok": "✓ ", "warning": "⚠ ", "failed": "✗ "}.get(mark, "")
        style = ' class="finding"' if mark in ("failed", "warning") else ""
        self.verdict_line.value = "" if not text else (
            render.STYLE + f'<div class="mcpnb mcpnb-app-verdict" data-verdict="{mark}">'
            f"<b{style}>{sign}{render.esc(text)}</b></div>")

    def _draw_result(self) -> None:
        assert self.result is not None
        self.result_html.value = render.content_blocks_html(
            self.result.content, self.result.isError, self.result.structuredContent)

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
        elif action.kind == "late":
            note = '<span class="finding">' + render.esc(_(
                "the host's page had already posted {method} when the kernel got to it (the "
                "App was {state} by then): the transcript records it as the page's").format(
                method=data.get("method") or "?", state=data.get("state"))) + "</span>"
        elif action.kind in ("ask-fullscreen", "csp-violation", "message-refused"):
            note = self._guard_note(action)
        else:
            note = '<span class="finding">' + render.esc(_("refused {method}: {reason}").format(
                method=data.get("method"), reason=data.get("reason"))) + "</span>"
        self._notes.append(note)
        self.notes.value = render.STYLE + '<div class="mcpnb">' + "".join(
            f"<div>{n}</div>" for n in self._notes[-20:]) + "</div>"

    # -- consent and the page's guard rails -------------------------------------------------

    def _draw_consent(self) -> None:
        """Buttons, outside the App's frame, for what only the person may give the App:
        its declared permissions (the frame gets no ``allow`` before) and fullscreen."""
        host = self.host
        buttons = []
        if host is not None and host.policy.allow and not host.permissions_agreed:
            allow = w.Button(description=_("Allow {features} for this App").format(
                features=", ".join(host.policy.permissions)), button_style="warning",
                tooltip=_("the App declared these permissions; it starts again with them"),
                layout=w.Layout(width="auto"))
            allow.on_click(lambda button: self._agree(self.grant_permissions))
            buttons.append(allow)
        if host is not None and self._fullscreen_asked and not host.fullscreen_agreed:
            full = w.Button(description=_("Show this App fullscreen"), button_style="warning",
                            tooltip=_("the App asked for fullscreen: it covers the notebook "
                                      "until Esc or Back inline"),
                            layout=w.Layout(width="auto"))
            full.on_click(lambda button: self._agree(self.grant_fullscreen))
            buttons.append(full)
        self.consent.children = buttons

    def _agree(self, grant: Any) -> None:
        grant()
        self._draw_consent()

    def _guard_note(self, action: Show) -> str:
        """What the host's guard rails say in the cell: a CSP violation with its directive,
        messages the page refused, fullscreen waiting for the person."""
        data = action.data
        if action.kind == "ask-fullscreen":
            self._fullscreen_asked = True
            self._draw_consent()
            return render.esc(_("the App asks for fullscreen: the button above the frame "
                                "shows it so"))
        if action.kind == "csp-violation":
            text = _("CSP blocked {blocked} ({directive})").format(
                blocked=data.get("blocked") or data.get("sample") or "?",
                directive=data.get("directive"))
            if data.get("note"):
                text += f": {data.get('note')}"
            # The verdict line says it too: failed if the App never came up, else a warning.
            self.csp_violation(str(data.get("directive") or "?"),
                               str(data.get("blocked") or data.get("sample") or "?"))
            return f'<span class="finding">{render.esc(text)}</span>'
        if data.get("reason") == "size":
            text = _("the page refused a {size:,}-byte App message ({method} #{id}): over its "
                     "{limit:,}-byte limit, never forwarded").format(
                size=int(data.get("size") or 0), method=data.get("method") or "?",
                id=data.get("id"), limit=int(data.get("limit") or 0))
        else:
            text = _("the page refused {dropped:,} App messages over its rate ({limit}); "
                     "{requests:,} requests among them were answered with an error").format(
                dropped=int(data.get("dropped") or 0), limit=data.get("limit"),
                requests=int(data.get("requests") or 0))
        return f'<span class="finding">{render.esc(text)}</span>'

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
