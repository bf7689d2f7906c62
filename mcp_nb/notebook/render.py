"""HTML and SVG renderings of a session: pure functions from data to markup.

Everything a server says (names, descriptions, instructions, tool output,
stderr) passes through :func:`esc` before it becomes markup — these functions are
the only place markup is built, so this is the one place escaping must hold.
The widgets show these strings live; static HTML reprs reuse them so nbviewer
and GitHub show the same picture.
"""

from __future__ import annotations

import base64
import html
import itertools
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..client.transcript import ARROWS, TranscriptEntry
from ..protocol.lifecycle import TRANSITIONS, Event, State
from ..protocol.negotiation import Capabilities, VersionOutcome
from ..protocol.tasks import TASK_TRANSITIONS, TaskStatus


def esc(value: Any) -> str:
    """Escape any value for HTML/SVG text and attributes (quotes included).

    Control characters other than newline and tab are shown as ``\\uXXXX`` so a
    right-to-left override or a NUL can't reorder or truncate what is shown.
    """
    text = value if isinstance(value, str) else str(value)
    text = "".join(
        ch if ch in "\n\t" or (ord(ch) >= 32 and not 0x202A <= ord(ch) <= 0x202E
                                and not 0x2066 <= ord(ch) <= 0x2069 and ord(ch) != 0x7F)
        else f"\\u{ord(ch):04x}"
        for ch in text
    )
    return html.escape(text, quote=True)


STYLE = """<style>
.mcpnb { font-family: system-ui, sans-serif; font-size: 13px; }
.mcpnb table { border-collapse: collapse; }
.mcpnb td, .mcpnb th { border: 1px solid #ccc; padding: 2px 6px; text-align: left; }
.mcpnb pre { margin: 0; white-space: pre-wrap; word-break: break-word; }
.mcpnb .hl { background: #fff3b0; font-weight: 600; }
.mcpnb .card { border: 1px solid #bbb; border-radius: 6px; padding: 6px; margin: 4px 0; }
.mcpnb .card h4 { margin: 0 0 4px 0; }
.mcpnb .yes { color: #176b2c; } .mcpnb .no { color: #888; }
.mcpnb .finding { color: #a00; }
</style>"""


def svg_image_html(svg: str, alt: str) -> str:
    """An SVG as an ``<img>`` with a data URI, for static outputs.

    An untrusted notebook (opened before it is run), nbviewer and GitHub strip
    inline ``<svg>`` and would leave its ``<title>`` tooltips as one run-on
    paragraph; an image survives their sanitizers, and a browser runs no
    script inside an SVG shown as an image.
    """
    data = base64.b64encode(svg.encode()).decode("ascii")
    return f'<img alt="{esc(alt)}" src="data:image/svg+xml;base64,{data}"/>'


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
            f"{esc(transition.meaning)}</title></line>"
            + _arrowhead(x1, y1, x2, y2, color)
        )
    for state, (x, y) in STATE_POSITIONS.items():
        parts.append(_box(state.value, state.value, x, y, current=state is current,
                          visited=state in path))
    parts.append(
        '<text x="10" y="120" font-family="system-ui, sans-serif" font-size="11" fill="#666">'
        "solid: shutdown · dashed: transport closed</text>"
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
            f"{esc(transition.meaning)}</title></line>" + _arrowhead(x1, y1, x2, y2, color))
    for status, (x, y) in TASK_POSITIONS.items():
        parts.append(_box(status.value, status.value, x, y, current=status is current,
                          visited=status in path))
    parts.append('<text x="10" y="30" font-family="system-ui, sans-serif" font-size="11" '
                 'fill="#666">right column: terminal (final)</text></svg>')
    return "".join(parts)


# -- messages --------------------------------------------------------------------------------

HANDSHAKE_HIGHLIGHTS = frozenset({
    "protocolVersion", "capabilities", "clientInfo", "serverInfo", "instructions",
})


