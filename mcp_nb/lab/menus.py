"""Which menu a lab session serves: the lab's own, or the conformance suite's.

Apart from :mod:`mcp_nb.lab.session` (the engine every menu runs on) so that the menus,
which are built on the engine, sit above it: the engine never imports a menu.
"""

from __future__ import annotations

from collections.abc import Callable

from mcp_nb.lab.features.apps import Apps
from mcp_nb.lab.features.prompts import Prompts
from mcp_nb.lab.features.resources import Resources
from mcp_nb.lab.features.tools import Tools
from mcp_nb.lab.knobs import Knobs
from mcp_nb.lab.rpc import Send
from mcp_nb.lab.session import Engine


class LabSession(Apps, Tools, Resources, Prompts, Engine):
    """A session serving the lab's own menu (``--fixtures lab``, the default)."""


def open_session(knobs: Knobs, send: Send, era: str | None = None,
                 hang_up: Callable[[], None] | None = None) -> Engine:
    """A session serving the menu ``--fixtures`` names."""
    if knobs.fixtures == "conformance":
        # Imported here: the conformance menu is large and only this profile needs it.
        from mcp_nb.lab.fixtures import ConformanceSession

        return ConformanceSession(knobs, send, era, hang_up)
    return LabSession(knobs, send, era, hang_up)
