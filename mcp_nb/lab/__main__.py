"""``python -m mcp_nb.lab``: run the lab server over stdio, or over HTTP with ``--http``."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from mcp_nb.lab.authserver.cli import auth_parser, split_auth_arguments, start_authorization
from mcp_nb.lab.knobs import parse_command_line
from mcp_nb.lab.stdio import serve_stdio


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the flags and serve until the session (stdio) or the server (HTTP) ends."""
    auth, rest = split_auth_arguments(sys.argv[1:] if argv is None else argv)
    # The authorization flags are taken off first; they are named again only for --help.
    knobs, http = parse_command_line(rest, parents=[auth_parser()])
    if http is None:
        if auth.auth:
            sys.exit("python -m mcp_nb.lab: --auth needs --http (authorization is HTTP only)")
        return serve_stdio(knobs)
    # Imported only here: stdio sessions need neither h11 nor anyio's sockets.
    from mcp_nb.lab.http import serve_http

    return serve_http(knobs, http, start_authorization(auth) if auth.auth else ())


if __name__ == "__main__":
    sys.exit(main())
