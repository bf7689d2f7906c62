"""What makes an App come up fast, one switch each, so each can be measured on and off.

Every lever is on unless named in the environment variable :data:`LEVERS_OFF` (a comma
list, read at each render, so ``benchmarks/apps_latency.py`` can turn one off between two
cells of one kernel and measure both sides in the same minutes):

* ``frame_first`` (kernel): the App frame's widget is the cell's first to reach the page;
  the parts around it (header, verdict, notes, result, diagram) are drawn beforehand and
  made after it, each with its drawn value, sharing one layout and one style, instead of
  a dozen more widget models and an update for each part ahead of the frame's;
* ``prestart`` (page): the sandbox proxy is loaded, and given the View's HTML, the moment
  the frame's widget model arrives, off-screen, while the page still draws the cell (or,
  through the App channel, as the kernel makes the widget: :meth:`.app_channel.AppChannel.
  ahead`); the loaded frame is then moved into the cell (``app_frame.js``);
* ``warm_proxy`` (page): the page keeps one proxy loaded ahead for the next App with the
  same proxy document (the same CSP); a proxy serves one App only, and the next one is a
  new document;
* ``warm_view`` (page): once an App is up, the page starts a second View of it, off-screen,
  for the next render of the same App (same resource, CSP and permissions) in that page:
  the View's own start-up (parsing and running its HTML and script, the larger part of a
  render) is done before the cell runs, and its ``ui/initialize`` waits, unanswered, for
  the render that adopts it, whose answer carries that render's call. Nothing else reaches
  it before; it starts once no App has been drawn for 500 ms, and is dropped unclaimed after
  45 s (the Apps SDK times a request out at 60 s). The first render of an App in a page
  gains nothing from it;
* ``channel`` (kernel): the App frame's messages go between the page and the kernel through
  the App channel (:mod:`.app_channel`), a websocket of the kit's server extension to a
  socket of the kernel's, instead of as widget messages on the kernel's shell channel.

The other two levers of issue 33 have their own switches: the kernel websocket's
``TCP_NODELAY`` (:mod:`mcp_nb.kernel_websocket`) and the session's copy of an App's
resource (``hosted.app_resources.enabled``, :mod:`.app_cache`).
"""

from __future__ import annotations

import os

#: The environment variable naming the levers to turn off (e.g. ``prestart,warm_proxy``).
LEVERS_OFF = "MCP_NB_APP_LEVERS_OFF"
#: Every lever, by name.
LEVERS = ("frame_first", "prestart", "warm_proxy", "warm_view", "channel")
#: The levers the page pulls (sent to it with the frame's widget).
PAGE_LEVERS = ("prestart", "warm_proxy", "warm_view")


def lever(name: str) -> bool:
    """Whether lever ``name`` is on now."""
    if name not in LEVERS:
        raise ValueError(f"no such lever: {name!r} (one of {', '.join(LEVERS)})")
    off = {part.strip() for part in os.environ.get(LEVERS_OFF, "").split(",")}
    return name not in off


def page_levers() -> dict[str, bool]:
    """The page's levers as the frame's widget carries them."""
    return {name: lever(name) for name in PAGE_LEVERS}
