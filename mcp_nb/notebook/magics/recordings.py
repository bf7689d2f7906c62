"""``%mcp save``, ``diff``, ``export-tests`` and ``connect --replay``: sessions kept as files.

The work is :mod:`mcp_nb.recording`'s; this module reads magic lines, names
sessions or files, and turns a bad file into one readable line.

Example::

    %mcp save lab lab.jsonl                  # credentials redacted on the way
    %mcp connect old --replay lab.jsonl      # the recording answers, the server may be gone
    %mcp diff old lab                        # sessions or files, in any mix
    %mcp export-tests lab test_lab.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ...i18n import N_, _
from ...recording import Recording, RecordingError, capture, load, save
from ...recording.cli import timing_factor
from ...recording.diff import SessionDiff, diff_recordings
from ...recording.export import export_tests
from ...transports import StdioTransport, Transport
from .table import CommandGroup, McpCellError, Parser

if TYPE_CHECKING:
    from .magic import McpMagics

GROUP = CommandGroup()


def add_replay_arguments(p: Parser) -> None:
    """``%mcp connect``'s ``--replay FILE`` and ``--replay-timing``."""
    p.add_argument("--replay", metavar="FILE",
                   help=N_("answer from a recording instead of a server (python -m mcp_nb.replay "
                           "FILE), in the era it was recorded in"))
    p.add_argument("--replay-timing", type=timing_factor, default=1.0, metavar="HOW",
                   help=N_("with --replay: recorded (default), none, or a factor such as 0.5"))


def replay_target(args: argparse.Namespace) -> tuple[str, Transport, bool]:
    """``%mcp connect --replay FILE``: the base name, the transport, whether it was named.

    The session speaks the era the recording was made in unless ``--era`` says
    otherwise (``args.era`` is filled in).
    """
    recording = _load(args.replay)
    args.era = args.era or recording.header.era
    command = [sys.executable, "-m", "mcp_nb.replay", args.replay,
               "--timing", str(args.replay_timing)]
    return args.name or Path(args.replay).stem, StdioTransport(command), args.name is not None


def _load(path: str) -> Recording:
    try:
        return load(path)
    except OSError as exc:
        raise McpCellError(_("cannot read {file}: {reason}").format(
            file=path, reason=exc.strerror or exc)) from None
    except RecordingError as exc:
        raise McpCellError(str(exc)) from None


def _session_or_file(mcp: McpMagics, name: str) -> Recording:
    """A named session (captured as it stands, credentials redacted) or a recording file."""
    hosted = mcp.sessions.get(name)
    if hosted is None:
        return _load(name)
    recording = capture(hosted.session)
    recording.source = name  # what a diff calls it
    return recording


def _save_arguments(p: Parser) -> None:
    p.add_argument("names", nargs="+", metavar="[NAME] FILE",
                   help=N_("the session (default: the current one) and the file to write"))
    p.add_argument("--secret", action="append", default=[], metavar="VALUE",
                   help=N_("a value of your own to scrub everywhere (repeatable); header values, "
                           "secret-named flags and URL credentials are found without help"))


@GROUP.command("save", N_("save a session as a recording (JSON Lines, docs/recording.md); "
                          "credentials are redacted"), arguments=_save_arguments,
               expand=("names", "secret"))
def save_session(mcp: McpMagics, args: argparse.Namespace) -> None:
    if len(args.names) > 2:
        raise McpCellError(_("usage: {usage}").format(usage="%mcp save [NAME] FILE"))
    name, path = (None, args.names[0]) if len(args.names) == 1 else args.names
    hosted = mcp.session(name)
    count = save(hosted.session, path, secrets=args.secret)
    print(_("{name}: saved {count} records to {file} (credentials redacted)").format(
        name=hosted.name, count=count, file=Path(path).name))
    dropped = hosted.session.transcript.wire_dropped
    if dropped:
        print(_("note: the session had already let go of its {count} oldest entries "
                "(transcript_limit), so the recording starts after them; a replay needs the "
                "handshake: connect with a larger transcript_limit to record long sessions"
                ).format(count=dropped))


def _diff_arguments(p: Parser) -> None:
    p.add_argument("before", help=N_("a session name or a recording file"))
    p.add_argument("after", help=N_("a session name or a recording file"))
    # dest: the dispatcher keeps args.json for tool arguments.
    p.add_argument("--json", action="store_true", dest="as_json", help=N_("print the diff as JSON"))


@GROUP.command("diff", N_("compare two sessions or recordings: interface (info, capabilities, "
                          "tools, resources, prompts) and behaviour (the same calls)"),
               arguments=_diff_arguments, expand=("before", "after"))
def diff(mcp: McpMagics, args: argparse.Namespace) -> SessionDiff | None:
    found = diff_recordings(_session_or_file(mcp, args.before),
                            _session_or_file(mcp, args.after))
    if args.as_json:
        print(found.to_json())
        return None
    return found


def _export_arguments(p: Parser) -> None:
    p.add_argument("names", nargs="+", metavar="[NAME] FILE.py",
                   help=N_("the session or recording file (default: the current session) and "
                           "the pytest file to write"))
    p.add_argument("--normalize", choices=("exact", "whitespace", "numbers"), default="exact",
                   help=N_("how text results are compared (structured content: always exactly)"))


@GROUP.command("export-tests", N_("write a pytest file from a session's calls, the recorded "
                                  "results as expectations"), arguments=_export_arguments,
               expand=("names",))
def export(mcp: McpMagics, args: argparse.Namespace) -> None:
    if len(args.names) > 2:
        raise McpCellError(_("usage: {usage}").format(usage="%mcp export-tests [NAME] FILE.py"))
    if len(args.names) == 1:
        source = capture(mcp.session().session)
        output = args.names[0]
    else:
        source, output = _session_or_file(mcp, args.names[0]), args.names[1]
    count = export_tests(source, output, normalizer=args.normalize)
    print(_("wrote {count} tests to {file} (the recording beside it); run them with pytest "
            "(against the recording) or MCP_NB_TARGET=live pytest (against the server)"
            ).format(count=count, file=Path(output).name))
