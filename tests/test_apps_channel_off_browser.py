"""The App channel where the server does not serve it (an editable install, or a server whose
owner turned the kit's extension off): the page's settings do not name the channel, so the page
opens none (no failed websocket, no console error), and the Apps talk through widget messages.

Its own module: it needs a server of its own, and a second Playwright cannot start while
``tests/test_apps_channel_browser.py``'s module-wide page is open.
"""

from __future__ import annotations

import shlex

import pytest
from apps_support import install_example
from browser_support import (
    LAB,
    browser_page,
    jupyter_server,
    open_notebook,
    run_cell,
    screenshot_on_failure,
    write_notebook,
)
from test_apps_channel_browser import (
    CELLS,
    NOTEBOOK,
    _channel_of,
    _click_and_wait,
    _server_time,
)


def test_without_the_servers_extension_the_page_never_tries_the_channel(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    command = shlex.join(install_example())
    off = "--ServerApp.jpserver_extensions={'mcp_nb.auth.jupyter': False}"
    with jupyter_server(tmp_path_factory, LAB, options=[off]) as running:
        write_notebook(running.root / NOTEBOOK, [c.format(command=command) for c in CELLS[:4]])
        with browser_page(running) as opened, \
                screenshot_on_failure(opened, "apps-channel-failure-no-extension.png"):
            said: list[str] = []
            opened.on("console", lambda message: said.append(message.text))
            opened.on("websocket", lambda socket: said.append(f"websocket {socket.url}"))
            open_notebook(opened, running, NOTEBOOK)
            for index in range(4):
                run_cell(opened, index)
                if index >= 2:
                    _server_time(opened, index)
            _click_and_wait(opened, 3)
            assert _channel_of(opened, 3) == {"route": ["frame", "kernel", "secret"],
                                              "bound": False}
    assert not [line for line in said if "mcp_nb/apps/channel" in line], said
