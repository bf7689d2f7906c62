"""A session diff as HTML: every string a server said goes through the notebook's one escaper.

Example::

    from IPython.display import HTML
    HTML(diff_html(diff_recordings(load("a.jsonl"), load("b.jsonl"))))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..notebook.render import STYLE, esc

if TYPE_CHECKING:
    from .diff import Change, SessionDiff

_COLOURS = {"added": "#176b2c", "removed": "#a00", "changed": "#8a5a00",
            "only before": "#a00", "only after": "#176b2c"}


def _rows(changes: list[Change]) -> str:
    rows = []
    for change in changes:
        colour = _COLOURS.get(change.kind, "#555")
        details = "".join(f"<li><code>{esc(detail)}</code></li>" for detail in change.details)
        rows.append(
            f'<tr><td>{esc(change.section)}</td><td style="color:{colour}">{esc(change.kind)}'
            f"</td><td><b>{esc(change.name)}</b>"
            + (f'<ul style="margin:2px 0">{details}</ul>' if details else "")
            + "</td></tr>")
    return "".join(rows)


def _table(title: str, changes: list[Change], empty: str) -> str:
    if not changes:
        return f"<h4>{esc(title)}</h4><p class=\"no\">{esc(empty)}</p>"
    return (f"<h4>{esc(title)}</h4><table><tr><th>where</th><th>what</th><th>item</th></tr>"
            f"{_rows(changes)}</table>")


def diff_html(diff: SessionDiff) -> str:
    """The diff as a self-contained HTML fragment (styles included)."""
    return (
        f'{STYLE}<div class="mcpnb"><div><code>--- {esc(diff.before)}</code><br>'
        f"<code>+++ {esc(diff.after)}</code></div>"
        + _table("Interface", diff.interface, "no differences")
        + _table(f"Behaviour ({diff.compared_calls} calls compared)", diff.behaviour,
                 "no differences")
        + "</div>")
