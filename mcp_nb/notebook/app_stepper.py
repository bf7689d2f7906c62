"""``%mcp app TOOL --step``: the host's side of an App's lifecycle, one cell per step.

:class:`AppStepper` drives one :class:`~mcp_nb.notebook.apps.AppView` through the
host's steps (the call, ``resources/read``, the sandbox policy, the frame,
``tool-input``, ``tool-result``, ``ui/resource-teardown``) and answers each with a
:class:`StepOutcome`: a short text nbval compares, and HTML.  Apart from
:mod:`.apps` because it is a way to walk the lifecycle, not a part of what is drawn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import ipywidgets as w

from ..apps.csp import describe_policy
from ..apps.lifecycle import AppEvent, AppState, AppTransitionRecord
from ..i18n import N_, _
from ..protocol.errors import McpError
from . import render
from .app_handoff import TEARDOWN_WAIT
from .apps import AppView
from .described import _Described


class StepOutcome:
    """What one ``%mcp app --next`` step did: a short text (nbval compares it) and HTML."""

    def __init__(self, step: str, text: str, detail: Any = None, *, event: str = "") -> None:
        self.step, self.text, self.detail = step, text, detail
        #: The App event the step caused at once (e.g. TOOL_INPUT), as LaterStep says later.
        self.event = event

    def __repr__(self) -> str:
        return render.plain(_("App step {step}: {text}").format(step=self.step, text=self.text))

    def _repr_html_(self) -> str:
        detail = "" if self.detail is None else render.pretty_json_html(self.detail)
        head = render.esc(_("App step {step}").format(step=self.step))
        return (render.STYLE + f'<div class="mcpnb mcpnb-app-step" data-step='
                f'"{render.esc(self.step)}" data-event="{self.event}"><b>{head}</b>: '
                f"{render.esc(self.text)}{detail}</div>")


class AppStepper:
    """``%mcp app TOOL --step``: the host's side of the App lifecycle, one cell per step.

    The steps are the host's: the call, ``resources/read``, the sandbox policy, the frame,
    ``tool-input``, ``tool-result``, ``ui/resource-teardown``.  Between *load* and *input*
    the View speaks (``ui/initialize``, ``ui/notifications/initialized``): in a browser it
    does so as soon as the frame loads, but by widget messages the kernel hears of it only
    once no cell holds it (Run All); through the App channel, as it comes.  Before
    ``initialized`` the host MUST NOT send the View any request or notification
    (``tool-input`` is one; its answer to ``ui/initialize`` is a response), so
    an *input* (or *result*) the kernel cannot send yet is held and handed to the host's
    page, which posts it the moment the View says initialized; a *teardown* before the
    kernel heard ``initialized`` is the page's to decide.  Such a step answers with a
    :class:`LaterStep`, which says what happened once the kernel hears of it.
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
        view.result = result  # held: tool-result is sent at its own step
        view._draw_result()
        text = render.content_summary(result.content)
        return StepOutcome("call", _("tools/call {tool} answered: {text} (held for the View: "
                                     "tool-result comes after tool-input)").format(
            tool=view.tool_name, text=text[:80]))

    def _read(self) -> StepOutcome:
        view = self.view
        view.read_resource(cached=False)  # the read step is what this walk shows
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

    def _input(self) -> Any:
        view = self.view
        try:
            view.send_tool_input()
        except ValueError as exc:  # the View is gone (or the input was handed over already)
            self.done -= 1
            return StepOutcome("input", _("not sent: {reason}").format(reason=exc))
        if view.host is not None and "input" in view.host.held:
            return LaterStep(view, "input", _(
                "held until the View says ui/notifications/initialized (the host MUST NOT "
                "send it before); the host's page posts it then"))
        return StepOutcome("input", _("{method} sent").format(
            method="ui/notifications/tool-input"), {
            "arguments": view.arguments}, event="TOOL_INPUT")

    def _result(self) -> Any:
        view = self.view
        view.send_tool_result()
        if view.host is not None and "outcome" in view.host.held:
            return LaterStep(view, "result", _(
                "held behind tool-input until the View says ui/notifications/initialized; "
                "the host's page posts it then"))
        return StepOutcome("result", _("{method} sent").format(
            method="ui/notifications/tool-result"), event="TOOL_RESULT")

    def _teardown(self) -> Any:
        view = self.view
        view.teardown("stepped to the end")
        if view.host is not None and view.host.teardown_handed is not None \
                and view.lifecycle.state not in (AppState.TEARING_DOWN, AppState.TORN_DOWN):
            return LaterStep(view, "teardown", _(
                "handed to the host's page, which knows whether the View said initialized: "
                "it sends ui/resource-teardown if so (and waits up to {seconds} s for the "
                "answer), else removes the frame (nothing may be sent before)").format(
                seconds=f"{TEARDOWN_WAIT:g}"))
        return StepOutcome("teardown", _(
            "ui/resource-teardown sent; the App is {state} (the frame goes on the View's "
            "answer, or after {seconds} s)").format(state=view.lifecycle.state,
                                                   seconds=f"{TEARDOWN_WAIT:g}"))


