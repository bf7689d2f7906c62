"""The server checkup: a report card of an MCP server against the spec, with the evidence.

``python -m mcp_nb.check TARGET`` or ``%mcp check TARGET``; in code::

    from mcp_nb.check import run_checkup, text_summary
    report = await run_checkup("http://127.0.0.1:8000/mcp")
    print(text_summary(report))

docs/checkup.md lists every check with its rule and level.
"""

from .model import CHECKS, Check, Report, Result, SpecRule
from .output import DisplayedReport, html_report, junit_xml, text_summary, to_json
from .runner import run_checkup

__all__ = ["CHECKS", "Check", "DisplayedReport", "Report", "Result", "SpecRule", "html_report",
           "junit_xml", "run_checkup", "text_summary", "to_json"]
