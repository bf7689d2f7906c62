"""SVG diagrams drawn from the protocol's own tables: the session lifecycle, a task's
statuses, a sequence of messages, and the authorization flow's exchanges.

The state and task diagrams are drawn from the same transition tables the code enforces
(``TRANSITIONS``, ``TASK_TRANSITIONS``), so the picture cannot drift from the behaviour.
Every label passes through :func:`mcp_nb.notebook.render.esc`.
"""

from __future__ import annotations

import itertools
import math
import re
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from ..client.transcript import TranscriptEntry
from ..i18n import N_, _
from ..protocol.lifecycle import TRANSITIONS, Event, State
from ..protocol.tasks import TASK_TRANSITIONS, TaskStatus
from .render import esc

# -- state diagram ------------------------------------------------------------------------

BOX_W, BOX_H = 120, 36

#: Where each state sits in the diagram (layout only; the edges come from TRANSITIONS).
STATE_POSITIONS: dict[State, tuple[int, int]] = {
    State.UNINITIALIZED: (10, 20),
    State.INITIALIZING: (170, 20),
    State.INITIALIZED: (330, 20),
    State.OPERATING: (490, 20),
    State.SHUTTING_DOWN: (330, 150),
    State.TERMINATED: (570, 150),
}

_EDGE_STYLE = {
    Event.TRANSPORT_CLOSED: 'stroke-dasharray="4 3"',
    Event.SHUTDOWN: "",
}


def _anchor(positions: Mapping[Any, tuple[int, int]], box: Any,
            toward: Any) -> tuple[float, float]:
    """Point on ``box``'s edge facing ``toward`` (centre-to-centre line, clipped)."""
    x, y = positions[box]
    tx, ty = positions[toward]
    cx, cy = x + BOX_W / 2, y + BOX_H / 2
    dx, dy = (tx + BOX_W / 2) - cx, (ty + BOX_H / 2) - cy
    if dx == 0 and dy == 0:
        return cx, cy
    scale = min(
        (BOX_W / 2) / abs(dx) if dx else float("inf"),
        (BOX_H / 2) / abs(dy) if dy else float("inf"),
    )
    return cx + dx * scale, cy + dy * scale


def _arrowhead(x1: float, y1: float, x2: float, y2: float, color: str,
               size: float = 8.0) -> str:
    """A filled triangle at (x2, y2) pointing along the line.

    Drawn as a polygon rather than an SVG <marker>: markers are referenced by a
    document-wide id, and with several diagrams on a page (some in hidden tabs)
    browsers resolve the id to the first one — often invisible — and the heads vanish.
    """
    length = math.hypot(x2 - x1, y2 - y1) or 1.0
    ux, uy = (x2 - x1) / length, (y2 - y1) / length
    bx, by = x2 - ux * size, y2 - uy * size
    half = size / 2.2
    points = (f"{x2:.1f},{y2:.1f} {bx - uy * half:.1f},{by + ux * half:.1f} "
              f"{bx + uy * half:.1f},{by - ux * half:.1f}")
    return f'<polygon points="{points}" fill="{color}"/>'


def state_diagram_svg(current: State, path: Sequence[State] = ()) -> str:
    """The six lifecycle states and every transition of the table.

    ``current`` is filled; edges along ``path`` (the states visited, in order)
    are drawn bold so the learner sees the route the session took.
    """
    taken = set(itertools.pairwise(path))
    parts = [
        '<svg xmlns="http://www.w3.org/2000/svg" width="700" height="200" '
        'viewBox="0 0 700 200" class="mcpnb-state-diagram" role="img" '
        f'aria-label="MCP lifecycle, current state {esc(current.value)}">',
    ]
    for transition in TRANSITIONS:
        if transition.era == "stateless":
            continue  # a stateless session has its own view (no handshake states)
        x1, y1 = _anchor(STATE_POSITIONS, transition.source, transition.target)
        x2, y2 = _anchor(STATE_POSITIONS, transition.target, transition.source)
        on_path = (transition.source, transition.target) in taken
        width = 3 if on_path else 1
        color = "#1f6feb" if on_path else "#999"
        parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'stroke="{color}" stroke-width="{width}" {_EDGE_STYLE.get(transition.event, "")}>'
            f"<title>{esc(transition.source.value)} → "
            f"{esc(transition.target.value)}: {esc(transition.event.value)} — "
            f"{esc(_(transition.meaning))}</title></line>"
            + _arrowhead(x1, y1, x2, y2, color)
        )
    for state, (x, y) in STATE_POSITIONS.items():
        parts.append(_box(state.value, state.value, x, y, current=state is current,
                          visited=state in path))
    parts.append(
        '<text x="10" y="120" font-family="system-ui, sans-serif" font-size="11" fill="#666">'
        + esc(_("solid: shutdown · dashed: transport closed")) + "</text>"
    )
    parts.append("</svg>")
    return "".join(parts)


