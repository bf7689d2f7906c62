"""Views of one request or one task while it runs: progress against its timeout and Cancel,
then its outcome in words; a tool's result; a task's status diagram with Refresh and
Cancel."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import anyio
import ipywidgets as w

from ..client.errors import RequestCancelled, RequestTimeout
from ..client.tasks import Task
from ..i18n import _
from ..protocol.models import CallToolResult
from ..protocol.tasks import TaskSnapshot
from . import diagrams, render
from .described import _Described

T = TypeVar("T")


def duration(seconds: float) -> str:
    """``3.2 ms`` or ``1.5 s``: always one decimal, which the notebooks' sanitizer masks."""
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.1f} s"


class RequestProgress(_Described, w.HBox):
    """One request: what it is, its progress against its timeout, Cancel; then its outcome.

    The outcome is said in words (``done in 3.1 ms``, ``cancelled at step 10 of 60``,
    ``timed out after 30.0 s``, ``failed: …``) in the widget and in its text repr.
    What :meth:`show` saves in the notebook beside the live view names the request
    and claims no state ("Request tools/call add #3"), so a saved notebook never
    keeps a stale "waiting" next to a finished result: the result or the error
    that follows it says how it went.  A ``--background`` call, whose end comes
    after its cell, also rewrites that saved output when it ends (``follow``).
    """

    def __init__(self, method: str, timeout: float | None) -> None:
        super().__init__()
        self.method = method
        self.timeout = timeout
        self.request_id: int | None = None
        self.outcome = "waiting"
        #: The last progress notification: (progress, total or None).
        self.step: tuple[float, float | None] | None = None
        #: Why the timeout is held (a person is answering the server), or None.
        self.held: str | None = None
        #: Called with the request id when Cancel is clicked (set by whoever runs the call).
        self.on_cancel: Callable[[int], Any] | None = None
        self._started = time.monotonic()
        self._display: Any = None
        self.title = w.Label(value=method)
        self.bar = w.FloatProgress(value=0.0, min=0.0, max=1.0)
        self.status = w.Label()
        self.cancel_button = w.Button(description=_("Cancel"), button_style="warning")
        self.cancel_button.on_click(lambda button: self.cancel())
        self.children = [self.title, self.bar, self.status, self.cancel_button]
        self._tick()

    def show(self, *, follow: bool = False) -> None:
        """Display it; with ``follow`` the saved output is rewritten when the request ends."""
        from IPython.display import display

        bundle = self._repr_mimebundle_()
        label = render.plain(self.describe() if self.outcome != "waiting" else self._name())
        bundle["text/plain"] = label
        bundle["text/html"] = render.STYLE + f'<div class="mcpnb">{render.esc(label)}</div>'
        handle = display(bundle, raw=True, display_id=follow or None)
        self._display = handle if follow else None

    def sent(self, request_id: int) -> None:
        """The request is on the wire with this id."""
        self.request_id = request_id
        self._tick()

    def cancel(self) -> None:
        """What the Cancel button does: cancel the request on the wire."""
        if self.on_cancel is not None and self.request_id is not None and (
                self.outcome == "waiting"):
            self.on_cancel(self.request_id)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self._started

    def _step_text(self) -> str:
        if self.step is None:
            return ""
        done, total = self.step
        return (_("step {done} of {total}").format(done=f"{done:g}", total=f"{total:g}")
                if total else _("step {done}").format(done=f"{done:g}"))

    def _tick(self) -> None:
        parts = [self._step_text()]
        if self.held:
            parts.append(_("timeout held: {reason}").format(reason=self.held))
        else:
            limit = f" / {duration(self.timeout)}" if self.timeout else ""
            parts.append(f"{duration(self.elapsed)}{limit}")
        self.status.value = " · ".join(part for part in parts if part)

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.step = (float(progress), float(total) if total else None)
        if total:
            self.bar.max = float(total)
            self.bar.value = min(float(progress), float(total))
        else:  # unknown total: show movement without pretending to know the end
            self.bar.max = float(progress) + 1.0
            self.bar.value = float(progress)
        if message:
            self.bar.tooltip = message
        self._tick()

    def hold(self, reason: str | None) -> None:
        """Show that the timeout is held (``reason``), or running again (None)."""
        self.held = reason
        self._tick()

    async def follow(self, request: Awaitable[T], live: set[RequestProgress]) -> T:
        """Await ``request``, then say how it ended; in ``live`` while it runs.

        ``live`` is the session's set of calls in flight (whose widgets are told
        when their timeouts are held for a person).
        """
        live.add(self)
        try:
            result = await request
        except RequestTimeout as exc:
            self.timed_out(exc.timeout)
            raise
        except (RequestCancelled, anyio.get_cancelled_exc_class()):
            self.cancelled()
            raise
        except BaseException as exc:
            self.failed(exc)
            raise
        finally:
            live.discard(self)
        if isinstance(result, CallToolResult) and result.isError:
            self.tool_error()  # answered, but the tool says it failed: not a green bar
        else:
            self.done()
        return result

    # -- how it ended --

    def done(self) -> None:
        self.bar.value = self.bar.max
        self._finish(_("done in {time}").format(time=duration(self.elapsed)), "success")

    def tool_error(self) -> None:
        self.bar.value = self.bar.max
        self._finish(_("tool error (isError) after {time}").format(time=duration(self.elapsed)),
                     "danger")

    def cancelled(self) -> None:
        self._finish((_("cancelled at {step}").format(step=self._step_text()) if self.step else
                      _("cancelled after {time}").format(time=duration(self.elapsed))), "warning")

    def timed_out(self, after: float) -> None:
        self._finish(_("timed out after {time}").format(time=duration(after)), "danger")

    def failed(self, error: BaseException) -> None:
        self._finish(_("failed: {error}").format(error=f"{type(error).__name__}: {error}"),
                     "danger")

    def _finish(self, outcome: str, style: str) -> None:
        self.outcome = outcome
        self.cancel_button.disabled = True
        self.cancel_button.button_style = ""  # grey: nothing left to cancel
        self.bar.bar_style = style
        self.status.value = outcome
        if self._display is not None:
            self._display.update(self)  # the saved output follows (see show)

    def _name(self) -> str:
        ident = f" #{self.request_id}" if self.request_id is not None else ""
        return _("Request {method}{id}").format(method=self.method, id=ident)

    def describe(self) -> str:
        return f"{self._name()}: {self.outcome}"


