"""What the kit's opaque-origin sandbox costs an App, in a real browser (docs/apps.md, *The
sandbox*; chapter 16 sets it beside the spec's sandbox proxy).

The spec's web host gives the sandbox proxy an origin of its own with ``allow-same-origin``;
mcp_nb's frames have no ``allow-same-origin``, so their origin is opaque. An App served by the
official MCP Python SDK (``tests/peers/origin_app.py``) declares one origin in
``connectDomains``, an HTTP server this test runs, and fetches it: the request arrives with
``Origin: null``. Its storage throws. JupyterLab 4 in headless Chromium, a real kernel.
"""

from __future__ import annotations

import shlex
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import pytest
from browser_support import (
    LAB,
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
    from playwright.sync_api import FrameLocator

PEER = Path(__file__).resolve().parent / "peers" / "origin_app.py"
NOTEBOOK = "origin.ipynb"


class _Api(BaseHTTPRequestHandler):
    """Answers every GET, lets any origin read the answer, and keeps each Origin header."""

    #: Each request's Origin header; a subclass per test gets a list of its own.
    origins: ClassVar[list[str | None]] = []

    def do_GET(self) -> None:
        self.origins.append(self.headers.get("Origin"))
        body = b"ok"
        self.send_response(200)
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def api() -> Iterator[tuple[str, list[str | None]]]:
    #: Each request's Origin header; a subclass per test gets a list of its own.
    origins: ClassVar[list[str | None]] = []
    handler = type("Api", (_Api,), {"origins": origins})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", origins
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_an_app_fetches_with_origin_null_and_has_no_storage(
        tmp_path_factory: pytest.TempPathFactory,
        api: tuple[str, list[str | None]]) -> None:
    url, origins = api
    with jupyter_server(tmp_path_factory, LAB) as server:
        command = shlex.join([sys.executable, str(PEER), "--api", url])
        write_notebook(server.root / NOTEBOOK, [
            "%load_ext mcp_nb",
            f"%mcp connect origin -- {command}",
            "%mcp call origin",
        ])
        with browser_page(server) as page, \
                screenshot_on_failure(page, "origin-failure.png"):
            # The page may reach the notebook's server only (browser_page); and this API.
            page.route(f"{url}/**", lambda route: route.continue_())
            open_notebook(page, server, NOTEBOOK)
            run_all(page)
            view: FrameLocator = outputs(cell(page, 2)).frame_locator(
                "iframe.mcpnb-app-frame").frame_locator("iframe")
            fetched = view.locator("#fetched").filter(has_text="fetch")
            fetched.wait_for()
            # The declared origin was reached (the CSP allowed it), as an opaque origin.
            assert fetched.inner_text() == "fetched: 200 ok"
            assert origins == ["null"]
            storage = view.locator("#storage").inner_text()
            assert storage == "localStorage: SecurityError; document.cookie: SecurityError"
