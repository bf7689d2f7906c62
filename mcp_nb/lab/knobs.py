"""The lab server's fault knobs: one command-line flag per broken rule.

The server is well behaved by default.  Each knob switches on one specific
misbehaviour so a client author can watch their client cope (or not) with it.
The help text of every flag says what it does and which rule it breaks, so
``python -m mcp_nb.lab --help`` doubles as the lesson plan.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from mcp_nb.protocol.versions import SUPPORTED_VERSIONS

#: Capabilities that ``--omit-capability`` may leave out of the initialize result.
CAPABILITY_NAMES: tuple[str, ...] = ("tools", "resources", "prompts", "logging", "completions")


@dataclass(frozen=True)
class Knobs:
    """Every fault knob, already parsed; the defaults describe a well-behaved server."""

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

    def never_answers(self, method: str) -> bool:
        """True if requests for ``method`` are to be swallowed without a response.

        ``*`` covers every request except ``initialize``, so the handshake still
        works and the silence shows up on the first real request; naming
        ``initialize`` explicitly is how to make the handshake itself hang.
        """
        if method in self.never_answer:
            return True
        return "*" in self.never_answer and method != "initialize"


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
            "mcp_nb lab server: a small MCP server over stdio (newline-delimited JSON-RPC). "
            "It behaves well by default; each flag below breaks one rule on purpose so a "
            "client's handling of that fault can be observed."
        ),
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
        help=f"Restrict the versions the server speaks (default: {','.join(SUPPORTED_VERSIONS)}); "
        "teaches version negotiation by counter-offer.",
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
        help="Exit abruptly with code 3 on receiving the Nth line from the client; teaches "
        "that a server can die mid-session and the client must fail pending requests.",
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
    return parser


def parse_knobs(argv: Sequence[str] | None = None) -> Knobs:
    """Parse command-line arguments (default: ``sys.argv[1:]``) into :class:`Knobs`."""
    ns = build_parser().parse_args(argv)
    return Knobs(
        answer_version=ns.answer_version,
        supported_versions=ns.supported_versions,
        reject_version=ns.reject_version,
        omit_capabilities=frozenset(ns.omit_capability),
        delay=ns.delay,
        ignore_cancel=ns.ignore_cancel,
        ignore_stdin_close=ns.ignore_stdin_close,
        ignore_sigterm=ns.ignore_sigterm,
        crash_after=ns.crash_after,
        exit_after=ns.exit_after,
        garbage_stdout=ns.garbage_stdout,
        request_before_initialized=ns.request_before_initialized,
        reuse_response_id=ns.reuse_response_id,
        never_answer=frozenset(ns.never_answer),
        hostile_strings=ns.hostile_strings,
        stderr_chatter=ns.stderr_chatter,
    )
