"""Every ``%mcp`` view's text/plain, from a real lab server with ``--hostile-strings``.

A plain-text front end (a terminal console, nbconvert to text, a pager) prints
text/plain as it is: a raw ESC recolours or rewrites the screen, BEL rings, a
U+202E override reverses what follows.  Each listing, result and widget repr
must show them as visible ``\\uXXXX`` escapes instead (one sink:
``mcp_nb.protocol.plaintext.plain_text``).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from mcp_nb.lab.content import HELLO_URI, HOSTILE_TOOL_NAME
from mcp_nb.notebook.magics.displays import Listing

LAB = f"{sys.executable} -m mcp_nb.lab"
#: What must never reach a plain-text view raw.
RAW = {"U+202E": "\u202e", "ESC": "\x1b", "BEL": "\x07"}


def _text_plain(shell: Any, value: Any) -> str:
    data, _metadata = shell.display_formatter.format(value)
    return str(data["text/plain"])


def test_every_views_text_plain_shows_control_and_bidi_characters_escaped(mcp) -> None:
    mcp(f"connect hostile -- {LAB} --hostile-strings")
    views = {
        "tools": mcp("tools"),
        "resources": mcp("resources"),
        "prompts": mcp("prompts"),
        "read": mcp(f"read {HELLO_URI}"),
        "prompt": mcp("prompt greet name=Ada"),
        "call": mcp("call echo text=hi"),
        "call-hostile": mcp('call echo {"text": "\\u001b[31mred\\u0007 \\u202eevil"}'),
        "raw": mcp.shell.run_cell_magic("mcp", "", json.dumps({
            "jsonrpc": "2.0", "id": 99, "method": "tools/call",
            "params": {"name": HOSTILE_TOOL_NAME, "arguments": {"text": "\u202e"}}})),
        "transcript": mcp("transcript"),
        "sessions": mcp("sessions"),
        "state": mcp("state"),
        "caps": mcp("caps"),
        "view": mcp("view"),
        "findings": mcp("findings"),
        "explore": mcp("explore"),
    }
    leaks = [f"%mcp {what}: raw {name} in {text!r}"
             for what, text in ((what, _text_plain(mcp.shell, value))
                                for what, value in views.items())
             for name, character in RAW.items() if character in text]
    assert leaks == []
    # The hostile tool's name is listed, its override shown as an escape, not dropped.
    assert "\\u202e" in _text_plain(mcp.shell, views["tools"])
    # A result that opens with them (the server echoes them back).
    assert _text_plain(mcp.shell, views["call-hostile"]).startswith(
        "ToolResult (ok): \\u001b[31mred\\u0007 \\u202eevil")


def test_a_listing_with_its_own_repr_is_still_neutralised(ip) -> None:
    class Facts(Listing):  # as %mcp auth's state and steps are: a __repr__ of their own
        def __repr__(self) -> str:
            return "\n".join(f"{name}: {value}" for name, value in self.rows)

    facts = Facts("facts", ("", "value"), [("issuer", "https://as.example\u202e\x1b[2J")], [])
    assert _text_plain(ip, facts) == "issuer: https://as.example\\u202e\\u001b[2J"
