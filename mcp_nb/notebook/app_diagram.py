"""The App lifecycle drawn from :data:`mcp_nb.apps.lifecycle.APP_TRANSITIONS`, and an App's
traffic as a three-lane sequence (App ⇄ host ⇄ server).

Like the session's diagram (:mod:`mcp_nb.notebook.diagrams`), the edges are the table the
host enforces, so the picture cannot drift from the behaviour; only the layout is here.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from ..apps.lifecycle import APP_TRANSITIONS, AppEvent, AppState
from ..client.transcript import TranscriptEntry
from ..i18n import N_, _
from .diagrams import _anchor, _arrowhead, _box
from .render import esc

#: Where each state sits: the main line left to right, in two rows, the endings below.
APP_POSITIONS: dict[AppState, tuple[int, int]] = {
    AppState.REQUESTED: (10, 20),
    AppState.RESOURCE_READ: (150, 20),
    AppState.LOADING: (290, 20),
    AppState.LOADED: (430, 20),
    AppState.INITIALIZING: (570, 20),
    AppState.REFUSED: (10, 110),
    AppState.INITIALIZED: (570, 110),
    AppState.INPUT_SENT: (430, 110),
    AppState.INTERACTIVE: (290, 110),
    AppState.CANCELLED: (430, 200),
    AppState.TEARING_DOWN: (150, 200),
    AppState.TORN_DOWN: (10, 200),
}

_DASHED = {AppEvent.REMOVE, AppEvent.RESOURCE_REFUSED, AppEvent.CLEARED}


def app_diagram_svg(current: AppState, path: Sequence[AppState] = ()) -> str:
    """Every state and edge of the App lifecycle; ``current`` filled, ``path`` bold."""
    taken = set(itertools.pairwise(path))
    label = _("MCP App lifecycle, current state {state}").format(state=current.value)
    parts = [
        '<svg xmlns="http://www.w3.org/2000/svg" width="700" height="260" '
        'viewBox="0 0 700 260" class="mcpnb-app-diagram" role="img" '
        f'aria-label="{esc(label)}">',
    ]
    drawn: set[tuple[AppState, AppState]] = set()
    for transition in APP_TRANSITIONS:
        pair = (transition.source, transition.target)
        if pair in drawn:
            continue
        drawn.add(pair)
        x1, y1 = _anchor(APP_POSITIONS, transition.source, transition.target)
        x2, y2 = _anchor(APP_POSITIONS, transition.target, transition.source)
        on_path = pair in taken
        color = "#1f6feb" if on_path else "#999"
        dash = ' stroke-dasharray="4 3"' if transition.event in _DASHED else ""
        parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{color}" '
            f'stroke-width="{3 if on_path else 1}"{dash}><title>{esc(transition.source.value)}'
            f" → {esc(transition.target.value)}: {esc(transition.event.value)} — "
            f"{esc(_(transition.meaning))}</title></line>" + _arrowhead(x1, y1, x2, y2, color))
    for state, (x, y) in APP_POSITIONS.items():
        parts.append(_box(state.value, state.value, x, y, current=state is current,
                          visited=state in path))
    legend = _("dashed: refused, or removed without ui/resource-teardown")
    parts.append('<text x="300" y="250" font-family="system-ui, sans-serif" font-size="11" '
                 f'fill="#666">{esc(legend)}</text>')
    parts.append("</svg>")
    return "".join(parts)


#: The three lanes of an App's traffic, left to right: (title, x); titles shown translated.
_LANES = {N_("App"): 70, N_("Host"): 330, N_("Server"): 590}
#: Which lane each transcript direction goes from and to.
_ENDS = {"app→host": ("App", "Host"), "host→app": ("Host", "App"),
         "send": ("Host", "Server"), "recv": ("Server", "Host")}


def app_sequence_svg(entries: Sequence[TranscriptEntry]) -> str:
    """App ⇄ host ⇄ server: the App lane and the MCP wire of a transcript, in one picture.

    An App's ``tools/call`` reads top to bottom as it travels: App → Host, Host → Server,
    Server → Host, Host → App.  No times (a saved image cannot be masked by nbval).
    """
    messages = [e for e in entries if e.direction in _ENDS]
    height = 60 + 34 * max(len(messages), 1)
    title = _("App, host and server: {count} messages").format(count=len(messages))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="660" height="{height}" '
        f'viewBox="0 0 660 {height}" class="mcpnb-app-sequence" role="img" '
        f'aria-label="{esc(title)}">',
    ]
    for name, x in _LANES.items():
        parts.append(
            f'<text x="{x}" y="20" text-anchor="middle" font-family="system-ui, sans-serif" '
            f'font-size="13" font-weight="600">{esc(_(name))}</text>'
            f'<line x1="{x}" y1="28" x2="{x}" y2="{height - 5}" stroke="#888" '
            'stroke-dasharray="3 3"/>')
    for index, entry in enumerate(messages):
        y = 52 + 34 * index
        start, end = _ENDS[entry.direction]
        x1, x2 = _LANES[start], _LANES[end]
        color = "#8250df" if entry.direction in ("app→host", "host→app") else "#333"
        label = " ".join(part for part in (
            entry.method or entry.kind, f"#{entry.id}" if entry.id is not None else "",
            f"({entry.kind})" if entry.method and entry.kind not in ("request", "notification")
            else "") if part)
        parts.append(
            f'<line x1="{x1}" y1="{y}" x2="{x2}" y2="{y}" stroke="{color}"/>'
            + _arrowhead(x1, y, x2, y, color)
            + f'<text x="{(x1 + x2) / 2:.0f}" y="{y - 5}" text-anchor="middle" '
            f'font-family="system-ui, sans-serif" font-size="11">{esc(label[:48])}</text>')
    parts.append("</svg>")
    return "".join(parts)
