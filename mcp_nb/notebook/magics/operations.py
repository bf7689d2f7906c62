"""``%mcp tools``, ``call``, ``form``, ``resources``, ``read``, ``subscribe``, ``prompts``,
``prompt``, ``ping``, ``log-level``: the operation phase, one request each."""

from __future__ import annotations

import argparse
import threading
from typing import TYPE_CHECKING, Any

from ...i18n import N_, _
from ...protocol.lifecycle import State
from ...protocol.models import LOG_LEVELS
from ...protocol.versions import Era
from ..apps import app_note, app_view_for_call, app_view_while_running
from ..forms import ToolForm
from ..request_views import CallProgress, RequestProgress
from .arguments import key_values, request_options, request_settings
from .displays import BackgroundCall, Listing, PromptMessages, ResourceContents
from .table import CommandGroup, McpCellError, Parser

if TYPE_CHECKING:
    from ..hosted import HostedSession
    from .magic import McpMagics

GROUP = CommandGroup()


@GROUP.command("tools", N_("list the server's tools"), arguments=request_options)
def tools(mcp: McpMagics, args: argparse.Namespace) -> Listing:
    hosted = mcp.session()
    found = hosted.list_tools(**request_settings(args))
    hosted.remember_tools(found)
    return Listing(N_("tools"), (N_("name"), N_("title"), N_("description")),
                   [(t.name, t.title or "", app_note(t) + (t.description or ""))
                    for t in found], found)


def _call_arguments(p: Parser) -> None:
    p.add_argument("tool")
    p.add_argument("arguments", nargs="*", metavar="k=v")
    p.add_argument("--background", action="store_true",
                   help=N_("return at once with a live progress widget (its Cancel button works "
                           "because the kernel stays free)"))
    p.add_argument("--reset-on-progress", action="store_true",
                   help=N_("restart the timeout whenever progress arrives"))
    p.add_argument("--max-timeout", type=float, help=N_("upper bound even with progress"))
    p.add_argument("--timeout", type=float, help=N_("seconds to wait (overrides the default)"))
    p.add_argument("--force", action="store_true",
                   help=N_("send even if the arguments do not match the tool's inputSchema, or "
                           "the lifecycle or capabilities forbid it (a finding is recorded)"))


@GROUP.command("call", N_("call a tool: %mcp call TOOL {json} or k=v … (checked against the "
                          "tool's inputSchema first; --force sends anyway)"),
               arguments=_call_arguments, json_arguments=True)
def call(mcp: McpMagics, args: argparse.Namespace) -> Any:
    hosted = mcp.session()
    arguments = dict(args.json or {})
    arguments.update(key_values(args.arguments, parse_json=True))
    if not args.force:
        check_arguments(hosted, args.tool, arguments)
    options = request_settings(args)
    if args.reset_on_progress:
        options["reset_timeout_on_progress"] = True
    if args.max_timeout is not None:
        options["max_timeout"] = args.max_timeout
    method = f"tools/call {args.tool}"
    timeout = options.get("timeout", hosted.session.default_timeout)
    # A blocking call goes live only if it lasts (see CallProgress); a --background one
    # is live at once, since its Cancel button works while the kernel is free.
    progress = (RequestProgress(method, timeout) if args.background else
                CallProgress(method, timeout, shown=mcp.show_widgets))
    progress.on_cancel = lambda request_id: hosted.loop.submit(
        hosted.session.cancel(request_id, "Cancel button"))
    on_wire = threading.Event()

    def sent(request_id: int) -> None:
        # Shown once on the wire: a request the guard refuses never gets a view.
        progress.sent(request_id)
        on_wire.set()

    options["on_progress"] = progress.progress
    options["on_sent"] = sent
    job = progress.follow(hosted.session.call_tool(args.tool, arguments, **options),
                          hosted.progress_widgets)
    if not args.background:
        result = hosted.run(job)
        # An App tool renders its ui:// resource (the result goes to the App and shows below).
        app = app_view_for_call(hosted, args.tool, arguments, result, progress.request_id)
        return result if app is None else app
    future = hosted.loop.submit(job)
    while not on_wire.wait(0.05) and not future.done():
        pass
    if future.done() and progress.request_id is None:
        future.result()  # refused before it was sent: the cell fails with the reason
    # An App tool's App shows while the call runs; it gets the result, or tool-cancelled.
    app_view_while_running(hosted, args.tool, arguments, future, progress.request_id)
    return BackgroundCall(progress, future)


#: The rule of the magic's own check of a call's arguments (its refusal's ``rule``; the
#: conformance kernel player resends a refusal of this rule with --force).
ARGUMENTS_NOT_IN_SCHEMA = "arguments-not-in-schema"


