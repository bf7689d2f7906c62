"""The App channel in a real JupyterLab (``mcp_nb/notebook/app_channel.py``,
``mcp_nb/app_channel_relay.py``, ``app_frame.js``): an App frame drawn once its kernel's
channel is open sends everything through it, and its ``tools/call`` never crosses the kernel's
websocket; with the ``channel`` lever off the frame uses widget messages as before; the
server's end opens only for a logged-in user, only to a kernel of its own that has a channel;
and a kernel that exits leaves no channel behind.
"""

from __future__ import annotations

import json
import re
import shlex
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from apps_support import install_example
from browser_support import (
    LAB,
    JupyterServer,
    app_view,
    browser_page,
    cell,
    execution_count,
    jupyter_server,
    open_notebook,
    outputs,
    run_cell,
    run_in_kernel,
    screenshot_on_failure,
    write_notebook,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page

NOTEBOOK = "channel.ipynb"
ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z")
CELLS = [
    "%load_ext mcp_nb",
    "%mcp connect basic -- {command}",
    "%mcp call get-time",  # 2: the page's first App: its channel opens meanwhile
    "%mcp call get-time",  # 3: drawn with the channel open
    "import os; os.environ['MCP_NB_APP_LEVERS_OFF'] = 'channel'\n%mcp call get-time",  # 4
]
#: Counts the App frames' widget messages the page sends on the kernel's websocket.
COUNT_WIDGET_MESSAGES = """() => {
    window.__frameMessages = 0;
    const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
    kernel.anyMessage.connect((sender, args) => {
        const data = args.msg.content && args.msg.content.data;
        if (args.direction === 'send' && args.msg.header.msg_type === 'comm_msg'
                && data && data.content && data.content.kind === 'frame') {
            window.__frameMessages += 1;
        }
    });
}"""
#: In the kernel: for the App of cell N (its Out), the frame's channel and whether it is bound.
CHANNEL_OF = """shown = Out[{n}]
frame = shown.frame
print(json.dumps({{"route": sorted(frame.channel), "bound": frame.channel_end is not None
                   and frame.channel_end.bound(frame.channel["frame"])}}))"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    command = shlex.join(install_example())
    # The kit's server extension on, as a regular install has it (browser_support's default).
    with jupyter_server(tmp_path_factory, LAB) as running:
        write_notebook(running.root / NOTEBOOK, [c.format(command=command) for c in CELLS])
        yield running


@pytest.fixture(scope="module")
def page(server: JupyterServer) -> Iterator[Page]:
    with browser_page(server) as opened:
        with screenshot_on_failure(opened, "apps-channel-failure-open.png"):
            open_notebook(opened, server, NOTEBOOK)
            opened.evaluate(COUNT_WIDGET_MESSAGES)
            for index in range(len(CELLS)):
                run_cell(opened, index)
                if index >= 2:
                    _server_time(opened, index)
        yield opened


def _server_time(page: Page, index: int) -> str:
    shown = app_view(cell(page, index)).locator("#server-time")
    shown.filter(has_text=ISO_TIME).wait_for()
    return shown.inner_text()


def _channel_of(page: Page, index: int) -> dict[str, object]:
    said = run_in_kernel(page, "import json\n" + CHANNEL_OF.format(n=execution_count(page, index)))
    return json.loads(said)


def _click_and_wait(page: Page, index: int) -> None:
    before = _server_time(page, index)
    page.wait_for_timeout(5)  # a later time, to the millisecond
    app_view(cell(page, index)).get_by_role("button", name="Get Server Time").click()
    app_view(cell(page, index)).locator("#server-time").filter(
        has_text=re.compile(r"^(?!" + re.escape(before) + r"$)")).wait_for()


def test_an_app_drawn_with_the_channel_open_talks_through_it(page: Page) -> None:
    with screenshot_on_failure(page, "apps-channel-failure-channel.png"):
        assert _channel_of(page, 3) == {"route": ["frame", "kernel", "secret"], "bound": True}
        sent = page.evaluate("() => window.__frameMessages")
        _click_and_wait(page, 3)  # tools/call: View → page → channel → kernel → server and back
        assert page.evaluate("() => window.__frameMessages") == sent  # none on the kernel's
        said = run_in_kernel(page, f"print(sum(1 for e in Out[{execution_count(page, 3)}]"
                                   ".hosted.session.transcript if e.direction == 'app→host' "
                                   "and e.method == 'tools/call'))")
        assert int(said) >= 1  # the host saw it, and wrote it in the App channel


def test_the_channel_starts_an_apps_view_before_its_widget_arrives(page: Page) -> None:
    # The kernel sent cell 3's App ahead through the channel (the page's first App came
    # before the channel was open; cell 4's has the channel off): started once at most, and
    # that start is the one the cell adopted (no second proxy left in the page's holder beside the
    # one warm proxy; warm Views are the App's next renders, marked as such).
    # At most once: the channel's message and the widget race, and on a loaded machine the
    # widget can win (then initialize() starts the View and the late message is ignored).
    assert page.evaluate("() => performance.getEntriesByName("
                         "'mcp_nb:started through the channel').length") <= 1
    assert page.evaluate("() => document.querySelectorAll('.mcpnb-app-holder "
                         "iframe:not([data-mcpnb-warm-view])').length") <= 1
    assert _frame_in_cell(page, 3)


def _frame_in_cell(page: Page, index: int) -> bool:
    return bool(outputs(cell(page, index)).locator("iframe.mcpnb-app-frame").evaluate(
        "(frame) => !!frame.closest('.jp-Cell')"))


def test_with_the_channel_lever_off_the_frame_uses_widget_messages(page: Page) -> None:
    with screenshot_on_failure(page, "apps-channel-failure-off.png"):
        assert _channel_of(page, 4) == {"route": [], "bound": False}
        sent = page.evaluate("() => window.__frameMessages")
        _click_and_wait(page, 4)
        assert page.evaluate("() => window.__frameMessages") > sent


def _get(server: JupyterServer, path: str, token: bool = True) -> tuple[int, str]:
    """GET ``path``: the status, and the body or (for an error) the status line's reason."""
    request = urllib.request.Request(
        server.base + path,
        headers={"Authorization": f"token {server.token}"} if token else {})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, str(exc.reason)  # the channel's refusals say why in the status line


def test_the_servers_end_opens_only_for_a_user_to_a_kernel_with_a_channel(
        page: Page, server: JupyterServer) -> None:
    kernel = page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.id")
    # Not logged in: refused before anything is looked up.
    status, _body = _get(server, f"/mcp_nb/apps/channel/{kernel}", token=False)
    assert status == 403
    # Logged in, a kernel this server does not have.
    status, body = _get(server, "/mcp_nb/apps/channel/00000000-0000-0000-0000-000000000000")
    assert status == 404 and "no such kernel" in body
    # A kernel of this server that never drew an App: it has no channel.
    request = urllib.request.Request(
        server.base + "/api/kernels", method="POST", data=b"{}",
        headers={"Authorization": f"token {server.token}", "Content-Type": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=30) as response:
        other = json.loads(response.read())["id"]
    status, body = _get(server, f"/mcp_nb/apps/channel/{other}")
    assert status == 404 and "has no App channel" in body
    # The notebook's kernel has one: a plain GET (no websocket upgrade) is all that is refused.
    status, _body = _get(server, f"/mcp_nb/apps/channel/{kernel}")
    assert status == 400


def test_a_kernel_that_exits_leaves_no_channel_behind(page: Page, server: JupyterServer) -> None:
    kernel = page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.id")
    runtime = server.log_path.parent / "runtime"  # the server's JUPYTER_RUNTIME_DIR
    channel_file = runtime / f"kernel-{kernel}.json.mcp_nb-apps"
    assert channel_file.exists()
    socket_directory = Path(json.loads(channel_file.read_text())["path"]).parent
    request = urllib.request.Request(
        f"{server.base}/api/kernels/{kernel}", method="DELETE",
        headers={"Authorization": f"token {server.token}"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=60) as response:
        assert response.status == 204
    for _ in range(300):  # the kernel's exit, then its atexit
        if not channel_file.exists() and not socket_directory.exists():
            break
        page.wait_for_timeout(100)
    assert not channel_file.exists() and not socket_directory.exists()

