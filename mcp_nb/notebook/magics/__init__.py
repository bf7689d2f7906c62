"""The ``%mcp`` line magic and ``%%mcp`` cell magic.

``%mcp SUBCOMMAND …`` drives named sessions (see ``%mcp --help`` and
``%mcp SUBCOMMAND --help``); ``%%mcp`` sends its cell body as one raw JSON-RPC
message.  Arguments follow IPython's conventions: ``{expr}`` and ``$name`` are
expanded only where they cannot break JSON (a server's argv, URLs, paths,
``--env``/``--header`` values, file names); tool arguments arrive verbatim.

Expected protocol errors fail the cell with one line that names the rule and
what to do (no traceback wall); programming errors keep their traceback.

Layout: :mod:`.table` (the subcommand table the parser and the dispatcher
read), :mod:`.magic` (the ``Magics`` class and :data:`~.magic.GROUPS`), one
module per group of subcommands (:mod:`.sessions`, :mod:`.lifecycle`,
:mod:`.operations`, :mod:`.wire`, :mod:`.explore` and the others
:data:`~.magic.GROUPS` lists), :mod:`.arguments` (reading a line) and
:mod:`.displays` (what the subcommands return).
"""

from __future__ import annotations

from .displays import register_formatters
from .magic import McpMagics
from .magic import parser as build_parser
from .table import CommandGroup, McpCellError

__all__ = ["CommandGroup", "McpCellError", "McpMagics", "build_parser", "register_formatters"]
