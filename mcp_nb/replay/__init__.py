"""``python -m mcp_nb.replay FILE [--http]``: serve a recording; the code is :mod:`mcp_nb.recording`."""
