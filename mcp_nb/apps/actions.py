"""What :class:`~mcp_nb.apps.host.AppHost` returns and tells, as values: the actions the
notebook carries out, and the exchanges it writes into the transcript's App lane."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Direction = Literal["app→host", "host→app"]


@dataclass(frozen=True)
class Exchange:
    """One ``postMessage`` message, for the transcript's App lane."""

    direction: Direction
    message: Any
    #: What the host made of it ("held until initialized", "refused: …"), or "".
    note: str = ""
    #: When the host's page saw or posted it, by the page's clock (seconds since the
    #: epoch); None when the kernel handles it as it happens.
    at: float | None = None
    #: Not sent yet: handed to the host's page, which posts it once the View may be told
    #: (:mod:`mcp_nb.apps.handoff`); its delivery is recorded as another exchange.
    held: bool = False


# -- actions -------------------------------------------------------------------------------

@dataclass(frozen=True)
class ToFrame:
    """Post ``message`` to the frame (the sandbox proxy, which passes it to the View)."""

    message: dict[str, Any]
    #: The host's page has already posted it (see :meth:`AppHost.receive_from_page`):
    #: recorded, never posted a second time.
    posted: bool = False


@dataclass(frozen=True)
class Forward:
    """Send ``method`` to the MCP server for the App; answer with :meth:`AppHost.forwarded`."""

    app_id: str | int
    method: str
    params: dict[str, Any]


@dataclass(frozen=True)
class Show:
    """Something the person should see in the cell.

    ``kind``: ``message`` (ui/message), ``model-context`` (ui/update-model-context),
    ``open-link``, ``log`` (notifications/message), ``display-mode``, ``refused``
    (a request the host refused, with the rule).
    """

    kind: str
    data: dict[str, Any]


@dataclass(frozen=True)
class Resize:
    width: float | None
    height: float | None


@dataclass(frozen=True)
class RemoveFrame:
    reason: str


Action = ToFrame | Forward | Show | Resize | RemoveFrame


# -- the JSON-RPC messages the host posts ----------------------------------------------------

def error_message(request_id: Any, code: int, message: str) -> dict[str, Any]:
    """The host's refusal of the View's request ``request_id``."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def result_message(request_id: Any, result: Mapping[str, Any]) -> dict[str, Any]:
    """The host's answer to the View's request ``request_id``."""
    return {"jsonrpc": "2.0", "id": request_id, "result": dict(result)}


def notification_message(method: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """A notification from the host to the View."""
    return {"jsonrpc": "2.0", "method": method, "params": dict(params)}
