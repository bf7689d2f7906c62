"""A session diff as HTML: every string a server said goes through the notebook's one escaper.

Example::

    from IPython.display import HTML
    HTML(diff_html(diff_recordings(load("a.jsonl"), load("b.jsonl"))))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..i18n import _
from ..notebook.render import STYLE, esc

if TYPE_CHECKING:  # for the annotations only: diff.py imports this module, lazily
    from .diff import Change, SessionDiff

_COLOURS = {"added": "#176b2c", "removed": "#a00", "changed": "#8a5a00",
            "only before": "#a00", "only after": "#176b2c"}


def _rows(changes: list[Change]) -> str:
    rows = []
    for change in changes:
        colour = _COLOURS.get(change.kind, "#555")
        details = "".join(f"<li><code>{esc(detail)}</code></li>" for detail in change.details)
        rows.append(
            f'<tr><td>{esc(change.section)}</td><td style="color:{colour}">{esc(_(change.kind))}'
            f"</td><td><b>{esc(change.name)}</b>"
            + (f'<ul style="margin:2px 0">{details}</ul>' if details else "")
            + "</td></tr>")
    return "".join(rows)


def _table(title: str, changes: list[Change], empty: str) -> str:
    if not changes:
        return f"<h4>{esc(title)}</h4><p class=\"no\">{esc(empty)}</p>"
    head = "".join(f"<th>{esc(text)}</th>" for text in (_("where"), _("what"), _("item")))
    return f"<h4>{esc(title)}</h4><table><tr>{head}</tr>{_rows(changes)}</table>"


def diff_html(diff: SessionDiff) -> str:
    """The diff as a self-contained HTML fragment (styles included)."""
    return (
        f'{STYLE}<div class="mcpnb"><div><code>--- {esc(diff.before)}</code><br>'
        f"<code>+++ {esc(diff.after)}</code></div>"
        + _table(_("Interface"), diff.interface, _("no differences"))
        + _table(_("Behaviour ({count} calls compared)").format(count=diff.compared_calls),
                 diff.behaviour, _("no differences"))
        + "</div>")