#: Where each task status sits (layout only; the edges come from TASK_TRANSITIONS).
TASK_POSITIONS: dict[TaskStatus, tuple[int, int]] = {
    TaskStatus.WORKING: (10, 70),
    TaskStatus.INPUT_REQUIRED: (10, 190),
    TaskStatus.COMPLETED: (290, 20),
    TaskStatus.FAILED: (290, 110),
    TaskStatus.CANCELLED: (290, 200),
}


def _box(key: str, label: str, x: int, y: int, *, current: bool, visited: bool) -> str:
    """One state box of a diagram: filled if current, tinted if visited."""
    fill = "#1f6feb" if current else "#dbe9ff" if visited else "#f4f4f4"
    return (
        f'<g class="state{" current" if current else ""}" data-state="{esc(key)}">'
        f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="8" fill="{fill}" '
        f'stroke="#444" stroke-width="{2 if current else 1}"/>'
        f'<text x="{x + BOX_W / 2:.0f}" y="{y + BOX_H / 2 + 4:.0f}" text-anchor="middle" '
        f'font-family="system-ui, sans-serif" font-size="13" '
        f'fill="{"#fff" if current else "#222"}">{esc(label)}</text></g>'
    )


def task_diagram_svg(current: TaskStatus, path: Sequence[TaskStatus] = ()) -> str:
    """A task's statuses and every move of its table (SEP-2663), like the lifecycle diagram.

    ``current`` is filled and the moves along ``path`` are bold.  Only the status
    and the path go in (no times, no messages), so the saved image of a task that
    ends the same way is the same image.
    """
    taken = set(itertools.pairwise(path))
    pairs = {(t.source, t.target) for t in TASK_TRANSITIONS}
    parts = [
        '<svg xmlns="http://www.w3.org/2000/svg" width="430" height="250" '
        'viewBox="0 0 430 250" class="mcpnb-task-diagram" role="img" '
        f'aria-label="task status, current {esc(current.value)}">',
    ]
    for transition in TASK_TRANSITIONS:
        x1, y1 = _anchor(TASK_POSITIONS, transition.source, transition.target)
        x2, y2 = _anchor(TASK_POSITIONS, transition.target, transition.source)
        if (transition.target, transition.source) in pairs:
            # A move with a way back: draw the two side by side, not on top of each other.
            length = math.hypot(x2 - x1, y2 - y1) or 1.0
            nx, ny = -(y2 - y1) / length * 6, (x2 - x1) / length * 6
            x1, y1, x2, y2 = x1 + nx, y1 + ny, x2 + nx, y2 + ny
        on_path = (transition.source, transition.target) in taken
        color = "#1f6feb" if on_path else "#999"
        parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'stroke="{color}" stroke-width="{3 if on_path else 1}">'
            f"<title>{esc(transition.source.value)} → {esc(transition.target.value)}: "
            f"{esc(_(transition.meaning))}</title></line>" + _arrowhead(x1, y1, x2, y2, color))
    for status, (x, y) in TASK_POSITIONS.items():
        parts.append(_box(status.value, status.value, x, y, current=status is current,
                          visited=status in path))
    parts.append('<text x="10" y="30" font-family="system-ui, sans-serif" font-size="11" '
                 'fill="#666">' + esc(_("right column: terminal (final)")) + "</text></svg>")
    return "".join(parts)


