"""The Jupyter-server callback: the redirect lands on the Jupyter server the user is already on.

On Binder, JupyterHub or any remote kernel the browser is not on the kernel's
machine, so a loopback listener cannot get the code. The Jupyter server itself can:
this module is a small server extension serving ``{base_url}mcp_nb/oauth/callback``
(behind Jupyter's own login, so only the notebook's user can land there). It writes
the redirect to a file readable by its owner only, named by a hash of ``state``, in
Jupyter's runtime directory, where :class:`JupyterServerCallback` in the kernel (same
machine, same user) picks it up.

Enable it::

    jupyter server extension enable mcp_nb.auth.jupyter
    # or: jupyter lab --ServerApp.jpserver_extensions="{'mcp_nb.auth.jupyter': True}"

and in the notebook::

    OAuth(callback=JupyterServerCallback("https://hub.example.org/user/ada/"))

(``MCP_NB_JUPYTER_URL`` set to the server's public URL makes ``callback="auto"`` pick it; so
does ``JUPYTERHUB_PUBLIC_URL``, which JupyterHub gives each server, when it is a whole URL.)
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx

from .errors import no_redirect_in_time

CALLBACK_PATH = "mcp_nb/oauth/callback"
#: The public URL of the Jupyter server (with its base URL), e.g. a JupyterHub user's.
PUBLIC_URL_VARIABLE = "MCP_NB_JUPYTER_URL"
#: What JupyterHub tells each user's server its public URL is: a whole URL
#: (``https://hub.example.org/user/ada/``) when the hub is configured with its public URL
#: (``JupyterHub.public_url``), otherwise only the path (``/user/ada/``), which is no help.
HUB_PUBLIC_URL_VARIABLE = "JUPYTERHUB_PUBLIC_URL"
DEFAULT_WAIT = 300.0


def public_url_from_environment() -> str | None:
    """The Jupyter server's public URL as this process's environment says it: the kit's own
    ``MCP_NB_JUPYTER_URL``, else JupyterHub's ``JUPYTERHUB_PUBLIC_URL`` if it is a whole URL
    (a bare path names no host the browser could come back to)."""
    if own := os.environ.get(PUBLIC_URL_VARIABLE):
        return own
    hub = os.environ.get(HUB_PUBLIC_URL_VARIABLE, "")
    return hub if hub.startswith(("http://", "https://")) else None


def handoff_directory() -> Path:
    """Where the server extension leaves redirects for the kernel (Jupyter's runtime dir)."""
    from jupyter_core.paths import jupyter_runtime_dir

    return Path(jupyter_runtime_dir()) / "mcp_nb_oauth"


def handoff_file(state: str) -> Path:
    return handoff_directory() / (hashlib.sha256(state.encode()).hexdigest() + ".url")


class JupyterServerCallback:
    """The redirect goes to the Jupyter server at ``public_url``; the kernel reads it there.

    ``show`` displays the authorization link (the person clicks it in the same browser
    that shows the notebook); ``None`` when the caller shows it.
    """

    name = "jupyter-server"

    def __init__(self, public_url: str | None = None, *, wait: float = DEFAULT_WAIT,
                 show: Callable[[str], object] | None = print) -> None:
        public_url = public_url or public_url_from_environment()
        if not public_url:
            raise ValueError(f"the Jupyter server's public URL is needed (pass it, or set "
                             f"{PUBLIC_URL_VARIABLE}; on JupyterHub, configure the hub's "
                             f"public_url, which sets {HUB_PUBLIC_URL_VARIABLE})")
        self.redirect_uri = public_url.rstrip("/") + "/" + CALLBACK_PATH
        self.wait, self.show = wait, show

    async def prepare(self) -> str:
        return self.redirect_uri

    async def receive(self, authorization_url: str) -> str:
        state = httpx.URL(authorization_url).params.get("state", "")
        path = handoff_file(state)
        if self.show is not None:
            self.show(f"Authorize here (the page comes back to this Jupyter server): "
                      f"{authorization_url}")
        with anyio.move_on_after(self.wait):
            while not path.exists():
                await anyio.sleep(0.2)
            text = path.read_text(encoding="utf-8")
            path.unlink()
            return text
        raise no_redirect_in_time(self.redirect_uri, self.wait)

    async def close(self) -> None:
        return None


def _callback_handler() -> Any:
    from jupyter_server.base.handlers import JupyterHandler
    from tornado import web

    class OAuthCallbackHandler(JupyterHandler):  # type: ignore[misc]
        """Keeps the redirect for the kernel; says so in the page (no secret shown)."""

        @web.authenticated  # type: ignore[misc]
        def get(self) -> None:
            state = self.get_query_argument("state", "")
            if not state:
                raise web.HTTPError(400, "no state: not an OAuth redirect")
            directory = handoff_directory()
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            target = handoff_file(state)
            # Written beside it, then renamed: the kernel polls for the name and reads at
            # once, so it must never see the file created but not yet written (an empty
            # redirect, taken for a forged state).
            partial = target.with_name(f"{target.name}.{os.getpid()}.{id(self)}.partial")
            descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                file.write(self.request.full_url())
            os.replace(partial, target)
            self.finish("<p>mcp_nb: authorized. Return to your notebook.</p>")

    return OAuthCallbackHandler


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    # The kit's one server extension has two points: this OAuth callback route (and the
    # MCP App channel's, mcp_nb.app_channel_relay), and the kernel websocket with TCP_NODELAY for
    # MCP Apps (mcp_nb.kernel_websocket).
    return [{"module": "mcp_nb.auth.jupyter"}, {"module": "mcp_nb.kernel_websocket"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    from jupyter_server.utils import url_path_join

    from ..app_channel_relay import add_channel_route

    route = url_path_join(serverapp.web_app.settings["base_url"], CALLBACK_PATH)
    serverapp.web_app.add_handlers(".*$", [(route, _callback_handler())])
    add_channel_route(serverapp)  # MCP Apps' frames, off the kernel's shell channel
