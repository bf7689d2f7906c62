"""The command line: ``python -m mcp_nb.recording replay|diff|export-tests|show FILE …``.

``python -m mcp_nb.replay FILE [--http]`` is the replay subcommand on its own.

Examples::

    python -m mcp_nb.replay session.jsonl                  # stdio: any client can spawn this
    python -m mcp_nb.replay session.jsonl --http --port 8123
    python -m mcp_nb.recording diff old.jsonl new.jsonl --json
    python -m mcp_nb.recording export-tests session.jsonl test_server.py
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Sequence

from .format import RecordingError, load
from .replayer import DEFAULT_REPLY_TIMEOUT, Replayer
from .script import Script


def timing_factor(text: str) -> float:
    """``recorded`` (1), ``none`` (0) or a factor on the recorded delays."""
    named = {"recorded": 1.0, "none": 0.0}
    if text in named:
        return named[text]
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"timing is 'recorded', 'none' or a factor such as 0.5, not {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("a timing factor cannot be negative")
    return value


def add_replay_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="the recording (JSON Lines, docs/recording.md)")
    parser.add_argument("--http", action="store_true",
                        help="serve Streamable HTTP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: a free port (printed)")
    parser.add_argument("--timing", type=timing_factor, default=1.0,
                        help="recorded (default), none, or a factor on the recorded delays")
    parser.add_argument("--reply-timeout", type=float, default=DEFAULT_REPLY_TIMEOUT,
                        help="seconds to wait for the client to answer a server request")


def run_replay(args: argparse.Namespace) -> int:
    from .serve_http import serve_http
    from .serve_stdio import serve_stdio

    recording = load(args.file)
    replayer = Replayer(Script.from_recording(recording), timing=args.timing,
                        reply_timeout=args.reply_timeout,
                        log=lambda text: print(text, file=sys.stderr, flush=True))
    if not args.http:
        return asyncio.run(serve_stdio(replayer))

    async def main() -> int:
        task = asyncio.ensure_future(serve_http(
            replayer, args.host, args.port, ready=lambda line: print(line, flush=True)))
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, task.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return 0

    return asyncio.run(main())


def run_diff(args: argparse.Namespace) -> int:
    from .diff import diff_recordings

    result = diff_recordings(load(args.before), load(args.after))
    print(result.to_json() if args.json else result.text())
    return 1 if result and args.exit_code else 0


def run_export(args: argparse.Namespace) -> int:
    from .export import export_tests

    count = export_tests(load(args.file), args.output, recording_path=args.file,
                         normalizer=args.normalize)
    print(f"wrote {count} tests to {args.output}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    recording = load(args.file, partial=args.partial)
    header = recording.header
    server = header.server_info or {}
    print(f"{args.file}: {header.era} era, version {header.protocol_version}, server "
          f"{server.get('name', '?')} {server.get('version', '')} over "
          f"{header.transport.get('kind', '?')}; {len(recording.records)} records"
          + ("" if recording.complete else " (truncated)"))
    for record in recording.records:
        what = record.method or (record.kind if record.message is None else "response")
        ident = (record.message or {}).get("id")
        print(f"  {record.line:>5}  {record.time:9.4f}s  {record.direction:<5} {what}"
              + (f" #{ident}" if ident is not None else ""))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mcp_nb.recording",
                                     description="Recorded MCP sessions: replay, diff, export.")
    commands = parser.add_subparsers(dest="command", required=True)
    add_replay_arguments(commands.add_parser("replay", help="serve a recording as a mock server"))
    diff = commands.add_parser("diff", help="compare two recordings")
    diff.add_argument("before")
    diff.add_argument("after")
    diff.add_argument("--json", action="store_true", help="machine-readable output")
    diff.add_argument("--exit-code", action="store_true", help="exit 1 when they differ")
    export = commands.add_parser("export-tests", help="write a pytest file from a recording")
    export.add_argument("file")
    export.add_argument("output")
    export.add_argument("--normalize", choices=("exact", "whitespace", "numbers"),
                        default="exact", help="how text results are compared")
    show = commands.add_parser("show", help="summarise a recording, one line per record")
    show.add_argument("file")
    show.add_argument("--partial", action="store_true", help="accept a truncated file")
    args = parser.parse_args(argv)
    runner = {"replay": run_replay, "diff": run_diff, "export-tests": run_export,
              "show": run_show}[args.command]
    try:
        return runner(args)
    except RecordingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