def sequence_svg(entries: Sequence[TranscriptEntry], left: str = N_("Client"),
                 right: str = N_("Server"), *, times: bool = True) -> str:
    """A sequence diagram of messages between client and server, with times.

    ``times=False`` leaves the times out: the static image saved in a notebook is a
    base64 data URI, which no output sanitizer can mask, so it must not change from
    one run to the next (the message cards beside it still say when each was sent).
    """
    messages = [e for e in entries if e.direction in ("send", "recv")]
    height = 60 + 40 * max(len(messages), 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="520" height="{height}" '
        f'viewBox="0 0 520 {height}" class="mcpnb-sequence" role="img" '
        f'aria-label="sequence of {len(messages)} messages">',
    ]
    for x, name in ((80, _(left)), (440, _(right))):
        parts.append(
            f'<text x="{x}" y="20" text-anchor="middle" font-family="system-ui, sans-serif" '
            f'font-size="13" font-weight="600">{esc(name)}</text>'
            f'<line x1="{x}" y1="28" x2="{x}" y2="{height - 5}" stroke="#888" '
            'stroke-dasharray="3 3"/>'
        )
    for index, entry in enumerate(messages):
        y = 55 + 40 * index
        x1, x2 = (80, 440) if entry.direction == "send" else (440, 80)
        label = " ".join(part for part in (
            entry.method or entry.kind,
            f"#{entry.id}" if entry.id is not None else "",
            f"({entry.kind})" if entry.method and entry.kind not in ("request", "notification")
            else "",
        ) if part)
        arrow = (f'<line x1="{x1}" y1="{y}" x2="{x2}" y2="{y}" stroke="#333"/>'
                 + _arrowhead(x1, y, x2, y, "#333"))
        parts.append(
            arrow
            + f'<text x="260" y="{y - 6}" text-anchor="middle" font-family="system-ui, sans-serif" '
            f'font-size="12">{esc(label)}</text>'
            + (f'<text x="8" y="{y + 4}" font-family="monospace" font-size="10" fill="#666">'
               f"{entry.time:.3f}s</text>" if times else "")
        )
    parts.append("</svg>")
    return "".join(parts)


# -- the authorization flow's sequence -------------------------------------------------------

#: The authorization flow's lanes, left to right: (key, title, x).
AUTH_LANES = (("browser", N_("Browser"), 70), ("client", N_("Notebook (client)"), 230),
              ("mcp", N_("MCP server"), 410), ("as", N_("Authorization server"), 570))
#: Each step's arrows as (from, to, what the label shows): the request it sent, the reply
#: that came back, or the authorization link a person opens. Steps not named here (and
#: steps that exchanged nothing: a skipped registration, a fallback) are drawn as notes.
AUTH_STEP_ARROWS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "challenge": (("client", "mcp", "sent"), ("mcp", "client", "received")),
    "resource metadata": (("client", "mcp", "sent"), ("mcp", "client", "received")),
    "server metadata": (("client", "as", "sent"), ("as", "client", "received")),
    "register": (("client", "as", "sent"), ("as", "client", "received")),
    "authorize": (("client", "browser", "link"), ("browser", "as", "sent"),
                  ("as", "browser", "received")),
    "callback": (("browser", "client", "sent"),),
    "token": (("client", "as", "sent"), ("as", "client", "received")),
    "refresh": (("client", "as", "sent"), ("as", "client", "received")),
    "retry": (("client", "mcp", "sent"), ("mcp", "client", "received")),
}
_OUTCOME_COLORS = {"ok": "#333", "refused": "#b00020", "not found": "#999", "fallback": "#999",
                   "skipped": "#999"}
#: A URL's scheme and host (and the query after it): hosts and ports change from run to
#: run, and the saved diagram is an image no sanitizer can mask, so labels show paths only.
_URL_ORIGIN = re.compile(r"https?://[^/\s?#]+")
_URL_QUERY = re.compile(r"\?\S*")


def _auth_label(step: Any, what: str) -> str:
    """An arrow's label: a request's method and path, a reply's status, never a host."""
    if what == "link":
        return "authorization link (a person opens it)"
    if what == "sent":  # "GET URL", "POST URL fields…", or the redirect's URL alone
        words = step.sent.split()
        text = " ".join(words[:2] if words and words[0].isupper() else words[:1])
    else:  # "200 OK, type, size", "redirect URL", "code received", "WWW-Authenticate: …"
        text = step.received.split(", ", 1)[0]
        if text.startswith("redirect "):
            text = " ".join(text.split()[:2])
    text = _URL_QUERY.sub("", _URL_ORIGIN.sub("", text)).strip()
    if text.startswith("WWW-Authenticate"):
        text = "401 + WWW-Authenticate"
    elif step.name == "callback" and what == "sent":
        text = f"redirect to {text} (code, state)"
    return text if len(text) <= 44 else text[:43] + "…"


