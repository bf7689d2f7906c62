"""The client under test for the official MCP conformance suite (``python -m mcp_nb.conformance``).

The suite's client mode starts a scenario server and runs
``python -m mcp_nb.conformance SERVER_URL`` with the scenario's name in
``MCP_CONFORMANCE_SCENARIO``; a *player* registered for that name with
:func:`plays` does what the scenario expects of a client, through mcp_nb's public
API only. :mod:`mcp_nb.conformance.suite` installs and drives the suite itself.

Example (what the suite runs)::

    MCP_CONFORMANCE_SCENARIO=tools_call MCP_CONFORMANCE_PROTOCOL_VERSION=2025-11-25 \\
        python -m mcp_nb.conformance http://localhost:41234/mcp
"""

from .registry import SCENARIO_MODULES, Assignment, load_players, player_for, plays

__all__ = ["SCENARIO_MODULES", "Assignment", "load_players", "player_for", "plays"]
