"""``python -m mcp_nb.replay FILE [--http]``: the recording CLI's replay subcommand on its own."""

import sys

from mcp_nb.recording.cli import main

sys.exit(main(["replay", *sys.argv[1:]]))
