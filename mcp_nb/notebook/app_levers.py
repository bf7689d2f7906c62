"""What makes an App come up fast, one switch each, so each can be measured on and off.

Every lever is on unless named in the environment variable :data:`LEVERS_OFF` (a comma
list, read at each render, so ``benchmarks/apps_latency.py`` can turn one off between two
cells of one kernel and measure both sides in the same minutes):

* ``frame_first`` (kernel): the App frame's widget is the cell's first to reach the page;
  the parts around it (header, verdict, notes, result, diagram) are drawn beforehand and
  made after it, each with its drawn value, sharing one layout and one style, instead of
  a dozen more widget models and an update for each part ahead of the frame's;
* ``prestart`` (page): the sandbox proxy is loaded, and given the View's HTML, the moment
  the frame's widget model arrives, off-screen, while the page still draws the cell; the
  loaded frame is then moved into the cell (``app_frame.js``);
* ``warm_proxy`` (page): the page keeps one proxy loaded ahead for the next App with the
  same proxy document (the same CSP); a proxy serves one App only, and the next one is a
  new document.

The other two levers of issue 33 have their own switches: the kernel websocket's
``TCP_NODELAY`` (:mod:`mcp_nb.kernel_websocket`) and the session's copy of an App's
resource (``hosted.app_resources.enabled``, :mod:`.app_cache`).
"""

from __future__ import annotations

import os

#: The environment variable naming the levers to turn off (e.g. ``prestart,warm_proxy``).
LEVERS_OFF = "MCP_NB_APP_LEVERS_OFF"
#: Every lever, by name.
LEVERS = ("frame_first", "prestart", "warm_proxy")
#: The levers the page pulls (sent to it with the frame's widget).
PAGE_LEVERS = ("prestart", "warm_proxy")


def lever(name: str) -> bool:
    """Whether lever ``name`` is on now."""
    if name not in LEVERS:
        raise ValueError(f"no such lever: {name!r} (one of {', '.join(LEVERS)})")
    off = {part.strip() for part in os.environ.get(LEVERS_OFF, "").split(",")}
    return name not in off


def page_levers() -> dict[str, bool]:
    """The page's levers as the frame's widget carries them."""
    return {name: lever(name) for name in PAGE_LEVERS}
