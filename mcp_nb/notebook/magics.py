"""The ``%mcp`` line magic and ``%%mcp`` cell magic.

``%mcp SUBCOMMAND …`` drives named sessions (see ``%mcp --help`` and
``%mcp SUBCOMMAND --help``); ``%%mcp`` sends its cell body as one raw JSON-RPC
message.  Arguments follow IPython's conventions, but ``{…}`` is never expanded
as a Python variable (``@no_var_expand``), so JSON arrives intact.

Expected protocol errors fail the cell with one line that names the rule and
what to do (no traceback wall); programming errors keep their traceback.
"""

from __future__ import annotations

import argparse
import atexit
import json
import shlex
import sys
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit

import anyio
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from IPython.display import display
from traitlets import Bool, CaselessStrEnum, Float, Int

from ..client.errors import RequestCancelled
from ..client.session import RawExchange, Subscription
from ..protocol.errors import McpError
from ..protocol.models import LOG_LEVELS, CallToolResult, DiscoverResult
from ..protocol.versions import Era
from ..transports import StdioTransport, Transport, http_transport
from . import render
from .forms import ServerRequestInbox, ToolForm
from .hosted import HostedSession
from .loop import BackgroundLoop, Interrupted
from .widgets import (
    CapabilitiesView,
    FindingsView,
    Handshake,
    RequestProgress,
    SessionView,
    StateDiagram,
    ToolResultView,
    TranscriptView,
)


class McpCellError(Exception):
    """An expected failure: the cell fails with one readable line, no traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


class _Usage(McpCellError):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse that fails the cell instead of exiting the kernel."""

    def error(self, message: str) -> NoReturn:
        raise _Usage(f"{message}\n{self.format_usage().strip()}")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            print(message, file=sys.stderr)
        raise _HelpShown()


class _HelpShown(Exception):
    pass


