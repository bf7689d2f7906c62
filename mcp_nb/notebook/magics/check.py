"""``%mcp check``: the server checkup in a cell — a table by area, each row with its evidence."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ...check import DisplayedReport, run_checkup
from ...check.runner import Target
from ...i18n import _
from .table import CommandGroup, McpCellError, Parser, Usage

if TYPE_CHECKING:
    from .magic import McpMagics

GROUP = CommandGroup()


def _check_arguments(p: Parser) -> None:
    p.add_argument("target", nargs="*",
                   help="an http(s):// URL, or after --: the server command and its arguments; "
                        "omit both (and --session) to check the bundled lab server")
    p.add_argument("--session", nargs="?", const="", metavar="NAME",
                   help="check an open session instead (default: the current one); only the "
                        "checks that need no new connection run")
    p.add_argument("--call-tools", default="", metavar="NAME,…|all",
                   help="tools the checkup may call (none by default: tools can have side "
                        "effects)")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds each request may take (default 10)")
    p.add_argument("--lab", action="append", default=[], metavar="FLAG",
                   help="fault knob for the bundled lab server, e.g. --lab=--reject-version")


@GROUP.command("check", "check a server against the spec: pass / fail / warn / not applicable "
                        "per rule (MUST, SHOULD), with the exchange that shows it",
               arguments=_check_arguments, server_argv=True, expand=("target",))
def check(mcp: McpMagics, args: argparse.Namespace) -> DisplayedReport:
    target: Target
    if args.session is not None:
        if args.target:
            raise Usage(_("give a target or --session, not both"))
        hosted = mcp.session(args.session or None)
        if hosted.closed:
            raise McpCellError(_("session {name} is closed: connect again, or check its "
                                 "target").format(name=repr(hosted.name)))
        target = hosted.session
    elif not args.target:
        from ...client import lab_command

        target = lab_command(*args.lab)
    elif args.target[0].startswith(("http://", "https://")):
        if len(args.target) > 1:
            raise Usage(_("an HTTP server takes no command after its URL"))
        target = args.target[0]
    else:
        target = list(args.target)
    report = mcp.loop.run(run_checkup(target, call_tools=args.call_tools,
                                      timeout=args.timeout))
    return DisplayedReport(report)
