"""Plain-text safety: what a server says, made harmless to print in a terminal or a text view.

A server's words reach plain-text views (transcript labels, finding texts,
``text/plain`` reprs).  Printed raw, an ANSI escape sequence recolours or
rewrites the terminal, BEL rings, a bidi override (U+202E) reorders what the
reader sees, and a lone surrogate (half an emoji) cannot be encoded at all.
:func:`plain_text` shows each of those as a visible ``\\uXXXX`` escape instead,
as the HTML views already do (:func:`mcp_nb.notebook.render.esc`).

Example::

    >>> plain_text("ok\\x1b[31m red\\x07 \\u202eevil \\ud800")
    'ok\\\\u001b[31m red\\\\u0007 \\\\u202eevil \\\\ud800'
"""

from __future__ import annotations

import re

# C0 controls except tab and newline, DEL, C1 controls, the bidi marks, embeddings,
# overrides and isolates, and surrogates (which a valid str holds only when lone).
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_UNSAFE_ONE_LINE = re.compile(_UNSAFE.pattern[:-1] + "\t\n]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def plain_text(text: str, *, one_line: bool = False) -> str:
    """``text`` with control, bidi and surrogate characters shown as ``\\uXXXX``.

    ``one_line`` also escapes tab and newline (for labels that must stay one line).
    """
    pattern = _UNSAFE_ONE_LINE if one_line else _UNSAFE
    return pattern.sub(_escape, text)
