"""The authorization flow in a cell: each step as it happens, and the link a person clicks.

:class:`AuthFlowView` is told of each :class:`~mcp_nb.auth.steps.Step` (already
redacted: no token, code, verifier or secret is in a step) and redraws its sequence
diagram and its table; at the browser step it shows an *Authorize* link. Steps may
arrive from any thread (the background loop's, the cell's): ipywidgets sends each
change from there while the cell waits.

What the notebook saves (nbval ignores display updates, and the notebooks are saved
as first displayed): :meth:`AuthFlowView.show` first displays the live view with a
label that claims nothing about how the flow went; :meth:`AuthFlowView.settle`, at
the end, turns that first output into the bare label and displays the view again,
finished, with a deterministic text (the steps and their outcomes) and a static
fallback (the diagram as an image, the table) — no times, no hosts in the image.
"""

from __future__ import annotations

import threading
from typing import Any

import ipywidgets as w

from ..i18n import N_, _
from . import diagrams, render
from .described import _Described

STEP_COLUMNS = (N_("step"), N_("sent"), N_("received"), N_("rule"), N_("outcome"),
                N_("detail"))


def steps_table_html(steps: list[Any]) -> str:
    """The steps as a table, every cell escaped (steps hold no secret to begin with)."""
    return render.table_html([_(title) for title in STEP_COLUMNS], [
        (s.name, s.sent, s.received, s.rule, s.outcome, s.detail) for s in steps])


def steps_record_html(steps: list[Any], alt: str) -> str:
    """The saved record of a flow: its sequence diagram as an image, then its table."""
    return (render.svg_image_html(diagrams.auth_sequence_svg(steps), alt)
            + steps_table_html(steps))


def steps_summary(steps: list[Any]) -> str:
    """``challenge ok · resource metadata ok · …``: the steps' names and outcomes."""
    return " · ".join(f"{step.name} {step.outcome}" for step in steps) or _("no step yet")


class AuthFlowView(_Described, w.VBox):
    """One authorization flow for the MCP server at ``url``, drawn as it happens.

    ``callback`` names how the code comes back (``loopback``, ``paste-back`` …), and
    ``redirect_uri`` where the browser is sent back to.

    Example (what ``%mcp connect URL --auth`` does)::

        view = AuthFlowView(url, "loopback", redirect_uri)
        oauth.on_step = view.add_step
        view.show()
        ...                      # the flow runs; at the browser step:
        view.ask(authorization_url)
        ...
        view.finish("authorized: token held")
        view.settle()
    """

    def __init__(self, url: str, callback: str, redirect_uri: str = "") -> None:
        super().__init__()
        self.url, self.callback, self.redirect_uri = url, callback, redirect_uri
        self.steps: list[Any] = []
        #: How it ended ("" while it runs): "authorized: …", "refused: …", "interrupted".
        self.outcome = ""
        self._lock = threading.Lock()
        self._handle: Any = None
        self.status = w.HTML()
        self.link = w.HTML()
        self.diagram = w.HTML()
        self.table = w.HTML()
        self.children = [self.status, self.link, self.diagram, self.table]
        self._redraw()

    # -- what the flow tells it (any thread) ---------------------------------------------------

    def add_step(self, step: Any) -> None:
        """One more step (an ``on_step`` callback)."""
        with self._lock:
            self.steps.append(step)
            self._redraw()

    def ask(self, authorization_url: str) -> None:
        """The browser step: show the link a person clicks, and what happens next."""
        if self.callback == "paste-back":
            then = _("then copy the address your browser lands on (it starts with {uri}; the "
                     "page itself may not load) and paste it in the box below.").format(
                uri=self.redirect_uri)
        elif self.callback == "jupyter-server":
            then = _("the page comes back to this Jupyter server, and this cell goes on.")
        else:
            then = _("the page comes back to {uri}, and this cell goes on (interrupt the "
                     "kernel to give up).").format(uri=self.redirect_uri)
        self.link.value = (
            f'{render.STYLE}<div class="mcpnb"><p><a class="mcpnb-authorize" '
            f'href="{render.esc(authorization_url)}" target="_blank" rel="noopener" '
            'style="font-weight:600">' + render.esc(_("Authorize")) + "</a> "
            + render.esc(_("in your browser; ")) + f"{render.esc(then)}</p></div>")
        self._set_status(_("waiting for the person to authorize in the browser"))

    def finish(self, outcome: str) -> None:
        """The flow ended: ``authorized: …``, ``refused: …`` or ``interrupted``."""
        with self._lock:
            self.outcome = outcome
            self.link.value = ""
            self._redraw()

    # -- display ------------------------------------------------------------------------------

    def label(self) -> str:
        """What the first display saves: which flow, never how it went."""
        return _("Authorization for {url} (callback: {callback}): the steps follow as they "
                 "happen").format(url=self.url, callback=self.callback)

    def show(self) -> None:
        """Display the live view, saved as :meth:`label` (see the module's docstring)."""
        from IPython.display import display

        bundle = {**self._repr_mimebundle_(), **self._label_bundle()}
        self._handle = display(bundle, raw=True, display_id=True)

    def settle(self) -> None:
        """Leave the label where the live view was; display the finished view below it."""
        from IPython.display import display

        if self._handle is not None:
            self._handle.update(self._label_bundle(), raw=True)
            self._handle = None
        display(self)

    def _label_bundle(self) -> dict[str, str]:
        return {"text/plain": render.plain(self.label()),
                "text/html": f'{render.STYLE}<div class="mcpnb">{render.esc(self.label())}</div>'}

    def describe(self) -> str:
        state = self.outcome or _("running")
        return _("Authorization for {url}: {state}\n  steps: {steps}").format(
            url=self.url, state=state, steps=steps_summary(self.steps))

    def static_html(self) -> str:
        return (f'{render.STYLE}<div class="mcpnb"><p>{render.esc(self._headline())}</p></div>'
                + steps_record_html(self.steps, steps_summary(self.steps)))

    # -- drawing ------------------------------------------------------------------------------

    def _headline(self) -> str:
        state = self.outcome or _("running")
        return _("Authorization for {url} (callback: {callback}): {state}").format(
            url=self.url, callback=self.callback, state=state)

    def _set_status(self, text: str) -> None:
        self.status.value = (f'{render.STYLE}<div class="mcpnb">' + render.esc(
            _("Authorization for {url}: {state}").format(url=self.url, state=text)) + "</div>")

    def _redraw(self) -> None:
        last = self.steps[-1] if self.steps else None
        now = self.outcome or (f"{last.name} {last.outcome}" if last else _("starting"))
        self._set_status(now)
        self.diagram.value = diagrams.auth_sequence_svg(self.steps)
        self.table.value = steps_table_html(self.steps)
