"""mcp_nb against the official MCP clients and a raw pipe (``python -m benchmarks``)."""