def _key_values(items: list[str], *, parse_json: bool) -> dict[str, Any]:
    """``k=v`` pairs; values are JSON when they parse (``a=1`` is a number) unless told not to."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise _Usage(f"expected key=value, got {item!r}")
        if parse_json:
            try:
                out[key] = json.loads(value)
                continue
            except ValueError:
                pass
        out[key] = value
    return out


def _split_json(text: str) -> tuple[dict[str, Any] | None, str]:
    """Pull one ``{…}`` JSON object out of a magic line; return it and the rest."""
    start = text.find("{")
    if start < 0:
        return None, text
    try:
        value, end = json.JSONDecoder().raw_decode(text, start)
    except ValueError as exc:
        raise _Usage(f"the arguments look like JSON but do not parse: {exc}") from None
    if not isinstance(value, dict):
        raise _Usage("tool arguments must be a JSON object")
    return value, text[:start] + " " + text[end:]


def _request_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timeout", type=float, help="seconds to wait (overrides the default)")
    parser.add_argument("--force", action="store_true",
                        help="send even if the lifecycle or capabilities forbid it (a finding "
                             "is recorded)")


def build_parser() -> _Parser:
    """The whole ``%mcp`` grammar (also used to generate the docs' magics reference)."""
    root = _Parser(prog="%mcp", description="Open and drive MCP client sessions from a notebook.")
    sub = root.add_subparsers(dest="command", metavar="SUBCOMMAND", parser_class=_Parser)

    def command(name: str, text: str) -> _Parser:
        # argparse %-formats help strings (not descriptions): "%mcp" must be escaped there.
        return sub.add_parser(  # type: ignore[return-value]
            name, help=text.replace("%", "%%"), description=text)

    p = command("connect", "open a session: a stdio command, an http(s) URL, an mcpServers "
                           "config entry, or (with no target) the bundled lab server")
    p.add_argument("name", nargs="?", help="session name (default: derived from the target)")
    p.add_argument("target", nargs="*",
                   help="an http(s):// URL, or after --: the server command and its arguments "
                        "(no shell is used); omit to start the bundled lab server")
    p.add_argument("--transport", choices=["auto", "streamable-http", "sse"], default="auto",
                   help="HTTP only: auto tries Streamable HTTP and falls back to the legacy "
                        "HTTP+SSE transport on a 400/404/405")
    p.add_argument("--header", action="append", default=[], metavar="K=V",
                   help="HTTP only: extra request header, e.g. Authorization=Bearer x "
                        "(values are redacted in transcripts)")
    p.add_argument("--step", action="store_true",
                   help="open without initializing: step through with %%mcp initialize, "
                        "%%mcp initialized")
    p.add_argument("--version", help="protocol version to offer (any string, for teaching)")
    p.add_argument("--era", choices=["auto", "handshake", "stateless"],
                   help="handshake: initialize (2024-11-05 … 2025-11-25); stateless: "
                        "server/discover, then 2026-07-28 on every request; auto: probe with "
                        "server/discover and fall back to initialize (default: McpMagics.era)")
    p.add_argument("--log-level", choices=LOG_LEVELS,
                   help="stateless era: the log level every request asks for")
    p.add_argument("--timeout", type=float, help="default request timeout for this session")
    p.add_argument("--env", action="append", default=[], metavar="K=V",
                   help="environment variable for the server (repeatable)")
    p.add_argument("--cwd", help="working directory for the server")
    p.add_argument("--config", help="a Claude-Desktop-style JSON file with mcpServers")
    p.add_argument("--server", help="which mcpServers entry (default: NAME)")
    p.add_argument("--lab", action="append", default=[], metavar="FLAG",
                   help="fault knob for the bundled lab server, e.g. --lab=--ignore-sigterm")
    for kind in ("sampling", "elicitation"):
        p.add_argument(f"--{kind}", metavar="form|NAME",
                       help=f"declare {kind} and answer the server's requests through a form "
                            f"(a person clicks) or with the Python callable NAME from the "
                            f"notebook's namespace")
    p.add_argument("--roots", nargs="+", metavar="PATH_OR_URI",
                   help="declare roots and answer roots/list with these")

    p = command("form", "a form for calling TOOL, generated from its inputSchema")
    p.add_argument("tool")
    p = command("initialize", "send initialize (step-through)")
    p.add_argument("--version", help="protocol version to offer")
    p.add_argument("--timeout", type=float)
    command("initialized", "send notifications/initialized (step-through)")
    command("state", "show the lifecycle state diagram")
    command("caps", "show both sides' capabilities and the version negotiation")
    command("view", "show every view of the current session")

    p = command("tools", "list the server's tools")
    _request_options(p)
    p = command("call", "call a tool: %mcp call TOOL {json} or k=v …")
    p.add_argument("tool")
    p.add_argument("arguments", nargs="*", metavar="k=v")
    p.add_argument("--background", action="store_true",
                   help="return at once with a live progress widget (its Cancel button works "
                        "because the kernel stays free)")
    p.add_argument("--reset-on-progress", action="store_true",
                   help="restart the timeout whenever progress arrives")
    p.add_argument("--max-timeout", type=float, help="upper bound even with progress")
    _request_options(p)
    p = command("resources", "list the server's resources")
    _request_options(p)
    for name, text in (("read", "read a resource"), ("subscribe", "subscribe to a resource"),
                       ("unsubscribe", "unsubscribe from a resource")):
        p = command(name, text)
        p.add_argument("uri")
        _request_options(p)
    p = command("prompts", "list the server's prompts")
    _request_options(p)
    p = command("prompt", "get a prompt: %mcp prompt NAME k=v …")
    p.add_argument("prompt")
    p.add_argument("arguments", nargs="*", metavar="k=v")
    _request_options(p)
    p = command("ping", "send ping and show the round trip")
    _request_options(p)
    p = command("log-level", "logging/setLevel")
    p.add_argument("level", choices=LOG_LEVELS)
    _request_options(p)

    p = command("timeout", "show or set timeouts for the current session")
    p.add_argument("--default", type=float, help="default per-request timeout (seconds)")
    p.add_argument("--max", type=float, help="maximum even with reset-on-progress")
    p.add_argument("--reset-on-progress", choices=["on", "off"])
    p = command("cancel", "cancel an in-flight request (the latest by default)")
    p.add_argument("id", nargs="?", type=int)
    p.add_argument("--reason", default="cancelled from the notebook")
    p = command("shutdown", "shut a session down (close stdin → SIGTERM → SIGKILL)")
    p.add_argument("name", nargs="?")
    p.add_argument("--all", action="store_true", help="every session")
    command("sessions", "list sessions")
    p = command("use", "make NAME the current session")
    p.add_argument("name")
    p = command("transcript", "show (or export) the wire transcript")
    p.add_argument("--export", metavar="FILE", help="write JSON Lines to FILE")
    p.add_argument("--direction", choices=["send", "recv", "event"])
    p.add_argument("--method")
    command("findings", "spec violations observed in this session")
    command("discover", "send server/discover: the server's versions, capabilities, identity")
    p = command("listen", "stateless era: open subscriptions/listen for change notifications")
    p.add_argument("--tools", action="store_true", help="notifications/tools/list_changed")
    p.add_argument("--prompts", action="store_true", help="notifications/prompts/list_changed")
    p.add_argument("--resources", action="store_true",
                   help="notifications/resources/list_changed")
    p.add_argument("--uri", action="append", default=[],
                   help="notifications/resources/updated for this resource (repeatable)")
    return root


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
        self.parser = build_parser()
        atexit.register(self.shutdown_all)

    # -- entry points --

    @no_var_expand
    @line_cell_magic
    def mcp(self, line: str, cell: str | None = None) -> Any:
        """Drive MCP sessions. ``%mcp --help`` lists the subcommands."""
        try:
            if cell is not None:
                return self._raw(line, cell)
            return self._dispatch(line)
        except _HelpShown:
            return None
        except Interrupted as exc:
            raise McpCellError(str(exc)) from None
        except McpError as exc:
            raise McpCellError(f"[{type(exc).__name__}] {exc}") from None

    def _dispatch(self, line: str) -> Any:
        command, _, rest = line.strip().partition(" ")
        if not command:
            raise _Usage("a subcommand is needed; %mcp --help lists them")
        json_args = None
        if command == "call" and "{" in rest:
            json_args, rest = _split_json(rest)
        tokens = [command, *shlex.split(rest)]
        # Everything after a bare "--" is the server's argv, kept verbatim (argparse's
        # own "--" handling does not survive subcommands).
        command_argv: list[str] = []
        if "--" in tokens:
            cut = tokens.index("--")
            tokens, command_argv = tokens[:cut], tokens[cut + 1:]
        args = self.parser.parse_args(tokens)
        if command_argv:
            if args.command != "connect":
                raise _Usage("'--' followed by a command is only meaningful for connect")
            args.target = [*args.target, *command_argv]
        args.json = json_args
        handler = getattr(self, "_cmd_" + args.command.replace("-", "_"))
        return handler(args)

    # -- sessions --

    def session(self, name: str | None = None) -> HostedSession:
        """The named session, or the current one."""
        key = name or self.current
        if key is None:
            raise McpCellError("no session yet: open one with %mcp connect")
        if key not in self.sessions:
            raise McpCellError(f"no session named {key!r}; open sessions: "
                               f"{', '.join(self.sessions) or 'none'}")
        return self.sessions[key]

    def _unique(self, base: str) -> str:
        name, n = base, 2
        while name in self.sessions and not self.sessions[name].closed:
            name, n = f"{base}-{n}", n + 1
        return name

    def _target(self, args: argparse.Namespace) -> tuple[str, Transport]:
        """The session's base name and transport, from a URL, a config entry or a command."""
        env = _key_values(args.env, parse_json=False)
        headers = _key_values(args.header, parse_json=False)
        target = list(args.target)
        if args.name and args.name.startswith(("http://", "https://")):
            target, args.name = [args.name, *target], None  # `%mcp connect URL`
        if args.config:
            key = args.server or args.name
            entry = _config_entry(Path(args.config), key)
            name = args.name or key or "server"
            if "url" in entry:
                headers = {**{str(k): str(v) for k, v in entry.get("headers", {}).items()},
                           **headers}
                return name, self._http(str(entry["url"]), args.transport, headers)
            command = [entry["command"], *entry.get("args", [])]
            env = {**{str(k): str(v) for k, v in entry.get("env", {}).items()}, **env}
            return name, self._stdio(command, env, entry.get("cwd", args.cwd))
        if target and target[0].startswith(("http://", "https://")):
            if len(target) > 1:
                raise _Usage("an HTTP server takes no command after its URL")
            url = target[0]
            return args.name or (urlsplit(url).hostname or "http"), self._http(
                url, args.transport, headers)
        if headers:
            raise _Usage("--header applies to HTTP servers only")
        if not target:
            from ..client import lab_command

            return args.name or "lab", self._stdio(lab_command(*args.lab), env, args.cwd)
        return args.name or Path(target[0]).name, self._stdio(target, env, args.cwd)

    def _stdio(self, command: list[str], env: dict[str, str], cwd: str | None) -> Transport:
        return StdioTransport(
            command, env=env, cwd=cwd, stdin_close_grace=self.stdin_close_grace,
            sigterm_grace=self.sigterm_grace, stderr_lines=self.stderr_lines,
        )

    @staticmethod
    def _http(url: str, transport: str, headers: dict[str, str]) -> Transport:
        try:
            return http_transport(url, transport, headers=headers)  # type: ignore[arg-type]
        except ValueError as exc:
            raise McpCellError(str(exc)) from None

    def _cmd_connect(self, args: argparse.Namespace) -> HostedSession:
        base, transport = self._target(args)
        name = self._unique(base)
        handlers, inbox = self._server_request_handlers(args)
        hosted = HostedSession.open(
            name, transport, self.loop,
            protocol_version=args.version, timeout=args.timeout or self.default_timeout,
            max_timeout=self.max_timeout, reset_timeout_on_progress=self.reset_timeout_on_progress,
            log_level=args.log_level, **handlers,
        )
        if inbox is not None:
            hosted.view.add_tab("Requests", inbox)
        self.sessions[name] = hosted
        self.current = name
        era = args.era or self.era
        if args.step and era != "handshake":
            raise McpCellError("--step walks through the handshake; for the stateless era "
                               "connect without --step and watch the transcript instead")
        if not args.step:
            try:
                hosted.connect(args.version, era=era)
            finally:
                hosted.view.transcript.flush()
        return hosted

    def _server_request_handlers(
        self, args: argparse.Namespace
    ) -> tuple[dict[str, Any], ServerRequestInbox | None]:
        """Handlers (and so declared capabilities) for sampling, elicitation and roots."""
        handlers: dict[str, Any] = {}
        inbox = None
        for kind in ("sampling", "elicitation"):
            choice = getattr(args, kind)
            if choice is None:
                continue
            if choice == "form":
                inbox = inbox or ServerRequestInbox(self.loop.call_soon)
                handlers[f"on_{kind}"] = inbox.handlers()[f"on_{kind}"]
                continue
            handler = (self.shell.user_ns if self.shell else {}).get(choice)
            if not callable(handler):
                raise McpCellError(f"--{kind} {choice}: no callable named {choice!r} in the "
                                   f"notebook; define it first or use --{kind} form")
            handlers[f"on_{kind}"] = handler
        if args.roots:
            roots = [{"uri": root if "://" in root else Path(root).resolve().as_uri()}
                     for root in args.roots]
            handlers["on_roots"] = lambda params: {"roots": roots}
        return handlers, inbox

    def view(self, name: str | None = None) -> SessionView:
        return self.session(name).view

    def _cmd_view(self, args: argparse.Namespace) -> SessionView:
        return self.view()

    def _cmd_initialize(self, args: argparse.Namespace) -> Handshake:
        hosted = self.session()
        options = {} if args.timeout is None else {"timeout": args.timeout}
        hosted.initialize(args.version, **options)
        return self.view().handshake

    def _cmd_initialized(self, args: argparse.Namespace) -> StateDiagram:
        self.session().send_initialized()
        return self.view().state_diagram

    def _cmd_state(self, args: argparse.Namespace) -> StateDiagram:
        return self.view().state_diagram

    def _cmd_caps(self, args: argparse.Namespace) -> CapabilitiesView:
        return self.view().capabilities

    def _options(self, args: argparse.Namespace) -> dict[str, Any]:
        options: dict[str, Any] = {"force": args.force}
        if args.timeout is not None:
            options["timeout"] = args.timeout
        return options

    # -- operation --

    def _cmd_tools(self, args: argparse.Namespace) -> Listing:
        tools = self.session().list_tools(**self._options(args))
        return Listing("tools", [(t.name, t.title or "", t.description or "") for t in tools],
                       tools)

    def _cmd_call(self, args: argparse.Namespace) -> Any:
        hosted = self.session()
        arguments = dict(args.json or {})
        arguments.update(_key_values(args.arguments, parse_json=True))
        options = self._options(args)
        if args.reset_on_progress:
            options["reset_timeout_on_progress"] = True
        if args.max_timeout is not None:
            options["max_timeout"] = args.max_timeout
        timeout = options.get("timeout", hosted.session.default_timeout)
        progress = RequestProgress(f"tools/call {args.tool}", timeout)
        options["on_progress"] = progress.progress
        options["on_sent"] = progress.sent

        async def call() -> CallToolResult:
            try:
                result = await hosted.session.call_tool(args.tool, arguments, **options)
            except BaseException as exc:
                cancelled = isinstance(exc, (RequestCancelled, anyio.get_cancelled_exc_class()))
                progress.finish("cancelled" if cancelled else f"failed: {type(exc).__name__}")
                raise
            progress.finish("done")
            return result

        progress.on_cancel = lambda request_id: hosted.loop.submit(
            hosted.session.cancel(request_id, "Cancel button"))
        if args.background:
            return BackgroundCall(progress, hosted.loop.submit(call()))
        if self.show_widgets:
            display(progress)
        return hosted.run(call())

    def _cmd_form(self, args: argparse.Namespace) -> ToolForm:
        hosted = self.session()
        tools = {tool.name: tool for tool in hosted.list_tools()}
        if args.tool not in tools:
            raise McpCellError(f"no tool {args.tool!r}; the server has {', '.join(tools)}")
        tool = tools[args.tool]
        return ToolForm(tool, lambda arguments: hosted.loop.submit(
            hosted.session.call_tool(tool.name, arguments)))

    def _cmd_resources(self, args: argparse.Namespace) -> Listing:
        resources = self.session().list_resources(**self._options(args))
        return Listing("resources", [(r.uri, r.name, r.mimeType or "") for r in resources],
                       resources)

    def _cmd_read(self, args: argparse.Namespace) -> list[dict[str, Any]]:
        return self.session().read_resource(args.uri, **self._options(args))

    def _cmd_subscribe(self, args: argparse.Namespace) -> None:
        self.session().subscribe_resource(args.uri, **self._options(args))
        print(f"subscribed to {args.uri}; updates appear in the transcript")

    def _cmd_unsubscribe(self, args: argparse.Namespace) -> None:
        self.session().unsubscribe_resource(args.uri, **self._options(args))
        print(f"unsubscribed from {args.uri}")

    def _cmd_prompts(self, args: argparse.Namespace) -> Listing:
        prompts = self.session().list_prompts(**self._options(args))
        return Listing("prompts", [(p.name, p.title or "", p.description or "")
                                   for p in prompts], prompts)

    def _cmd_prompt(self, args: argparse.Namespace) -> dict[str, Any]:
        # Prompt arguments are strings by the spec: no JSON parsing here.
        arguments = _key_values(args.arguments, parse_json=False)
        return self.session().get_prompt(args.prompt, arguments, **self._options(args))

    def _cmd_ping(self, args: argparse.Namespace) -> None:
        seconds = self.session().ping(**self._options(args))
        print(f"pong ({seconds * 1000:.1f} ms)")

    def _cmd_log_level(self, args: argparse.Namespace) -> None:
        hosted = self.session()
        if hosted.era is Era.STATELESS and not args.force:
            # No logging/setLevel in this era: the level rides on every request instead.
            hosted.session.log_level = args.level
            print(f"every request now asks for log level {args.level} "
                  f"(stateless era: io.modelcontextprotocol/logLevel in _meta)")
            return
        hosted.set_logging_level(args.level, **self._options(args))
        print(f"log level set to {args.level}")

    def _cmd_discover(self, args: argparse.Namespace) -> DiscoverResult:
        return self.session().discover()

    def _cmd_listen(self, args: argparse.Namespace) -> Subscription:
        return self.session().listen(tools=args.tools, prompts=args.prompts,
                                     resources=args.resources, resource_uris=args.uri)

    # -- control --

    def _cmd_timeout(self, args: argparse.Namespace) -> None:
        session = self.session().session
        if args.default is not None:
            session.default_timeout = args.default
        if args.max is not None:
            session.max_timeout = args.max
        if args.reset_on_progress is not None:
            session.reset_timeout_on_progress = args.reset_on_progress == "on"
        print(f"timeout {session.default_timeout:g}s, maximum {session.max_timeout:g}s, "
              f"reset on progress {'on' if session.reset_timeout_on_progress else 'off'}")

    def _cmd_cancel(self, args: argparse.Namespace) -> None:
        hosted = self.session()
        try:
            cancelled = hosted.cancel(args.id, args.reason)
        except ValueError as exc:
            raise McpCellError(str(exc)) from None
        print(f"cancelled request {cancelled} (notifications/cancelled sent)")

    def _cmd_shutdown(self, args: argparse.Namespace) -> None:
        names = list(self.sessions) if args.all else [self.session(args.name).name]
        for name in names:
            self.sessions[name].close()
            print(f"{name}: {self.sessions[name].session.state.value}")

    def _cmd_sessions(self, args: argparse.Namespace) -> Listing:
        rows = [(name + (" *" if name == self.current else ""), h.session.state.value,
                 h.session.negotiated_version or "", h.session.transport.kind)
                for name, h in self.sessions.items()]
        return Listing("sessions", rows, list(self.sessions.values()))

    def _cmd_use(self, args: argparse.Namespace) -> None:
        self.session(args.name)
        self.current = args.name
        print(f"current session: {args.name}")

    def _cmd_transcript(self, args: argparse.Namespace) -> Any:
        hosted = self.session()
        if args.export:
            count = hosted.session.transcript.export_jsonl(args.export)
            print(f"wrote {count} entries to {args.export}")
            return None
        view = TranscriptView(hosted.session)
        if args.direction:
            view.direction.value = args.direction
        if args.method:
            view.method.value = args.method
        return view

    def _cmd_findings(self, args: argparse.Namespace) -> FindingsView:
        return self.view().findings

    # -- %%mcp --

    def _raw(self, line: str, cell: str) -> RawView:
        name = line.strip() or None
        hosted = self.session(name)
        body = cell.strip()
        if "\n" in body:
            # stdio frames by newline: a pretty-printed message is re-serialised onto one
            # line if it is JSON; otherwise it is sent as written (garbage is allowed).
            try:
                body = json.dumps(json.loads(body), ensure_ascii=False)
            except ValueError:
                body = " ".join(body.splitlines())
        exchange = hosted.send_raw(body)
        return RawView(exchange)

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


def _config_entry(path: Path, key: str | None) -> dict[str, Any]:
    try:
        config = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise McpCellError(f"cannot read {path}: {exc}") from None
    servers = config.get("mcpServers") if isinstance(config, dict) else None
    if not isinstance(servers, dict):
        raise McpCellError(f"{path} has no \"mcpServers\" object")
    if key is None:
        if len(servers) != 1:
            raise McpCellError(f"{path} has several servers ({', '.join(servers)}); name one "
                               "with --server KEY")
        key = next(iter(servers))
    if key not in servers:
        raise McpCellError(f"{path} has no server {key!r}; it has {', '.join(servers)}")
    entry = servers[key]
    if not isinstance(entry, dict) or not ("command" in entry or "url" in entry):
        raise McpCellError(f"server {key!r} in {path} needs a \"command\" (or \"url\")")
    return entry


class Listing(list):  # type: ignore[type-arg]
    """A list of items (tools, resources …) that displays as a small table."""

    def __init__(self, what: str, rows: list[tuple[Any, ...]], items: list[Any]) -> None:
        super().__init__(items)
        self.what = what
        self.rows = rows

    def __repr__(self) -> str:
        names = ", ".join(str(row[0]) for row in self.rows)
        return f"{len(self.rows)} {self.what}: {names}"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    def _repr_html_(self) -> str:
        body = "".join("<tr>" + "".join(f"<td>{render.esc(cell)}</td>" for cell in row) + "</tr>"
                       for row in self.rows)
        return f'{render.STYLE}<div class="mcpnb"><table>{body}</table></div>'


class BackgroundCall:
    """A tool call running while the kernel stays free; shows its live progress widget."""

    def __init__(self, progress: RequestProgress, future: Any) -> None:
        self.progress = progress
        self.future = future

    def result(self, timeout: float | None = None) -> CallToolResult:
        """Wait for the result (blocks the cell)."""
        return self.future.result(timeout)

    def done(self) -> bool:
        return self.future.done()

    def __repr__(self) -> str:
        return repr(self.progress)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.progress._repr_mimebundle_(**kwargs)


class RawView:
    """What a ``%%mcp`` message did: entries, findings, and the state after it."""

    def __init__(self, exchange: RawExchange) -> None:
        self.exchange = exchange

    def __repr__(self) -> str:
        labels = "\n".join(f"  {e.label}" for e in self.exchange.entries
                           if e.direction != "event" or e.kind == "finding")
        return f"state after: {self.exchange.state.value}\n{labels}"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    def _repr_html_(self) -> str:
        return (f"<p>state after: <b>{render.esc(self.exchange.state.value)}</b></p>"
                + render.transcript_rows_html(self.exchange.entries)
                + (render.findings_html(self.exchange.findings) if self.exchange.findings
                   else ""))


def _plain_tool_result(result: CallToolResult, printer: Any, cycle: bool) -> None:
    printer.text(ToolResultView(result).describe())


def _html_tool_result(result: CallToolResult) -> str:
    return render.content_blocks_html(result.content, result.isError)


def register_formatters(shell: Any) -> None:
    """Tool results display as readable HTML, and a short deterministic text."""
    formatters = shell.display_formatter.formatters
    formatters["text/plain"].for_type(CallToolResult, _plain_tool_result)
    formatters["text/html"].for_type(CallToolResult, _html_tool_result)


__all__ = ["McpCellError", "McpMagics", "build_parser", "register_formatters"]
