"""``python -m mcp_nb.conformance SERVER_URL``: play the scenario the conformance suite names."""

from __future__ import annotations

import argparse
import sys

import anyio

from .kernel import KERNEL_PLAYERS, play_in_kernel
from .registry import Assignment, player_for


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mcp_nb.conformance",
        description="The client under test for the official MCP conformance suite "
                    "(conformance client --command 'python -m mcp_nb.conformance'). The "
                    "scenario comes from MCP_CONFORMANCE_SCENARIO, its data from "
                    "MCP_CONFORMANCE_CONTEXT, the wire version from "
                    "MCP_CONFORMANCE_PROTOCOL_VERSION.")
    parser.add_argument("--kernel", action="store_true",
                        help="play the scenario as %%mcp magics typed into a real ipykernel "
                             "(the notebook user's path) instead of through the Python API")
    parser.add_argument("server_url", help="the scenario server's URL (the suite appends it)")
    args = parser.parse_args(argv)
    try:
        assignment = Assignment.from_environment(args.server_url)
        if args.kernel:
            if assignment.scenario not in KERNEL_PLAYERS:
                raise LookupError(f"no kernel player for conformance scenario "
                                  f"{assignment.scenario!r}; played through the magics: "
                                  f"{', '.join(sorted(KERNEL_PLAYERS))}")
        else:
            player = player_for(assignment.scenario)
    except (ValueError, LookupError) as exc:
        print(f"mcp_nb.conformance: {exc}", file=sys.stderr)
        return 2
    try:
        if args.kernel:
            play_in_kernel(assignment)
        else:
            anyio.run(player, assignment)
    except Exception as exc:
        print(f"mcp_nb.conformance: {assignment.scenario} at "
              f"{assignment.protocol_version or 'the default version'} failed: "
              f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
