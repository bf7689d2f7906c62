"""``%mcp explore``: one widget to explore a server — tools, resources, prompts, notifications.

Tabs: **Tools** (pick one → its form → the result), **Resources** (pick one → its
contents by MIME type; templates listed), **Prompts** (pick one → an argument form →
the messages), **Notifications** (log messages by level, ``logging/setLevel``, list
changes that refresh the lists live, resource updates), **stderr** (a stdio server's
own), and **History** (every call made here as a ``%mcp call`` line, to copy or run
again).

Clicks arrive on the kernel's thread and only *start* work on the session's loop
(``loop.submit``), so the kernel stays free; results come back on the loop's thread
and are drawn there.  Every string a server sent is drawn by
:mod:`mcp_nb.notebook.render`; lists show at most :data:`SHOWN` entries matching a
filter, so a server with thousands of tools does not freeze the page.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as w

from ..i18n import N_, _
from ..protocol.envelope import Notification
from ..protocol.models import LOG_LEVELS, Prompt, Resource, Tool
from . import render
from .app_host import declares_apps
from .apps import AppsPanel, app_note
from .described import _Described
from .forms import SchemaForm, ToolForm
from .request_views import RequestProgress

if TYPE_CHECKING:
    from .hosted import HostedSession

#: Entries a list shows at once; a filter box narrows the rest down.
SHOWN = 100
_FULL = w.Layout(width="95%")


class Catalogue(w.VBox):
    """A filterable pick list: at most :data:`SHOWN` entries in the page, however many exist."""

    def __init__(self, what: str, on_pick: Callable[[str], Any]) -> None:
        super().__init__()
        self.what = what
        self.entries: list[tuple[str, str]] = []  # (key, label)
        self.filter = w.Text(placeholder=_("filter by name or description"), layout=_FULL)
        self.picker = w.Select(options=[], rows=8, layout=_FULL)
        self.count = w.Label()
        self.filter.observe(lambda change: self._refill(), names="value")
        self.picker.observe(self._picked, names="value")
        self._on_pick = on_pick
        self.children = [self.filter, self.picker, self.count]

    def set_entries(self, entries: list[tuple[str, str]]) -> None:
        self.entries = entries
        self._refill()

    def _refill(self) -> None:
        needle = self.filter.value.strip().lower()
        matching = [(label, key) for key, label in self.entries
                    if not needle or needle in label.lower()]
        self.picker.options = matching[:SHOWN]
        more = (_("; type to narrow {count} more").format(count=f"{len(matching) - SHOWN:,}")
                if len(matching) > SHOWN else "")
        self.count.value = _("{shown} of {total} {what} shown").format(
            shown=f"{min(len(matching), SHOWN):,}", total=f"{len(self.entries):,}",
            what=_(self.what)) + more

    def _picked(self, change: Any) -> None:
        if change["new"] is not None:
            self._on_pick(change["new"])


class Explorer(_Described, w.VBox):
    """Everything a server offers, in tabs; see the module docstring."""

    def __init__(self, hosted: HostedSession) -> None:
        super().__init__()
        self.hosted = hosted
        self.tools: dict[str, Tool] = {}
        self.resources: dict[str, Resource] = {}
        self.prompts: dict[str, Prompt] = {}
        self.history: list[str] = []
        self.log_lines: list[tuple[float, str, str, Any]] = []
        self.events: list[str] = []
        self._started = time.monotonic()

        self.tool_list = Catalogue(N_("tools"), self._show_tool)
        self.tool_box = w.VBox()
        self.progress = w.VBox()
        self.resource_list = Catalogue(N_("resources"), self._read)
        self.templates = w.HTML()
        self.contents = w.HTML()
        self.prompt_list = Catalogue(N_("prompts"), self._show_prompt)
        self.prompt_box = w.VBox()
        self.level = w.Dropdown(options=list(render.LEVEL_ORDER), value="debug",
                                description=_("show from"))
        self.set_level = w.Dropdown(options=list(LOG_LEVELS), value="info",
                                    description=_("server level"))
        self.set_level_button = w.Button(description="logging/setLevel")
        self.log_view = w.HTML()
        self.event_view = w.HTML()
        self.stderr_view = w.HTML()
        self.stderr_button = w.Button(description=_("Refresh"))
        self.history_view = w.Textarea(layout=w.Layout(width="95%", height="120px"))
        self.again = w.Dropdown(options=[], description="call", layout=_FULL)
        self.again_button = w.Button(description=_("Run again"))
        self.status = w.Label()
        #: The Apps tab (MCP Apps), when the session declared the extension.
        self.apps = AppsPanel(hosted) if declares_apps(hosted.session) else None

        self.level.observe(lambda change: self._draw_log(), names="value")
        self.set_level_button.on_click(lambda button: self._set_level())
        self.stderr_button.on_click(lambda button: self._draw_stderr())
        self.again_button.on_click(lambda button: self.run_again())
        self.tabs = w.Tab()
        self.tabs.children = [
            w.VBox([self.tool_list, self.tool_box]),
            w.VBox([self.resource_list, self.contents, self.templates]),
            w.VBox([self.prompt_list, self.prompt_box]),
            w.VBox([w.HBox([self.level, self.set_level, self.set_level_button]),
                    self.log_view, self.event_view]),
            w.VBox([self.stderr_button, self.stderr_view]),
            w.VBox([self.history_view, w.HBox([self.again, self.again_button])]),
        ]

        for index, title in enumerate((_("Tools"), _("Resources"), _("Prompts"),
                                       _("Notifications"), "stderr", _("History"))):
            self.tabs.set_title(index, title)
        if self.apps is not None:
            self.tabs.children = [*self.tabs.children, self.apps]
            self.tabs.set_title(len(self.tabs.children) - 1, _("Apps"))
        self.children = [self.tabs, self.status]
        hosted.session.on_notification(self._on_notification)
        self._draw_log()
        self._draw_stderr()
        #: The first round of lists (``%mcp explore`` waits for it, so what it shows is whole).
        self.loading = self.refresh()

    # -- lists --

    def refresh(self) -> list[Any]:
        """Ask the server for every list it offers; the futures end once each is drawn."""
        offered = self.hosted.session.capabilities.server
        session = self.hosted.session
        futures = []
        if "tools" in offered:
            futures.append(self._submit(session.list_tools(), self._got_tools))
        if "resources" in offered:
            futures.append(self._submit(session.list_resources(), self._got_resources))
            futures.append(self._submit(session.list_resource_templates(),
                                        self._got_templates))
        if "prompts" in offered:
            futures.append(self._submit(session.list_prompts(), self._got_prompts))
        return futures

    def _submit(self, coroutine: Any, then: Callable[[Any], None],
                failed: Callable[[str], None] | None = None) -> Any:
        """Run ``coroutine`` on the loop and draw its answer with ``then``, there too.

        A failure is said by ``failed`` beside what asked for it (a tab's own status),
        else on the explorer's status line, which a later success clears.
        """

        async def run_and_draw() -> None:
            try:
                value = await coroutine
            except Exception as exc:  # shown in the explorer, not raised into the void
                (failed or self._say_failed)(_("failed: {error}").format(
                    error=f"{type(exc).__name__}: {exc}"))
                return
            if failed is None:
                self.status.value = ""
            then(value)

        return self.hosted.loop.submit(run_and_draw())

    def _say_failed(self, text: str) -> None:
        self.status.value = text

    def _got_tools(self, tools: list[Tool]) -> None:
        self.tools = {tool.name: tool for tool in tools}
        self.hosted.remember_tools(tools)
        self.tool_list.set_entries([(t.name, _label(t.name, app_note(t)
                                                    + (t.title or t.description or "")))
                                    for t in tools])
        if self.apps is not None:
            self.apps.set_tools(tools)

    def _got_resources(self, resources: list[Resource]) -> None:
        self.resources = {r.uri: r for r in resources}
        self.resource_list.set_entries([(r.uri, _label(r.uri, r.name)) for r in resources])

    def _got_templates(self, templates: list[Any]) -> None:
        rows = [(t.uriTemplate, t.name, t.mimeType or "") for t in templates]
        self.templates.value = (render.table_html((_("resource template"), _("name"),
                                                   _("MIME type")),
                                                  rows) if rows else "")

    def _got_prompts(self, prompts: list[Prompt]) -> None:
        self.prompts = {p.name: p for p in prompts}
        self.prompt_list.set_entries([(p.name, _label(p.name, p.title or p.description))
                                      for p in prompts])

    # -- tools --

    def _show_tool(self, name: str) -> None:
        tool = self.tools[name]
        self.progress = w.VBox()
        self.tool_box.children = [ToolForm(tool, lambda arguments: self.call(name, arguments)),
                                  self.progress]

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Start a tool call (as the form's Call button does); it goes into the history.

        Its progress widget (with a working Cancel: the kernel stays free) shows
        under the form.
        """
        line = f"%mcp call {name} {json.dumps(arguments, ensure_ascii=False)}"
        self.history.append(line)
        self.history_view.value = "\n".join(self.history)
        self.again.options = list(reversed(self.history))
        hosted = self.hosted
        progress = RequestProgress(f"tools/call {name}", hosted.session.default_timeout)
        progress.on_cancel = lambda request_id: hosted.loop.submit(
            hosted.session.cancel(request_id, "Cancel button"))
        self.progress.children = [progress]
        request = hosted.session.call_tool(name, arguments, on_progress=progress.progress,
                                           on_sent=progress.sent)
        return hosted.loop.submit(progress.follow(request, hosted.progress_widgets))

    def run_again(self) -> Any:
        """Run the call picked in the History tab again; its result shows in the Tools tab."""
        line = self.again.value
        if not line:
            return None
        _magic, _call, name, text = line.split(" ", 3)
        self._show_tool(name)
        form = self.tool_box.children[0]
        future = self.call(name, json.loads(text))
        form.status.value = _("calling again…")
        future.add_done_callback(form._show)
        return future

    # -- resources --

    def _read(self, uri: str) -> None:
        self.contents.value = "<p>" + render.esc(_("reading {uri}…").format(uri=uri)) + "</p>"
        self._submit(self.hosted.session.read_resource(uri), self._got_contents,
                     lambda text: setattr(self.contents, "value", render.failure_html(
                         f"reading {uri} {text}")))

    def _got_contents(self, contents: list[dict[str, Any]]) -> None:
        self.contents.value = render.resource_contents_html(contents)

    # -- prompts --

    def _show_prompt(self, name: str) -> None:
        prompt = self.prompts[name]
        arguments = prompt.arguments or []
        form = SchemaForm({
            "type": "object",
            "properties": {a.name: {"type": "string", "description": a.description or ""}
                           for a in arguments},
            "required": [a.name for a in arguments if a.required],
        })
        get = w.Button(description=_("Get"), button_style="primary")
        status = w.Label()
        shown = w.HTML()

        def fetch(button: Any) -> None:
            try:
                values = form.checked_value()
            except ValueError as exc:
                status.value = _("not sent: {reason}").format(reason=exc)
                return
            status.value = _("getting…")
            shown.value = ""  # an earlier answer is not this one's

            def failed(text: str) -> None:
                status.value = text

            self._submit(self.hosted.session.get_prompt(name, values),
                         lambda result: (setattr(shown, "value",
                                                 render.prompt_messages_html(result)),
                                         setattr(status, "value", _("done"))),
                         failed)

        get.on_click(fetch)
        description = render.esc(prompt.description or "")
        self.prompt_box.children = [w.HTML(f"<b>{render.esc(prompt.title or name)}</b><br>"
                                           f"<small>{description}</small>"),
                                    form, w.HBox([get, status]), shown]

    # -- notifications --

    def _on_notification(self, notification: Notification) -> None:
        method, params = notification.method, notification.params or {}
        at = time.monotonic() - self._started
        if method == "notifications/message":
            self.log_lines.append((at, str(params.get("level", "info")),
                                   str(params.get("logger", "")), params.get("data")))
            self._draw_log()
            return
        if method.endswith("/list_changed"):
            self.events.append(f"{at:.3f}s {method}: " + _("list refreshed"))
            self.refresh()
        elif method == "notifications/resources/updated":
            self.events.append(f"{at:.3f}s {method}: {params.get('uri', '?')}")
        else:
            return
        self.event_view.value = render.table_html((_("event"),),
                                                  [(e,) for e in self.events[-50:]])

    def _draw_log(self) -> None:
        self.log_view.value = render.log_lines_html(self.log_lines[-200:], self.level.value)

    def _set_level(self) -> None:
        level = self.set_level.value
        self._submit(self.hosted.session.set_logging_level(level),
                     lambda _answer: setattr(self.status, "value", _(
                         "server log level: {level}").format(level=level)))

    def _draw_stderr(self) -> None:
        lines = list(self.hosted.session.transport.stderr_tail)[-100:]
        text = "\n".join(lines) if lines else _("(nothing on stderr, or not a stdio server)")
        self.stderr_view.value = f"{render.STYLE}<div class=\"mcpnb\"><pre>{render.esc(text)}" \
                                 "</pre></div>"

    def describe(self) -> str:
        return _("Explorer {name}: {tools} tools, {resources} resources, {prompts} "
                 "prompts").format(name=repr(self.hosted.name), tools=len(self.tools),
                                   resources=len(self.resources), prompts=len(self.prompts))


def _label(key: str, detail: str | None) -> str:
    detail = (detail or "").strip().splitlines()[0] if detail else ""
    return f"{key} — {detail[:60]}" if detail else key
