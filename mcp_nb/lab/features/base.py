"""What every feature of a lab session shares: its state, and how it sends notifications."""

from __future__ import annotations

import asyncio
import importlib.metadata
from collections.abc import Callable
from typing import Any

from mcp_nb.lab.content import build_catalogue
from mcp_nb.lab.eras import Listener
from mcp_nb.lab.faults import FaultSeam
from mcp_nb.lab.knobs import Knobs
from mcp_nb.lab.rpc import Message, RequestId, Send
from mcp_nb.protocol.log_levels import LOG_LEVELS

#: Eras a route is served in (see ``ROUTES`` in each feature module).
HANDSHAKE = frozenset({"handshake"})
STATELESS = frozenset({"stateless"})
BOTH_ERAS = HANDSHAKE | STATELESS

#: One feature's routes: method → (name of the handler method, eras it is served in).
Routes = dict[str, tuple[str, frozenset[str]]]


def package_version() -> str:
    """mcp_nb's version, the lab's serverInfo.version."""
    try:
        return importlib.metadata.version("mcp_nb")
    except importlib.metadata.PackageNotFoundError:
        return "0.1.0"


class SessionBase:
    """The state one lab session's features share, set up once.

    Application state (the counter, the bonus toggle, subscriptions) is the
    server's own and serves both eras; the handshake state (``state``,
    ``protocol_version``, ``client_capabilities``) is set by initialize.
    """

    def __init__(self, knobs: Knobs, send: Send, era: str | None = None,
                 hang_up: Callable[[], None] | None = None) -> None:
        self.knobs = knobs
        self.era = era or knobs.era
        self.faults = FaultSeam(knobs)
        self.catalogue = build_catalogue(hostile=knobs.hostile_strings,
                                         list_changes=knobs.list_changes)
        self._send = send
        self._hang_up = hang_up
        #: "new" until initialize succeeds, then "initialized", then "operating"
        #: once notifications/initialized arrives.
        self.state = "new"
        self.protocol_version: str | None = None
        self.client_capabilities: dict[str, Any] = {}
        self.client_info: dict[str, Any] = {}
        self._log_threshold = LOG_LEVELS.index("info")
        self._counter = 0
        self._bonus = False
        #: Handshake era: URIs the session subscribed to with resources/subscribe.
        self._subscriptions: set[str] = set()
        #: Stateless era: open subscriptions/listen requests, by the task serving each.
        self._listeners: dict[asyncio.Task[Any], Listener] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._inflight: dict[RequestId, tuple[str, asyncio.Task[Any]]] = {}
        self._outgoing: dict[int, asyncio.Future[Any]] = {}
        self._last_outgoing_id = 0

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification to the client."""
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def send_message(self, message: Message) -> None:
        """Send one message as it is (a request or notification built elsewhere)."""
        self._send(message)

    def hang_up(self) -> bool:
        """End the current request's connection, not the request; False if the transport can't."""
        if self._hang_up is None:
            return False
        self._hang_up()
        return True

    def param_headers(self, tool: str) -> dict[str, str]:
        """The ``x-mcp-header`` names of ``tool``'s parameters, by parameter (none here)."""
        return {}

    def served_capabilities(self) -> dict[str, Any]:
        """The capabilities this session's features serve."""
        return {
            "tools": {"listChanged": True},
            "resources": {"subscribe": True, "listChanged": True},
            "prompts": {"listChanged": True},
            "logging": {},
            "completions": {},
        }

    def capabilities(self) -> dict[str, Any]:
        """The declared server capabilities (less any the fault knobs leave out)."""
        return self.faults.declared_capabilities(self.served_capabilities())

    def server_info(self) -> dict[str, Any]:
        """The Implementation object: serverInfo (handshake), _meta serverInfo (stateless)."""
        return {
            "name": self.catalogue.server_name,
            "version": package_version(),
            "title": self.catalogue.server_title,
        }

    def served_versions(self) -> list[str]:
        """Every version the server speaks in the eras it serves, newest first."""
        versions: set[str] = set()
        if self.knobs.serves_stateless:
            versions.update(self.knobs.stateless_versions)
        if self.knobs.serves_handshake:
            versions.update(self.knobs.supported_versions)
        return sorted(versions, reverse=True)  # ISO dates sort chronologically
