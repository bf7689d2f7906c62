"""The host's side of one MCP App in a cell: what it sends, receives, forwards and refuses.

:class:`mcp_nb.apps.AppHost` decides (sans I/O); :class:`AppHosting` carries its
decisions out in the kernel.  It reads the ``ui://`` resource and builds the
sandbox policy, hands the frame the proxy document with the CSP in place, feeds the
host what the browser says (``created``, the App's messages, theme switches, Esc,
a cleared output), applies the host's actions (post to the frame, forward to the
session, resize within :data:`MAX_HEIGHT`, remove the frame), keeps the waits the
spec asks for (``initialized``, the teardown answer) and writes every message both
ways into the session's transcript as the App lane (``app→host`` / ``host→app``).

The App's ``tools/call`` and ``resources/read`` go to the session the App came from,
on the session's loop, without blocking the kernel: the answer is posted back when
it arrives.

What the person sees (the frame widget, the header, the notes, the diagram) is
:class:`mcp_nb.notebook.apps.AppView`'s, which mixes this class in: kept apart so
the message handling can be read (and changed) without the drawing, and back.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from ..apps.styles import host_styles
from ..client.errors import ServerError
from ..i18n import _
from ..protocol.errors import McpError
from ..protocol.lifecycle import State, TransitionRecord
from ..protocol.models import CallToolResult
from .app_consent import AppConsent
from .app_download import DownloadPrompt
from .app_handoff import TEARDOWN_WAIT, AppHandoffs
from .app_origins import notebook_origins, remember_page_origin
from .app_verdict import AppVerdict

if TYPE_CHECKING:
    from .apps import AppFrame

#: The sandbox proxy's script, inlined into the proxy document the host builds.
PROXY_SCRIPT = (Path(__file__).parent / "static" / "sandbox_proxy.js").read_text(
    encoding="utf-8")
#: Seconds after the frame appears before the cell says the View has not initialized.
INITIALIZED_WAIT = 5.0
#: The most the frame may grow to when the View reports its size (pixels).
MAX_HEIGHT = 600
#: Where a View that never says initialized stays.


def declares_apps(session: Any) -> bool:
    """True when the session told the server it renders MCP Apps."""
    extensions = session.client_capabilities.get("extensions") or {}
    return meta.EXTENSION in extensions


def cached_note(read_at: float) -> str:
    """The App header's line for a resource served from the session's copy."""
    return _("resource: this session's copy of resources/read at {time} s (MCP Apps: the host "
             "MAY cache; resources/list_changed or resources/updated drop it)").format(
        time=f"{read_at:.3f}")


def _tool_dict(tool: Any) -> dict[str, Any]:
    return tool.model_dump(exclude_none=True) if hasattr(tool, "model_dump") else dict(tool)


class AppHosting(AppConsent, AppVerdict, AppHandoffs):
    """Mixin: the kernel hosting one App for the session it came from (no drawing here).

    The class that mixes it in draws: it provides :meth:`_show`, :meth:`_draw_header`,
    :meth:`_draw_diagram`, :meth:`_draw_result` and :meth:`_draw_refused`, and makes the
    frame (from :meth:`_frame_settings`, then :meth:`_relay`).
    """

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
        #: The session's copy the resource came from (None: read for this render).
        self.cached_copy: Any = None
        #: ui/download-file requests shown in the cell, in order.
        self.download_prompts: list[DownloadPrompt] = []
        self._lock = threading.RLock()
        self.frame: AppFrame | None = None
        self._unsubscribe: Any = None
        self.lifecycle.observers.add(self._on_transition)
        #: What went wrong, for the cell's verdict line (no initialized in time, a CSP
        #: violation the page reported, …), in order.
        self.failures: list[str] = []
        #: Said when the View had not said initialized in time (until it does).
        self.not_initialized: str | None = None
        #: Set once the MCP session closed: the View stays, disconnected.
        self.disconnected: str | None = None
        #: The pages that said ``created`` (their tokens; None for a page that gives none).
        self._pages: list[str | None] = []
        #: Session time of the frame's creation, and of the App lane's latest entry: a
        #: time the page gives is kept between them and now (the lane stays in order).
        self._shown_at = 0.0
        self._lane_time = 0.0
        #: Told of each App transition (the stepper's live outcomes; AppHandoffs).
        self._step_watchers: list[Any] = []

    # -- steps (each one cell in --step mode; all at once from %mcp call) ------------------

    def read_resource(self, *, cached: bool = True) -> None:
        """``resources/read`` of the ``ui://`` resource, checked; the CSP built from it.

        With ``cached``, the session's copy of an earlier read is used when there is one
        (:mod:`.app_cache`); the step-by-step walk reads every time (``cached=False``).
        """
        try:
            contents = self._resource_contents(cached)
            resource = meta.ui_resource(self.uri, {"contents": contents})
        except meta.AppResourceError as exc:
            self._refuse(str(exc))
            return
        except ServerError as exc:
            self._refuse(_("{uri}: resources/read failed: {code} {message} (MCP Apps "
                           "2026-01-26: Resource MUST exist on the server)").format(
                uri=self.uri, code=exc.code, message=exc.message))
            return
        policy = sandbox_policy(resource.csp, resource.permissions,
                                host_origins=notebook_origins())
        self.policy_lines = describe_policy(policy)
        if self.cached_copy is not None:
            self.policy_lines.insert(0, cached_note(self.cached_copy.read_at))
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

    def _resource_contents(self, cached: bool) -> list[dict[str, Any]]:
        """The resource's contents, from the session's copy or read now (and kept)."""
        cache = getattr(self.hosted, "app_resources", None)
        if cache is None:
            return list(self.hosted.run(self.hosted.session.read_resource(self.uri)))
        contents, copy = cache.read(self.hosted.run, self.uri, fresh=not cached)
        self.cached_copy = copy
        return list(contents)

    def _frame_settings(self) -> dict[str, Any]:
        """What the frame is made with that the host decides: the sandbox proxy document
        with the CSP in place, the iframe's ``sandbox`` and ``allow``, the resource."""
        host = self._host()
        return {"proxy_doc": proxy_document(host.policy, PROXY_SCRIPT),
                "sandbox": host.policy.sandbox,
                # Nothing the person has not agreed to (grant_permissions).
                "allow": host.policy.allow if host.permissions_agreed else "",
                "reach": sorted({o for values in host.policy.approved.values() for o in values}),
                "resource_message": host.resource_message(),
                "bootstrap": host.bootstrap()}

    def _relay(self, frame: AppFrame) -> None:
        """From now on the page posts the resource, and what the frame says comes here."""
        self.frame = frame
        frame.on_close = lambda: self._frame_gone("the App's widget was closed")
        self._host().page_posts_resource = True
        self._shown_at = self._lane_time = self.hosted.session.lifecycle.elapsed()
        frame.on_msg(self._on_frame_message)

    def set_result(self, result: CallToolResult) -> None:
        """The call that renders the App completed (step mode, or a background call)."""
        self.result = result
        self._draw_result()
        if self.host is not None:
            with self._lock:
                self._apply(self.host.set_result(result.model_dump(exclude_none=True)))
                self._update_bootstrap()

    def cancelled(self, reason: str) -> None:
        if self.host is not None:
            with self._lock:
                self._apply(self.host.set_cancelled(reason))
                self._update_bootstrap()

    # -- what the App and the browser say ---------------------------------------------------

    def _on_frame_message(self, widget: Any, content: Any, buffers: Any) -> None:
        if not isinstance(content, Mapping) or self.host is None:
            return
        kind = content.get("kind")
        with self._lock:
            if kind == "created":
                if not self._page_created(content):
                    return
                context = self.host.context
                context.theme = "dark" if content.get("theme") == "dark" else "light"
                width = content.get("width")
                context.width = int(width) if isinstance(width, int | float) and width else None
                context.locale = str(content.get("locale") or "") or None
                context.time_zone = str(content.get("timeZone") or "") or None
                remember_page_origin(content.get("origin"))
                context.styles = host_styles(content.get("styles"))
                if self.lifecycle.can_fire(AppEvent.FRAME_CREATED):
                    self._apply(self.host.frame_created())
                    self.initialized_wait = INITIALIZED_WAIT  # read now: tests shorten it
                    timer = threading.Timer(INITIALIZED_WAIT, self._still_waiting)
                    timer.daemon = True
                    timer.start()
            elif kind == "frame" and ("posted" in content or "at" in content):
                self._apply(self.host.receive_from_page(
                    content.get("message"), _posted_list(content.get("posted")),
                    _page_time(content.get("at"))))
            elif kind == "frame":
                self._apply(self.host.receive(content.get("message")))
            elif kind == "posted":
                self._apply(self.host.page_posted(content.get("message"),
                                                  _page_time(content.get("at"))))
            elif kind == "theme":
                self._apply(self.host.context_changed(
                    theme="dark" if content.get("theme") == "dark" else "light",
                    styles=host_styles(content.get("styles"))))
            elif kind == "escape" and self.frame is not None:
                self.host.context.display_mode = "inline"
                self.frame.display_mode = "inline"
                self._apply(self.host.context_changed())
            elif kind == "page-origin-refused":
                # The page found its own origin among those the CSP lets the App reach (a
                # notebook behind a proxy the kernel could not know of): it never loaded it.
                remember_page_origin(content.get("origin"))
                self._refuse(_("the App's CSP lets it reach this notebook's own origin {origin}"
                               " (its REST API and kernels): not loaded").format(
                    origin=content.get("origin")))
                self._apply([RemoveFrame(self.problem or "")])  # the empty frame goes too
            elif kind == "teardown":
                self._page_tore_down(content.get("outcome"), _page_time(content.get("at")))
            elif kind == "view-removed":
                # The output was cleared or the cell re-run: the frame is already gone.
                self._frame_gone("the output was cleared or the cell re-run")

    def _apply(self, actions: list[Action]) -> None:
        for action in actions:
            if isinstance(action, ToFrame) and action.posted:
                continue  # the host's page posted it already; recorded, not sent twice
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
            elif isinstance(action, Show) and action.kind == "download":
                self._offer_download(action.data)
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

    def _restart(self, why: str | None = None, *, permissions: bool = False) -> None:
        old = self._host()
        self._show(Show("waiting", {"text": why or _(
            "a new page shows this App (the previous View, {state}, went with its page): "
            "it starts again with a new lifecycle").format(state=old.state)}))
        self.lifecycle = AppLifecycle()
        self.lifecycle.observers.add(self._on_transition)
        self.host = AppHost(old.tool, old.resource, old.policy, arguments=old.arguments,
                            call_id=old.call_id, find_tool=self._find_tool,
                            host_info=old.host_info, deliver=True, lifecycle=self.lifecycle)
        self.host.exchanges.add(self._record)
        self.host.permissions_agreed = old.permissions_agreed or permissions
        self.host.fullscreen_agreed = old.fullscreen_agreed
        # After a consent the page reloads the proxy and leaves the resource to the kernel.
        self.host.page_posts_resource = old.page_posts_resource and not permissions
        if self.result is not None:
            self.host.set_result(self.result.model_dump(exclude_none=True))
        elif old.cancelled is not None:
            self.host.set_cancelled(old.cancelled)
        if self.frame is not None:
            self.frame.removed = False
            self.frame.display_mode = "inline"
        self._draw_diagram()

    def _give_up(self, why: str) -> None:
        if self.host is not None:
            with self._lock:
                self._apply(self.host.give_up_teardown(why))

    def _on_session_transition(self, record: TransitionRecord) -> None:
        if record.target in (State.SHUTTING_DOWN, State.TERMINATED) and self.host is not None \
                and self.disconnected is None \
                and self.lifecycle.state not in (AppState.TEARING_DOWN, AppState.TORN_DOWN):
            self._disconnect()

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
        elif exchange.held:
            kind = "held"  # not sent yet: the page posts it (its delivery is another entry)
        size = len(json.dumps(message, default=repr).encode())
        note = f"App {self.tool_name}" + (f": {exchange.note}" if exchange.note else "")
        entry = {"size": size, "method": method, "id": request_id, "note": note,
                 "message": dict(message) if isinstance(message, Mapping) else None,
                 "text": None if isinstance(message, Mapping) else repr(message)}
        elapsed = session.lifecycle.elapsed()
        state = session.state.value
        if exchange.at is not None:
            # The page's time, in its place: after the frame appeared, never after now;
            # and the session's state at that time, not at the (maybe much later) now.
            elapsed = min(elapsed, max(self._shown_at,
                                       elapsed - (time.time() - exchange.at)))
            state = _state_at(session.lifecycle.history, elapsed) or state
        elapsed = self._lane_time = max(elapsed, self._lane_time)
        self.hosted.loop.call_soon(lambda: session.transcript.add(
            elapsed, exchange.direction, kind, state, **entry))

    def _host(self) -> AppHost:
        if self.host is None:
            raise McpError(self.problem or _("the App's resource has not been read yet"))
        return self.host

    def _refuse(self, problem: str) -> None:
        self.problem = problem
        self.lifecycle.fire(AppEvent.RESOURCE_REFUSED, problem)
        self._draw_refused()

    def _on_transition(self, record: AppTransitionRecord) -> None:
        self._draw_diagram()
        self._tell_watchers(record)
        if record.target is AppState.TORN_DOWN:
            for prompt in self.download_prompts:
                prompt.withdraw()
        self._draw_verdict()
        if record.target is AppState.TORN_DOWN and self._unsubscribe is not None:
            self._unsubscribe()  # a torn-down App no longer follows its session
            self._unsubscribe = None

    # -- the page brings the View up; the session may go first (Run All) -------------------

    def _page_created(self, content: Mapping[str, Any]) -> bool:
        """``created``: a page shows this output.  False when there is nothing to do.

        A second page that builds the frame (reloaded, or reopened while the kernel lives)
        shows a new View: a new lifecycle.  The first page's ``created`` may reach the
        kernel late, after it went on without it (Run All queues the page's messages
        behind the cells): then it is the same View, said late, never a new one.
        """
        token = content.get("page") if isinstance(content.get("page"), str) else None
        if token is not None and token in self._pages:
            return False
        first = not self._pages
        self._pages.append(token)
        built = content.get("frame") is not False
        if not first and built and not self.lifecycle.can_fire(AppEvent.FRAME_CREATED):
            self._restart()
        elif first and self.lifecycle.state is AppState.TORN_DOWN:
            self._show(Show("waiting", {"text": _(
                "this page showed the App before the kernel, busy with later cells, got to "
                "its messages; the App was already torn down by then: {why}").format(
                why=self.lifecycle.history[-1].cause)}))
        assert self.host is not None
        boot = self.frame.bootstrap if self.frame is not None else {}
        self.host.page_delivers = bool(content.get("bootstrap")) and bool(boot.get("deliver"))
        # A page that makes the opening moves also posts the steps the kernel held for it.
        self.host.page_releases = bool(content.get("bootstrap"))
        return True

    def _update_bootstrap(self) -> None:
        """The call's outcome is known now: the page may post it (once the View is up)."""
        if self.frame is not None and self.host is not None:
            self.frame.bootstrap = self.host.bootstrap()

    def _disconnect(self) -> None:
        """The MCP session closed.  The View stays on screen, disconnected: the spec asks
        for ``ui/resource-teardown`` before tearing a View down, and nothing here tears it
        down; what it asks of the server from now on is refused.  Clearing the output (or
        re-running the cell) removes it."""
        assert self.host is not None
        self.disconnected = _("the MCP session {name} ended").format(name=repr(self.hosted.name))
        with self._lock:
            self._apply(self.host.disconnect(f"the MCP session {self.hosted.name!r} ended"))
        self._draw_verdict()

    # -- what the drawing class provides ---------------------------------------------------

    def _show(self, action: Show) -> None:  # pragma: no cover - the drawing class overrides
        """Show the person what the App asked for (or what the host has to say)."""
        raise NotImplementedError

    def _draw_header(self) -> None:  # pragma: no cover - the drawing class overrides
        raise NotImplementedError

    def _draw_diagram(self) -> None:  # pragma: no cover - the drawing class overrides
        raise NotImplementedError

    def _draw_result(self) -> None:  # pragma: no cover - the drawing class overrides
        raise NotImplementedError

    def _draw_refused(self) -> None:  # pragma: no cover - the drawing class overrides
        raise NotImplementedError

    def _draw_verdict(self) -> None:  # pragma: no cover - the drawing class overrides
        raise NotImplementedError


def _page_time(at: Any) -> float | None:
    """A time the page gave (milliseconds since the epoch, its clock) in seconds."""
    return at / 1000 if isinstance(at, int | float) and not isinstance(at, bool) else None


def _state_at(history: list[TransitionRecord], elapsed: float) -> str | None:
    """The session's state ``elapsed`` seconds in, from its transition history."""
    state = None
    for record in history:
        if record.time > elapsed:
            break
        state = record.target.value
    return state


def _posted_list(posted: Any) -> list[Any]:
    return list(posted) if isinstance(posted, list) else []
