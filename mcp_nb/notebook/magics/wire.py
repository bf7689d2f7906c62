"""``%mcp transcript``, ``findings`` and the ``%%mcp`` cell: what went over the wire, and raw
messages sent as written."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from ...i18n import N_, _
from ..findings_view import FindingsView
from ..transcript_view import FollowingTranscript, TranscriptView
from .arguments import session_name
from .displays import RawView
from .table import CommandGroup, Parser

if TYPE_CHECKING:
    from .magic import McpMagics

GROUP = CommandGroup()


def _transcript_arguments(p: Parser) -> None:
    session_name(p)
    p.add_argument("--export", metavar="FILE",
                   help=N_("write JSON Lines to FILE ({expr} and $name expanded)"))
    p.add_argument("--direction", choices=["send", "recv", "event", "app"],
                   help=N_("app: an MCP App's postMessage lane (app→host, host→app)"))
    p.add_argument("--method")


@GROUP.command("transcript", N_("show (or export) the wire transcript"),
               arguments=_transcript_arguments, expand=("export",))
def transcript(mcp: McpMagics, args: argparse.Namespace) -> Any:
    hosted = mcp.session(args.name)
    if args.export:
        count = hosted.session.transcript.export_jsonl(args.export)
        print(_("wrote {count} entries to {file}").format(count=count, file=args.export))
        return None
    hosted.settle()
    if args.direction == "app" and not args.method:
        # Live: the App lane is written when the kernel gets to the page's messages.
        return FollowingTranscript(hosted.session)
    # A snapshot, as the other views' displays are: the entries up to this cell.
    view = TranscriptView(hosted.session, frozen=True, now=hosted.view.now)
    if args.direction:
        view.direction.value = args.direction
    if args.method:
        view.method.value = args.method
    return view


@GROUP.command("findings", N_("spec violations observed in a session"), arguments=session_name)
def findings(mcp: McpMagics, args: argparse.Namespace) -> FindingsView:
    return mcp.view(args.name).findings


def send_cell(mcp: McpMagics, line: str, cell: str) -> RawView:
    """``%%mcp [NAME]``: the cell body goes out as one message, as written."""
    hosted = mcp.session(line.strip() or None)
    body = cell.strip()
    if "\n" in body:
        # stdio frames by newline: a pretty-printed message is re-serialised onto one
        # line if it is JSON; otherwise it is sent as written (garbage is allowed).
        try:
            body = json.dumps(json.loads(body), ensure_ascii=False)
        except ValueError:
            body = " ".join(body.splitlines())
    return RawView(hosted.send_raw(body))
