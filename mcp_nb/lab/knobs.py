"""The lab server's fault knobs: one command-line flag per broken rule.

The server is well behaved by default.  Each knob switches on one specific
misbehaviour so a client author can watch their client cope (or not) with it.
The help text of every flag says what it does and which rule it breaks, so
``python -m mcp_nb.lab --help`` doubles as the lesson plan.

Protocol knobs work over every transport (they live in the session); process
knobs (signals, exiting, crashing) too; the stdio-only and HTTP-only knobs are
refused with the other transport rather than silently ignored, and so are the
knobs of one protocol era when ``--era`` serves only the other.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields

from mcp_nb.protocol.versions import STATELESS_VERSIONS, SUPPORTED_VERSIONS

#: Capabilities that ``--omit-capability`` may leave out of the initialize result.
CAPABILITY_NAMES: tuple[str, ...] = ("tools", "resources", "prompts", "logging", "completions")
#: What ``--era`` accepts: serve the handshake era, the stateless era, or both (dual-era).
ERAS: tuple[str, ...] = ("handshake", "stateless", "both")


@dataclass(frozen=True)
class Knobs:
    """Every fault knob, already parsed; the defaults describe a well-behaved server."""

    #: Which protocol era(s) the server speaks (not a fault: the shape of the server).
    era: str = "both"
    #: Offer the toggle_bonus tool, which changes all three lists (not a fault either).
    list_changes: bool = False
    # Handshake era
    answer_version: str | None = None
    supported_versions: tuple[str, ...] = SUPPORTED_VERSIONS
    reject_version: bool = False
    omit_capabilities: frozenset[str] = field(default_factory=frozenset)
    delay: float = 0.0
    ignore_cancel: bool = False
    ignore_stdin_close: bool = False
    ignore_sigterm: bool = False
    crash_after: int | None = None
    exit_after: float | None = None
    garbage_stdout: bool = False
    request_before_initialized: bool = False
    reuse_response_id: bool = False
    never_answer: frozenset[str] = field(default_factory=frozenset)
    hostile_strings: bool = False
    stderr_chatter: int = 0
    # Stateless era
    stateless_versions: tuple[str, ...] = STATELESS_VERSIONS
    omit_result_type: bool = False
    input_rounds: int = 1
    # HTTP only
    drop_stream_after: int | None = None
    expire_session_after: int | None = None
    no_delete: bool = False
    no_get_stream: bool = False
    require_header: tuple[str, str] | None = None

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


#: Knobs that only make sense with one transport: (attribute, flag).
_STDIO_ONLY = (
    ("ignore_stdin_close", "--ignore-stdin-close"),
    ("garbage_stdout", "--garbage-stdout"),
)
_HTTP_ONLY = (
    ("drop_stream_after", "--drop-stream-after"),
    ("expire_session_after", "--expire-session-after"),
    ("no_delete", "--no-delete"),
    ("no_get_stream", "--no-get-stream"),
    ("require_header", "--require-header"),
)
#: Knobs that only make sense in one protocol era: (attribute, flag).
_HANDSHAKE_ONLY = (
    ("answer_version", "--answer-version"),
    ("supported_versions", "--supported-versions"),
    ("reject_version", "--reject-version"),
    ("request_before_initialized", "--request-before-initialized"),
    ("drop_stream_after", "--drop-stream-after"),
    ("expire_session_after", "--expire-session-after"),
    ("no_delete", "--no-delete"),
    ("no_get_stream", "--no-get-stream"),
)
_STATELESS_ONLY = (
    ("stateless_versions", "--stateless-versions"),
    ("omit_result_type", "--omit-result-type"),
    ("input_rounds", "--input-rounds"),
)
_DEFAULTS = Knobs()


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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; its ``--help`` is the catalogue of lessons."""
    parser = argparse.ArgumentParser(
        prog="python -m mcp_nb.lab",
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
    eras = parser.add_argument_group("protocol era")
    eras.add_argument(
        "--era",
        choices=ERAS,
        default="both",
        help="Which era of MCP to speak (default both, a dual-era server). handshake: "
        "initialize opens a session, as in 2024-11-05 .. 2025-11-25; requests' _meta is not "
        "looked at and server/discover is an unknown method. stateless: the 2026-07-28 era, "
        "where every request carries its version and capabilities in _meta and initialize is "
        "refused with -32022 naming the versions served. both: a request whose _meta carries "
        "io.modelcontextprotocol/protocolVersion is served statelessly at any time, anything "
        "else as in the handshake era.",
    )
    extras = parser.add_argument_group("extras (not faults)")
    extras.add_argument(
        "--list-changes",
        action="store_true",
        help="Offer a toggle_bonus tool that adds or removes a bonus tool, prompt and resource "
        "and announces each change with notifications/{tools,prompts,resources}/list_changed "
        "(to the session in the handshake era; to subscriptions/listen streams that opted in, "
        "in the stateless era), so list_changed can be observed.",
    )
    add = parser.add_argument
    add(
        "--answer-version",
        metavar="V",
        help="Answer initialize with protocol version V whatever the client offered; teaches "
        "that a client receiving a version it cannot speak must disconnect.",
    )
    add(
        "--supported-versions",
        metavar="V1,V2",
        type=_version_list,
        default=SUPPORTED_VERSIONS,
        help="Restrict the handshake-era versions the server speaks (default: "
        f"{','.join(SUPPORTED_VERSIONS)}); teaches version negotiation by counter-offer.",
    )
    add(
        "--reject-version",
        action="store_true",
        help="Answer an unsupported offered version with error -32602 'Unsupported protocol "
        "version' (data: supported, requested) instead of counter-offering the latest.",
    )
    add(
        "--omit-capability",
        metavar="NAME",
        action="append",
        choices=CAPABILITY_NAMES,
        default=[],
        help="Leave NAME (tools, resources, prompts, logging, completions) out of the declared "
        "capabilities while still serving its methods; teaches that clients may only rely on "
        "what was negotiated. Repeatable.",
    )
    add(
        "--delay",
        metavar="SECONDS",
        type=_at_least(float, 0),
        default=0.0,
        help="Delay every response (not notifications) by SECONDS; teaches request timeouts "
        "and that pings must not queue behind slow work.",
    )
    add(
        "--ignore-cancel",
        action="store_true",
        help="Ignore notifications/cancelled so cancelled requests still finish and respond; "
        "teaches that a client must drop late responses to requests it cancelled.",
    )
    add(
        "--ignore-stdin-close",
        action="store_true",
        help="Keep running after stdin reaches EOF; teaches that stdio shutdown must escalate "
        "from closing stdin to SIGTERM.",
    )
    add(
        "--ignore-sigterm",
        action="store_true",
        help="Ignore SIGTERM; teaches that shutdown must escalate to SIGKILL (together with "
        "--ignore-stdin-close only SIGKILL ends the server).",
    )
    add(
        "--crash-after",
        metavar="N",
        type=_at_least(int, 1),
        help="Exit abruptly with code 3 on receiving the Nth message from the client (a line "
        "on stdio, a POST over HTTP); teaches that a server can die mid-session and the client "
        "must fail pending requests.",
    )
    add(
        "--exit-after",
        metavar="SECONDS",
        type=_at_least(float, 0),
        help="Exit on its own (code 0) after SECONDS; teaches that the server may leave first "
        "and the client must notice EOF on the server's stdout.",
    )
    add(
        "--garbage-stdout",
        action="store_true",
        help="Write a non-JSON line to stdout at startup and before every response; breaks "
        "the rule that stdout carries nothing but MCP messages.",
    )
    add(
        "--request-before-initialized",
        action="store_true",
        help="Send a roots/list request right after the initialize response, before "
        "notifications/initialized arrives; breaks the rule that only ping and logging may "
        "come first.",
    )
    add(
        "--reuse-response-id",
        action="store_true",
        help="Answer every request twice with the same id; breaks the one-response-per-request "
        "rule, so clients must ignore responses to ids no longer pending.",
    )
    add(
        "--never-answer",
        metavar="METHOD",
        action="append",
        default=[],
        help="Read requests for METHOD but never respond ('*' = every request except "
        "initialize; name initialize to hang the handshake); teaches request timeouts. "
        "Repeatable.",
    )
    add(
        "--hostile-strings",
        action="store_true",
        help="Put markup, quotes, braces, newlines and control characters (ANSI escapes, "
        "right-to-left override) in names, descriptions and tool output; teaches that server "
        "strings are untrusted and must be escaped when displayed.",
    )
    add(
        "--stderr-chatter",
        metavar="N",
        type=_at_least(int, 0),
        default=0,
        help="Write N lines to stderr at startup, before reading stdin; teaches that a client "
        "must drain the server's stderr or the server blocks on a full pipe.",
    )
    stateless = parser.add_argument_group("stateless-era fault knobs (--era stateless or both)")
    stateless.add_argument(
        "--stateless-versions",
        metavar="V1,V2",
        type=_version_list,
        default=STATELESS_VERSIONS,
        help=f"Serve these stateless-era versions (default: {','.join(STATELESS_VERSIONS)}); "
        "requests declaring any other version in _meta get -32022 'Unsupported protocol "
        "version' with data.supported, so claiming e.g. 2099-01-01 only teaches a client to "
        "negotiate (or to give up) per request.",
    )
    stateless.add_argument(
        "--omit-result-type",
        action="store_true",
        help="Leave resultType out of complete results; breaks the rule that every 2026-07-28 "
        "result carries it, and teaches that a client must then read the result as complete "
        "(input_required results keep it).",
    )
    stateless.add_argument(
        "--input-rounds",
        metavar="N",
        type=_at_least(int, 1),
        default=1,
        help="Make ask_llm, ask_user and list_roots answer input_required N times (default "
        "1), each round asking again under a new inputRequests key, before completing with "
        "every round's answer; teaches that a client must keep retrying (with a new id and the "
        "echoed requestState) until the result is complete.",
    )
    http = parser.add_argument_group("HTTP fault knobs (with --http)")
    http.add_argument(
        "--drop-stream-after",
        metavar="N",
        type=_at_least(int, 1),
        help="Cut the connection of a request's SSE stream after N messages when more are to "
        "come, having sent 'retry: 250'. Events carry ids, so the client can resume with GET + "
        "Last-Event-ID; teaches stream resumption and honouring the retry field (handshake "
        "era only: 2026-07-28 streams are not resumable).",
    )
    http.add_argument(
        "--expire-session-after",
        metavar="N",
        type=_at_least(int, 1),
        help="Forget a session after N POSTs (initialize included): later requests carrying its "
        "Mcp-Session-Id get 404; teaches that a client must then start a new session.",
    )
    http.add_argument(
        "--no-delete",
        action="store_true",
        help="Answer DELETE with 405 Method Not Allowed; teaches that a server may refuse to let "
        "clients end sessions, and that the client must cope.",
    )
    http.add_argument(
        "--no-get-stream",
        action="store_true",
        help="Answer GET /mcp with 405 (resuming with Last-Event-ID still works), so the server "
        "can only talk on POST responses; teaches that the GET stream is optional.",
    )
    http.add_argument(
        "--require-header",
        metavar="'NAME: VALUE'",
        type=_header,
        help="Answer 401 to every request without exactly this header (e.g. 'Authorization: "
        "Bearer s3cret'); teaches sending credentials, and keeping them out of transcripts.",
    )
    return parser


def parse_command_line(argv: Sequence[str] | None = None) -> tuple[Knobs, HttpOptions | None]:
    """Parse ``argv`` (default: ``sys.argv[1:]``): the knobs, and HTTP options unless stdio.

    Knobs that belong to the other transport are refused, so a flag never
    silently does nothing.
    """
    parser = build_parser()
    ns = parser.parse_args(argv)
    knobs = _knobs(ns)
    http = ns.http or ns.sse
    _refuse(parser, knobs, _STDIO_ONLY if http else _HTTP_ONLY,
            f"is for the {'stdio' if http else 'HTTP (--http)'} transport")
    if not knobs.serves_handshake:
        _refuse(parser, knobs, _HANDSHAKE_ONLY, "concerns the handshake era, which "
                "--era stateless does not serve")
        if ns.sse:
            parser.error("--sse serves the handshake era's HTTP+SSE transport, which "
                         "--era stateless does not serve")
    if not knobs.serves_stateless:
        _refuse(parser, knobs, _STATELESS_ONLY, "concerns the stateless era, which "
                "--era handshake does not serve")
    if not http:
        return knobs, None
    return knobs, HttpOptions(host=ns.host, port=ns.port, legacy_sse=ns.sse)


def _refuse(parser: argparse.ArgumentParser, knobs: Knobs,
            pairs: Sequence[tuple[str, str]], why: str) -> None:
    """Exit with an error naming the first of ``pairs`` set away from its default."""
    for attribute, flag in pairs:
        if getattr(knobs, attribute) != getattr(_DEFAULTS, attribute):
            parser.error(f"{flag} {why}")


def _knobs(ns: argparse.Namespace) -> Knobs:
    # Each flag's dest is its field's name; only the repeatable flags differ (plural, a set).
    values = {f.name: getattr(ns, f.name) for f in fields(Knobs) if hasattr(ns, f.name)}
    values["omit_capabilities"] = frozenset(ns.omit_capability)
    values["never_answer"] = frozenset(ns.never_answer)
    return Knobs(**values)