def pretty_json_html(value: Any, highlight: Iterable[str] = ()) -> str:
    """Indented JSON, escaped, with lines that start a highlighted key marked."""
    keys = {f'"{key}":' for key in highlight}
    lines = []
    for line in json.dumps(value, indent=2, ensure_ascii=False, default=repr).splitlines():
        escaped = esc(line)
        if keys and any(line.lstrip().startswith(key) for key in keys):
            escaped = f'<span class="hl">{escaped}</span>'
        lines.append(escaped)
    return "<pre>" + "\n".join(lines) + "</pre>"


def message_card_html(title: str, entry: TranscriptEntry | None,
                      highlight: Iterable[str] = HANDSHAKE_HIGHLIGHTS) -> str:
    """One message as a card: title, direction, time, and the pretty JSON."""
    if entry is None:
        return (f'<div class="card"><h4>{esc(title)}</h4>'
                '<span class="no">not sent yet</span></div>')
    body = (pretty_json_html(entry.message, highlight) if entry.message is not None
            else f"<pre>{esc(entry.text or '')}</pre>")
    return (
        f'<div class="card"><h4>{esc(title)}</h4>'
        f"<div>{esc(ARROWS[entry.direction])} {esc(entry.kind)} at {entry.time:.3f}s, "
        f"{entry.size} bytes</div>{body}</div>"
    )


def sequence_svg(entries: Sequence[TranscriptEntry], left: str = "Client",
                 right: str = "Server", *, times: bool = True) -> str:
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
    for x, name in ((80, left), (440, right)):
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


# -- capabilities -------------------------------------------------------------------------------

def _options(value: Any) -> str:
    if not isinstance(value, dict) or not value:
        return ""
    return ", ".join(f"{esc(k)}={esc(json.dumps(v))}" for k, v in sorted(value.items()))


def capabilities_html(capabilities: Capabilities, outcome: VersionOutcome | None,
                      state: State, *, preface: str | None = None) -> str:
    """Capability | client declared | server declared | usable now, plus the version deal.

    ``preface`` (already HTML) replaces the version paragraph: the stateless era
    has no version deal, it has what ``server/discover`` said.
    """
    operating = state is State.OPERATING
    yes, no = '<span class="yes">yes</span>', '<span class="no">no</span>'
    rows = []
    for row in capabilities.table():
        declared = row["declared"]
        usable = declared and operating
        client_cell = (yes if declared else no) if row["side"] == "client" else ""
        server_cell = (yes if declared else no) if row["side"] == "server" else ""
        rows.append(
            f"<tr><td>{esc(row['capability'])}</td><td>{client_cell}</td><td>{server_cell}</td>"
            f"<td>{yes if usable else no}</td><td>{_options(row['options'])}</td></tr>"
        )
    if preface is not None:
        version = preface
    elif outcome is None:
        version = "<p>Version: not negotiated yet.</p>"
    else:
        version = (
            f"<p>Version: offered <b>{esc(outcome.offered)}</b>, server answered "
            f"<b>{esc(outcome.answered)}</b> → {esc(outcome.outcome)}</p>"
        )
    return (
        f'{STYLE}<div class="mcpnb">{version}<table><tr><th>capability</th><th>client declared'
        "</th><th>server declared</th><th>usable now</th><th>options</th></tr>"
        + "".join(rows) + "</table></div>"
    )


# -- the stateless era -------------------------------------------------------------------------

def era_steps_html(steps: Sequence[Any]) -> str:
    """How the era was settled: each probe, verdict, fallback and adoption, in order."""
    if not steps:
        return ""
    items = "".join(f"<li><b>{esc(step.kind)}</b> at {step.time:.3f}s: {esc(step.detail)}</li>"
                    for step in steps)
    return f'{STYLE}<div class="mcpnb"><h4>How the era was chosen</h4><ol>{items}</ol></div>'


