"""A ClientSession hosted on the background loop, with a blocking and an async facade.

The session lives in one long-lived task on the :class:`BackgroundLoop` (its task
group is entered and left by that task, which is what anyio requires).  Cells
talk to it through :class:`HostedSession`:

* blocking: ``hosted.call_tool("add", {"a": 1, "b": 2})`` — for magics and plain Python;
* async: ``await hosted.aio.call_tool(...)`` — for top-level ``await`` in a cell,
  which runs on the *kernel's* loop; the call is bridged to the session's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import Callable, Coroutine
from typing import Any

import anyio

from ..client.session import ClientSession
from ..protocol.envelope import Notification
from ..protocol.lifecycle import State
from ..protocol.models import Tool
from ..transports.base import Transport
from .app_cache import AppResourceCache
from .arguments_check import SchemaCheck
from .loop import BackgroundLoop
from .request_views import RequestRecord
from .widgets import SessionView

# ClientSession coroutine methods the facades expose.
FACADE_METHODS = (
    "initialize", "send_initialized", "connect", "request", "notify", "cancel", "shutdown",
    "ping", "list_tools", "call_tool", "list_resources", "list_resource_templates",
    "read_resource", "subscribe_resource", "unsubscribe_resource", "list_prompts",
    "get_prompt", "complete", "set_logging_level", "send_raw", "discover", "listen",
    "unlisten",
)


class HostedSession:
    """One named session on the background loop.

    Attribute access falls through to the :class:`ClientSession` for plain data
    (``state``, ``transcript``, ``findings`` …); coroutine methods listed in
    :data:`FACADE_METHODS` become blocking calls.
    """

    def __init__(self, name: str, session: ClientSession, loop: BackgroundLoop) -> None:
        self.name = name
        self.session = session
        self.loop = loop
        self._stop: anyio.Event | None = None
        self._host: Any = None
        self.aio = _AsyncFacade(self)
        #: The live window onto this session (``%mcp view``); displaying the session
        #: itself shows a snapshot of it (see :mod:`mcp_nb.notebook.widgets`).
        self.view = SessionView(session, name)
        self._tools: dict[str, Tool] | None = None
        #: Each tool's compiled inputSchema, with the Tool it was compiled from.
        self._checks: dict[str, tuple[Tool, SchemaCheck]] = {}
        session.on_notification(self._forget_tools)
        #: The ui:// resources its Apps were rendered from, until the server says they changed.
        self.app_resources = AppResourceCache(session)
        #: The App being stepped through (``%mcp app TOOL --step``; an ``AppStepper``), if any.
        self.app_stepper: Any = None
        #: Progress views of this session's calls in flight (told when their timeout is held).
        self.progress_widgets: set[RequestRecord] = set()

    def hold_for_person(self, reason: str) -> Callable[[], None]:
        """Hold the timeouts of the requests in flight while a person answers the server.

        Runs on the session's loop (the inbox's handlers do).  Returns the
        release; each held request then gets back the time it had left.
        """
        release_deadlines = self.session.hold_deadlines()
        for widget in list(self.progress_widgets):
            widget.hold(reason)

        def release() -> None:
            release_deadlines()
            for widget in list(self.progress_widgets):
                widget.hold(None)

        return release

    def tool(self, name: str) -> Tool | None:
        """The server's description of tool ``name`` (None if it has no such tool).

        The server's ``tools/list`` is asked once and remembered until the
        server says ``notifications/tools/list_changed``.
        """
        if self._tools is None:
            self._tools = {tool.name: tool for tool in self.loop.run(self.session.list_tools())}
        return self._tools.get(name)

    def arguments_check(self, name: str) -> SchemaCheck | None:
        """The check of tool ``name``'s inputSchema (None if the server has no such tool).

        Compiled once per tool description: a new ``tools/list`` answer gives new
        Tool objects, and so new checks.
        """
        tool = self.tool(name)
        if tool is None:
            return None
        cached = self._checks.get(name)
        if cached is None or cached[0] is not tool:
            cached = self._checks[name] = (tool, SchemaCheck(tool.inputSchema))
        return cached[1]

    def remember_tools(self, tools: list[Tool]) -> None:
        """A fresh ``tools/list`` answer, e.g. from ``%mcp tools``."""
        self._tools = {tool.name: tool for tool in tools}

    def _forget_tools(self, notification: Notification) -> None:
        if notification.method == "notifications/tools/list_changed":
            self._tools = None

    @classmethod
    def open(cls, name: str, transport: Transport, loop: BackgroundLoop,
             **session_options: Any) -> HostedSession:
        """Start the transport (spawn the server) and return without initializing."""
        hosted = cls(name, ClientSession(transport, **session_options), loop)
        opened = threading.Event()
        hosted._host = loop.submit(hosted._run_host(opened))
        # Wait until the session is open or the host failed (e.g. program not found).
        while not opened.wait(0.05):
            if hosted._host.done():
                hosted._host.result()  # raises the startup error
        return hosted

    async def _run_host(self, opened: threading.Event) -> None:
        self._stop = anyio.Event()
        try:
            async with self.session:
                opened.set()
                await self._stop.wait()
        finally:
            opened.set()

    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Run a coroutine on the session's loop and wait for it (interruptible)."""
        return self.loop.run(coro)

    def settle(self) -> None:
        """Let what is already queued on the session's loop happen, before a snapshot.

        Some entries reach the transcript through the loop's queue (an MCP App's
        postMessage lane is added with ``call_soon``): one pass of the loop puts
        them in, so a snapshot taken next shows them.
        """
        if self.loop.running and not self.loop.in_loop_thread():
            self.loop.run(asyncio.sleep(0))

    def close(self) -> None:
        """Shut the session down (as the spec says) and end its host task."""
        if self._host is None or self._host.done():
            return
        try:
            self.loop.run(self.session.shutdown())
        finally:
            if self._stop is not None:
                self.loop.call_soon(self._stop.set)
            # The host's own error, if any, was already reported to the user.
            with contextlib.suppress(Exception):
                self._host.result(timeout=10)

    @property
    def closed(self) -> bool:
        return self.session.state is State.TERMINATED

    def __getattr__(self, item: str) -> Any:
        target = getattr(self.session, item)
        if item in FACADE_METHODS:
            run = self.loop.run

            @functools.wraps(target)
            def blocking(*args: Any, **kwargs: Any) -> Any:
                return run(target(*args, **kwargs))
            # Kept on the instance: the next call finds it without coming back here.
            setattr(self, item, blocking)
            return blocking
        return target

    def __repr__(self) -> str:
        return repr(self.view)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        # A cell showing the session illustrates this step: a snapshot, with the live
        # "now: …" line under it; ``%mcp view`` (``self.view``) is the live window.
        return self.view.snapshot()._repr_mimebundle_(**kwargs)


class _AsyncFacade:
    """``await hosted.aio.method(...)`` from the kernel's own event loop."""

    def __init__(self, hosted: HostedSession) -> None:
        self._hosted = hosted

    def __getattr__(self, item: str) -> Callable[..., Any]:
        if item not in FACADE_METHODS:
            raise AttributeError(item)
        target = getattr(self._hosted.session, item)

        async def bridged(*args: Any, **kwargs: Any) -> Any:
            future = self._hosted.loop.submit(target(*args, **kwargs))
            try:
                return await asyncio.wrap_future(future)
            except asyncio.CancelledError:
                future.cancel()  # cancels the task on the session's loop too
                raise

        return bridged
