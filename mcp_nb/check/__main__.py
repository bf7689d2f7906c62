"""``python -m mcp_nb.check TARGET``: run the checkup; exit 1 when any MUST failed.

TARGET is a URL (Streamable HTTP) or a command (one quoted argument, or the words
after ``--``): ``python -m mcp_nb.check -- python -m mcp_nb.lab``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import anyio

from .output import html_report, junit_xml, text_summary, to_json
from .runner import run_checkup


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mcp_nb.check",
        description="Check an MCP server against the spec: each rule pass / fail / warn / "
                    "not applicable, with the exchange that shows it. Exit status 1 when a "
                    "MUST failed.")
    parser.add_argument("target", nargs="+", help="a URL, or the server's command")
    parser.add_argument("--json", metavar="FILE", help="write the report as JSON")
    parser.add_argument("--junit", metavar="FILE", help="write the report as JUnit XML")
    parser.add_argument("--html", metavar="FILE", help="write the report as static HTML")
    parser.add_argument("--call-tools", default="", metavar="NAME,…|all",
                        help="tools the checkup may call (none by default: tools can have "
                             "side effects)")
    parser.add_argument("--timeout", type=float, default=10.0,
                        help="seconds each request may take (default 10)")
    args = parser.parse_args(argv)
    target = args.target[0] if len(args.target) == 1 else args.target
    report = anyio.run(lambda: run_checkup(target, call_tools=args.call_tools,
                                           timeout=args.timeout))
    for option, render in ((args.json, to_json), (args.junit, junit_xml),
                           (args.html, html_report)):
        if option:
            Path(option).write_text(render(report), encoding="utf-8")
    print(text_summary(report))
    return report.exit_status


if __name__ == "__main__":
    sys.exit(main())