class LaterStep(_Described, w.HTML):
    """A step the host's page carries out later (:mod:`mcp_nb.notebook.app_handoff`): the
    cell says at once what is known (held, handed to the page), then what happened and
    when, as the kernel hears of it.  Its ``text/plain`` is what was known when the cell
    ran (nbval compares that)."""

    #: Which App transitions end each kind of step, and what is said of each.
    _ENDS: ClassVar[dict[str, dict[AppEvent, str]]] = {
        "input": {AppEvent.TOOL_INPUT: N_("delivered at {time} s, once the View had said "
                                          "initialized")},
        "result": {AppEvent.TOOL_RESULT: N_("delivered at {time} s, right after tool-input"),
                   AppEvent.TOOL_CANCELLED: N_("tool-cancelled delivered at {time} s, right "
                                               "after tool-input")},
        "teardown": {AppEvent.TEARDOWN: N_("the page sent ui/resource-teardown at {time} s "
                                           "(the View had said initialized)"),
                     AppEvent.TEARDOWN_ANSWERED: N_("the View answered at {time} s: the frame "
                                                    "is gone"),
                     AppEvent.REMOVE: N_("the frame was removed at {time} s: {cause}")},
    }

    def __init__(self, view: AppView, step: str, text: str) -> None:
        super().__init__()
        self.step = step
        self.lines = [text]
        #: The App event that told the step's fate (its name, e.g. TOOL_INPUT), once known.
        self.event: str | None = None
        self.value = self._html()
        view.watch_steps(self._transition)

    def _transition(self, record: AppTransitionRecord, at: float) -> None:
        said = self._ENDS[self.step].get(record.event)
        if said is not None:
            self.lines.append(_(said).format(time=f"{at:.3f}", cause=record.cause))
        elif record.target is AppState.TORN_DOWN and self.step != "teardown":
            self.lines.append(_("never delivered: the App went at {time} s ({cause})").format(
                time=f"{at:.3f}", cause=record.cause))
        elif record.event is AppEvent.CLEARED and self.step == "teardown":
            self.lines.append(_("the frame was removed at {time} s: {cause}").format(
                time=f"{at:.3f}", cause=record.cause))
        else:
            return
        self.event = record.event.name
        self.value = self._html()

    def describe(self) -> str:
        return _("App step {step}: {text}").format(step=self.step, text="; ".join(self.lines))

    def _html(self) -> str:
        head = render.esc(_("App step {step}").format(step=self.step))
        said = "; ".join(render.esc(line) for line in self.lines)
        return (render.STYLE + f'<div class="mcpnb mcpnb-app-step" data-step="{self.step}" '
                f'data-event="{self.event or ""}"><b>{head}</b>: {said}</div>')

    def static_html(self) -> str:
        return self._html()
