"""A person authorizes in JupyterLab: the cell's Authorize link, the lab's approval page.

A real JupyterLab in headless Chromium runs ``%mcp connect URL --auth`` against the lab
server behind its authorization server with an approval page (``--auth-approval page``).
The test does what a person does: clicks the Authorize link the cell shows (a new tab),
clicks Approve, and then either the redirect reaches the kernel's loopback listener by
itself, or (paste-back) the test reads the address the tab landed on and types it into
JupyterLab's input box, or (the Binder/JupyterHub way) the redirect lands on the Jupyter
server itself, whose extension hands it to the kernel. Either way the cell ends connected
and the next cell works. A last cell, run in the same kernel, checks that the page (widgets
and outputs) holds no token.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from browser_support import (
    ARTIFACTS,
    LAB,
    POLL_MS,
    JupyterServer,
    browser_page,
    cell,
    jupyter_server,
    live_widgets,
    open_notebook,
    screenshot_on_failure,
    start_all,
    wait_until_done,
    write_notebook,
)
from http_support import lab_server

from mcp_nb.auth.jupyter import CALLBACK_PATH, PUBLIC_URL_VARIABLE

pytestmark = pytest.mark.timeout(300)

#: Where paste-back sends the browser back to: nothing listens there (a person copies the
#: address from the tab); the test answers it with a page saying so.
PASTE_REDIRECT = "http://localhost/mcp_nb/callback"
PAGE_DUMP = "page.txt"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    with jupyter_server(tmp_path_factory, LAB) as running:
        yield running


def _cells(url: str, callback: str | None) -> list[str]:
    chosen = f" --auth-callback {callback}" if callback else ""
    return [
        "%load_ext mcp_nb",
        f"%mcp connect web {url} --auth{chosen}",
        "%mcp tools",
        # The same kernel checks the page the test saved (it alone knows the token).
        "import pathlib, time\n"
        "from mcp_nb.notebook import manager\n"
        "from mcp_nb.notebook.magics.auth import oauth_of\n"
        f"dump = pathlib.Path({PAGE_DUMP!r})\n"
        "for _ in range(600):\n"
        "    if dump.exists():\n"
        "        break\n"
        "    time.sleep(0.1)\n"
        "token = oauth_of(manager().session('web')).held()\n"
        "assert dump.exists() and token is not None\n"
        "assert token.access_token not in dump.read_text(), 'a token is in the page'\n"
        "assert token.refresh_token not in dump.read_text(), 'a refresh token is in the page'\n"
        "print('the page holds no token')",
    ]


def _authorize(page, connecting):  # type: ignore[no-untyped-def]
    """Click the cell's Authorize link, then Approve in the tab it opens; return the tab."""
    link = connecting.locator("a.mcpnb-authorize")
    link.wait_for()
    assert link.get_attribute("target") == "_blank"
    assert link.get_attribute("rel") == "noopener"
    with page.context.expect_page() as opened:
        link.click()
    tab = opened.value
    tab.get_by_role("button", name="Approve").click()
    return tab


def _finish(page, server: JupyterServer, connecting,  # type: ignore[no-untyped-def]
            picture: str) -> None:
    """The cell ends authorized, the next one lists tools, the kernel finds no token shown."""
    finished = live_widgets(connecting).filter(has_text="authorized: token held")
    finished.first.wait_for()
    connecting.screenshot(path=str(ARTIFACTS / picture))  # for a person to look at
    token_row = finished.first.locator("tr").filter(
        has=page.locator("td", has_text=re.compile(r"^token$")))
    assert re.search(r"\bok\b", token_row.first.inner_text())
    assert "add" in cell(page, 2).locator(".jp-OutputArea-output").first.inner_text()
    notebook = page.evaluate(
        "() => JSON.stringify(window.jupyterapp.shell.currentWidget.context.model.toJSON())")
    (server.root / PAGE_DUMP).write_text(page.content() + notebook)
    wait_until_done(page)
    assert "the page holds no token" in cell(page, 3).inner_text()


