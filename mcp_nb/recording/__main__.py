"""``python -m mcp_nb.recording``: replay, diff, export-tests and show (see :mod:`.cli`)."""

import sys

from .cli import main

sys.exit(main())
