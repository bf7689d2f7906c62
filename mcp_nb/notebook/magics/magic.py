"""``%mcp`` / ``%%mcp``: settings, the named sessions, and the dispatch through the table.

``%mcp SUBCOMMAND …`` looks SUBCOMMAND up in the table the groups in
:data:`GROUPS` fill (see :mod:`.table`), parses the line with the parser built
from the same table, and runs the subcommand's function with this object.
"""

from __future__ import annotations

import atexit
import difflib
import importlib
import shlex
import sys
from typing import Any

from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from traitlets import Bool, CaselessStrEnum, Float, Int

from ...i18n import _
from ...protocol.errors import McpError
from ..hosted import HostedSession
from ..loop import BackgroundLoop, Interrupted
from ..widgets import SessionView
from .arguments import expand_arguments, split_json
from .table import CommandGroup, HelpShown, McpCellError, Parser, Subcommand, Usage, build_parser
from .wire import send_cell

#: The modules whose ``GROUP`` of subcommands ``%mcp`` offers, in the order ``--help`` lists
#: them. A new group of subcommands is one module with a ``GROUP`` and one entry here.
GROUPS = (
    "sessions",
    "lifecycle",
    "operations",
    "tasks",
    "apps",
    "wire",
    "recordings",
    "auth",
    "explore",
    "check",
    "language",
)


def command_groups() -> list[CommandGroup]:
    return [importlib.import_module(f"{__package__}.{name}").GROUP for name in GROUPS]


def parser() -> Parser:
    """The whole ``%mcp`` grammar (also used to generate the docs' magics reference)."""
    return build_parser(command_groups())[0]


@magics_class
class McpMagics(Magics):
    """``%mcp`` / ``%%mcp``. Settings via ``%config McpMagics.<name> = …``."""

    default_timeout = Float(30.0, help="Default per-request timeout in seconds.").tag(config=True)
    max_timeout = Float(300.0, help="Upper bound for any request, even with progress.").tag(
        config=True)
    reset_timeout_on_progress = Bool(
        False, help="Restart a request's timeout whenever progress arrives.").tag(config=True)
    stdin_close_grace = Float(
        2.0, help="Seconds to wait after closing a server's stdin before SIGTERM.").tag(
        config=True)
    sigterm_grace = Float(2.0, help="Seconds to wait after SIGTERM before SIGKILL.").tag(
        config=True)
    show_widgets = Bool(True, help="Display live widgets on connect and call.").tag(config=True)
    apps = Bool(True, help="Declare the MCP Apps extension (io.modelcontextprotocol/ui) on "
                           "connect and render an App tool's ui:// resource in the cell "
                           "(connect --no-apps turns it off for one session).").tag(config=True)
    era = CaselessStrEnum(
        ["handshake", "stateless", "auto"], default_value="handshake",
        help="The era %mcp connect speaks without --era: handshake (the tutorials teach it "
             "first), stateless (2026-07-28), or auto (probe, then fall back).").tag(config=True)
    stderr_lines = Int(500, help="stderr lines kept per stdio server.").tag(config=True)

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell, **kwargs)
        self.loop = BackgroundLoop()
        self.sessions: dict[str, HostedSession] = {}
        self.current: str | None = None
        self.parser, self.commands = build_parser(command_groups())
        atexit.register(self.shutdown_all)

    # -- entry points --

    @no_var_expand
    @line_cell_magic
    def mcp(self, line: str, cell: str | None = None) -> Any:
        """Drive MCP sessions. ``%mcp --help`` lists the subcommands."""
        try:
            if cell is not None:
                return send_cell(self, line, cell)
            return self._dispatch(line)
        except HelpShown:
            return None
        except Interrupted as exc:
            raise McpCellError(str(exc)) from None
        except McpError as exc:
            # A refusal carries its override as data; the magics spell it --force (and the
            # Chinese edition brackets the aside with full-width brackets).
            text = exc.worded(clause=_("add --force to send it anyway"),
                              aside=_(" (add --force to send it anyway)"))
            raise McpCellError(f"[{type(exc).__name__}] {text}", rule=exc.rule,
                               override=exc.override) from None

    def _dispatch(self, line: str) -> Any:
        name, _space, rest = line.strip().partition(" ")
        if not name:
            raise Usage(_("a subcommand is needed; %mcp --help lists them"))
        command: Subcommand | None = self.commands.get(name)
        if command is None and not name.startswith("-"):
            close = difflib.get_close_matches(name, self.commands, n=1)
            hint = _("did you mean {command}? ").format(command=close[0]) if close else ""
            raise Usage(_("%mcp has no subcommand {name}; {hint}%mcp --help lists them").format(
                name=repr(name), hint=hint))
        json_arguments = None
        if command is not None and command.json_arguments and "{" in rest:
            json_arguments, rest = split_json(rest)
        tokens = [name, *shlex.split(rest)]
        # Everything after a bare "--" is the server's argv, kept verbatim (argparse's
        # own "--" handling does not survive subcommands).
        server_argv: list[str] = []
        if "--" in tokens:
            cut = tokens.index("--")
            tokens, server_argv = tokens[:cut], tokens[cut + 1:]
        args = self.parser.parse_args(tokens)
        command = self.commands[args.command]
        if server_argv:
            if not command.server_argv:
                raise Usage(_("'--' followed by a command is only meaningful for {commands}"
                              ).format(commands=", ".join(
                                  c.name for c in self.commands.values() if c.server_argv)))
            args.target = [*args.target, *server_argv]
        args.json = json_arguments
        expand_arguments(args, command.expand, self.namespace, command.objects)
        return command.run(self, args)

    @property
    def namespace(self) -> dict[str, Any]:
        """The notebook's variables (what ``{expr}`` and ``--sampling NAME`` see)."""
        return self.shell.user_ns if self.shell is not None else {}

    # -- sessions --

    def session(self, name: str | None = None) -> HostedSession:
        """The named session, or the current one."""
        key = name or self.current
        if key is None:
            raise McpCellError(_("no session yet: open one with %mcp connect"))
        if key not in self.sessions:
            raise McpCellError(_("no session named {name}; open sessions: {names}").format(
                name=repr(key), names=", ".join(self.sessions) or _("none")))
        return self.sessions[key]

    def view(self, name: str | None = None) -> SessionView:
        return self.session(name).view

    # -- teardown --

    def shutdown_all(self) -> None:
        """Shut every session down (``%unload_ext``, kernel exit)."""
        for hosted in list(self.sessions.values()):
            try:
                hosted.close()
            except Exception as exc:  # keep closing the others
                print(f"mcp_nb: closing {hosted.name!r} failed: {exc}", file=sys.stderr)
        self.loop.stop()
        atexit.unregister(self.shutdown_all)