def _allow_loopback(page) -> list[str]:  # type: ignore[no-untyped-def]
    """Let the tabs reach the lab's servers (loopback); answer paste-back's redirect here."""
    landed: list[str] = []

    def to_loopback(route) -> None:  # type: ignore[no-untyped-def]
        route.continue_()

    def paste_redirect(route) -> None:  # type: ignore[no-untyped-def]
        landed.append(route.request.url)
        route.fulfill(status=200, content_type="text/html",
                      body="<p>Nothing listens here: copy this address into the notebook.</p>")

    # The last route registered wins: these come after browser_page's loopback-only guard.
    page.context.route(re.compile(r"^http://127\.0\.0\.1:\d+/"), to_loopback)
    page.context.route(PASTE_REDIRECT + "**", paste_redirect)
    return landed


def test_the_link_path_reaches_the_loopback_listener(server: JupyterServer) -> None:
    with lab_server("--auth", "--auth-approval", "page") as lab:
        name = "auth_link.ipynb"
        write_notebook(server.root / name, _cells(lab.ready_text, "loopback"))
        with browser_page(server) as page, screenshot_on_failure(page, "auth_link.png"):
            _allow_loopback(page)
            open_notebook(page, server, name)
            start_all(page)
            connecting = cell(page, 1)
            tab = _authorize(page, connecting)
            tab.wait_for_function("() => document.body.innerText.includes('authorized')",
                                  polling=POLL_MS)
            assert tab.url.startswith("http://127.0.0.1:") and "/callback?" in tab.url
            _finish(page, server, connecting, "auth_link_done.png")


def test_paste_back_through_jupyterlabs_input_box(server: JupyterServer) -> None:
    with lab_server("--auth", "--auth-approval", "page") as lab:
        name = "auth_paste.ipynb"
        write_notebook(server.root / name, _cells(lab.ready_text, "paste"))
        with browser_page(server) as page, screenshot_on_failure(page, "auth_paste.png"):
            landed = _allow_loopback(page)
            open_notebook(page, server, name)
            start_all(page)
            connecting = cell(page, 1)
            tab = _authorize(page, connecting)
            tab.wait_for_url(PASTE_REDIRECT + "**")
            assert landed and tab.url == landed[0]
            box = connecting.locator(".jp-Stdin-input")
            box.fill(tab.url)  # what a person copies from the tab's address bar
            box.press("Enter")
            _finish(page, server, connecting, "auth_paste_done.png")


@pytest.fixture(scope="module")
def server_with_callback_route(tmp_path_factory: pytest.TempPathFactory
                               ) -> Iterator[JupyterServer]:
    """JupyterLab with mcp_nb's server extension, its kernels told the server's public URL.

    Enabled by option: an editable install (the test command's) ships no config file.
    """
    with jupyter_server(
            tmp_path_factory, LAB,
            options=("--ServerApp.jpserver_extensions={'mcp_nb.auth.jupyter': True}",),
            environment=lambda base: {PUBLIC_URL_VARIABLE: base + "/"}) as running:
        yield running


def test_the_redirect_lands_on_the_jupyter_server_itself(
        server_with_callback_route: JupyterServer) -> None:
    server = server_with_callback_route
    with lab_server("--auth", "--auth-approval", "page") as lab:
        name = "auth_jupyter.ipynb"
        # No --auth-callback: with the server's URL known, "auto" takes the server's route.
        write_notebook(server.root / name, _cells(lab.ready_text, None))
        with browser_page(server) as page, screenshot_on_failure(page, "auth_jupyter.png"):
            _allow_loopback(page)
            open_notebook(page, server, name)
            start_all(page)
            connecting = cell(page, 1)
            live_widgets(connecting).filter(
                has_text="the page comes back to this Jupyter server").first.wait_for()
            tab = _authorize(page, connecting)
            # The approval page sends the tab to this Jupyter server (same origin as the
            # notebook, behind its login), which keeps the redirect for the kernel.
            tab.wait_for_url(server.base + "/" + CALLBACK_PATH + "?**")
            tab.wait_for_function(
                "() => document.body.innerText.includes('Return to your notebook')",
                polling=POLL_MS)
            _finish(page, server, connecting, "auth_jupyter_done.png")
