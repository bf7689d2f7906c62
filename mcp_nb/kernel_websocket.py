"""Jupyter Server's kernel websocket with ``TCP_NODELAY``: MCP Apps at the wire's speed.

An App's ``tools/call`` crosses the browser ↔ Jupyter Server websocket twice. Jupyter Server
writes kernel messages to that socket with Nagle's algorithm on (it never calls
``set_nodelay``), so a small reply written just after the kernel's ``status: busy`` waits for
the browser's delayed ACK of the first frame: about 40 ms per crossing on Linux
(``benchmarks/RESULTS.md``, "MCP Apps in JupyterLab").

Jupyter Server's documented seam for this is the ``ServerApp.kernel_websocket_connection_class``
trait: the class that joins one kernel websocket to the kernel's ZMQ channels. This module gives
one (:class:`NoDelayKernelWebsocketConnection`, the stock class plus ``set_nodelay(True)`` when
the websocket opens) and, as a point of the kit's server extension (enabled by
``jupyter-config/jupyter_server_config.d/mcp_nb.json`` beside :mod:`mcp_nb.auth.jupyter`),
puts it in place **only when the user left the trait alone** and the stock class is in use: a
class set in the user's config or on the command line, or a gateway's class, is kept as it is
(the server's log says which). Without the extension, the one line of config is::

    c.ServerApp.kernel_websocket_connection_class = (
        "mcp_nb.kernel_websocket.NoDelayKernelWebsocketConnection")

and to keep the kit's extension but not this lever, name the stock class explicitly::

    c.ServerApp.kernel_websocket_connection_class = (
        "jupyter_server.services.kernels.connection.channels.ZMQChannelsWebsocketConnection")

Imported by a Jupyter server only (it needs ``jupyter_server``), never by the kernel.
"""

from __future__ import annotations

import socket
from typing import Any

from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection

TRAIT = "kernel_websocket_connection_class"
#: The dotted name of the class this module provides (for config files and the log).
CLASS_PATH = "mcp_nb.kernel_websocket.NoDelayKernelWebsocketConnection"


def nodelay_is_on(handler: Any) -> bool | None:
    """Read ``TCP_NODELAY`` back from the websocket's socket (None: not a TCP socket)."""
    connection = getattr(handler, "ws_connection", None)
    stream = getattr(connection, "stream", None)
    sock = getattr(stream, "socket", None)
    if sock is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
        return None
    return bool(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))


class NoDelayKernelWebsocketConnection(ZMQChannelsWebsocketConnection):  # type: ignore[misc]
    """The stock kernel websocket connection, with Nagle's algorithm off on its socket.

    ``connect`` runs from the handler's ``open``, once the websocket handshake is done:
    the first moment the socket exists and the first message has not been written yet.
    """

    def connect(self) -> Any:
        handler = self.websocket_handler
        try:
            # tornado's own switch (WebSocketHandler.set_nodelay); a Unix socket ignores it.
            handler.set_nodelay(True)
        except (AssertionError, AttributeError, OSError) as exc:  # closed before it opened
            self.log.debug("mcp_nb: TCP_NODELAY not set on kernel %s: %s", self.kernel_id, exc)
        else:
            self.log.info("mcp_nb: kernel %s websocket TCP_NODELAY=%s", self.kernel_id,
                          {True: "on", False: "off", None: "n/a (not TCP)"}[
                              nodelay_is_on(handler)])
        return super().connect()


def user_choice(serverapp: Any) -> str | None:
    """Why the server's kernel websocket class must be left as it is, or None to replace it."""
    configured = serverapp.config.get("ServerApp", {})
    if TRAIT in configured:
        return f"ServerApp.{TRAIT} is set in the configuration ({configured[TRAIT]!s})"
    current = getattr(serverapp, TRAIT)
    if current is not ZMQChannelsWebsocketConnection:
        # A gateway's connection class, or one an extension loaded earlier put in place.
        return f"ServerApp.{TRAIT} is {current.__module__}.{current.__qualname__}"
    return None


def use_nodelay_connection(serverapp: Any) -> bool:
    """Put :class:`NoDelayKernelWebsocketConnection` in place unless the user chose a class.

    Called after the web application exists: the kernel websocket handler reads the class
    from the application's settings for every connection, so both are set.
    """
    reason = user_choice(serverapp)
    if reason is not None:
        serverapp.log.info("mcp_nb: kernel websocket TCP_NODELAY not applied: %s (kept)", reason)
        return False
    setattr(serverapp, TRAIT, NoDelayKernelWebsocketConnection)
    serverapp.web_app.settings[TRAIT] = NoDelayKernelWebsocketConnection
    serverapp.log.info("mcp_nb: kernel websockets use %s (TCP_NODELAY)", CLASS_PATH)
    return True


def _load_jupyter_server_extension(serverapp: Any) -> None:
    use_nodelay_connection(serverapp)
