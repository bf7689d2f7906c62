"""The server checkup: a report card of an MCP server against the spec, with the evidence.

``python -m mcp_nb.check TARGET`` or ``%mcp check TARGET``; in code::

    from mcp_nb.check import diff_reports, diff_text, run_checkup, text_summary
    report = await run_checkup("http://127.0.0.1:8000/mcp")
    print(text_summary(report))
    later = await run_checkup("http://127.0.0.1:8000/mcp")   # after a change to the server
    print(diff_text(diff_reports(report, later)))          # fixed, regressed, new, gone

docs/checkup.md lists every check with its rule and level.
"""

from .catalogue import CHECKS
from .diff import ReportDiff, diff_html, diff_reports, diff_text
from .model import Check, Report, Result, SpecRule
from .output import DisplayedReport, html_report, junit_xml, text_summary, to_json
from .runner import run_checkup
from .targets import ServerEntry, load_config, run_entry_checkup, server_entry

__all__ = ["CHECKS", "Check", "DisplayedReport", "Report", "ReportDiff", "Result", "ServerEntry",
           "SpecRule", "diff_html", "diff_reports", "diff_text", "html_report", "junit_xml",
           "load_config", "run_checkup", "run_entry_checkup", "server_entry", "text_summary",
           "to_json"]