def check_arguments(hosted: HostedSession, name: str, arguments: dict[str, Any]) -> None:
    """Fail the cell, naming each field, if ``arguments`` do not fit the tool's inputSchema."""
    if hosted.session.state is not State.OPERATING or \
            "tools" not in hosted.session.capabilities.server:
        # Not now: the guard refuses the call itself, naming tools/call (the request the
        # learner made), not a tools/list fetched behind their back for its schema.
        return
    check = hosted.arguments_check(name)
    if check is None:
        return  # an unknown tool is the server's to refuse (its -32602 is worth seeing)
    found = check.problems(arguments)
    if found:
        raise McpCellError(_("not sent: the arguments do not fit {tool}'s inputSchema: "
                             "{problems} (--force sends them anyway)").format(
                                 tool=name, problems="; ".join(found)),
                           rule=ARGUMENTS_NOT_IN_SCHEMA, override="force")


@GROUP.command("form", N_("a form for calling TOOL, generated from its inputSchema"),
               arguments=lambda p: p.add_argument("tool"))
def form(mcp: McpMagics, args: argparse.Namespace) -> ToolForm:
    hosted = mcp.session()
    found = hosted.list_tools()
    hosted.remember_tools(found)
    by_name = {tool.name: tool for tool in found}
    if args.tool not in by_name:
        raise McpCellError(_("no tool {tool}; the server has {tools}").format(
            tool=repr(args.tool), tools=", ".join(by_name)))
    tool = by_name[args.tool]
    return ToolForm(tool, lambda arguments: hosted.loop.submit(
        hosted.session.call_tool(tool.name, arguments)))


@GROUP.command("resources", N_("list the server's resources"), arguments=request_options)
def resources(mcp: McpMagics, args: argparse.Namespace) -> Listing:
    found = mcp.session().list_resources(**request_settings(args))
    return Listing(N_("resources"), ("uri", N_("name"), N_("MIME type")),
                   [(r.uri, r.name, r.mimeType or "") for r in found], found)


def _uri_arguments(p: Parser) -> None:
    p.add_argument("uri")
    request_options(p)


@GROUP.command("read", N_("read a resource"), arguments=_uri_arguments)
def read(mcp: McpMagics, args: argparse.Namespace) -> ResourceContents:
    return ResourceContents(mcp.session().read_resource(args.uri, **request_settings(args)))


@GROUP.command("subscribe", N_("subscribe to a resource"), arguments=_uri_arguments)
def subscribe(mcp: McpMagics, args: argparse.Namespace) -> None:
    mcp.session().subscribe_resource(args.uri, **request_settings(args))
    print(_("subscribed to {uri}; updates appear in the transcript").format(uri=args.uri))


@GROUP.command("unsubscribe", N_("unsubscribe from a resource"), arguments=_uri_arguments)
def unsubscribe(mcp: McpMagics, args: argparse.Namespace) -> None:
    mcp.session().unsubscribe_resource(args.uri, **request_settings(args))
    print(_("unsubscribed from {uri}").format(uri=args.uri))


@GROUP.command("prompts", N_("list the server's prompts"), arguments=request_options)
def prompts(mcp: McpMagics, args: argparse.Namespace) -> Listing:
    found = mcp.session().list_prompts(**request_settings(args))
    return Listing(N_("prompts"), (N_("name"), N_("title"), N_("description")),
                   [(p.name, p.title or "", p.description or "") for p in found], found)


def _prompt_arguments(p: Parser) -> None:
    p.add_argument("prompt")
    p.add_argument("arguments", nargs="*", metavar="k=v")
    request_options(p)


@GROUP.command("prompt", N_("get a prompt: %mcp prompt NAME k=v …"), arguments=_prompt_arguments)
def prompt(mcp: McpMagics, args: argparse.Namespace) -> PromptMessages:
    # Prompt arguments are strings by the spec: no JSON parsing here.
    arguments = key_values(args.arguments, parse_json=False)
    return PromptMessages(
        mcp.session().get_prompt(args.prompt, arguments, **request_settings(args)))


@GROUP.command("ping", N_("send ping and show the round trip"), arguments=request_options)
def ping(mcp: McpMagics, args: argparse.Namespace) -> None:
    seconds = mcp.session().ping(**request_settings(args))
    print(_("pong ({time})").format(time=f"{seconds * 1000:.1f} ms"))


def _log_level_arguments(p: Parser) -> None:
    p.add_argument("level", choices=LOG_LEVELS)
    request_options(p)


@GROUP.command("log-level", N_("logging/setLevel"), arguments=_log_level_arguments)
def log_level(mcp: McpMagics, args: argparse.Namespace) -> None:
    hosted = mcp.session()
    if hosted.era is Era.STATELESS and not args.force:
        # No logging/setLevel in this era: the level rides on every request instead.
        hosted.session.log_level = args.level
        print(_("every request now asks for log level {level} (stateless era: "
                "io.modelcontextprotocol/logLevel in _meta)").format(level=args.level))
        return
    hosted.set_logging_level(args.level, **request_settings(args))
    print(_("log level set to {level}").format(level=args.level))
