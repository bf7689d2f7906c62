"""``%mcp app``: render an MCP App tool's ``ui://`` resource, or walk its lifecycle step by step."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ...apps import meta
from ...i18n import N_, _
from ..app_host import declares_apps
from ..app_stepper import AppStepper
from ..apps import AppSequence
from .arguments import key_values
from .operations import check_arguments
from .table import CommandGroup, McpCellError, Parser

if TYPE_CHECKING:
    from .magic import McpMagics

GROUP = CommandGroup()


def _app_arguments(p: Parser) -> None:
    p.add_argument("tool", nargs="?", help=N_("an App tool (its _meta.ui.resourceUri names a "
                                              "ui:// resource)"))
    p.add_argument("arguments", nargs="*", metavar="k=v")
    p.add_argument("--step", action="store_true",
                   help=N_("do nothing yet: each %%mcp app --next then does one step of the host "
                           "(call, read, csp, load, input, result, teardown)"))
    p.add_argument("--next", action="store_true", help=N_("do the next step of the App being "
                                                          "stepped through"))
    p.add_argument("--sequence", action="store_true",
                   help=N_("draw this session's App traffic with the MCP wire beside it: App ⇄ "
                           "host ⇄ server, from the first App message on (the last 60)"))


@GROUP.command("app", N_("render an MCP App tool in the cell (%mcp app TOOL k=v …), or step "
                         "through its lifecycle (--step, then --next)"),
               arguments=_app_arguments, json_arguments=True)
def app(mcp: McpMagics, args: argparse.Namespace) -> Any:
    hosted = mcp.session()
    if args.sequence:
        return AppSequence(hosted.session.transcript)
    if args.next:
        stepper: AppStepper | None = hosted.app_stepper
        if stepper is None:
            raise McpCellError(_("no App is being stepped through: %mcp app TOOL --step "
                                 "first"))
        return stepper.step()
    if not args.tool:
        raise McpCellError(_("name an App tool: %mcp app TOOL k=v … (or --next)"))
    if not declares_apps(hosted.session):
        raise McpCellError(_("this session did not declare the MCP Apps extension "
                             "(connected with --no-apps): the server may not offer its App "
                             "tools"))
    tool = hosted.tool(args.tool)
    if tool is None:
        raise McpCellError(_("no tool {name} on this server").format(name=repr(args.tool)))
    if meta.resource_uri(tool) is None:
        raise McpCellError(_("{name} is not an App tool: its _meta names no ui:// resource "
                             "(%mcp call shows its result)").format(name=args.tool))
    arguments = dict(args.json or {})
    arguments.update(key_values(args.arguments, parse_json=True))
    check_arguments(hosted, args.tool, arguments)
    stepper = AppStepper(hosted, tool, arguments)
    if args.step:
        hosted.app_stepper = stepper
        return stepper.plan()
    stepper.step()  # call
    stepper.step()  # read (the CSP step only shows what the frame then applies)
    view = stepper.view
    if view.host is not None:
        view.host.deliver = True  # not stepping: input and result go once initialized
        view.load()
    return view
