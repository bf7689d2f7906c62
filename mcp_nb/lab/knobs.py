"""The lab server's fault knobs: one command-line flag per broken rule, each declared once.

The server is well behaved by default.  Each knob switches on one specific
misbehaviour so a client author can watch their client cope (or not) with it.
The help text of every flag says what it does and which rule it breaks, so
``python -m mcp_nb.lab --help`` doubles as the lesson plan.

A knob is one entry: a field of :class:`Knobs` made with :func:`knob`, which
carries its flag, help text, argparse options and scope (the transport or era
it belongs to).  The parser, the refusal of knobs given with the wrong
transport or era, and the generated docs are all read off those entries; the
knob then acts in one place (protocol knobs at :mod:`mcp_nb.lab.faults`,
process knobs in :mod:`mcp_nb.lab.process`, HTTP knobs in :mod:`mcp_nb.lab.http`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from mcp_nb.protocol.versions import STATELESS_VERSIONS, SUPPORTED_VERSIONS

#: Capabilities that ``--omit-capability`` may leave out of the initialize result.
CAPABILITY_NAMES: tuple[str, ...] = ("tools", "resources", "prompts", "logging", "completions")
#: What ``--app-fault`` accepts: one misbehaviour of the lab's MCP App each.
APP_FAULTS: tuple[str, ...] = ("wrong-mime", "missing-resource", "bad-csp", "no-initialized",
                               "model-only-call", "undeclared-fetch", "size-flood",
                               "sandbox-probe")
#: What ``--feature-fault`` accepts: one broken rule of a server feature each (the checkup's
#: protocol-feature checks are calibrated on them).
FEATURE_FAULTS: tuple[str, ...] = (
    "bad-resource-uri", "wrong-read-uri", "bad-uri-template", "no-subscribe", "bad-prompt-role",
    "bad-prompt-arguments", "bad-completion", "loose-log-level", "arguments-as-protocol-error",
    "bad-progress", "answer-batches", "unknown-tool-result", "undeclared-list-changed")
#: What ``--era`` accepts: serve the handshake era, the stateless era, or both (dual-era).
ERAS: tuple[str, ...] = ("handshake", "stateless", "both")

#: Help-output groups, in the order they are printed: (key, title).
_GROUPS = (
    ("era", "protocol era"),
    ("extras", "extras (not faults)"),
    ("faults", "fault knobs"),
    ("stateless", "stateless-era fault knobs (--era stateless or both)"),
    ("http", "HTTP fault knobs (with --http)"),
)


@dataclass(frozen=True)
class Flag:
    """How one knob appears on the command line, and where it applies."""

    flag: str
    help: str
    group: str
    #: "stdio" or "http" if the knob only makes sense with that transport.
    transport: str | None
    #: "handshake" or "stateless" if the knob only makes sense in that era.
    era: str | None
    #: Turns the parsed value into the field's (e.g. a repeatable flag's list into a set).
    convert: Callable[[Any], Any] | None
    options: dict[str, Any]


def knob(default: Any, flag: str, help: str, *, group: str = "faults",
         transport: str | None = None, era: str | None = None,
         convert: Callable[[Any], Any] | None = None, **options: Any) -> Any:
    """A :class:`Knobs` field declared together with its flag (``options`` go to argparse)."""
    return field(default=default, metadata={"flag": Flag(flag, help, group, transport, era,
                                                          convert, options)})


def _header(text: str) -> tuple[str, str]:
    """Parse ``'Name: value'`` (the form curl's -H takes)."""
    name, colon, value = text.partition(":")
    if not colon or not name.strip() or not value.strip() or " " in name.strip():
        raise argparse.ArgumentTypeError(f"expected 'Name: value', got {text!r}")
    return name.strip(), value.strip()


def _version_list(text: str) -> tuple[str, ...]:
    """Parse ``V1,V2`` into a tuple, refusing an empty list (a server must speak something)."""
    versions = tuple(part.strip() for part in text.split(",") if part.strip())
    if not versions:
        raise argparse.ArgumentTypeError("give at least one version, e.g. 2025-06-18")
    return versions


def _at_least(convert: Callable[[str], float], minimum: float) -> Callable[[str], float]:
    """An argparse ``type`` converting with ``convert`` and refusing values below ``minimum``."""

    def parse(text: str) -> float:
        value = convert(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {text}")
        return value

    # argparse names the type in its "invalid <name> value" message.
    parse.__name__ = convert.__name__
    return parse


@dataclass(frozen=True)
class Knobs:
    """Every knob, already parsed; the defaults describe a well-behaved server."""

    era: str = knob(
        "both", "--era", group="era", choices=ERAS,
        help="Which era of MCP to speak (default both, a dual-era server). handshake: "
        "initialize opens a session, as in 2024-11-05 .. 2025-11-25; requests' _meta is not "
        "looked at and server/discover is an unknown method. stateless: the 2026-07-28 era, "
        "where every request carries its version and capabilities in _meta and initialize is "
        "refused with -32022 naming the versions served. both: a request whose _meta carries "
        "io.modelcontextprotocol/protocolVersion is served statelessly at any time, anything "
        "else as in the handshake era.")
    list_changes: bool = knob(
        False, "--list-changes", group="extras", action="store_true",
        help="Offer a toggle_bonus tool that adds or removes a bonus tool, prompt and resource "
        "and announces each change with notifications/{tools,prompts,resources}/list_changed "
        "(to the session in the handshake era; to subscriptions/listen streams that opted in, "
        "in the stateless era), so list_changed can be observed.")
    fixtures: str = knob(
        "lab", "--fixtures", group="extras", choices=("lab", "conformance"),
        help="Which menu to serve (default lab: echo, add, slow … as listed by tools/list). "
        "conformance: the fixtures the official MCP conformance suite's server scenarios "
        "call (test_simple_text, test://static-text, test_simple_prompt, the "
        "input_required and tasks fixtures …), so the suite can judge the lab, e.g. "
        "'python -m mcp_nb.lab --http --fixtures conformance' then 'conformance server "
        "--url URL'.")
    apps: bool = knob(
        False, "--apps", group="extras", action="store_true",
        help="Offer an MCP App (extension io.modelcontextprotocol/ui) to clients that declare "
        "the extension: the clock tool rendered by ui://lab/clock.html (an App written by "
        "hand, no SDK), clock_refresh (visibility app only: the App's button calls it) and "
        "clock_reset (visibility model only: an App calling it must be refused).")
    client_request_timeout: float = knob(
        30.0, "--client-request-timeout", group="extras", era="handshake", metavar="SECONDS",
        type=_at_least(float, 0.001),
        help="Give up on a request the server sent the client (sampling, elicitation, roots) "
        "after SECONDS (default 30): the client is told with notifications/cancelled and the "
        "tool that asked fails, so a client that never answers cannot stall the server.")
    # Handshake era, and both transports
    answer_version: str | None = knob(
        None, "--answer-version", era="handshake", metavar="V",
        help="Answer initialize with protocol version V whatever the client offered; teaches "
        "that a client receiving a version it cannot speak must disconnect.")
    supported_versions: tuple[str, ...] = knob(
        SUPPORTED_VERSIONS, "--supported-versions", era="handshake", metavar="V1,V2",
        type=_version_list,
        help="Restrict the handshake-era versions the server speaks (default: "
        f"{','.join(SUPPORTED_VERSIONS)}); teaches version negotiation by counter-offer.")
    reject_version: bool = knob(
        False, "--reject-version", era="handshake", action="store_true",
        help="Answer an unsupported offered version with error -32602 'Unsupported protocol "
        "version' (data: supported, requested) instead of counter-offering the latest.")
    omit_capabilities: frozenset[str] = knob(
        frozenset(), "--omit-capability", metavar="NAME", action="append",
        choices=CAPABILITY_NAMES, convert=frozenset,
        help="Leave NAME (tools, resources, prompts, logging, completions) out of the declared "
        "capabilities while still serving its methods; teaches that clients may only rely on "
        "what was negotiated. Repeatable.")
    delay: float = knob(
        0.0, "--delay", metavar="SECONDS", type=_at_least(float, 0),
        help="Delay every response (not notifications) by SECONDS; teaches request timeouts "
        "and that pings must not queue behind slow work.")
    ignore_cancel: bool = knob(
        False, "--ignore-cancel", action="store_true",
        help="Ignore notifications/cancelled so cancelled requests still finish and respond; "
        "teaches that a client must drop late responses to requests it cancelled.")
    ignore_stdin_close: bool = knob(
        False, "--ignore-stdin-close", transport="stdio", action="store_true",
        help="Keep running after stdin reaches EOF; teaches that stdio shutdown must escalate "
        "from closing stdin to SIGTERM.")
    ignore_sigterm: bool = knob(
        False, "--ignore-sigterm", action="store_true",
        help="Ignore SIGTERM; teaches that shutdown must escalate to SIGKILL (together with "
        "--ignore-stdin-close only SIGKILL ends the server).")
    crash_after: int | None = knob(
        None, "--crash-after", metavar="N", type=_at_least(int, 1),
        help="Exit abruptly with code 3 on receiving the Nth message from the client (a line "
        "on stdio, a POST over HTTP); teaches that a server can die mid-session and the client "
        "must fail pending requests.")
    exit_after: float | None = knob(
        None, "--exit-after", metavar="SECONDS", type=_at_least(float, 0),
        help="Exit on its own (code 0) after SECONDS; on stdio counted again from the "
        "client's first message and from the end of the handshake (so a slow client still "
        "gets to Operating); teaches that the server may leave first and the client must "
        "notice EOF on its stdout.")
    garbage_stdout: bool = knob(
        False, "--garbage-stdout", transport="stdio", action="store_true",
        help="Write a non-JSON line to stdout at startup and before every response; breaks "
        "the rule that stdout carries nothing but MCP messages.")
    request_before_initialized: bool = knob(
        False, "--request-before-initialized", era="handshake", action="store_true",
        help="Send a roots/list request right after the initialize response, before "
        "notifications/initialized arrives; breaks the rule that only ping and logging may "
        "come first.")
    reuse_response_id: bool = knob(
        False, "--reuse-response-id", action="store_true",
        help="Answer every request twice with the same id; breaks the one-response-per-request "
        "rule, so clients must ignore responses to ids no longer pending.")
    never_answer: frozenset[str] = knob(
        frozenset(), "--never-answer", metavar="METHOD", action="append", convert=frozenset,
        help="Read requests for METHOD but never respond ('*' = every request except "
        "initialize; name initialize to hang the handshake); teaches request timeouts. "
        "Repeatable.")
    hostile_strings: bool = knob(
        False, "--hostile-strings", action="store_true",
        help="Put markup, quotes, braces, newlines and control characters (ANSI escapes, "
        "right-to-left override) in names, descriptions and tool output; teaches that server "
        "strings are untrusted and must be escaped when displayed.")
    stderr_chatter: int = knob(
        0, "--stderr-chatter", metavar="N", type=_at_least(int, 0),
        help="Write N lines to stderr at startup, before reading stdin; teaches that a client "
        "must drain the server's stderr or the server blocks on a full pipe.")
    app_fault: str | None = knob(
        None, "--app-fault", metavar="FAULT", choices=APP_FAULTS,
        help="With --apps, make the App misbehave: wrong-mime (the ui:// resource is served as "
        "text/html: mimeType MUST be text/html;profile=mcp-app), missing-resource (the tool "
        "names a ui:// resource that does not exist: it MUST), bad-csp (the resource declares "
        "_meta.ui.csp values that are not lists of origins: a bare * and a string), "
        "no-initialized (the View "
        "never sends ui/notifications/initialized: the host answers its ui/initialize but "
        "MUST NOT send it any request or notification), "
        "model-only-call (the View calls clock_reset, visibility model only: the host MUST "
        "reject it), undeclared-fetch (the View fetches an origin its CSP does not declare: "
        "the host MUST block it; the host's page reports the violation), size-flood (500 "
        "ui/notifications/size-changed at once), sandbox-probe (the View tries the notebook's "
        "DOM, cookies, storage, the kernel's API and a request straight to the page, and says "
        "what was refused).")
    feature_faults: frozenset[str] = knob(
        frozenset(), "--feature-fault", metavar="FAULT", action="append",
        choices=FEATURE_FAULTS, convert=frozenset,
        help="Break one rule of a server feature (repeatable): bad-resource-uri (list a "
        "resource whose uri is not an RFC 3986 URI), wrong-read-uri (resources/read answers "
        "contents under another uri), bad-uri-template (a template that is not RFC 6570), "
        "no-subscribe (declare resources.subscribe but refuse resources/subscribe with -32601), "
        "bad-prompt-role (prompts/get answers a message with role 'system'), "
        "bad-prompt-arguments (a prompt argument's required is the string 'yes'), "
        "bad-completion (completion.total is a string), loose-log-level (logging/setLevel "
        "accepts any level instead of -32602), arguments-as-protocol-error (arguments that "
        "break a tool's inputSchema get a -32602 error instead of an isError result), "
        "bad-progress (slow repeats one progress value: progress MUST increase), "
        "answer-batches (answer a JSON array of requests with an array of responses, as only "
        "2025-03-26 allowed), unknown-tool-result (tools/call of an unknown tool gets a result "
        "with isError instead of a JSON-RPC error), undeclared-list-changed (declare tools "
        "without listChanged, yet send notifications/tools/list_changed once initialized).")
    # Stateless era
    stateless_versions: tuple[str, ...] = knob(
        STATELESS_VERSIONS, "--stateless-versions", group="stateless", era="stateless",
        metavar="V1,V2", type=_version_list,
        help=f"Serve these stateless-era versions (default: {','.join(STATELESS_VERSIONS)}); "
        "requests declaring any other version in _meta get -32022 'Unsupported protocol "
        "version' with data.supported, so claiming e.g. 2099-01-01 only teaches a client to "
        "negotiate (or to give up) per request.")
    omit_result_type: bool = knob(
        False, "--omit-result-type", group="stateless", era="stateless", action="store_true",
        help="Leave resultType out of complete results; breaks the rule that every 2026-07-28 "
        "result carries it, and teaches that a client must then read the result as complete "
        "(input_required results keep it).")
    input_rounds: int = knob(
        1, "--input-rounds", group="stateless", era="stateless", metavar="N",
        type=_at_least(int, 1),
        help="Make ask_llm, ask_user and list_roots answer input_required N times (default "
        "1), each round asking again under a new inputRequests key, before completing with "
        "every round's answer; teaches that a client must keep retrying (with a new id and the "
        "echoed requestState) until the result is complete.")
    # HTTP only
    drop_stream_after: int | None = knob(
        None, "--drop-stream-after", group="http", transport="http", era="handshake",
        metavar="N", type=_at_least(int, 1),
        help="Cut the connection of a request's SSE stream after N messages when more are to "
        "come, having sent 'retry: 250'. Events carry ids, so the client can resume with GET + "
        "Last-Event-ID; teaches stream resumption and honouring the retry field (handshake "
        "era only: 2026-07-28 streams are not resumable).")
    expire_session_after: int | None = knob(
        None, "--expire-session-after", group="http", transport="http", era="handshake",
        metavar="N", type=_at_least(int, 1),
        help="Forget a session after N POSTs (initialize included): later requests carrying its "
        "Mcp-Session-Id get 404; teaches that a client must then start a new session.")
    no_delete: bool = knob(
        False, "--no-delete", group="http", transport="http", era="handshake",
        action="store_true",
        help="Answer DELETE with 405 Method Not Allowed; teaches that a server may refuse to let "
        "clients end sessions, and that the client must cope.")
    no_get_stream: bool = knob(
        False, "--no-get-stream", group="http", transport="http", era="handshake",
        action="store_true",
        help="Answer GET /mcp with 405 (resuming with Last-Event-ID still works), so the server "
        "can only talk on POST responses; teaches that the GET stream is optional.")
    require_header: tuple[str, str] | None = knob(
        None, "--require-header", group="http", transport="http", metavar="'NAME: VALUE'",
        type=_header,
        help="Answer 401 to every request without exactly this header (e.g. 'Authorization: "
        "Bearer s3cret'); teaches sending credentials, and keeping them out of transcripts.")
    no_origin_check: bool = knob(
        False, "--no-origin-check", group="http", transport="http", action="store_true",
        help="Serve requests whatever their Origin header says (no 403 for a foreign Origin); "
        "breaks the rule that servers MUST validate Origin (DNS rebinding: any web page could "
        "drive this server).")
    notifications_200: bool = knob(
        False, "--notifications-200", group="http", transport="http", era="handshake",
        action="store_true",
        help="Answer a POSTed notification or response with 200 and a body {} instead of 202 "
        "Accepted with no body; breaks that rule of Streamable HTTP.")
    counter_session_ids: bool = knob(
        False, "--counter-session-ids", group="http", transport="http", era="handshake",
        action="store_true",
        help="Number the sessions (session-1, session-2 …) instead of random ids; breaks the "
        "SHOULD that session ids be cryptographically secure: the next id can be guessed.")
    repeat_event_ids: bool = knob(
        False, "--repeat-event-ids", group="http", transport="http", era="handshake",
        action="store_true",
        help="Number each SSE stream's event ids from 1 again (1, 2 …) instead of naming the "
        "stream too; breaks the rule that event ids are unique across a session's streams "
        "(a Last-Event-ID can no longer say which stream to resume).")
    resume_wrong_stream: bool = knob(
        False, "--resume-wrong-stream", group="http", transport="http", era="handshake",
        action="store_true",
        help="On GET with Last-Event-ID, replay the stream opened before the one that event id "
        "names; breaks the rule that a server MUST NOT replay messages of another stream.")
    keep_resumed_open: bool = knob(
        False, "--keep-resumed-open", group="http", transport="http", era="handshake",
        action="store_true",
        help="Keep the connection of a GET with Last-Event-ID open after the resumed stream's "
        "last event (many servers do) instead of ending it; breaks the SHOULD that a server "
        "closes a request's SSE stream once the response is sent, and teaches that a client "
        "must judge a resumed stream by what it carried, not by its end. With "
        "--resume-wrong-stream: another stream's messages on a stream that stays open.")
    skip_header_check: bool = knob(
        False, "--skip-header-check", group="http", transport="http", era="stateless",
        action="store_true",
        help="Serve stateless-era POSTs whose MCP-Protocol-Version, Mcp-Method or Mcp-Name "
        "header is missing or disagrees with the body; breaks the rule that such requests MUST "
        "be refused with 400 and error -32020 (a gateway routing on the header and the server "
        "acting on the body would disagree).")
    html_for_json_accept: bool = knob(
        False, "--html-for-json-accept", group="http", transport="http", era="handshake",
        action="store_true",
        help="Answer a POSTed request whose Accept lacks text/event-stream with 200 and an "
        "HTML page; breaks the rule that a request is answered with application/json or "
        "text/event-stream (refusing it, e.g. 406, would be fine).")
    discover_without_cache_hints: bool = knob(
        False, "--discover-without-cache-hints", group="http", transport="http",
        era="stateless", action="store_true",
        help="Answer server/discover without ttlMs and cacheScope; breaks the 2026-07-28 schema, "
        "where DiscoverResult (a CacheableResult) requires both.")
    lenient_meta: bool = knob(
        False, "--lenient-meta", group="http", transport="http", era="stateless",
        action="store_true",
        help="Serve a stateless-era POST whose _meta names a version but lacks "
        "clientCapabilities as if it declared none; breaks the rule that a request missing a "
        "required _meta field MUST be refused with -32602 (HTTP 400).")

    @property
    def serves_handshake(self) -> bool:
        return self.era != "stateless"

    @property
    def serves_stateless(self) -> bool:
        return self.era != "handshake"

    def never_answers(self, method: str) -> bool:
        """True if requests for ``method`` are to be swallowed without a response.

        ``*`` covers every request except ``initialize``, so the handshake still
        works and the silence shows up on the first real request; naming
        ``initialize`` explicitly is how to make the handshake itself hang.
        """
        if method in self.never_answer:
            return True
        return "*" in self.never_answer and method != "initialize"


@dataclass(frozen=True)
class HttpOptions:
    """Where and how to serve over HTTP (not faults: the shape of the server)."""

    host: str = "127.0.0.1"
    port: int = 0
    #: Also serve the legacy HTTP+SSE endpoints (GET /sse, POST /messages).
    legacy_sse: bool = False


def _flags() -> list[tuple[str, Flag]]:
    """Every knob's field name and :class:`Flag`, in declaration order."""
    return [(f.name, f.metadata["flag"]) for f in fields(Knobs)]


def build_parser(parents: Sequence[argparse.ArgumentParser] = ()) -> argparse.ArgumentParser:
    """The argument parser; its ``--help`` is the catalogue of lessons.

    ``parents`` adds flags parsed elsewhere (the authorization server's) to the help, so
    ``--help`` lists every flag the command takes.
    """
    parser = argparse.ArgumentParser(
        prog="python -m mcp_nb.lab",
        parents=list(parents),
        description=(
            "mcp_nb lab server: a small MCP server over stdio (newline-delimited JSON-RPC) or, "
            "with --http, over Streamable HTTP. It behaves well by default; each fault knob "
            "below breaks one rule on purpose so a client's handling of that fault can be "
            "observed."
        ),
    )
    serving = parser.add_argument_group("transport")
    serving.add_argument(
        "--http",
        action="store_true",
        help="Serve Streamable HTTP at /mcp instead of stdio; the first line on stdout is "
        "'mcp_nb lab server listening on URL'. Handshake-era sessions are keyed by "
        "Mcp-Session-Id (stateless-era requests need none), and requests with a "
        "non-localhost Origin get 403.",
    )
    serving.add_argument(
        "--sse",
        action="store_true",
        help="Also serve the legacy HTTP+SSE transport of 2024-11-05 (GET /sse, then POST "
        "/messages?session_id=ID); implies --http.",
    )
    serving.add_argument(
        "--host",
        default="127.0.0.1",
        help="Address to listen on (default 127.0.0.1: a local server should not be reachable "
        "from the network).",
    )
    serving.add_argument(
        "--port",
        type=int,
        default=0,
        help="Port to listen on (default 0: any free port, printed on stdout).",
    )
    groups = {key: parser.add_argument_group(title) for key, title in _GROUPS}
    for name, flag in _flags():
        default = [] if flag.options.get("action") == "append" else getattr(_DEFAULTS, name)
        groups[flag.group].add_argument(flag.flag, dest=name, default=default, help=flag.help,
                                        **flag.options)
    return parser


def parse_command_line(argv: Sequence[str] | None = None, *,
                       parents: Sequence[argparse.ArgumentParser] = (),
                       ) -> tuple[Knobs, HttpOptions | None]:
    """Parse ``argv`` (default: ``sys.argv[1:]``): the knobs, and HTTP options unless stdio.

    Knobs that belong to the other transport, or to an era the server does not
    serve, are refused, so a flag never silently does nothing.
    """
    parser = build_parser(parents)
    ns = parser.parse_args(argv)
    values = {}
    for name, flag in _flags():
        value = getattr(ns, name)
        values[name] = flag.convert(value) if flag.convert is not None else value
    knobs = Knobs(**values)
    http = ns.http or ns.sse
    transport = "http" if http else "stdio"
    for name, flag in _flags():
        if getattr(knobs, name) == getattr(_DEFAULTS, name):
            continue
        if flag.transport is not None and flag.transport != transport:
            parser.error(f"{flag.flag} is for the "
                         f"{'HTTP (--http)' if flag.transport == 'http' else 'stdio'} transport")
        if flag.era == "handshake" and not knobs.serves_handshake:
            parser.error(f"{flag.flag} concerns the handshake era, which --era stateless does "
                         "not serve")
        if flag.era == "stateless" and not knobs.serves_stateless:
            parser.error(f"{flag.flag} concerns the stateless era, which --era handshake does "
                         "not serve")
    if ns.sse and not knobs.serves_handshake:
        parser.error("--sse serves the handshake era's HTTP+SSE transport, which "
                     "--era stateless does not serve")
    if not http:
        return knobs, None
    return knobs, HttpOptions(host=ns.host, port=ns.port, legacy_sse=ns.sse)


_DEFAULTS = Knobs()
