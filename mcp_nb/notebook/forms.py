"""Forms generated from JSON Schema: tool calls, and answers to the server's questions.

:class:`SchemaForm` turns an ``inputSchema`` (or an elicitation's
``requestedSchema``) into input widgets — string, number, integer, boolean,
enum, arrays, nested objects, and a raw-JSON box for anything else — and reads
them back as a JSON value.  :class:`ToolForm` adds a Call button;
:class:`ServerRequestInbox` lets a person answer ``sampling/createMessage`` and
``elicitation/create`` by hand.

Button clicks arrive on the kernel's main thread while the session lives on the
background loop: clicks schedule work on the loop and never block the kernel,
so further clicks (Cancel, another Call) keep working.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from typing import Any

import anyio
import ipywidgets as w

from ..i18n import _
from ..protocol.errors import REQUEST_TIMEOUT, McpError
from ..protocol.models import CallToolResult, Tool
from ..protocol.patience import answer_within
from . import render
from .arguments_check import problems
from .described import _Described

_FULL = w.Layout(width="95%")
# The code the spec's sampling examples use when a person rejects the request.
USER_REJECTED = -1


class _Field:
    """One schema property: its widget and how to read it back."""

    def __init__(self, name: str, schema: dict[str, Any], required: bool) -> None:
        self.name = name
        self.schema = schema if isinstance(schema, dict) else {}
        self.required = required
        self.touched = required or "default" in self.schema
        self.nested: SchemaForm | None = None
        self.widget = self._build()

    def _label(self) -> str:
        title = self.schema.get("title") or self.name
        return f"{title}{' *' if self.required else ''}"

    def _build(self) -> w.Widget:
        s = self.schema
        kind = s.get("type")
        default = s.get("default")
        label = self._label()
        style = {"description_width": "initial"}
        if "enum" in s and isinstance(s["enum"], list) and s["enum"]:
            options = [(json.dumps(v) if not isinstance(v, str) else v, v) for v in s["enum"]]
            widget: w.Widget = w.Dropdown(options=options,
                                          value=default if default in s["enum"] else s["enum"][0],
                                          description=label, style=style)
            self.touched = True
        elif kind == "boolean":
            widget = w.Checkbox(value=bool(default), description=label, style=style)
        elif kind == "integer":
            widget = w.IntText(value=int(default or 0), description=label, style=style)
        elif kind == "number":
            widget = w.FloatText(value=float(default or 0), description=label, style=style)
        elif kind == "string":
            widget = w.Text(value=str(default or ""), description=label, style=style,
                            placeholder=s.get("description", "")[:80], layout=_FULL)
        elif kind == "object" and isinstance(s.get("properties"), dict):
            self.nested = SchemaForm(s)
            widget = w.VBox([w.HTML(f"<b>{render.esc(label)}</b>"), self.nested],
                            layout=w.Layout(border="1px solid #ddd", padding="4px"))
        elif kind == "array" and (s.get("items") or {}).get("type") in ("string", "number",
                                                                       "integer"):
            widget = w.Text(value=", ".join(map(str, default or [])), description=label,
                            placeholder=_("comma-separated values"), style=style, layout=_FULL)
        else:  # anything the form can't model: raw JSON, so nothing is out of reach
            widget = w.Textarea(value=json.dumps(default) if default is not None else "",
                                description=f"{label} (JSON)", style=style, layout=_FULL)
        if self.nested is None:
            widget.tooltip = s.get("description", "")
            widget.observe(self._touch, names="value")
        return widget

    def _touch(self, change: Any) -> None:
        self.touched = True

    @property
    def present(self) -> bool:
        """Whether the field goes into the arguments (optional untouched ones don't)."""
        if self.nested is not None:
            return self.required or bool(self.nested.value())
        if not self.touched:
            return False
        return not (isinstance(self.widget, (w.Text, w.Textarea)) and not self.widget.value
                    and not self.required)

    def value(self) -> Any:
        if self.nested is not None:
            return self.nested.value()
        raw = self.widget.value
        kind = self.schema.get("type")
        if isinstance(self.widget, w.Textarea):
            try:
                return json.loads(raw)
            except ValueError as exc:
                raise ValueError(_("{name}: not valid JSON ({error})").format(
                    name=self.name, error=exc)) from None
        if kind == "array" and isinstance(self.widget, w.Text):
            item_type = self.schema.get("items", {}).get("type")
            items = [part.strip() for part in raw.split(",") if part.strip()]
            convert: Callable[[str], Any] = {"number": float, "integer": int}.get(item_type, str)
            try:
                return [convert(item) for item in items]
            except ValueError:
                raise ValueError(_("{name}: every item must be a {type}").format(
                    name=self.name, type=item_type)) from None
        if kind == "number" and isinstance(raw, float) and raw.is_integer():
            return int(raw)  # JSON has one number type: send 2, not 2.0, for a whole number
        return raw


class SchemaForm(w.VBox):
    """Input widgets for an object schema; :meth:`value` reads them back as a dict."""

    def __init__(self, schema: dict[str, Any]) -> None:
        super().__init__()
        properties = schema.get("properties") if isinstance(schema, dict) else None
        required = set(schema.get("required", [])) if isinstance(schema, dict) else set()
        self.schema = schema if isinstance(schema, dict) else {}
        self.fields = [_Field(name, prop, name in required)
                       for name, prop in (properties or {}).items()]
        legend = ([w.HTML("<small>" + render.esc(_("* required")) + "</small>")]
                  if any(f.required for f in self.fields) else [])
        self.children = [*(f.widget for f in self.fields), *legend]

    def value(self) -> dict[str, Any]:
        return {f.name: f.value() for f in self.fields if f.present}

    def checked_value(self) -> dict[str, Any]:
        """:meth:`value`, or ValueError naming every field that is missing or wrong.

        A required text field left empty counts as missing; the rest is judged
        by the schema itself (:func:`~mcp_nb.notebook.arguments_check.problems`).
        """
        empty = [_("{name}: required, missing").format(name=f.name) for f in self.fields
                 if f.required
                 and isinstance(f.widget, (w.Text, w.Textarea)) and not f.widget.value.strip()]
        if empty:
            raise ValueError("; ".join(empty))
        value = self.value()
        found = problems(self.schema, value)
        if found:
            raise ValueError("; ".join(found))
        return value

    def signature(self) -> str:
        return ", ".join(
            f"{f.name}: {f.schema.get('type', 'json')}{'*' if f.required else ''}"
            for f in self.fields)


class ToolForm(_Described, w.VBox):
    """A form for one tool: fields from its inputSchema, a Call button, the result.

    ``call`` is a function that starts the call without blocking and returns a
    ``concurrent.futures.Future`` (the hosted session's loop ``submit``).
    """

    def __init__(self, tool: Tool, call: Callable[[dict[str, Any]], Any]) -> None:
        super().__init__()
        self.tool = tool
        self._call = call
        self.form = SchemaForm(tool.inputSchema)
        self.button = w.Button(description=_("Call"), button_style="primary")
        self.status = w.Label()
        self.result = w.HTML()
        self.last_result: CallToolResult | None = None
        self.button.on_click(lambda button: self.submit())
        title = render.esc(tool.title or tool.name)
        description = render.esc(tool.description or "")
        self.children = [w.HTML(f"<b>{title}</b><br><small>{description}</small>"), self.form,
                         w.HBox([self.button, self.status]), self.result]

    def submit(self) -> Any:
        """What the Call button does; returns the future of the call."""
        try:
            arguments = self.form.checked_value()
        except ValueError as exc:
            self.status.value = _("not sent: {reason}").format(reason=exc)
            return None
        self.status.value = _("calling…")
        self.button.disabled = True
        future = self._call(arguments)
        future.add_done_callback(self._show)
        return future

    def _show(self, future: Any) -> None:
        self.button.disabled = False
        try:
            result: CallToolResult = future.result()
        except BaseException as exc:  # shown in the form, not raised into the void
            self.status.value = _("failed")
            self.result.value = render.failure_html(f"{type(exc).__name__}: {exc}")
            return
        self.last_result = result
        answered = result.content or result.structuredContent is not None
        self.status.value = (_("error result") if result.isError else _("done") if answered
                             else _("done") + " " + _(render.EMPTY_RESULT))
        self.result.value = render.content_blocks_html(result.content, result.isError,
                                                       result.structuredContent)

    def describe(self) -> str:
        return f"ToolForm: {self.tool.name}({self.form.signature()})"


class ServerRequestInbox(_Described, w.VBox):
    """Where a person answers the server's sampling and elicitation requests.

    Install with :meth:`handlers` when the session is created; each incoming
    request adds a card with the question and Send/Decline buttons.  The
    session's handler waits (on the loop) until a button is clicked.
    """

    def __init__(self, call_soon: Callable[..., None]) -> None:
        super().__init__()
        self._call_soon = call_soon  # run a callable on the session's loop thread
        self.answered = 0
        self.pending: list[_Question] = []
        #: Holds the timeouts of the requests in flight while a question waits (set by the
        #: session's host: :meth:`HostedSession.hold_for_person`); returns the release.
        self.hold_deadlines: Callable[[str], Callable[[], None]] | None = None

    def handlers(self) -> dict[str, Callable[[dict[str, Any]], Any]]:
        """``on_sampling`` / ``on_elicitation`` keyword arguments for a ClientSession."""
        return {"on_sampling": self._sampling, "on_elicitation": self._elicitation}

    async def _ask(self, question: _Question) -> dict[str, Any]:
        self.pending.append(question)
        self.children = [*self.children, question]
        release = (self.hold_deadlines(
            _("waiting for your answer to {method}").format(method=question.method))
                   if self.hold_deadlines is not None else None)
        try:
            async with anyio.create_task_group() as countdown:
                if question.patience is not None:
                    countdown.start_soon(question.count_down)
                await question.answered.wait()
                countdown.cancel_scope.cancel()
        except BaseException:
            # The server withdrew its request, or the session ended: nothing to answer.
            question.conclude(_("expired: the server no longer waits for this answer"))
            raise
        finally:
            self.pending.remove(question)
            if release is not None:
                release()
        if isinstance(question.answer, _Expired):
            raise question.answer
        self.answered += 1
        question.conclude(_("sent"))
        if isinstance(question.answer, Exception):
            raise question.answer
        assert question.answer is not None
        return question.answer

    async def _sampling(self, params: dict[str, Any]) -> dict[str, Any]:
        return await self._ask(_SamplingQuestion(params, self._call_soon))

    async def _elicitation(self, params: dict[str, Any]) -> dict[str, Any]:
        return await self._ask(_ElicitationQuestion(params, self._call_soon))

    def describe(self) -> str:
        return _("Inbox: {waiting} waiting, {answered} answered").format(
            waiting=len(self.pending), answered=self.answered)


class _Question(w.VBox):
    """One server→client request waiting for a person.

    If the request says how long the server waits (the lab's ``_meta`` convention,
    :mod:`mcp_nb.protocol.patience`), :attr:`patience_label` counts it down once a
    second and the buttons go grey at zero; if not, nothing is said about it.
    """

    method = ""

    def __init__(self, params: dict[str, Any], call_soon: Callable[..., None]) -> None:
        super().__init__(layout=w.Layout(border="1px solid #bbb", padding="4px"))
        self.answered = anyio.Event()  # created on the loop thread (handlers run there)
        self.answer: dict[str, Any] | Exception | None = None
        self._call_soon = call_soon
        self.buttons: list[w.Button] = []
        self.status = w.Label(value=_("waiting for your answer (the call that asked is paused)"))
        self._concluded = False  # answered, withdrawn or expired: a late click changes nothing
        #: Seconds the server said it waits, counted from the request's arrival; or None.
        self.patience = answer_within(params)
        self._arrived = time.monotonic()
        self.patience_label = w.Label()
        self._show_patience()

    def seconds_left(self) -> float | None:
        """How much longer the server waits, if it said; never below zero."""
        if self.patience is None:
            return None
        return max(0.0, self.patience - (time.monotonic() - self._arrived))

    def _show_patience(self) -> None:
        left = self.seconds_left()
        if left is not None and not self.answered.is_set():
            self.patience_label.value = (
                _("server waits {seconds} s more").format(seconds=math.ceil(left)) if left > 0
                else "")

    async def count_down(self) -> None:
        """Tick once a second (on the whole second) until answered; at zero, expire."""
        while (left := self.seconds_left()) is not None and left > 0:
            self._show_patience()
            await anyio.sleep(left - math.floor(left) or 1.0)
        if not self.answered.is_set():
            assert self.patience is not None
            self.answer = _Expired(f"no answer within the server's {self.patience:g} s")
            self.answered.set()
            self.conclude(_("expired: the server waited {seconds} s for an answer").format(
                seconds=f"{self.patience:g}"))

    @property
    def settled(self) -> bool:
        """Answered, or expired: a late click changes nothing."""
        return self.answered.is_set() or self._concluded

    def _reply(self, answer: dict[str, Any] | Exception) -> None:
        """Called on the kernel thread by a button: hand the answer to the loop."""
        if self.settled:
            return
        self._disable(_("sending…"))

        def deliver() -> None:
            if not self.answered.is_set():  # the countdown may have ended it meanwhile
                self.answer = answer
                self.answered.set()

        self._call_soon(deliver)

    def _disable(self, status: str) -> None:
        for button in self.buttons:
            button.disabled = True
        self.status.value = status

    def conclude(self, status: str) -> None:
        """Answered or withdrawn: the buttons go grey and the card says which."""
        self._concluded = True
        self.patience_label.value = ""
        self._disable(status)


class _SamplingQuestion(_Question):
    method = "sampling/createMessage"

    def __init__(self, params: dict[str, Any], call_soon: Callable[..., None]) -> None:
        super().__init__(params, call_soon)
        shown = "\n".join(
            f"{m.get('role', '?')}: {m.get('content', {}).get('text', json.dumps(m))}"
            for m in params.get("messages", []))
        self.reply = w.Textarea(placeholder=_("the reply the server will receive"), layout=_FULL)
        self.model = w.Text(value="a person", description="model")
        send = w.Button(description=_("Send"), button_style="success")
        decline = w.Button(description=_("Decline"), button_style="danger")
        send.on_click(lambda b: self._reply({
            "role": "assistant", "model": self.model.value,
            "content": {"type": "text", "text": self.reply.value}}))
        decline.on_click(lambda b: self._reply(_Declined("the user declined to sample")))
        self.buttons = [send, decline]
        self.children = [w.HTML(f"<b>sampling/createMessage</b><pre>{render.esc(shown)}</pre>"),
                         self.reply, self.model,
                         w.HBox([send, decline, self.status, self.patience_label])]


class _ElicitationQuestion(_Question):
    method = "elicitation/create"

    def __init__(self, params: dict[str, Any], call_soon: Callable[..., None]) -> None:
        super().__init__(params, call_soon)
        self.form = SchemaForm(params.get("requestedSchema", {}))
        buttons = []
        for action, label, style in (("accept", _("Accept"), "success"),
                                     ("decline", _("Decline"), "warning"),
                                     ("cancel", _("Cancel"), "danger")):
            button = w.Button(description=label, button_style=style)
            button.on_click(lambda b, action=action: self._act(action))
            buttons.append(button)
        self.buttons = buttons
        self.children = [
            w.HTML(f"<b>elicitation/create</b><pre>{render.esc(params.get('message', ''))}</pre>"),
            self.form, w.HBox([*buttons, self.status, self.patience_label])]

    def _act(self, action: str) -> None:
        if self.settled:
            return
        answer: dict[str, Any] = {"action": action}
        if action == "accept":
            try:
                answer["content"] = self.form.checked_value()
            except ValueError as exc:
                self.status.value = _("not sent: {reason}").format(reason=exc)
                return
        self._reply(answer)


class _Declined(McpError):
    """A person declined; the session answers the server with this error code."""

    code = USER_REJECTED


class _Expired(McpError):
    """Nobody answered within the server's patience (it has given up, or is about to)."""

    code = REQUEST_TIMEOUT
