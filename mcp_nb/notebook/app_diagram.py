"""The App lifecycle drawn from :data:`mcp_nb.apps.lifecycle.APP_TRANSITIONS`.

Like the session's diagram (:mod:`mcp_nb.notebook.diagrams`), the edges are the table the
host enforces, so the picture cannot drift from the behaviour; only the layout is here.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from ..apps.lifecycle import APP_TRANSITIONS, AppEvent, AppState
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

_DASHED = {AppEvent.REMOVE, AppEvent.RESOURCE_REFUSED}


def app_diagram_svg(current: AppState, path: Sequence[AppState] = ()) -> str:
    """Every state and edge of the App lifecycle; ``current`` filled, ``path`` bold."""
    taken = set(itertools.pairwise(path))
    parts = [
        '<svg xmlns="http://www.w3.org/2000/svg" width="700" height="260" '
        'viewBox="0 0 700 260" class="mcpnb-app-diagram" role="img" '
        f'aria-label="MCP App lifecycle, current state {esc(current.value)}">',
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
            f"{esc(transition.meaning)}</title></line>" + _arrowhead(x1, y1, x2, y2, color))
    for state, (x, y) in APP_POSITIONS.items():
        parts.append(_box(state.value, state.value, x, y, current=state is current,
                          visited=state in path))
    parts.append('<text x="300" y="250" font-family="system-ui, sans-serif" font-size="11" '
                 'fill="#666">dashed: refused, or removed without ui/resource-teardown</text>')
    parts.append("</svg>")
    return "".join(parts)
