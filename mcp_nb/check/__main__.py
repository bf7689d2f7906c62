"""``python -m mcp_nb.check TARGET``: run the checkup; exit 1 when any MUST failed, 2 when
none did but a check crashed (error) or the connection never reached MCP (could not check).

TARGET is a URL (Streamable HTTP) or a command (one quoted argument, or the words
after ``--``): ``python -m mcp_nb.check -- python -m mcp_nb.lab``; or, with
``--config FILE``, the name of an ``mcpServers`` entry in FILE.

``python -m mcp_nb.check --diff BEFORE.json AFTER.json`` compares two reports written
with ``--json`` (before and after a change to the server): exit 1 when a MUST regressed,
2 when a file cannot be read or is not a checkup report.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import anyio

from ..i18n import _
from .diff import diff_html, diff_reports, diff_text, report_problem
from .headers import parse_header
from .output import html_report, junit_xml, text_summary, to_json
from .runner import run_checkup
from .sessions import is_url
from .targets import ConfigError, load_config, run_entry_checkup, server_entry


def _read_report(parser: argparse.ArgumentParser, path: str) -> dict:
    """A saved report; one that cannot be read, or is not a report, exits 2 (argparse's),
    not 1 (a regression)."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        parser.error(_("cannot read the report {path}: {error}").format(path=path, error=exc))
    problem = report_problem(document)
    if problem is not None:
        parser.error(f"{path}: " + _("not a checkup report: {problem}").format(problem=problem))
    return document  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mcp_nb.check",
        description=_("Check an MCP server against the spec: each rule pass / fail / warn / "
                    "not applicable, with the exchange that shows it (error: a check crashed; "
                    "could not check: the connection never reached MCP). Exit status 0: no "
                    "MUST failed; 1: a MUST failed (with --diff: regressed); 2: no MUST "
                    "failed, but a check crashed or could not check (or the arguments or a "
                    "saved report are wrong)."))
    parser.add_argument("target", nargs="*",
                        help=_("a URL, or the server's command; with --config, an mcpServers "
                             "entry's name"))
    parser.add_argument("--config", metavar="FILE",
                        help=_("a Claude-Desktop-style JSON file with mcpServers: TARGET names "
                             "an entry (its command, args, env, cwd; or url and headers)"))
    parser.add_argument("--diff", nargs=2, metavar=("BEFORE", "AFTER"),
                        help=_("compare two reports written with --json instead of checking"))
    parser.add_argument("--json", metavar="FILE", help=_("write the report as JSON"))
    parser.add_argument("--junit", metavar="FILE", help=_("write the report as JUnit XML"))
    parser.add_argument("--html", metavar="FILE",
                        help=_("write the report (or with --diff the comparison) as static "
                               "HTML"))
    parser.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'",
                        help=_("a header for every request to the URL's origin (repeatable): an "
                               "API key, or the Host name a server accepts; the report names it, "
                               "never its value"))
    parser.add_argument("--call-tools", default="", metavar="NAME,…|all",
                        help=_("tools the checkup may call (none by default: tools can have "
                             "side effects)"))
    parser.add_argument("--timeout", type=float, default=10.0,
                        help=_("seconds each request may take (default 10)"))
    parser.add_argument("--no-prompts-get", dest="prompts_get", action="store_false",
                        help=_("send no prompts/get (a read by the spec, but a server may do I/O "
                             "to build a prompt)"))
    parser.add_argument("--no-template-reads", dest="template_reads", action="store_false",
                        help=_("send nothing built from a resource template (a server may do "
                             "I/O to resolve one)"))
    parser.add_argument("--show-requests", action="store_true",
                        help=_("list every request the checkup sent (the summary counts them)"))
    args = parser.parse_args(argv)
    if args.diff:
        if args.target or args.config or args.json or args.junit:
            parser.error(_("--diff compares two saved reports: it takes no target, --config, "
                         "--json or --junit"))
        try:
            diff = diff_reports(*(_read_report(parser, path) for path in args.diff))
        except ValueError as exc:
            parser.error(str(exc))
        if args.html:
            Path(args.html).write_text(diff_html(diff), encoding="utf-8")
        print(diff_text(diff))
        return diff.exit_status
    if not args.target:
        parser.error(_("give a target (a URL, a command, or with --config an entry's name)"))
    headers: dict[str, str] = {}
    for text in args.header:
        try:
            name, value = parse_header(text)
        except ValueError as exc:
            parser.error(str(exc))
        headers[name] = value
    if headers and (args.config or len(args.target) != 1 or not is_url(args.target[0])):
        parser.error(_("--header is for a URL target (an mcpServers entry has its own "
                       "\"headers\")"))
    if args.config:
        if len(args.target) != 1:
            parser.error(_("with --config, TARGET is one mcpServers entry's name"))
        try:
            entry = server_entry(load_config(args.config), args.target[0])
        except ConfigError as exc:
            parser.error(f"{args.config}: {exc}")
        report = anyio.run(lambda: run_entry_checkup(
            entry, call_tools=args.call_tools, timeout=args.timeout,
            prompts_get=args.prompts_get, template_reads=args.template_reads))
    else:
        target = args.target[0] if len(args.target) == 1 else args.target
        report = anyio.run(lambda: run_checkup(
            target, call_tools=args.call_tools, timeout=args.timeout,
            prompts_get=args.prompts_get, template_reads=args.template_reads,
            headers=headers))
    for option, render in ((args.json, to_json), (args.junit, junit_xml),
                           (args.html, html_report)):
        if option:
            Path(option).write_text(render(report), encoding="utf-8")
    print(text_summary(report, show_requests=args.show_requests))
    return report.exit_status


if __name__ == "__main__":
    sys.exit(main())
