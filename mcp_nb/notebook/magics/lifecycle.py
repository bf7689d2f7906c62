"""``%mcp initialize``, ``initialized``, ``state``, ``caps``, ``view``, ``discover``, ``listen``,
``timeout``, ``cancel``: stepping through the lifecycle and steering requests in flight."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ...client.session import Subscription
from ...i18n import N_, _
from ...protocol.models import DiscoverResult
from ..handshake_views import CapabilitiesView, Handshake
from ..lifecycle_view import StateDiagram
from ..widgets import SessionView
from .arguments import session_name
from .table import CommandGroup, McpCellError, Parser

if TYPE_CHECKING:
    from .magic import McpMagics

GROUP = CommandGroup()


def _initialize_arguments(p: Parser) -> None:
    p.add_argument("--version", help=N_("protocol version to offer"))
    p.add_argument("--timeout", type=float)


@GROUP.command("initialize", N_("send initialize (step-through)"), arguments=_initialize_arguments)
def initialize(mcp: McpMagics, args: argparse.Namespace) -> Handshake:
    options = {} if args.timeout is None else {"timeout": args.timeout}
    mcp.session().initialize(args.version, **options)
    return mcp.view().handshake


@GROUP.command("initialized", N_("send notifications/initialized (step-through)"))
def initialized(mcp: McpMagics, args: argparse.Namespace) -> StateDiagram:
    mcp.session().send_initialized()
    return mcp.view().state_diagram


@GROUP.command("state", N_("show the lifecycle state diagram"), arguments=session_name)
def state(mcp: McpMagics, args: argparse.Namespace) -> StateDiagram:
    return mcp.view(args.name).state_diagram


@GROUP.command("caps", N_("show both sides' capabilities and the version negotiation"),
               arguments=session_name)
def caps(mcp: McpMagics, args: argparse.Namespace) -> CapabilitiesView:
    return mcp.view(args.name).capabilities


@GROUP.command("view", N_("show a session's live view: every tab, following the session (the "
                          "other views show the step they were displayed at; default: the current "
                          "session)"), arguments=session_name)
def view(mcp: McpMagics, args: argparse.Namespace) -> SessionView:
    return mcp.view(args.name)


@GROUP.command("discover", N_("send server/discover: the server's versions, capabilities, "
                              "identity"))
def discover(mcp: McpMagics, args: argparse.Namespace) -> DiscoverResult:
    return mcp.session().discover()


def _listen_arguments(p: Parser) -> None:
    p.add_argument("--tools", action="store_true", help=N_("notifications/tools/list_changed"))
    p.add_argument("--prompts", action="store_true", help=N_("notifications/prompts/list_changed"))
    p.add_argument("--resources", action="store_true",
                   help=N_("notifications/resources/list_changed"))
    p.add_argument("--uri", action="append", default=[],
                   help=N_("notifications/resources/updated for this resource (repeatable)"))


@GROUP.command("listen", N_("stateless era: open subscriptions/listen for change notifications"),
               arguments=_listen_arguments)
def listen(mcp: McpMagics, args: argparse.Namespace) -> Subscription:
    return mcp.session().listen(tools=args.tools, prompts=args.prompts,
                                resources=args.resources, resource_uris=args.uri)


def _timeout_arguments(p: Parser) -> None:
    p.add_argument("--default", type=float, help=N_("default per-request timeout (seconds)"))
    p.add_argument("--max", type=float, help=N_("maximum even with reset-on-progress"))
    p.add_argument("--reset-on-progress", choices=["on", "off"])


@GROUP.command("timeout", N_("show or set timeouts for the current session"),
               arguments=_timeout_arguments)
def timeout(mcp: McpMagics, args: argparse.Namespace) -> None:
    session = mcp.session().session
    if args.default is not None:
        session.default_timeout = args.default
    if args.max is not None:
        session.max_timeout = args.max
    if args.reset_on_progress is not None:
        session.reset_timeout_on_progress = args.reset_on_progress == "on"
    print(_("timeout {timeout}s, maximum {maximum}s, reset on progress {reset}").format(
        timeout=f"{session.default_timeout:g}", maximum=f"{session.max_timeout:g}",
        reset=_("on") if session.reset_timeout_on_progress else _("off")))


def _cancel_arguments(p: Parser) -> None:
    p.add_argument("id", nargs="?", type=int)
    p.add_argument("--reason", default="cancelled from the notebook")


@GROUP.command("cancel", N_("cancel an in-flight request (the latest by default)"),
               arguments=_cancel_arguments)
def cancel(mcp: McpMagics, args: argparse.Namespace) -> None:
    try:
        cancelled = mcp.session().cancel(args.id, args.reason)
    except ValueError as exc:
        raise McpCellError(str(exc)) from None
    print(_("cancelled request {id} (notifications/cancelled sent)").format(id=cancelled))
