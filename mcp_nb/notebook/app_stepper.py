"""``%mcp app TOOL --step``: the host's side of an App's lifecycle, one cell per step.

:class:`AppStepper` drives one :class:`~mcp_nb.notebook.apps.AppView` through the
host's steps (the call, ``resources/read``, the sandbox policy, the frame,
``tool-input``, ``tool-result``, ``ui/resource-teardown``) and answers each with a
:class:`StepOutcome`: a short text nbval compares, and HTML.  Apart from
:mod:`.apps` because it is a way to walk the lifecycle, not a part of what is drawn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..apps.csp import describe_policy
from ..i18n import _
from ..protocol.errors import McpError
from . import render
from .app_host import TEARDOWN_WAIT
from .apps import AppView


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
    until it has: before ``initialized`` the host MUST NOT send the View any request or
    notification (``tool-input`` is one); its answer to ``ui/initialize`` is a response.
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
