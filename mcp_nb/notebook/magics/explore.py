"""``%mcp explore``: one widget to explore a server: tools, resources, prompts, notifications."""

from __future__ import annotations

import argparse
import concurrent.futures
from typing import TYPE_CHECKING

from ...i18n import N_
from ..explorer import Explorer
from .arguments import session_name
from .table import CommandGroup

if TYPE_CHECKING:
    from .magic import McpMagics

GROUP = CommandGroup()
#: How long ``%mcp explore`` waits for the server's lists before showing what it has.
LIST_WAIT_SECONDS = 30.0


@GROUP.command("explore", N_("explore a server: tools (form → result), resources (read by MIME "
                             "type), prompts (arguments → messages), notifications, stderr and "
                             "the calls made, in one widget (also a tab of the session view)"),
               arguments=session_name)
def explore(mcp: McpMagics, args: argparse.Namespace) -> Explorer:
    hosted = mcp.session(args.name)
    explorer = Explorer(hosted)
    # Whole lists before the cell ends: the saved output is then the same on every run.
    concurrent.futures.wait(explorer.loading, timeout=LIST_WAIT_SECONDS)
    hosted.view.add_tab("Explore", explorer)
    return explorer
