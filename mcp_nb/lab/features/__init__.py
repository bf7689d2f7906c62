"""The lab session's handlers, one module per feature area of MCP.

Each module holds one mixin of :class:`mcp_nb.lab.session.LabSession` and
declares the methods it serves in a ``ROUTES`` table (method → handler name and
the eras it is served in), which the session reads to build its dispatch:

* :mod:`.lifecycle`: initialize, server/discover, ping, capabilities, versions;
* :mod:`.tools`: tools/list, tools/call and the tools themselves;
* :mod:`.resources`: resources, templates, resources/subscribe;
* :mod:`.prompts`: prompts/list, prompts/get, completion/complete;
* :mod:`.logging`: logging/setLevel and the log messages tools send;
* :mod:`.client_requests`: sampling, elicitation and roots, asked of the client
  (a request in the handshake era, ``input_required`` in the stateless era);
* :mod:`.subscriptions`: the stateless era's subscriptions/listen.

:mod:`.base` holds what they all share: the session's state and ``notify``.
"""