class TaskView(_Described, w.VBox):
    """One task (SEP-2663): its status diagram drawn from the task's table, Refresh and Cancel.

    The diagram moves with every snapshot the client takes (``tasks/get`` polls,
    status notifications).  Cancel sends ``tasks/cancel`` and then ``tasks/get``,
    so the view shows what the server decided.  ``submit`` schedules a coroutine
    on the session's loop (a notebook's is ``HostedSession.loop.submit``).
    """

    def __init__(self, task: Task,
                 submit: Callable[[Coroutine[Any, Any, Any]], Any]) -> None:
        super().__init__()
        self.task = task
        self._submit = submit
        self.diagram = w.HTML()
        self.status = w.Label()
        self.refresh_button = w.Button(description=_("Refresh"))
        self.cancel_button = w.Button(description=_("Cancel"), button_style="warning")
        self.refresh_button.on_click(lambda button: self.refresh())
        self.cancel_button.on_click(lambda button: self.cancel())
        self.children = [self.diagram, self.status,
                         w.HBox([self.refresh_button, self.cancel_button])]
        self._redraw(task.snapshot)
        task.on_status(self._redraw)

    def refresh(self) -> None:
        """What Refresh does: ``tasks/get``."""
        self._submit(self.task.refresh())

    def cancel(self) -> None:
        """What Cancel does: ``tasks/cancel``, then ``tasks/get`` to see the server's decision."""
        if not self.task.done:
            self._submit(self._cancel_and_look())

    async def _cancel_and_look(self) -> None:
        await self.task.cancel()
        if not self.task.done:  # a poll or a notification may have said it meanwhile
            await self.task.refresh()

    def _redraw(self, snapshot: TaskSnapshot) -> None:
        self._svg = diagrams.task_diagram_svg(snapshot.status, self.task.tracker.path)
        self.diagram.value = self._svg
        message = f": {snapshot.status_message}" if snapshot.status_message else ""
        self.status.value = _("{method} task {id}{message}").format(
            method=self.task.method, id=self.task.task_id, message=message)
        if snapshot.status.terminal:
            for button in (self.refresh_button, self.cancel_button):
                button.disabled = True
            self.cancel_button.button_style = ""  # grey: nothing left to cancel

    def describe(self) -> str:
        path = " → ".join(status.value for status in self.task.tracker.path)
        return _("Task {id}: {status} (path: {path})").format(
            id=self.task.task_id, status=self.task.status.value, path=path)

    def static_html(self) -> str:
        return render.svg_image_html(self._svg, self.describe())


class ToolResultView(_Described, w.HTML):
    """A tool result: text, images, embedded resources, and isError made obvious."""

    def __init__(self, result: CallToolResult) -> None:
        super().__init__()
        self.result = result
        self.value = render.content_blocks_html(result.content, result.isError,
                                                result.structuredContent)

    def describe(self) -> str:
        status = _("error") if self.result.isError else _("ok")
        text = render.content_summary(self.result.content)
        preview = text if len(text) <= 60 else text[:59] + "…"
        structured = self.result.structuredContent
        if structured is not None:
            keys = ", ".join(list(structured)[:4]) + (", …" if len(structured) > 4 else "")
            preview += f" + structuredContent {{{keys}}}"
        return f"ToolResult ({status}): {preview}"

    def static_html(self) -> str:
        return self.value
