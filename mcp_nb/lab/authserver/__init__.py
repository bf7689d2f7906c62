"""The lab authorization server: ``python -m mcp_nb.lab --http --auth`` makes the lab MCP
server a protected resource, with this authorization server beside it.

* :mod:`.server`: :class:`LabAuthorizationServer` (metadata, DCR, pre-registered
  clients, auto-approval or an approval page, authorization code with PKCE S256,
  refresh, client credentials; the Protected Resource Metadata of the MCP server);
* :mod:`.cimd`: Client ID Metadata Documents (a URL client id: fetch, check, and
  verify the client's ``private_key_jwt`` assertions with the document's keys);
* :mod:`.guard`: the MCP server's guard (401 with a challenge, 403 for step-up);
* :mod:`.faults`: ``--auth-fault NAME``, one per rule the client must check;
* :mod:`.cli`: the flags, and starting it all (imported by ``python -m mcp_nb.lab``).

Example::

    python -m mcp_nb.lab --http --auth                       # auto-approval
    python -m mcp_nb.lab --http --auth --auth-approval page  # a page with a button
    python -m mcp_nb.lab --http --auth --auth-fault wrong-issuer
    python -m mcp_nb.lab --http --auth --auth-fault legacy-layout  # 2025-03-26
"""
