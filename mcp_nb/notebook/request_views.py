"""Views of one request or one task while it runs: progress against its timeout and Cancel,
then its outcome in words; a tool's result; a task's status diagram with Refresh and
Cancel."""

from __future__ import annotations

import asyncio
import contextvars
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


class RequestRecord:
    """One request's name, progress and outcome, in the words every view of it uses.

    Kept by the live widget (:class:`RequestProgress`) and by the quiet view of a
    blocking call (:class:`CallProgress`), so the two say the same thing.  The
    outcome is said in words (``done in 3.1 ms``, ``cancelled at step 10 of 60``,
    ``timed out after 30.0 s``, ``failed: …``) in the widget and in its text repr.
    What either view saves in the notebook (:meth:`label_bundle`) names the
    request and claims no state ("Request tools/call add #3"), so a saved
    notebook never keeps a stale "waiting" next to a finished result, and reads
    the same whichever view a call had: the result or the error that follows
    says how it went.
    """

    def _begin(self, method: str, timeout: float | None) -> None:
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

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self._started

    def sent(self, request_id: int) -> None:
        """The request is on the wire with this id."""
        self.request_id = request_id

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """A progress notification for this request."""
        self.step = (float(progress), float(total) if total else None)

    def hold(self, reason: str | None) -> None:
        """Show that the timeout is held (``reason``), or running again (None)."""
        self.held = reason

    def _step_text(self) -> str:
        if self.step is None:
            return ""
        done, total = self.step
        return (_("step {done} of {total}").format(done=f"{done:g}", total=f"{total:g}")
                if total else _("step {done}").format(done=f"{done:g}"))

    def _status_text(self) -> str:
        """What the live status says while the request waits."""
        parts = [self._step_text()]
        if self.held:
            parts.append(_("timeout held: {reason}").format(reason=self.held))
        else:
            limit = f" / {duration(self.timeout)}" if self.timeout else ""
            parts.append(f"{duration(self.elapsed)}{limit}")
        return " · ".join(part for part in parts if part)

    async def follow(self, request: Awaitable[T], live: set[RequestRecord]) -> T:
        """Await ``request``, then say how it ended; in ``live`` while it runs.

        ``live`` is the session's set of calls in flight (whose views are told
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
        self._finish(_("done in {time}").format(time=duration(self.elapsed)), "success",
                     answered=True)

    def tool_error(self) -> None:
        self._finish(_("tool error (isError) after {time}").format(time=duration(self.elapsed)),
                     "danger", answered=True)

    def cancelled(self) -> None:
        self._finish((_("cancelled at {step}").format(step=self._step_text()) if self.step else
                      _("cancelled after {time}").format(time=duration(self.elapsed))), "warning")

    def timed_out(self, after: float) -> None:
        self._finish(_("timed out after {time}").format(time=duration(after)), "danger")

    def failed(self, error: BaseException) -> None:
        self._finish(_("failed: {error}").format(error=f"{type(error).__name__}: {error}"),
                     "danger")

    def _finish(self, outcome: str, style: str, answered: bool = False) -> None:
        """It ended: ``outcome`` in words; ``style`` colours a bar (full if ``answered``)."""
        self.outcome = outcome

    def _name(self) -> str:
        ident = f" #{self.request_id}" if self.request_id is not None else ""
        return _("Request {method}{id}").format(method=self.method, id=ident)

    def describe(self) -> str:
        return f"{self._name()}: {self.outcome}"

    def label_bundle(self) -> dict[str, str]:
        """What a saved notebook keeps of the request: its name, no state."""
        label = render.plain(self._name())
        return {"text/plain": label,
                "text/html": render.STYLE + f'<div class="mcpnb">{render.esc(label)}</div>'}


class RequestProgress(RequestRecord, _Described, w.HBox):
    """One request, live: what it is, its progress against its timeout, Cancel; then its outcome.

    :meth:`show` saves :meth:`RequestRecord.label_bundle` beside the live view.
    A ``--background`` call, whose end comes after its cell, also rewrites that
    saved output when it ends (``follow``).
    """

    def __init__(self, method: str, timeout: float | None) -> None:
        super().__init__()
        self._begin(method, timeout)
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
        if self.outcome == "waiting":
            bundle.update(self.label_bundle())
        handle = display(bundle, raw=True, display_id=follow or None)
        self._display = handle if follow else None

    def sent(self, request_id: int) -> None:
        super().sent(request_id)
        self._tick()

    def cancel(self) -> None:
        """What the Cancel button does: cancel the request on the wire."""
        if self.on_cancel is not None and self.request_id is not None and (
                self.outcome == "waiting"):
            self.on_cancel(self.request_id)

    def _tick(self) -> None:
        self.status.value = self._status_text()

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        super().progress(progress, total, message)
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
        super().hold(reason)
        self._tick()

    def _finish(self, outcome: str, style: str, answered: bool = False) -> None:
        super()._finish(outcome, style, answered)
        if answered:
            self.bar.value = self.bar.max
        self.cancel_button.disabled = True
        self.cancel_button.button_style = ""  # grey: nothing left to cancel
        self.bar.bar_style = style
        self.status.value = outcome
        if self._display is not None:
            self._display.update(self)  # the saved output follows (see show)


#: How long a blocking call runs before its live widget appears, in seconds.
LIVE_AFTER = 0.2


class CallProgress(RequestRecord):
    """A blocking call's view: its saved label, and a live widget only if the call lasts.

    A live :class:`RequestProgress` is five widgets with their layouts and
    styles: a dozen models opened in the front end and a message for each
    change, which cost the kernel several times the call itself
    (``benchmarks/call_cell.py``).  A blocking call's Cancel button cannot be
    clicked before its cell ends (the kernel is busy; the interrupt button
    cancels it), so the live view is only worth it while there is something to
    watch: the call is still running after :data:`LIVE_AFTER`, reports progress,
    or has its timeout held for a person.  Then it goes live, as before.  A call
    answered sooner shows, when it ends, the label alone: exactly what the
    live widget saves, so a saved notebook reads the same whichever view a call
    had (nbval compares it).  With ``shown`` false it shows nothing at all.
    """

    def __init__(self, method: str, timeout: float | None, *, shown: bool = True) -> None:
        self._begin(method, timeout)
        self.shown = shown
        #: The live widget, once the call has gone live.
        self.live: RequestProgress | None = None
        self._timer: asyncio.TimerHandle | None = None
        #: The calling task's context: ipykernel sends a display to the cell its context
        #: names, and a progress report runs in the read callback's (another cell's).
        self._context: contextvars.Context | None = None

    def sent(self, request_id: int) -> None:
        """On the wire (called in the call's task): the live widget waits its turn."""
        super().sent(request_id)
        self._context = contextvars.copy_context()
        if self.shown:
            self._timer = asyncio.get_running_loop().call_later(LIVE_AFTER, self.go_live)

    def go_live(self) -> RequestProgress | None:
        """Show the live widget now (if shown and still waiting); the widget, if any."""
        if self.live is None and self.shown and self.outcome == "waiting":
            live = RequestProgress(self.method, self.timeout)
            live._started = self._started
            live.on_cancel = self.on_cancel
            if self.step is not None:
                live.progress(self.step[0], self.step[1], None)
            if self.held:
                live.hold(self.held)
            if self.request_id is not None:
                live.sent(self.request_id)
            self.live = live
            if self._context is None:
                live.show()
            else:
                self._context.run(live.show)
        return self.live

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        super().progress(progress, total, message)
        live = self.live or self.go_live()  # progress is worth watching
        if live is not None:
            live.progress(progress, total, message)

    def hold(self, reason: str | None) -> None:
        super().hold(reason)
        live = self.live or (self.go_live() if reason else None)
        if live is not None:
            live.hold(reason)

    def _finish(self, outcome: str, style: str, answered: bool = False) -> None:
        super()._finish(outcome, style, answered)
        if self._timer is not None:
            self._timer.cancel()
        if self.live is not None:
            self.live._finish(outcome, style, answered)
        elif self.shown and self.request_id is not None:
            from IPython.display import display

            display(self.label_bundle(), raw=True)

    def __repr__(self) -> str:
        return render.plain(self.describe())


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


def tool_result_text(result: CallToolResult) -> str:
    """A tool result in one short line: ok or error, a preview, structuredContent's keys.

    What a result's ``text/plain`` says, whether it is shown as a widget or
    (as ``%mcp call`` returns it) as itself.
    """
    status = _("error") if result.isError else _("ok")
    text = render.content_summary(result.content)
    preview = text if len(text) <= 60 else text[:59] + "…"
    structured = result.structuredContent
    if structured is not None:
        keys = ", ".join(list(structured)[:4]) + (", …" if len(structured) > 4 else "")
        preview += f" + structuredContent {{{keys}}}"
    return f"ToolResult ({status}): {preview}"


class ToolResultView(_Described, w.HTML):
    """A tool result: text, images, embedded resources, and isError made obvious."""

    def __init__(self, result: CallToolResult) -> None:
        super().__init__()
        self.result = result
        self.value = render.content_blocks_html(result.content, result.isError,
                                                result.structuredContent)

    def describe(self) -> str:
        return tool_result_text(self.result)

    def static_html(self) -> str:
        return self.value
