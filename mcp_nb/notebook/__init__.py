"""The Jupyter layer: background loop, hosted sessions, widgets and the ``%mcp`` magics.

``%load_ext mcp_nb`` registers the magics; see :mod:`mcp_nb.notebook.magics`.
"""

from __future__ import annotations

from typing import Any

from .hosted import HostedSession
from .loop import BackgroundLoop

_magics: Any = None


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%mcp`` / ``%%mcp`` and the display formatters for MCP results."""
    global _magics
    from .magics import McpMagics, register_formatters

    if _magics is not None:
        return  # already loaded in this kernel
    _magics = McpMagics(ipython)
    ipython.register_magics(_magics)
    register_formatters(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """Shut every session down and stop the background loop."""
    global _magics
    if _magics is None:
        return
    _magics.shutdown_all()
    ipython.magics_manager.registry.pop("McpMagics", None)
    for kind in ("line", "cell"):
        ipython.magics_manager.magics[kind].pop("mcp", None)
    _magics = None


def manager() -> Any:
    """The loaded :class:`~mcp_nb.notebook.magics.McpMagics`: its ``sessions``, ``session()``.

    (Not called ``magics``: that name is the submodule.)
    """
    if _magics is None:
        raise RuntimeError("mcp_nb is not loaded: run %load_ext mcp_nb first")
    return _magics


__all__ = ["BackgroundLoop", "HostedSession", "load_ipython_extension", "manager",
           "unload_ipython_extension"]
