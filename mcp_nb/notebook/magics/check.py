"""``%mcp check``: the server checkup in a cell — a widget with a summary by area, filters, and
each row's evidence; ``--diff`` compares two saved reports."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...check import Report, run_checkup
from ...check.diff import DisplayedDiff, diff_reports
from ...check.headers import parse_header
from ...check.output import to_json
from ...check.runner import Target
from ...check.targets import ConfigError, load_config, run_entry_checkup, server_entry
from ...client import ClientSession
from ...i18n import N_, _
from ..check_view import CheckView
from .table import CommandGroup, McpCellError, Parser, Usage

if TYPE_CHECKING:
    from .magic import McpMagics

GROUP = CommandGroup()


def _check_arguments(p: Parser) -> None:
    p.add_argument("target", nargs="*",
                   help=N_("an http(s):// URL; after --: the server command and its arguments; "
                           "with --config: an mcpServers entry's name; omit all (and --session) "
                           "to check the bundled lab server"))
    p.add_argument("--session", nargs="?", const="", metavar="NAME",
                   help=N_("check an open session instead (default: the current one); only the "
                           "checks that need no new connection run"))
    p.add_argument("--config",
                   help=N_("a Claude-Desktop-style JSON file with mcpServers (or {servers}: a "
                           "dict of that shape): TARGET names the entry to check"))
    p.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'",
                   help=N_("a header for every request to the URL's origin (repeatable): an "
                           "API key, or the Host name a server accepts; the report names it, "
                           "never its value"))
    p.add_argument("--call-tools", default="", metavar="NAME,…|all",
                   help=N_("tools the checkup may call (none by default: tools can have side "
                           "effects)"))
    p.add_argument("--timeout", type=float, default=10.0,
                   help=N_("seconds each request may take (default 10)"))
    p.add_argument("--no-prompts-get", dest="prompts_get", action="store_false",
                   help=N_("send no prompts/get (a read by the spec, but a server may do I/O "
                           "to build a prompt)"))
    p.add_argument("--no-template-reads", dest="template_reads", action="store_false",
                   help=N_("send nothing built from a resource template (a server may do I/O "
                           "to resolve one)"))
    p.add_argument("--lab", action="append", default=[], metavar="FLAG",
                   help=N_("fault knob for the bundled lab server, e.g. --lab=--reject-version"))
    p.add_argument("--save", "--json", dest="save", metavar="FILE",
                   help=N_("also write the report as JSON to FILE (to compare later with --diff)"))
    p.add_argument("--diff", nargs=2, metavar=("BEFORE", "AFTER"),
                   help=N_("compare two reports (JSON files written with --save, or {report} "
                           "objects) instead of checking: fixed, regressed, new, gone"))


def _shown_command(argv: list[str]) -> str:
    """A command as the report names it: this kernel's interpreter as ``python`` (its path
    differs from machine to machine, and a saved notebook should not)."""
    return shlex.join(["python" if argv[0] == sys.executable else argv[0], *argv[1:]])


def _report_document(source: Any) -> Report | Mapping[str, Any]:
    """A report to compare: a JSON file's path, a Report, a dict, or a shown checkup."""
    source = getattr(source, "report", source)  # a CheckView from an earlier cell
    if isinstance(source, Report | Mapping):
        return source
    if not isinstance(source, str | os.PathLike):
        raise Usage(_("--diff takes two JSON reports (files written with --save) or report "
                      "objects, not {kind}").format(kind=type(source).__name__))
    try:
        return json.loads(Path(source).read_text(encoding="utf-8"))  # type: ignore[no-any-return]
    except (OSError, ValueError) as exc:
        raise McpCellError(_("cannot read the report {path}: {error}").format(
            path=source, error=exc)) from None


@GROUP.command("check", N_("check a server against the spec: pass / fail / warn / not applicable "
                           "per rule (MUST, SHOULD), with the exchange that shows it"),
               arguments=_check_arguments, server_argv=True, expand=("target", "save"),
               objects=("config", "diff"))
def check(mcp: McpMagics, args: argparse.Namespace) -> CheckView | DisplayedDiff:
    if args.diff:
        if args.target or args.session is not None or args.config is not None:
            raise Usage(_("--diff compares two saved reports: give no target"))
        try:
            return DisplayedDiff(diff_reports(*map(_report_document, args.diff)))
        except ValueError as exc:
            raise McpCellError(str(exc)) from None
    target: Target
    sessions: dict[str, ClientSession] = {}
    shown: str | None = None
    headers: dict[str, str] = {}
    if args.session is not None:
        if args.target:
            raise Usage(_("give a target or --session, not both"))
        hosted = mcp.session(args.session or None)
        if hosted.closed:
            raise McpCellError(_("session {name} is closed: connect again, or check its "
                                 "target").format(name=repr(hosted.name)))
        target = hosted.session
        # The runner calls the checked session "main": its evidence opens this transcript.
        sessions["main"] = hosted.session
    elif args.config is not None:
        if len(args.target) != 1:
            raise Usage(_("with --config, give one mcpServers entry's name"))
        if args.header:
            raise Usage(_("--header is for a URL target (an mcpServers entry has its own "
                          "\"headers\")"))
        try:
            entry = server_entry(load_config(args.config), args.target[0])
        except ConfigError as exc:
            raise McpCellError(str(exc)) from None
        report = mcp.loop.run(run_entry_checkup(
            entry, call_tools=args.call_tools, timeout=args.timeout,
            prompts_get=args.prompts_get, template_reads=args.template_reads))
        return _shown(report, args)
    elif not args.target:
        from ...client import lab_command

        target = lab_command(*args.lab)
    elif args.target[0].startswith(("http://", "https://")):
        if len(args.target) > 1:
            raise Usage(_("an HTTP server takes no command after its URL"))
        target = args.target[0]
        try:
            headers = dict(parse_header(text) for text in args.header)
        except ValueError as exc:
            raise Usage(str(exc)) from None
    else:
        target = list(args.target)
    if isinstance(target, list):
        shown = _shown_command(target)
    if args.header and not headers:
        raise Usage(_("--header is for a URL target (an mcpServers entry has its own "
                      "\"headers\")"))
    report = mcp.loop.run(run_checkup(target, call_tools=args.call_tools, timeout=args.timeout,
                                      prompts_get=args.prompts_get,
                                      template_reads=args.template_reads, headers=headers))
    if shown is not None:
        report.target = shown
    return _shown(report, args, sessions)


def _shown(report: Report, args: argparse.Namespace,
           sessions: dict[str, ClientSession] | None = None) -> CheckView:
    if args.save:
        Path(args.save).write_text(to_json(report), encoding="utf-8")
    return CheckView(report, sessions)