def stateless_model_html(version: str, state: State, request_meta: dict[str, Any],
                         server_info: dict[str, Any] | None, steps: Sequence[Any]) -> str:
    """The stateless era's "state view": no handshake states, what every request carries."""
    meta_rows = "".join(
        f"<tr><td><code>{esc(key)}</code></td><td>{pretty_json_html(value)}</td></tr>"
        for key, value in request_meta.items())
    server = pretty_json_html(server_info) if server_info else '<span class="no">none yet</span>'
    return (
        f'{STYLE}<div class="mcpnb"><p><b>Stateless era</b>, protocol <b>{esc(version)}</b>: '
        f"connection {esc(state.value)}. There is no handshake and no session state: "
        "each request stands alone.</p>"
        "<p>Every request carries, in <code>params._meta</code>:</p>"
        f"<table><tr><th>key</th><th>value</th></tr>{meta_rows}</table>"
        "<p>Every result carries <code>resultType</code> (<code>complete</code>, or "
        "<code>input_required</code>: answer its <code>inputRequests</code> and retry with "
        "<code>inputResponses</code> and the echoed <code>requestState</code>, under a new id) "
        "and the server's identity in <code>_meta</code>; latest seen:</p>"
        f"{server}</div>{era_steps_html(steps)}"
    )


def discover_preface_html(discover: Any, version: str) -> str:
    """What ``server/discover`` returned, above the capability table."""
    if discover is None:
        return "<p>server/discover: no answer yet.</p>"
    info = discover.serverInfo
    who = f"{esc(info.name)} {esc(info.version)}" if info is not None else "not given"
    extra = "".join(
        f"<li>{esc(label)}: {esc(value)}</li>" for label, value in (
            ("instructions", discover.instructions), ("ttlMs", discover.ttlMs),
            ("cacheScope", discover.cacheScope)) if value is not None)
    return (
        f"<p>server/discover: the server supports <b>{esc(', '.join(discover.supportedVersions))}"
        f"</b>; this session speaks <b>{esc(version)}</b> on every request.</p>"
        f"<ul><li>server: {who}</li>{extra}</ul>"
    )


# -- transcript ------------------------------------------------------------------------------------

def _preview(entry: TranscriptEntry, limit: int = 160) -> str:
    if entry.message is not None:
        text = json.dumps(entry.message, ensure_ascii=False, default=repr)
    else:
        text = entry.text or ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_reproducible(entry: TranscriptEntry) -> bool:
    """True for entries that every run of the same cells records in the same order.

    Messages on the wire and the findings they cause are.  Transport events are
    not: the server's stderr lines arrive on their own pipe, so where they land
    among the messages (and whether the last one is in yet) is down to
    scheduling, and the server's exit races the reader noticing EOF.
    """
    return entry.direction != "event" or entry.kind == "finding"


def transcript_rows_html(entries: Sequence[TranscriptEntry], *, live: bool = False) -> str:
    """A table of transcript entries (one page of them).

    ``live`` (the transcript widget) shows every entry with its position in the
    transcript.  Otherwise the table is a snapshot saved into the notebook, which
    nbval compares run against run: only :func:`is_reproducible` entries, without
    positions (those shift with every stderr line).
    """
    if not live:
        entries = [e for e in entries if is_reproducible(e)]
    rows = []
    for e in entries:
        note = f'<span class="finding">{esc(e.note)}</span>' if e.note else ""
        position = f"<td>{e.seq}</td>" if live else ""
        rows.append(
            f"<tr>{position}<td>{e.time:.3f}</td><td>{esc(ARROWS[e.direction])}</td>"
            f"<td>{esc(e.kind)}</td><td>{esc(e.method or '')}</td>"
            f"<td>{esc('' if e.id is None else e.id)}</td><td>{esc(e.state)}</td>"
            f"<td>{e.size or ''}</td><td>{note}</td><td><code>{esc(_preview(e))}</code></td></tr>"
        )
    caption = ("" if live else "<p>Messages and findings; transport events and the server's "
               "stderr are in the live transcript.</p>")
    return (
        f'{STYLE}<div class="mcpnb">{caption}<table><tr>{"<th>#</th>" if live else ""}'
        "<th>t (s)</th><th></th><th>kind</th>"
        "<th>method</th><th>id</th><th>state</th><th>bytes</th><th>note</th><th>message</th>"
        "</tr>" + "".join(rows) + "</table></div>"
    )


