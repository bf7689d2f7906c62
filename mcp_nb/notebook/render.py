"""HTML and SVG renderings of a session: pure functions from data to markup.

Everything a server says (names, descriptions, instructions, tool output,
stderr) passes through :func:`esc` before it becomes markup — these functions are
the only place markup is built, so this is the one place escaping must hold.
Plain-text reprs pass through :func:`plain` (control, bidi and surrogate
characters shown as ``\\uXXXX``), which :func:`esc` applies first.
The widgets show these strings live; static HTML reprs reuse them so nbviewer
and GitHub show the same picture.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Iterable, Sequence
from typing import Any

from ..client.transcript import ARROWS, TranscriptEntry
from ..i18n import N_, _
from ..protocol.lifecycle import State
from ..protocol.negotiation import Capabilities, VersionOutcome
from ..protocol.plaintext import plain_text as plain  # the text/plain views' sink


def esc(value: Any) -> str:
    """Escape any value for HTML/SVG text and attributes (quotes included).

    Control, bidi and surrogate characters are first shown as ``\\uXXXX`` by
    :func:`plain` (the plain-text views' own sink), so a right-to-left override or
    a NUL can't reorder or truncate what is shown.
    """
    return html.escape(plain(value if isinstance(value, str) else str(value)), quote=True)


STYLE = """<style>
.mcpnb { font-family: system-ui, sans-serif; font-size: 13px; }
.mcpnb table { border-collapse: collapse; }
div.mcpnb table td, div.mcpnb table th { border: 1px solid #ccc; padding: 2px 6px;
  text-align: left; vertical-align: top; }  /* specific enough to beat a theme's right-align */
div.mcpnb table td { overflow-wrap: break-word; }  /* words stay whole */
/* a long URL or id (no spaces) and code may break anywhere, not widen the table */
div.mcpnb table td.long, div.mcpnb table td code { overflow-wrap: anywhere; }
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


# -- capabilities -------------------------------------------------------------------------------

def _options(value: Any) -> str:
    if not isinstance(value, dict) or not value:
        return ""
    return ", ".join(f"{esc(k)}={esc(json.dumps(v))}" for k, v in sorted(value.items()))


def extension_settings_text(settings: Any) -> str:
    """An extension's settings object as one line of JSON (``{}``: no settings)."""
    return json.dumps(settings, ensure_ascii=False, sort_keys=True)


def declared_text(declared: dict[str, Any]) -> str:
    """A side's declared capabilities as a list of names, each extension named with its
    settings (``extensions: io.modelcontextprotocol/ui {"mimeTypes": [...]}``)."""
    parts = []
    for name in sorted(declared):
        extensions = declared[name]
        if name == "extensions" and isinstance(extensions, dict) and extensions:
            parts.append("extensions: " + "; ".join(
                f"{key} {extension_settings_text(value)}"
                for key, value in sorted(extensions.items(), key=lambda item: str(item[0]))))
        else:
            parts.append(name)
    return ", ".join(parts)


def _extension_row_html(row: dict[str, Any], operating: bool, yes: str, no: str) -> str:
    """One declared extension: who declared it, with which settings, on both sides."""
    client, server = row["client"] is not None, row["server"] is not None
    if not operating:
        usable = no
    elif client and server:
        usable = yes
    else:
        usable = esc(_("client only") if client else _("server only"))
    settings = [f"{esc(side)}: <code>{esc(extension_settings_text(value))}</code>"
                for side, value in (("client", row["client"]), ("server", row["server"]))
                if value is not None]
    label = esc(_("extension {name}")).format(name=f"<code>{esc(row['extension'])}</code>")
    return (f"<tr><td>{label}</td><td>{yes if client else no}</td>"
            f"<td>{yes if server else no}</td><td>{usable}</td><td>{'; '.join(settings)}</td>"
            "</tr>")


def capabilities_html(capabilities: Capabilities, outcome: VersionOutcome | None,
                      state: State, *, preface: str | None = None) -> str:
    """Capability | client declared | server declared | usable now, plus the version deal.

    ``preface`` (already HTML) replaces the version paragraph: the stateless era
    has no version deal, it has what ``server/discover`` said.
    """
    operating = state is State.OPERATING
    yes = '<span class="yes">' + esc(_("yes")) + "</span>"
    no = '<span class="no">' + esc(_("no")) + "</span>"
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
    rows += [_extension_row_html(row, operating, yes, no)
             for row in capabilities.extensions()]
    if preface is not None:
        version = preface
    elif outcome is None:
        version = "<p>" + esc(_("Version: not negotiated yet.")) + "</p>"
    else:
        version = "<p>" + _("Version: offered {offered}, server answered {answered} → "
                            "{outcome}").format(offered=f"<b>{esc(outcome.offered)}</b>",
                                                answered=f"<b>{esc(outcome.answered)}</b>",
                                                outcome=esc(outcome.outcome)) + "</p>"
    header = _header_cells((_("capability"), _("client declared"), _("server declared"),
                            _("usable now"), _("options")))
    return (f'{STYLE}<div class="mcpnb">{version}<table><tr>{header}</tr>'
            + "".join(rows) + "</table></div>")


# -- the stateless era -------------------------------------------------------------------------

def era_steps_html(steps: Sequence[Any]) -> str:
    """How the era was settled: each probe, verdict, fallback and adoption, in order."""
    if not steps:
        return ""
    items = "".join("<li>" + esc(_("{kind} at {time}s: {detail}")).format(
        kind=f"<b>{esc(step.kind)}</b>", time=f"{step.time:.3f}", detail=esc(step.detail))
        + "</li>" for step in steps)
    title = esc(_("How the era was chosen"))
    return f'{STYLE}<div class="mcpnb"><h4>{title}</h4><ol>{items}</ol></div>'


def stateless_model_html(version: str, state: State, request_meta: dict[str, Any],
                         server_info: dict[str, Any] | None, steps: Sequence[Any]) -> str:
    """The stateless era's "state view": no handshake states, what every request carries."""
    meta_rows = "".join(
        f"<tr><td><code>{esc(key)}</code></td><td>{pretty_json_html(value)}</td></tr>"
        for key, value in request_meta.items())
    server = (pretty_json_html(server_info) if server_info
              else f'<span class="no">{esc(_("none yet"))}</span>')
    code = {name: f"<code>{name}</code>" for name in (
        "params._meta", "resultType", "complete", "input_required", "inputRequests",
        "inputResponses", "requestState", "_meta")}
    head = esc(_("{era}, protocol {version}: connection {state}. There is no handshake and no "
                 "session state: each request stands alone.")).format(
        era=f"<b>{esc(_('Stateless era'))}</b>", version=f"<b>{esc(version)}</b>",
        state=esc(state.value))
    carries = esc(_("Every request carries, in {meta}:")).format(meta=code["params._meta"])
    # The kit's own sentence (no server text in it), so not escaped: its apostrophe stays.
    results = _(
        "Every result carries {resultType} ({complete}, or {input_required}: answer its "
        "{inputRequests} and retry with {inputResponses} and the echoed {requestState}, under a "
        "new id) and the server's identity in {_meta}; latest seen:").format(
        **{key.replace(".", "_"): value for key, value in code.items()})
    return (
        f'{STYLE}<div class="mcpnb"><p>{head}</p><p>{carries}</p>'
        f"<table><tr><th>{esc(_('key'))}</th><th>{esc(_('value'))}</th></tr>{meta_rows}</table>"
        f"<p>{results}</p>{server}</div>{era_steps_html(steps)}"
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
    caption = ("" if live else "<p>" + esc(_(
        "Messages and findings; transport events and the server's stderr are in the live "
        "transcript.")) + "</p>")
    header = _header_cells((*(("#",) if live else ()), _("t (s)"), "", _("kind"), _("method"),
                            "id", _("state"), _("bytes"), _("note"), _("message")))
    return (f'{STYLE}<div class="mcpnb">{caption}<table><tr>{header}</tr>'
            + "".join(rows) + "</table></div>")


def table_html(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A plain table with a header row, every cell escaped."""
    head = _header_cells(header)
    body = "".join("<tr>" + "".join(_cell(cell) for cell in row) + "</tr>" for row in rows)
    return f'{STYLE}<div class="mcpnb"><table><tr>{head}</tr>{body}</table></div>'


def _cell(value: Any) -> str:
    """One table cell; a long value without spaces (a URL, a token id) may break anywhere."""
    text = str(value)
    long = len(text) > 40 and " " not in text
    return f'<td class="long">{esc(text)}</td>' if long else f"<td>{esc(text)}</td>"


def _header_cells(titles: Iterable[str]) -> str:
    return "".join(f"<th>{esc(title)}</th>" for title in titles)


def findings_html(findings: Sequence[Any]) -> str:
    if not findings:
        return (f'{STYLE}<div class="mcpnb">' + esc(_("No findings: no rule was seen broken."))
                + "</div>")
    rows = "".join(
        f"<tr><td>{f.time:.3f}</td><td>{esc(f.side)}</td><td>{esc(f.rule.id)}</td>"
        f"<td>{esc(f.detail)}</td><td>{_rule_source_html(f.rule)}</td></tr>"
        for f in findings
    )
    header = _header_cells((_("t (s)"), _("side"), _("rule"), _("what happened"),
                            _("spec or policy")))
    return f'{STYLE}<div class="mcpnb"><table><tr>{header}</tr>{rows}</table></div>'


def _rule_source_html(rule: Any) -> str:
    """A spec rule links its section; a kit policy says so and names its setting."""
    url = rule.url()
    if url is None:
        return f"<i>{esc(rule.source)}</i>"
    return f'<a href="{esc(url)}" target="_blank">{esc(rule.section)}</a>'



# -- tool results ----------------------------------------------------------------------------------

#: What a result with no content blocks says (rather than nothing at all).
EMPTY_RESULT = N_("(empty result)")


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
    return "\n".join(parts) if parts else _(EMPTY_RESULT)


def content_blocks_html(blocks: Sequence[dict[str, Any]], is_error: bool = False,
                        structured: dict[str, Any] | None = None) -> str:
    """Tool output: text, images (only safe raster data URIs), embedded resources.

    ``structured`` is the result's ``structuredContent`` (2025-06-18 on), shown after
    the blocks: the spec has servers repeat it as text for older clients, but the
    two can differ, and a server author needs to see what was really sent.
    """
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
    if not parts and structured is None:
        parts.append(f"<p><i>{esc(_(EMPTY_RESULT))}</i></p>")
    if structured is not None:
        parts.append(f"<div><b>structuredContent</b>{pretty_json_html(structured)}</div>")
    status = '<b class="finding">isError: true</b>' if is_error else ""
    return f'{STYLE}<div class="mcpnb">{status}{"".join(parts)}</div>'


def failure_html(text: str) -> str:
    """A failure said in place of the answer that did not come."""
    return f'{STYLE}<div class="mcpnb finding">{esc(text)}</div>'


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
        parts.append(f"<p><i>{esc(_(EMPTY_RESULT))}</i></p>")
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
    return "\n".join(lines) if lines else _(EMPTY_RESULT)


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
