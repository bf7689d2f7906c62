"""``%mcp connect``, ``use``, ``sessions``, ``shutdown``: opening, naming and closing sessions.

A connect either succeeds or leaves the current session as it was: a session
becomes current only once it is usable; a failed one is shut down (its
transcript stays readable under its name), and a server that cannot even be
started is refused before anything is spawned, with its program named.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ...client.errors import ServerExited
from ...i18n import N_, _
from ...protocol.errors import McpError
from ...protocol.models import LOG_LEVELS
from ...transports import StdioTransport, Transport, http_transport
from ..forms import ServerRequestInbox
from ..hosted import HostedSession
from .arguments import key_values
from .auth import AUTH_OBJECTS, add_auth_arguments, oauth_for
from .displays import Listing
from .recordings import add_replay_arguments, replay_target
from .table import CommandGroup, McpCellError, Parser, Usage

if TYPE_CHECKING:
    from .magic import McpMagics

GROUP = CommandGroup()


def _connect_arguments(p: Parser) -> None:
    p.add_argument("name", nargs="?", help=N_("session name (default: derived from the target); "
                                              "an existing session of that name is replaced"))
    p.add_argument("target", nargs="*",
                   help=N_("an http(s):// URL, or after --: the server command and its arguments "
                           "(no shell is used); omit to start the bundled lab server. {expr} and "
                           "$name are expanded from the notebook, e.g. -- {sys.executable} "
                           "server.py runs the server with the kernel's own Python"))
    p.add_argument("--transport", choices=["auto", "streamable-http", "sse"], default="auto",
                   help=N_("HTTP only: auto tries Streamable HTTP and falls back to the legacy "
                           "HTTP+SSE transport on a 400/404/405"))
    p.add_argument("--header", action="append", default=[], metavar="K=V",
                   help=N_("HTTP only: extra request header, e.g. Authorization=Bearer x "
                           "(values are redacted in transcripts; {expr} and $name expanded)"))
    p.add_argument("--step", action="store_true",
                   help=N_("open without initializing: step through with %%mcp initialize, "
                           "%%mcp initialized"))
    p.add_argument("--version", help=N_("protocol version to offer (any string, for teaching)"))
    p.add_argument("--era", choices=["auto", "handshake", "stateless"],
                   help=N_("handshake: initialize (2024-11-05 … 2025-11-25); stateless: "
                           "server/discover, then 2026-07-28 on every request; auto: probe with "
                           "server/discover and fall back to initialize (default: McpMagics.era)"))
    p.add_argument("--log-level", choices=LOG_LEVELS,
                   help=N_("stateless era: the log level every request asks for"))
    p.add_argument("--timeout", type=float, help=N_("default request timeout for this session"))
    p.add_argument("--tasks", action="store_true",
                   help=N_("declare the tasks extension (SEP-2663): the server may run a tool "
                           "call as a task (%%mcp task shows it)"))
    p.add_argument("--no-apps", action="store_true",
                   help=N_("do not declare the MCP Apps extension: App tools answer as text "
                           "only (default: McpMagics.apps declares it)"))
    p.add_argument("--env", action="append", default=[], metavar="K=V",
                   help=N_("environment variable for the server (repeatable; {expr} and $name "
                           "expanded)"))
    p.add_argument("--cwd", help=N_("working directory for the server"))
    p.add_argument("--config", help=N_("a Claude-Desktop-style JSON file with mcpServers, or "
                                       "{servers}: a dict of that shape from the notebook (its "
                                       "entries may hold Python values, e.g. an \"auth\" "
                                       "\"callback\" function)"))
    p.add_argument("--server", help=N_("which mcpServers entry (default: NAME)"))
    p.add_argument("--lab", action="append", default=[], metavar="FLAG",
                   help=N_("fault knob for the bundled lab server, e.g. --lab=--ignore-sigterm"))
    for kind, text in (("sampling", N_("declare sampling and answer the server's requests "
                                      "through a form (a person clicks) or with the Python "
                                      "callable NAME from the notebook's namespace")),
                       ("elicitation", N_("declare elicitation and answer the server's requests "
                                          "through a form (a person clicks) or with the Python "
                                          "callable NAME from the notebook's namespace"))):
        p.add_argument(f"--{kind}", metavar="form|NAME", help=text)
    p.add_argument("--roots", nargs="+", metavar="PATH_OR_URI",
                   help=N_("declare roots and answer roots/list with these"))
    add_replay_arguments(p)
    add_auth_arguments(p)


@GROUP.command("connect", N_("open a session: a stdio command, an http(s) URL, an mcpServers "
                             "config entry, or (with no target) the bundled lab server"),
               arguments=_connect_arguments, server_argv=True,
               expand=("target", "header", "env", "cwd", "roots", "replay", "client_id",
                       "client_secret", "client_metadata_url"), objects=("config", *AUTH_OBJECTS))
def connect(mcp: McpMagics, args: argparse.Namespace) -> HostedSession:
    base, transport, named = _target(mcp, args)
    era = args.era or mcp.era
    if args.step and era != "handshake":
        raise McpCellError(_("--step walks through the handshake; for the stateless era "
                             "connect without --step and watch the transcript instead"))
    handlers, inbox = _server_request_handlers(mcp, args)
    name = base if named else _unique(mcp, base)
    hosted = HostedSession.open(
        name, transport, mcp.loop,
        protocol_version=args.version, timeout=args.timeout or mcp.default_timeout,
        max_timeout=mcp.max_timeout, reset_timeout_on_progress=mcp.reset_timeout_on_progress,
        log_level=args.log_level, tasks=args.tasks,
        apps=mcp.apps and not args.no_apps, **handlers,
    )
    if inbox is not None:
        inbox.hold_deadlines = hosted.hold_for_person
        hosted.view.add_tab(_("Requests"), inbox)
    if not args.step:
        try:
            hosted.connect(args.version, era=era)
        except BaseException as exc:
            # No half-open session behind: the server goes, the current session stays.
            # The ended session is kept under its name (unless that name belongs to a live
            # one) so its transcript can still be read: %mcp use NAME, manager().session().
            with contextlib.suppress(Exception):
                hosted.close()
            if name not in mcp.sessions or mcp.sessions[name].closed:
                mcp.sessions[name] = hosted
            if not isinstance(exc, McpError):
                raise
            reason = (_connect_failure(url, exc) if (url := _url(args)) is not None
                      else f"[{type(exc).__name__}] {exc}")
            kept = (_("; session {name} is shut down, its record stays: {commands}").format(
                name=repr(name), commands=f"%mcp state {name}, %mcp transcript {name}")
                if mcp.sessions.get(name) is hosted else "")
            raise McpCellError(reason + kept) from None
        finally:
            hosted.view.transcript.flush()
    _replace(mcp, name, base)
    mcp.sessions[name] = hosted
    mcp.current = name
    return hosted


def _replace(mcp: McpMagics, name: str, base: str) -> None:
    """Say what happens to a session already holding the name (or the base name)."""
    previous = mcp.sessions.get(name)
    if previous is not None:
        if previous.closed:
            print(_("{name}: replaces the earlier session of that name, which had ended").format(
                name=name))
        else:
            previous.close()
            print(_("{name}: replaces the earlier session of that name, now shut down "
                    "({state})").format(name=name, state=previous.session.state.value))
    elif name != base:
        print(_("named {name}: a session {base} is still open (pass a NAME to choose)").format(
            name=name, base=repr(base)))


def _unique(mcp: McpMagics, base: str) -> str:
    name, n = base, 2
    while name in mcp.sessions and not mcp.sessions[name].closed:
        name, n = f"{base}-{n}", n + 1
    return name


def _url(args: argparse.Namespace) -> str | None:
    target = args.target[0] if args.target else ""
    return target if target.startswith(("http://", "https://")) else None


def _connect_failure(url: str, exc: McpError) -> str:
    """One line for an HTTP server that could not be reached, or answered nonsense.

    Decided by the chain of errors (the transport's own under ``ServerExited``), never
    by their wording.
    """
    cause: BaseException | None = exc
    while cause is not None:
        if type(cause).__module__.startswith("httpx") and "Connect" in type(cause).__name__:
            return _("could not connect to {url}: {reason}").format(
                url=url, reason=cause or type(cause).__name__)
        cause = ((cause.transport_error if isinstance(cause, ServerExited) else None)
                 or cause.__cause__ or cause.__context__)
    return f"[{type(exc).__name__}] {exc}"


def _target(mcp: McpMagics, args: argparse.Namespace) -> tuple[str, Transport, bool]:
    """The session's base name, its transport, and whether the user named it."""
    if args.replay:
        return replay_target(args)
    env = key_values(args.env, parse_json=False)
    headers = key_values(args.header, parse_json=False)
    target = list(args.target)
    if args.name and args.name.startswith(("http://", "https://")):
        target, args.name = [args.name, *target], None  # `%mcp connect URL`
        args.target = target
    named = args.name is not None
    if args.config is not None:
        key = args.server or args.name
        entry = _config_entry(args.config, key)
        name = args.name or key or "server"
        if "url" in entry:
            headers = {**{str(k): str(v) for k, v in entry.get("headers", {}).items()},
                       **headers}
            url = str(entry["url"])
            return name, _http(url, args.transport, headers,
                               oauth_for(mcp, args, url, entry)), named
        command = [entry["command"], *entry.get("args", [])]
        env = {**{str(k): str(v) for k, v in entry.get("env", {}).items()}, **env}
        return name, _stdio(mcp, command, env, entry.get("cwd", args.cwd)), named
    if target and target[0].startswith(("http://", "https://")):
        if len(target) > 1:
            raise Usage(_("an HTTP server takes no command after its URL"))
        url = target[0]
        return (args.name or (urlsplit(url).hostname or "http"),
                _http(url, args.transport, headers, oauth_for(mcp, args, url)), named)
    if headers:
        raise Usage(_("--header applies to HTTP servers only"))
    if args.auth:
        raise Usage(_("--auth applies to HTTP servers only (authorization is HTTP's)"))
    if not target:
        from ...client import lab_command

        return args.name or "lab", _stdio(mcp, lab_command(*args.lab), env, args.cwd), named
    return args.name or Path(target[0]).name, _stdio(mcp, target, env, args.cwd), named


def _stdio(mcp: McpMagics, command: list[str], env: dict[str, str],
           cwd: str | None) -> Transport:
    check_program(command, env, cwd)
    return StdioTransport(
        command, env=env, cwd=cwd, stdin_close_grace=mcp.stdin_close_grace,
        sigterm_grace=mcp.sigterm_grace, stderr_lines=mcp.stderr_lines,
    )


def check_program(command: list[str], env: dict[str, str], cwd: str | None) -> None:
    """Refuse a server whose program cannot be run, naming it; note a foreign ``python``.

    The spawned server sees ``PATH`` from ``env`` or the kernel's environment,
    and resolves a relative path against ``cwd``.
    """
    program = command[0]
    search_path = env.get("PATH", os.environ.get("PATH", os.defpath))
    python_hint = _("; for a Python server use the kernel's own interpreter: {example}"
                    ).format(example="-- {sys.executable} server.py (after import sys)")
    looks_python = Path(program).name.startswith("python") or any(
        part.endswith(".py") for part in command[:2])
    hint = python_hint if looks_python else ""
    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(program) if Path(program).is_absolute() else Path(cwd or ".") / program
        if not path.exists():
            raise McpCellError(_("cannot start the server: {program} not found{hint}").format(
                program=program, hint=hint))
        if path.is_dir() or not os.access(path, os.X_OK):
            raise McpCellError(_("cannot start the server: {program} is not "
                                 "executable{hint}").format(program=program, hint=hint))
        return
    found = shutil.which(program, path=search_path)
    if found is None:
        raise McpCellError((_("cannot start the server: {program} not found (searched PATH)"
                              "{hint}") if shutil.which(program) is None else
                            _("cannot start the server: {program} not found on the server's "
                              "PATH (searched PATH){hint}")).format(program=program, hint=hint))
    if Path(program).name.startswith("python") and (
            Path(found).parent != Path(sys.executable).parent):
        print(_("note: {program} here is {found}, not this kernel's Python ({python}); write "
                "{{sys.executable}} instead to run the server with the kernel's packages"
                ).format(program=program, found=found, python=sys.executable))


def _http(url: str, transport: str, headers: dict[str, str], auth: Any = None) -> Transport:
    try:
        return http_transport(url, transport, headers=headers,  # type: ignore[arg-type]
                              auth=auth)
    except ValueError as exc:
        raise McpCellError(str(exc)) from None


def _server_request_handlers(
    mcp: McpMagics, args: argparse.Namespace
) -> tuple[dict[str, Any], ServerRequestInbox | None]:
    """Handlers (and so declared capabilities) for sampling, elicitation and roots."""
    handlers: dict[str, Any] = {}
    inbox = None
    for kind in ("sampling", "elicitation"):
        choice = getattr(args, kind)
        if choice is None:
            continue
        if choice == "form":
            inbox = inbox or ServerRequestInbox(mcp.loop.call_soon)
            handlers[f"on_{kind}"] = inbox.handlers()[f"on_{kind}"]
            continue
        handler = mcp.namespace.get(choice)
        if not callable(handler):
            raise McpCellError(_("--{kind} {choice}: no callable named {name} in the "
                                 "notebook; define it first or use --{kind} form").format(
                kind=kind, choice=choice, name=repr(choice)))
        handlers[f"on_{kind}"] = handler
    if args.roots:
        roots = [{"uri": root if "://" in root else Path(root).resolve().as_uri()}
                 for root in args.roots]
        handlers["on_roots"] = lambda params: {"roots": roots}
    return handlers, inbox


def _config_document(source: object) -> tuple[str, Any]:
    """Where the mcpServers document is (for messages), and the document.

    A file's path (JSON), or the document itself as a Python dict (``--config {servers}``),
    whose entries may hold what JSON cannot: a callable ``"callback"``, say.
    """
    if isinstance(source, Mapping):
        return "the --config dict", source
    if not isinstance(source, str | os.PathLike):
        raise McpCellError(_("--config takes a JSON file's path or a dict of the same shape "
                             "({shape}), not {kind}").format(
            shape='{"mcpServers": {…}}', kind=type(source).__name__))
    path = Path(source)
    try:
        return str(path), json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise McpCellError(_("cannot read {file}: {reason}").format(
            file=path, reason=exc)) from None


def _config_entry(source: object, key: str | None) -> Mapping[str, Any]:
    path, config = _config_document(source)
    servers = config.get("mcpServers") if isinstance(config, Mapping) else None
    if not isinstance(servers, Mapping):
        raise McpCellError(_("{file} has no {key} object").format(
            file=path, key='"mcpServers"'))
    if key is None:
        if len(servers) != 1:
            raise McpCellError(_("{file} has several servers ({servers}); name one with "
                                 "--server KEY").format(file=path, servers=", ".join(servers)))
        key = next(iter(servers))
    if key not in servers:
        raise McpCellError(_("{file} has no server {key}; it has {servers}").format(
            file=path, key=repr(key), servers=", ".join(servers)))
    entry = servers[key]
    if not isinstance(entry, Mapping) or not ("command" in entry or "url" in entry):
        raise McpCellError(_("server {key} in {file} needs a {command} (or {url})").format(
            key=repr(key), file=path, command='"command"', url='"url"'))
    return entry


def _shutdown_arguments(p: Parser) -> None:
    p.add_argument("name", nargs="?")
    p.add_argument("--all", action="store_true", help=N_("every session"))


@GROUP.command("shutdown", N_("shut a session down (close stdin → SIGTERM → SIGKILL)"),
               arguments=_shutdown_arguments)
def shutdown(mcp: McpMagics, args: argparse.Namespace) -> None:
    names = list(mcp.sessions) if args.all else [mcp.session(args.name).name]
    for name in names:
        mcp.sessions[name].close()
        print(f"{name}: {mcp.sessions[name].session.state.value}")


@GROUP.command("sessions", N_("list sessions"))
def sessions(mcp: McpMagics, args: argparse.Namespace) -> Listing:
    rows = [(name + (" *" if name == mcp.current else ""), h.session.state.value,
             h.session.negotiated_version or "", h.session.transport.kind)
            for name, h in mcp.sessions.items()]
    return Listing(N_("sessions"), (N_("session"), N_("state"), N_("version"), N_("transport")),
                   rows,
                   list(mcp.sessions.values()))


@GROUP.command("use", N_("make NAME the current session"),
               arguments=lambda p: p.add_argument("name"))
def use(mcp: McpMagics, args: argparse.Namespace) -> None:
    mcp.session(args.name)
    mcp.current = args.name
    print(_("current session: {name}").format(name=args.name))
