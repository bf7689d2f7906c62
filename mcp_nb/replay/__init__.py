"""``python -m mcp_nb.replay FILE [--http]``: serve a recording (code: :mod:`mcp_nb.recording`)."""
