"""The notebook server's own origins, which no App's CSP may name.

An App whose declared ``connectDomains`` (or resource, frame, base-uri domains) reaches
the Jupyter server could talk to its REST API and kernels: any App can read the
notebook's origin (``location.ancestorOrigins``), so it only needs the CSP to allow it.
The kernel knows the Jupyter servers running on its machine (their
``jpserver-*.json`` runtime files, which ``jupyter server list`` reads; read here
without importing the server, which would cost the first render a good part of a
second). Behind a proxy (JupyterHub, Binder) the page's origin is another: the hub's. The
environment the hub gives the user's server names it when the hub knows its public URL
(``JUPYTERHUB_PUBLIC_URL`` and ``JUPYTERHUB_PUBLIC_HUB_URL``, or the kit's own
``MCP_NB_JUPYTER_URL``), so the first App of a kernel is covered too; and the page tells the
kernel its origin as each App frame is created, and checks it itself before it loads an App
(``app_frame.js``), which covers a hub that does not know its public URL.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import urlsplit

#: Variables naming the page's URL behind a proxy: the kit's own (the OAuth callback's public
#: URL, docs/authorization.md) and JupyterHub's, whole URLs only when the hub is configured
#: with its public URL (otherwise bare paths, which name no origin and are skipped).
PUBLIC_URL_VARIABLES = ("MCP_NB_JUPYTER_URL", "JUPYTERHUB_PUBLIC_URL", "JUPYTERHUB_PUBLIC_HUB_URL")
#: Origins pages showing Apps reported (``location.origin``), for later Apps' policies.
_PAGE_ORIGINS: set[str] = set()


def _origin(url: str) -> str | None:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    port = port or (443 if parts.scheme == "https" else 80)
    return f"{parts.scheme}://{host}:{port}"


def remember_page_origin(origin: object) -> None:
    """A page showing an App said where it is served from."""
    if isinstance(origin, str) and (found := _origin(origin)) is not None:
        _PAGE_ORIGINS.add(found)


def notebook_origins() -> tuple[str, ...]:
    """Origins of the notebook's server(s): every Jupyter server running here, the public
    URLs a hub gave this server, and every page origin an App frame reported (sorted,
    ``scheme://host:port``)."""
    found = set(_PAGE_ORIGINS)
    for name in PUBLIC_URL_VARIABLES:
        if (origin := _origin(os.environ.get(name, ""))) is not None:
            found.add(origin)
    try:
        from jupyter_core.paths import jupyter_runtime_dir
    except ImportError:  # no Jupyter here at all
        return tuple(sorted(found))
    for path in Path(jupyter_runtime_dir()).glob("jpserver-*.json"):
        try:
            url = json.loads(path.read_text(encoding="utf-8")).get("url")
        except (OSError, ValueError, AttributeError):  # half-written, unreadable, not JSON
            continue
        if isinstance(url, str) and (origin := _origin(url)) is not None:
            found.add(origin)
    return tuple(sorted(found))
