"""The table of ``%mcp`` subcommands: groups register here; the parser and the dispatcher read it.

A group of subcommands is one module holding a :class:`CommandGroup`; each
subcommand is declared once, with its help text, its arguments and the
function that runs it::

    GROUP = CommandGroup()

    @GROUP.command("ping", "send ping and show the round trip", arguments=request_options)
    def ping(mcp: McpMagics, args: argparse.Namespace) -> None:
        seconds = mcp.session().ping(**request_settings(args))
        print(f"pong ({seconds * 1000:.1f} ms)")

and the group is switched on by one line in :data:`~mcp_nb.notebook.magics.magic.GROUPS`.
"""

from __future__ import annotations

import argparse
import copy
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, NoReturn

from ...i18n import N_, _


class McpCellError(Exception):
    """An expected failure: the cell fails with one readable line, no traceback.

    ``rule`` and ``override`` say, for code that drives a kernel, what the line
    says for people (as :class:`~mcp_nb.protocol.errors.McpError`'s do): the rule
    involved, and ``"force"`` when adding ``--force`` sends the refused message anyway.
    """

    def __init__(self, message: str, *, rule: str | None = None,
                 override: str | None = None) -> None:
        super().__init__(message)
        self.rule = rule
        self.override = override

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


class Usage(McpCellError):
    """The magic line does not parse."""


class HelpShown(Exception):
    """``--help`` was printed: the cell ends quietly."""


class TranslatedHelp(argparse.HelpFormatter):
    """Help texts in the kit's language of the moment ``--help`` is asked for.

    The texts are declared once, at import, marked with ``N_`` for the catalogs; a
    parser is built once, so the translation happens here, when help is written.
    """

    def add_text(self, text: str | None) -> None:
        super().add_text(_(text) if text and text is not argparse.SUPPRESS else text)

    def _expand_help(self, action: argparse.Action) -> str:
        text = action.help
        if text and text is not argparse.SUPPRESS:
            translated = _(text)
            if translated == text:
                # A subcommand's help arrives %-escaped for argparse: the catalog has it plain.
                plain = text.replace("%%", "%")
                translated = _(plain).replace("%", "%%") if _(plain) != plain else text
            if translated != text:
                action = copy.copy(action)
                action.help = translated
        return super()._expand_help(action)


class Parser(argparse.ArgumentParser):
    """argparse that fails the cell instead of exiting the kernel."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", TranslatedHelp)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise Usage(f"{message}\n{self.format_usage().strip()}")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            print(message, file=sys.stderr)
        raise HelpShown()


Handler = Callable[[Any, argparse.Namespace], Any]


@dataclass(frozen=True)
class Subcommand:
    """One ``%mcp NAME …``.

    ``expand`` names the parsed arguments where ``{expr}`` and ``$name`` are
    expanded from the notebook's namespace (argv, URLs, paths, ``K=V`` values:
    never JSON); in those ``objects`` names, a lone ``{expr}`` or ``$name`` is the
    notebook's object itself (a callable, a dict), not its text.  ``json_arguments``: a
    ``{…}`` object on the line is tool
    arguments, pulled out before splitting.  ``server_argv``: everything after
    a bare ``--`` is the server's command, kept verbatim.
    """

    name: str
    help: str
    run: Handler
    arguments: Callable[[Parser], None] | None = None
    expand: tuple[str, ...] = ()
    json_arguments: bool = False
    server_argv: bool = False
    objects: tuple[str, ...] = ()


class CommandGroup:
    """The subcommands one module contributes, in the order they are declared."""

    def __init__(self) -> None:
        self.commands: list[Subcommand] = []

    def command(self, name: str, help: str, *, arguments: Callable[[Parser], None] | None = None,
                expand: tuple[str, ...] = (), json_arguments: bool = False,
                server_argv: bool = False, objects: tuple[str, ...] = ()
                ) -> Callable[[Handler], Handler]:
        """Declare ``%mcp NAME``; the decorated function runs it."""

        def register(run: Handler) -> Handler:
            self.commands.append(Subcommand(name, help, run, arguments, expand, json_arguments,
                                            server_argv, objects))
            return run

        return register


def build_parser(groups: Iterable[CommandGroup]) -> tuple[Parser, dict[str, Subcommand]]:
    """The ``%mcp`` grammar and the subcommands by name, both from the same table."""
    root = Parser(prog="%mcp",
                  description=N_("Open and drive MCP client sessions from a notebook."))
    sub = root.add_subparsers(dest="command", metavar="SUBCOMMAND", parser_class=Parser)
    table: dict[str, Subcommand] = {}
    for group in groups:
        for command in group.commands:
            if command.name in table:
                raise ValueError(f"%mcp {command.name} is declared twice")
            table[command.name] = command
            # argparse %-formats help strings (not descriptions): "%mcp" must be escaped there.
            parser = sub.add_parser(command.name, help=command.help.replace("%", "%%"),
                                    description=command.help)
            if command.arguments is not None:
                command.arguments(parser)  # type: ignore[arg-type]
    return root, table
