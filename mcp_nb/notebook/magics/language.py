"""``%mcp lang``: the language the kit speaks in this kernel (English, or Chinese)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ...i18n import LANGUAGES, N_, _, language, set_language
from .table import CommandGroup

if TYPE_CHECKING:
    from .magic import McpMagics

GROUP = CommandGroup()


@GROUP.command("lang", N_("the language of the kit's widgets, tables and messages in this "
                          "kernel: en (the default) or zh (the Chinese edition's notebooks)"),
               arguments=lambda p: p.add_argument("language", nargs="?", choices=LANGUAGES))
def lang(mcp: McpMagics, args: argparse.Namespace) -> None:
    if args.language is not None:
        set_language(args.language)
    print(_("the kit speaks: {language}").format(language=language()))
