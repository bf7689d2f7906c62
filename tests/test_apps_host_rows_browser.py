"""The host protocol's rows that need a page: ``hostContext.styles`` and ``ui/download-file``.

In JupyterLab 4 and Notebook 7 (headless Chromium) with the official
``@modelcontextprotocol/server-basic-vanillajs``, whose View applies ``hostContext.styles`` to
its document (the ext-apps SDK's own code, not ours): the App's background variable must be the
notebook theme's, light and then dark after a theme switch. Then the View asks
``ui/download-file`` (posted from inside it, as its code would): nothing is written until the
person clicks *Save* in the cell, the file lands beside the notebook, and the View's request is
answered.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from apps_support import install_example
from browser_support import (
    FRONT_ENDS,
    FrontEnd,
    JupyterServer,
    browser_page,
    cell,
    jupyter_server,
    open_notebook,
    outputs,
    run_all,
    screenshot_on_failure,
    write_notebook,
)

if TYPE_CHECKING:
    from playwright.sync_api import Frame, Page

NOTEBOOK = "apps_rows.ipynb"
PAGE_BACKGROUND = ("() => getComputedStyle(document.body)"
                   ".getPropertyValue('--jp-layout-color0').trim()")
VIEW_BACKGROUND = ("() => getComputedStyle(document.documentElement)"
                   ".getPropertyValue('--color-background-primary').trim()")
ASK_DOWNLOAD = """() => {
  window.__answer = new Promise((resolve) => {
    window.addEventListener("message", (event) => {
      if (event.data && event.data.id === "dl-1") resolve(event.data);
    });
  });
  window.parent.postMessage({ jsonrpc: "2.0", id: "dl-1", method: "ui/download-file",
    params: { contents: [{ type: "resource", resource: {
      uri: "file:///../../hello.txt", mimeType: "text/plain", text: "hi from the App" } }] } },
    "*");
}"""


@pytest.fixture(scope="module", params=FRONT_ENDS, ids=str)
def server(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    front_end: FrontEnd = request.param
    command = shlex.join(install_example())
    with jupyter_server(tmp_path_factory, front_end) as running:
        write_notebook(running.root / NOTEBOOK, [
            "%load_ext mcp_nb", f"%mcp connect basic -- {command}", "%mcp call get-time"])
        yield running


@pytest.fixture(scope="module")
def page(server: JupyterServer) -> Iterator[Page]:
    with browser_page(server) as opened:
        with screenshot_on_failure(opened, f"apps-rows-run-{server.front_end}.png"):
            open_notebook(opened, server, NOTEBOOK)
            run_all(opened)
        yield opened


def _view(page: Page) -> Frame:
    """The View's frame (inside the sandbox proxy), once its App has shown the result."""
    located = (outputs(cell(page, 2)).frame_locator("iframe.mcpnb-app-frame")
               .frame_locator("iframe"))
    located.locator("#server-time").filter(has_text="T").wait_for()
    return next(frame for frame in page.frames if frame.parent_frame is not None
                and frame.parent_frame.url == "about:srcdoc")


def test_the_app_takes_the_notebooks_theme_and_follows_a_switch(server: JupyterServer,
                                                                page: Page) -> None:
    view = _view(page)
    with screenshot_on_failure(page, f"apps-rows-styles-{server.front_end}.png"):
        light = page.evaluate(PAGE_BACKGROUND)
        assert light and view.evaluate(VIEW_BACKGROUND) == light
        assert view.evaluate("() => document.documentElement.dataset.theme") == "light"
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', "
                      "{theme: 'JupyterLab Dark'})")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'",
                               polling=100)
        dark = page.evaluate(PAGE_BACKGROUND)
        assert dark and dark != light
        # host-context-changed carries the dark theme's values; the SDK applies them.
        view.wait_for_function(f"(dark) => ({VIEW_BACKGROUND})() === dark", arg=dark,
                               polling=100)
        assert view.evaluate("() => document.documentElement.dataset.theme") == "dark"
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', "
                  "{theme: 'JupyterLab Light'})")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'", polling=100)


def test_a_download_is_saved_beside_the_notebook_only_after_save(server: JupyterServer,
                                                                 page: Page) -> None:
    view = _view(page)
    with screenshot_on_failure(page, f"apps-rows-download-{server.front_end}.png"):
        view.evaluate(ASK_DOWNLOAD)
        save = outputs(cell(page, 2)).get_by_role("button", name="Save", exact=True)
        save.wait_for()
        assert outputs(cell(page, 2)).get_by_text("hello.txt").first.is_visible()
        assert not (server.root / "hello.txt").exists()  # nothing before the click
        save.click()
        answer = view.evaluate("() => window.__answer")
        assert answer == {"jsonrpc": "2.0", "id": "dl-1", "result": {}}
        assert (server.root / "hello.txt").read_text() == "hi from the App"
        outputs(cell(page, 2)).get_by_text("saved beside the notebook: hello.txt").wait_for()
