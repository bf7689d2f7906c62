"""``python -m mcp_nb.lab``: run the lab server over stdio."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from mcp_nb.lab.knobs import parse_knobs
from mcp_nb.lab.server import serve_stdio


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the fault knobs and serve stdin/stdout until the session ends."""
    return serve_stdio(parse_knobs(argv))


if __name__ == "__main__":
    sys.exit(main())
