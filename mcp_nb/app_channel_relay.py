"""The Jupyter server's part of the App channel (:mod:`mcp_nb.notebook.app_channel`): a websocket
at ``{base_url}mcp_nb/apps/channel/<kernel id>`` that passes an App frame's lines between the
page and that kernel's Unix socket.

Who may open it: whoever may open the kernel's own websocket. The handler is Jupyter
Server's websocket handler with the same login check (``ws_authenticated``), the same
origin check (``WebSocketMixin``) and the same authorization (``execute`` on ``kernels``).
Where it connects is never the page's to say: the kernel is looked up among this server's
kernels by id, and its channel file read from beside that kernel's connection file; the
kernel then asks for the token written there. Lines go through unread, each at most
:data:`~mcp_nb.notebook.app_channel.MAX_LINE` bytes from the page (the kernel sends at most
:data:`~mcp_nb.notebook.app_channel.MAX_TO_PAGE`); a longer one, or a binary frame, closes
the websocket.

A point of the kit's server extension (``mcp_nb.auth.jupyter``, enabled by
``jupyter-config/jupyter_server_config.d/mcp_nb.json``). Imported by a Jupyter server only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import ws_authenticated
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from jupyter_server.utils import url_path_join
from tornado import web
from tornado.websocket import WebSocketHandler

from .notebook.app_channel import CHANNEL_SUFFIX, MAX_LINE, MAX_TO_PAGE

ROUTE = r"mcp_nb/apps/channel/(?P<kernel_id>[0-9a-fA-F-]{36})"


class AppChannelHandler(WebSocketMixin, WebSocketHandler, JupyterHandler):  # type: ignore[misc]
    """One page's App channel to one kernel."""

    auth_resource = "kernels"

    def set_default_headers(self) -> None:
        """None of JupyterHandler's headers: they make no sense on a websocket."""

    @ws_authenticated
    async def get(self, kernel_id: str) -> None:  # type: ignore[override]
        authorized = await ensure_async(
            self.authorizer.is_authorized(self, self.current_user, "execute", "kernels"))
        if not authorized:
            raise web.HTTPError(403)
        try:
            kernel = self.kernel_manager.get_kernel(kernel_id)
        except (KeyError, web.HTTPError):  # jupyter_client's KeyError, or the server's 404
            raise web.HTTPError(404, reason="no such kernel") from None
        connection_file = getattr(kernel, "connection_file", "")
        try:
            said = json.loads(Path(connection_file + CHANNEL_SUFFIX).read_text(encoding="utf-8"))
            self._socket, self._token = str(said["path"]), str(said["token"])
        except (OSError, ValueError, KeyError, TypeError):
            # No channel for this kernel (none opened yet, or a kernel elsewhere): the page
            # keeps to widget messages.
            raise web.HTTPError(404, reason="this kernel has no App channel") from None
        self._writer: asyncio.StreamWriter | None = None
        self._pump: asyncio.Task[None] | None = None
        # The upgrade (and its origin check) first; the kernel's socket only once it is done.
        await super().get(kernel_id=kernel_id)

    async def open(self, kernel_id: str) -> None:  # type: ignore[override]
        super().open()  # WebSocketMixin's pings
        self.set_nodelay(True)  # one small line each way per App request
        try:
            self._reader, self._writer = await asyncio.open_unix_connection(
                self._socket, limit=MAX_TO_PAGE + 1)  # the kernel's longest line
        except OSError:  # the kernel went since it wrote the file
            self.close(1011, "the kernel's App channel did not answer")
            return
        self._writer.write(json.dumps({"token": self._token}).encode() + b"\n")
        self._pump = asyncio.ensure_future(self._from_kernel())

    async def _from_kernel(self) -> None:
        with contextlib.suppress(ConnectionError, asyncio.LimitOverrunError, ValueError):
            while line := await self._reader.readline():
                await self.write_message(line.rstrip(b"\n").decode("utf-8"))
        self.close()

    def on_message(self, message: str | bytes) -> None:
        if isinstance(message, bytes) or len(message) > MAX_LINE or "\n" in message:
            self.close(1009, "an App channel line is text, one line, at most 2 MiB")
            return
        if self._writer is not None:
            self._writer.write(message.encode("utf-8") + b"\n")

    def on_close(self) -> None:
        if getattr(self, "_pump", None) is not None:
            self._pump.cancel()  # type: ignore[union-attr]
        if getattr(self, "_writer", None) is not None:
            with contextlib.suppress(Exception):
                self._writer.close()  # type: ignore[union-attr]


#: Set in the page's settings (JupyterLab's and Notebook's ``jupyter-config-data``) when this
#: server serves the channel: a page opens one only then, so a server without the extension
#: costs the page no failed websocket (and its console no error).
PAGE_CONFIG_KEY = "mcpNbAppChannel"


def add_channel_route(serverapp: Any) -> None:
    """Serve the channel under the server's base URL, and tell the pages it is there."""
    route = url_path_join(serverapp.web_app.settings["base_url"], ROUTE)
    serverapp.web_app.add_handlers(".*$", [(route, AppChannelHandler)])
    serverapp.web_app.settings.setdefault("page_config_data", {})[PAGE_CONFIG_KEY] = True