def table_html(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A plain table with a header row, every cell escaped."""
    head = "".join(f"<th>{esc(title)}</th>" for title in header)
    body = "".join("<tr>" + "".join(f"<td>{esc(cell)}</td>" for cell in row) + "</tr>"
                   for row in rows)
    return f'{STYLE}<div class="mcpnb"><table><tr>{head}</tr>{body}</table></div>'


def findings_html(findings: Sequence[Any]) -> str:
    if not findings:
        return f'{STYLE}<div class="mcpnb">No findings: no rule was seen broken.</div>'
    rows = "".join(
        f"<tr><td>{f.time:.3f}</td><td>{esc(f.side)}</td><td>{esc(f.rule.id)}</td>"
        f"<td>{esc(f.detail)}</td><td>{_rule_source_html(f.rule)}</td></tr>"
        for f in findings
    )
    return (
        f'{STYLE}<div class="mcpnb"><table><tr><th>t (s)</th><th>side</th><th>rule</th>'
        f"<th>what happened</th><th>spec or policy</th></tr>{rows}</table></div>"
    )


def _rule_source_html(rule: Any) -> str:
    """A spec rule links its section; a kit policy says so and names its setting."""
    url = rule.url()
    if url is None:
        return f"<i>{esc(rule.source)}</i>"
    return f'<a href="{esc(url)}" target="_blank">{esc(rule.section)}</a>'



# -- tool results ----------------------------------------------------------------------------------

#: What a result with no content blocks says (rather than nothing at all).
EMPTY_RESULT = "(empty result)"


def content_summary(blocks: Sequence[dict[str, Any]]) -> str:
    """Plain text for content blocks: the text, and a bracketed note for anything else."""
    parts = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind in ("image", "audio"):
            size = len(str(block.get("data", "")).rstrip("=")) * 3 // 4  # base64 → bytes
            parts.append(f"[{kind} {block.get('mimeType', '?')}, {size:,} bytes]")
        elif kind == "resource":
            parts.append(f"[resource {block.get('resource', {}).get('uri', '?')}]")
        elif kind == "resource_link":
            parts.append(f"[link {block.get('uri', '?')}]")
        else:
            parts.append(f"[{kind} block]")
    return "\n".join(parts) if parts else EMPTY_RESULT


def content_blocks_html(blocks: Sequence[dict[str, Any]], is_error: bool = False) -> str:
    """Tool output: text, images (only safe raster data URIs), embedded resources."""
    parts = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            parts.append(f"<pre>{esc(block.get('text', ''))}</pre>")
        elif kind == "image" and str(block.get("mimeType", "")) in _SAFE_IMAGE_TYPES:
            data = "".join(ch for ch in str(block.get("data", ""))
                           if ch.isalnum() or ch in "+/=")
            parts.append(f'<img alt="tool image" src="data:{block["mimeType"]};base64,{data}"/>')
        elif kind == "resource":
            resource = block.get("resource", {})
            body = resource.get("text", "(binary)" if "blob" in resource else "")
            parts.append(f"<div><b>{esc(resource.get('uri', ''))}</b><pre>{esc(body)}</pre></div>")
        else:
            parts.append(pretty_json_html(block))
    if not parts:
        parts.append(f"<p><i>{EMPTY_RESULT}</i></p>")
    status = '<b class="finding">isError: true</b>' if is_error else ""
    return f'{STYLE}<div class="mcpnb">{status}{"".join(parts)}</div>'


# SVG images can carry script; only raster types are inlined.
_SAFE_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


# -- resources, prompts, log lines (the explorer and %mcp read / %mcp prompt) -------------

#: How much of a text resource is put into the page; the rest is counted, not shown.
TEXT_SHOWN = 100_000
#: Blobs up to this size get a download link (a data URI: the whole blob is in the page).
DOWNLOAD_LIMIT = 1_000_000


def _text_block(text: str, mime: str) -> str:
    shown = text[:TEXT_SHOWN]
    if "json" in mime:
        try:
            return pretty_json_html(json.loads(text)) if len(text) <= TEXT_SHOWN else (
                f"<pre>{esc(shown)}</pre>")
        except ValueError:
            pass
    note = (f'<p class="no">showing the first {TEXT_SHOWN:,} of {len(text):,} characters</p>'
            if len(text) > TEXT_SHOWN else "")
    return f"{note}<pre>{esc(shown)}</pre>"


def resource_contents_html(contents: Sequence[dict[str, Any]]) -> str:
    """What ``resources/read`` returned, by MIME type: text, JSON, an image, a blob's size."""
    parts = []
    for item in contents:
        uri = str(item.get("uri", ""))
        mime = str(item.get("mimeType") or "")
        head = f"<p><b>{esc(uri)}</b> <span class=\"no\">{esc(mime or 'no MIME type')}</span></p>"
        if "text" in item:
            body = _text_block(str(item["text"]), mime)
        else:
            data = "".join(ch for ch in str(item.get("blob", "")) if ch.isalnum() or ch in "+/=")
            size = len(data.rstrip("=")) * 3 // 4
            if mime in _SAFE_IMAGE_TYPES:
                body = f'<img alt="{esc(uri)}" src="data:{mime};base64,{data}"/>'
            else:
                body = f"<p>binary, {size:,} bytes</p>"
            if size <= DOWNLOAD_LIMIT:
                name = uri.rstrip("/").rsplit("/", 1)[-1] or "resource"
                body += (f'<p><a download="{esc(name)}" '
                         f'href="data:application/octet-stream;base64,{data}">download</a></p>')
        parts.append(f'<div class="card">{head}{body}</div>')
    if not parts:
        parts.append(f"<p><i>{EMPTY_RESULT}</i></p>")
    return f'{STYLE}<div class="mcpnb">{"".join(parts)}</div>'


def contents_summary(contents: Sequence[dict[str, Any]]) -> str:
    """Plain text for resource contents: each URI, its type and size, and a text preview."""
    lines = []
    for item in contents:
        what = f"{item.get('uri', '?')} ({item.get('mimeType') or 'no MIME type'}"
        if "text" in item:
            text = str(item["text"])
            preview = text if len(text) <= 60 else text[:59] + "…"
            lines.append(f"{what}, {len(text):,} characters): {preview}")
        else:
            size = len(str(item.get("blob", "")).rstrip("=")) * 3 // 4
            lines.append(f"{what}, binary, {size:,} bytes)")
    return "\n".join(lines) if lines else EMPTY_RESULT


def prompt_messages_html(result: dict[str, Any]) -> str:
    """What ``prompts/get`` returned: its description, then each message with its role."""
    parts = []
    if result.get("description"):
        parts.append(f"<p>{esc(result['description'])}</p>")
    for message in result.get("messages") or []:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content or {}]
        inner = content_blocks_html(blocks).removeprefix(STYLE)
        parts.append(f'<div class="card"><h4>{esc(message.get("role", "?"))}</h4>{inner}</div>')
    return f'{STYLE}<div class="mcpnb">{"".join(parts)}</div>'


#: Log levels from least to most severe (RFC 5424's, as MCP uses them).
LEVEL_ORDER = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def log_lines_html(lines: Sequence[tuple[float, str, str, Any]], minimum: str) -> str:
    """Log notifications at ``minimum`` or above: (time, level, logger, data) rows, newest last."""
    floor = LEVEL_ORDER.index(minimum) if minimum in LEVEL_ORDER else 0
    rows = [(f"{at:.3f}", level, logger, data if isinstance(data, str) else json.dumps(data))
            for at, level, logger, data in lines
            if (LEVEL_ORDER.index(level) if level in LEVEL_ORDER else 0) >= floor]
    if not rows:
        return f'{STYLE}<div class="mcpnb"><p class="no">no log messages at {esc(minimum)} or '\
               "above yet</p></div>"
    return table_html(("time (s)", "level", "logger", "message"), rows)
