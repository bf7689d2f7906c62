"""The mcp_nb lab server: a small, well-behaved MCP server with fault knobs.

Run it with ``python -m mcp_nb.lab`` (``--help`` lists the knobs).  Each knob
breaks one protocol rule on purpose, so a client's handling of that fault can be
watched and tested.  :class:`mcp_nb.lab.server.LabSession` is the transport-free
protocol engine; :func:`mcp_nb.lab.server.serve_stdio` runs it over stdio and
:func:`mcp_nb.lab.http.serve_http` over Streamable HTTP (``--http``).

It speaks both eras of MCP by default (``--era both``): the handshake era
(``initialize`` opens a session) and the stateless era of 2026-07-28 (every
request carries its version and capabilities in ``_meta``); :mod:`mcp_nb.lab.eras`
holds the stateless era's session-free pieces (requestState, subscriptions).
"""