#: Characters on one line of a note: from the notebook's lane to the picture's right edge.
NOTE_LINE_CHARS = 70
#: Lines a note may take; a longer rule ends in "…" (the step's table has it whole).
NOTE_LINES = 3


def _note(step: Any) -> list[str]:
    """A step that exchanged nothing (or is not drawn as arrows): name, outcome, rule, in
    lines that fit the picture (a refusal's rule is what the learner came to read)."""
    mark = "✗ " if step.outcome == "refused" else ""
    lines = textwrap.wrap(f"{mark}{step.name} {step.outcome}: {step.rule}", NOTE_LINE_CHARS)
    if len(lines) > NOTE_LINES:
        lines = [*lines[:NOTE_LINES - 1], lines[NOTE_LINES - 1][:NOTE_LINE_CHARS - 1] + "…"]
    return lines


def auth_sequence_svg(steps: Sequence[Any]) -> str:
    """The authorization flow as a sequence diagram: one row per exchange of ``steps``.

    Four lanes (browser, notebook, MCP server, authorization server); each
    :class:`~mcp_nb.auth.steps.Step` becomes the arrows :data:`AUTH_STEP_ARROWS`
    names (request solid, reply dashed), or a note when it exchanged nothing. A
    refusal is red and marked ✗; a fallback or a location not found is grey. Labels
    hold paths and statuses, never a host, a port or a query, so the same flow draws
    the same picture (the saved image is compared by nbval).
    """
    lanes = {key: x for key, _title, x in AUTH_LANES}
    rows: list[str] = []
    y = 62
    for step in steps:
        color = _OUTCOME_COLORS.get(step.outcome, "#333")
        arrows = [arrow for arrow in AUTH_STEP_ARROWS.get(step.name, ())
                  if arrow[2] == "link" or getattr(step, arrow[2])]
        if not arrows or (step.outcome == "refused" and not (step.sent or step.received)):
            x = lanes["client"] - 20
            lines = _note(step)
            spans = "".join(f'<tspan x="{x}" dy="{0 if index == 0 else 14}">{esc(line)}</tspan>'
                            for index, line in enumerate(lines))
            rows.append(
                f'<text x="{x}" y="{y + 4}" font-family="system-ui, '
                f'sans-serif" font-size="11" fill="{color}" data-step="{esc(step.name)}" '
                f'data-outcome="{esc(step.outcome)}">{spans}</text>')
            y += 26 + 14 * (len(lines) - 1)
            continue
        for source, target, what in arrows:
            x1, x2 = lanes[source], lanes[target]
            dash = ' stroke-dasharray="5 3"' if what == "received" else ""
            label = _auth_label(step, what)
            if step.outcome == "refused" and what == arrows[-1][2]:
                label = f"✗ {label} — refused"
            rows.append(
                f'<g data-step="{esc(step.name)}" data-outcome="{esc(step.outcome)}">'
                f'<line x1="{x1}" y1="{y}" x2="{x2}" y2="{y}" stroke="{color}"{dash}>'
                f"<title>{esc(step.name)}: {esc(step.rule)}</title></line>"
                + _arrowhead(x1, y, x2, y, color)
                + f'<text x="{(x1 + x2) / 2:.0f}" y="{y - 5}" text-anchor="middle" '
                f'font-family="system-ui, sans-serif" font-size="11" fill="{color}">'
                f"{esc(label)}</text></g>")
            y += 30
    height = y + 4
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="660" height="{height}" '
        f'viewBox="0 0 660 {height}" class="mcpnb-auth-sequence" role="img" '
        f'aria-label="authorization flow, {len(steps)} steps">',
    ]
    for _key, title, x in AUTH_LANES:
        parts.append(
            f'<text x="{x}" y="20" text-anchor="middle" font-family="system-ui, sans-serif" '
            f'font-size="12" font-weight="600">{esc(_(title))}</text>'
            f'<line x1="{x}" y1="30" x2="{x}" y2="{height - 4}" stroke="#bbb" '
            'stroke-dasharray="3 3"/>')
    parts.extend(rows)
    parts.append("</svg>")
    return "".join(parts)
