"""The mcp_nb lab server: a small, well-behaved MCP server with fault knobs.

Run it with ``python -m mcp_nb.lab`` (``--help`` lists the knobs).  Each knob
breaks one protocol rule on purpose, so a client's handling of that fault can be
watched and tested.  Where to look:

* :mod:`.session` and :mod:`.menus`: :class:`~mcp_nb.lab.menus.LabSession`, the transport-free
  protocol engine (receive, dispatch, respond; both eras);
* :mod:`.features`: its handlers, one module per feature area (tools,
  resources, prompts and completion, logging, sampling/elicitation/roots,
  subscriptions, lifecycle);
* :mod:`.knobs`: the flags; :mod:`.faults`: where the protocol knobs act (one
  seam); :mod:`.process`: the process knobs;
* :mod:`.stdio` (:func:`~mcp_nb.lab.stdio.serve_stdio`) and :mod:`.http`
  (:func:`~mcp_nb.lab.http.serve_http`, ``--http``): the transports;
* :mod:`.content`: the menu (tools, resources, prompts) as data; :mod:`.eras`:
  the stateless era's session-free pieces (requestState, subscriptions);
  :mod:`.rpc`: JSON-RPC messages and errors.

It speaks both eras of MCP by default (``--era both``): the handshake era
(``initialize`` opens a session) and the stateless era of 2026-07-28 (every
request carries its version and capabilities in ``_meta``).
"""
