"""Which function plays which conformance-suite client scenario, and what each is told."""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: Modules whose ``@plays`` decorators fill the registry. Adding a family of scenarios
#: (the ``auth/*`` ones, say) is one more entry here.
SCENARIO_MODULES = (
    "mcp_nb.conformance.scenarios",
    "mcp_nb.conformance.auth",
)


@dataclass(frozen=True)
class Assignment:
    """What the suite tells the client for one run (its client contract).

    ``scenario`` comes from ``MCP_CONFORMANCE_SCENARIO``, ``context`` (scenario data
    such as client credentials or tool arguments) from ``MCP_CONFORMANCE_CONTEXT``,
    ``protocol_version`` (the wire version the suite runs the scenario at) from
    ``MCP_CONFORMANCE_PROTOCOL_VERSION``; ``server_url`` is the last argument.
    """

    scenario: str
    server_url: str
    protocol_version: str | None = None
    context: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_environment(cls, server_url: str,
                         environ: Mapping[str, str] = os.environ) -> Assignment:
        scenario = environ.get("MCP_CONFORMANCE_SCENARIO")
        if not scenario:
            raise ValueError("MCP_CONFORMANCE_SCENARIO is not set: the conformance suite sets "
                             "it to the scenario it is running")
        raw_context = environ.get("MCP_CONFORMANCE_CONTEXT")
        context = json.loads(raw_context) if raw_context else {}
        if not isinstance(context, dict):
            raise ValueError(f"MCP_CONFORMANCE_CONTEXT is not a JSON object: {raw_context!r}")
        return cls(scenario=scenario, server_url=server_url,
                   protocol_version=environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or None,
                   context=context)


Player = Callable[[Assignment], Awaitable[None]]

_PLAYERS: dict[str, Player] = {}


def plays(*scenarios: str) -> Callable[[Player], Player]:
    """Register the decorated coroutine function as the client for these scenarios."""

    def register(player: Player) -> Player:
        for name in scenarios:
            if name in _PLAYERS:
                raise ValueError(f"scenario {name!r} already has a player: "
                                 f"{_PLAYERS[name].__qualname__}")
            _PLAYERS[name] = player
        return player

    return register


def load_players() -> dict[str, Player]:
    """Every registered scenario and its player (imports :data:`SCENARIO_MODULES` once)."""
    for module in SCENARIO_MODULES:
        importlib.import_module(module)
    return dict(_PLAYERS)


def player_for(scenario: str) -> Player:
    """The player of ``scenario``; ``LookupError`` names the known ones otherwise."""
    players = load_players()
    try:
        return players[scenario]
    except KeyError:
        raise LookupError(f"no client for conformance scenario {scenario!r}; known: "
                          f"{', '.join(sorted(players))}") from None
