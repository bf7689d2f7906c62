"""Hostile MCP Apps in a real browser: JupyterLab 4, headless Chromium, a real kernel.

The Apps come from ``tests/peers/hostile_apps.py`` (the official MCP Python SDK over
stdio) and try what issue 33 found an App could do: WebRTC past ``connect-src 'none'``,
a flood of size changes, a 10 MB message, a burst over the rate, CSP origins that reach
the notebook, permissions and fullscreen without asking.  Each test says what the host
must keep from happening, and checks it where it would show: a UDP port nobody may
reach, the kernel's transcript, the cell, the frame's attributes.
"""

from __future__ import annotations

import re
import shlex
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser_support import (
    LAB,
    POLL_MS,
    JupyterServer,
    browser_page,
    cell,
    jupyter_server,
    open_notebook,
    outputs,
    run_all,
    run_in_kernel,
    screenshot_on_failure,
    write_notebook,
)

if TYPE_CHECKING:
    from playwright.sync_api import FrameLocator, Page

PEER = Path(__file__).resolve().parent / "peers" / "hostile_apps.py"
ROOT = PEER.parents[2]
NOTEBOOK = "hostile.ipynb"
#: The cells, in order; a test finds its App by the cell's index here.
CALLS = ("webrtc", "violations", "wildcards", "consent", "flood")
FIRST_CALL = 2
PROBE = FIRST_CALL + len(CALLS) + 1  # the lab's App with --app-fault=sandbox-probe
#: An App that declares the notebook's own origin, rendered after a cell that switches the
#: kernel's own check off: only the page's backstop stands in its way.
OWN_ORIGIN = PROBE + 3


def _index(tool: str) -> int:
    return FIRST_CALL + CALLS.index(tool)


@pytest.fixture(scope="module")
def udp() -> Iterator[socket.socket]:
    """A UDP port on 127.0.0.1 that the WebRTC App aims its STUN requests at."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listener.bind(("127.0.0.1", 0))
    listener.settimeout(0.05)
    try:
        yield listener
    finally:
        listener.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory,
           udp: socket.socket) -> Iterator[JupyterServer]:
    with jupyter_server(tmp_path_factory, LAB) as running:
        command = shlex.join([sys.executable, str(PEER), "--udp-port",
                              str(udp.getsockname()[1]), "--notebook-origin", running.base])
        write_notebook(running.root / NOTEBOOK, [
            "%load_ext mcp_nb",
            f"hostile = %mcp connect hostile -- {command}",
            *(f"%mcp call {tool}" for tool in CALLS),
            # The lab from this checkout (a server gets no PYTHONPATH of the kernel's).
            f"%mcp connect probe --env PYTHONPATH={ROOT} --lab=--apps "
            "--lab=--app-fault=sandbox-probe",
            "%mcp call clock",
            # As if the kernel's check had been routed around (behind a proxy the kernel
            # cannot know of its origin): the page's own check must still refuse the App.
            "import mcp_nb.notebook.app_host as kernel_side\n"
            "kernel_side.notebook_origins = lambda: ()",
            "%mcp use hostile",
            "%mcp call own_origin",
        ])
        yield running


@pytest.fixture(scope="module")
def page(server: JupyterServer) -> Iterator[Page]:
    with browser_page(server) as opened:
        requests: list[str] = []
        # Every request any frame makes, with the frame's URL (an App's: about:srcdoc).
        opened.on("request", lambda r: requests.append(f"{r.frame.url} {r.url}"))
        with screenshot_on_failure(opened, "hostile-failure-run.png"):
            open_notebook(opened, server, NOTEBOOK)
            run_all(opened)
        opened.requests = requests  # type: ignore[attr-defined]
        yield opened


def _view(page: Page, index: int) -> FrameLocator:
    return outputs(cell(page, index)).frame_locator("iframe.mcpnb-app-frame").frame_locator(
        "iframe")


def test_webrtc_reaches_no_udp_port_from_any_realm(page: Page, udp: socket.socket) -> None:
    index = _index("webrtc")
    with screenshot_on_failure(page, "hostile-failure-webrtc.png"):
        _view(page, index).locator("#done").filter(has_text="tried:").wait_for()
        # Chromium gathers ICE candidates within a second of setLocalDescription: listen
        # three more before saying nothing came.
        received = []
        deadline = page.evaluate("Date.now()") + 3000
        while page.evaluate("Date.now()") < deadline:
            try:
                received.append(udp.recvfrom(2048)[0])
            except TimeoutError:
                page.wait_for_timeout(50)
        assert received == [], f"{len(received)} UDP datagrams reached 127.0.0.1"
        # The frames that would have brought WebRTC back were removed, and the cell says so.
        shown = outputs(cell(page, index))
        shown.get_by_text("CSP blocked about:srcdoc (frame-src)").first.wait_for()
        shown.get_by_text("CSP blocked javascript: (frame-src)").first.wait_for()
        assert "LEAK" not in "\n".join(shown.all_inner_texts())
        tried = _view(page, index).locator("#done").inner_text()
        assert "a closed shadow root made by setHTMLUnsafe" in tried


def test_each_csp_violation_is_shown_with_its_directive(page: Page) -> None:
    index = _index("violations")
    with screenshot_on_failure(page, "hostile-failure-violations.png"):
        shown = outputs(cell(page, index))
        # The note, word for word, and the verdict line, which names what was blocked.
        shown.get_by_text("CSP blocked https://blocked.example/data (connect-src)",
                          exact=True).wait_for()
        shown.get_by_text("CSP blocked https://blocked.example/pixel.png (img-src)",
                          exact=True).wait_for()
        shown.get_by_text(re.compile(r"the CSP blocked https://blocked\.example/")).first.wait_for()
    notes = run_in_kernel(page, "print(sum(1 for e in hostile.session.transcript "
                          "if e.method == 'ui/notifications/sandbox-csp-violation'))")
    assert int(notes) >= 2


def test_origins_that_reach_the_notebook_or_too_far_are_dropped(
        server: JupyterServer, page: Page) -> None:
    header = "\n".join(outputs(cell(page, _index("wildcards"))).all_inner_texts())
    assert re.search(r"dropped connectDomains: '" + re.escape(server.base)
                     + r"': it reaches this notebook's own server", header), header
    assert "dropped connectDomains: 'http://127.0.0.1:*': a port wildcard" in header
    assert "dropped connectDomains: 'https://*.com': a wildcard over the whole .com" in header
    assert "connect-src https://api.example.org;" in header
    # The App rendered all the same, with what was kept.
    _view(page, _index("wildcards")).locator("#done").filter(has_text="rendered").wait_for()


def test_fullscreen_and_permissions_wait_for_a_click_outside_the_frame(page: Page) -> None:
    index = _index("consent")
    view = _view(page, index)
    frame = outputs(cell(page, index)).locator("iframe.mcpnb-app-frame")
    with screenshot_on_failure(page, "hostile-failure-consent.png"):
        view.locator("#camera").filter(has_text="camera allowed").wait_for()
        assert frame.get_attribute("allow") is None
        assert view.locator("#camera").inner_text() == "camera allowed: false"
        assert view.locator("#granted").inner_text() == "granted: none"

        # Fullscreen: asked by the App, refused (the current mode) until the person clicks.
        view.get_by_role("button", name="Fullscreen please").click()
        ask = outputs(cell(page, index)).get_by_role("button", name="Show this App fullscreen")
        ask.wait_for()
        assert view.locator("#mode").inner_text() == "inline"
        box = outputs(cell(page, index)).locator(".mcpnb-app")
        assert box.evaluate("(b) => getComputedStyle(b).position") != "fixed"
        ask.click()
        view.locator("#mode").filter(has_text="fullscreen").wait_for()
        page.wait_for_function("(box) => getComputedStyle(box).position === 'fixed'",
                               arg=box.element_handle(), polling=POLL_MS)
        outputs(cell(page, index)).get_by_role("button", name="Back inline").click()
        page.wait_for_function("(box) => getComputedStyle(box).position !== 'fixed'",
                               arg=box.element_handle(), polling=POLL_MS)

        # Permissions: the frame gets its allow attribute only from the person's click, and
        # the App starts again with them.
        outputs(cell(page, index)).get_by_role(
            "button", name="Allow camera, microphone for this App").click()
        view.locator("#granted").filter(has_text="granted: camera,microphone").wait_for()
        assert frame.get_attribute("allow") == "camera; microphone"
        assert view.locator("#camera").inner_text() == "camera allowed: true"


def test_a_flood_and_a_10_mb_message_never_reach_the_kernel(page: Page) -> None:
    index = _index("flood")
    view = _view(page, index)
    with screenshot_on_failure(page, "hostile-failure-flood.png"):
        # The App's next request after all of it is answered: the kernel connection lived.
        view.locator("#answer").filter(has_text="after the flood").wait_for()
        assert view.locator("#big").inner_text().startswith("refused: -32000 refused by the "
                                                            "host's page")
        refused_pings = int(view.locator("#rate").inner_text().split()[0])
        assert 0 < refused_pings < 400
        shown = outputs(cell(page, index))
        shown.get_by_text("over its 1,048,576-byte limit, never forwarded").wait_for()
        shown.get_by_text(re.compile(r"the page refused [\d,]+ App messages over its rate"))\
            .wait_for()
    counts = run_in_kernel(page, """
lane = [e for e in hostile.session.transcript if e.direction == "app→host"]
print(sum(e.method == "ui/notifications/size-changed" for e in lane),
      sum(e.method == "ui/notifications/sandbox-message-refused" for e in lane),
      max(e.size for e in lane))
""").split()
    size_changes, refusals, largest = (int(n) for n in counts)
    # Coalesced in the page: a handful of the 10,000 reached the kernel (one per 50 ms).
    assert 1 <= size_changes < 200
    assert refusals >= 2  # the 10 MB request and the burst
    assert largest < 1024 * 1024  # nothing near the 10 MB message crossed the websocket


def test_the_sandbox_keeps_the_notebook_out_of_reach(server: JupyterServer, page: Page) -> None:
    """The lab's App with --app-fault=sandbox-probe tries the notebook's DOM, cookies,
    storage, the kernel's API and a request straight to the page."""
    view = _view(page, PROBE)
    with screenshot_on_failure(page, "hostile-failure-isolation.png"):
        checks = view.locator("#isolation li")
        checks.nth(5).wait_for()
        said = checks.all_inner_texts()
        assert len(said) == 6 and all(line.startswith("blocked:") for line in said), said
        outputs(cell(page, PROBE)).get_by_text("sandbox check: blocked").wait_for()
        # Its fetch of the kernel's API broke the CSP: the cell says which directive.
        outputs(cell(page, PROBE)).get_by_text(re.compile(r"^CSP blocked .*/api/kernels "
                                                          r"\(connect-src\)$")).wait_for()
    assert "LEAK" not in page.locator("body").inner_text()
    # No App frame's request reached the notebook's server (a blocked one still shows here).
    requests: list[str] = page.requests  # type: ignore[attr-defined]
    assert [r for r in requests if r.startswith(f"about:srcdoc {server.base}")] == []


def test_the_page_refuses_an_app_that_may_reach_its_own_origin(
        server: JupyterServer, page: Page) -> None:
    """``reachesThisPage`` in app_frame.js: the kernel's check was switched off in the
    notebook, so the CSP the kernel built lets the App reach the notebook's own origin; the
    page never loads it, and the cell says why."""
    shown = outputs(cell(page, OWN_ORIGIN))
    with screenshot_on_failure(page, "hostile-failure-own-origin.png"):
        header = "\n".join(shown.all_inner_texts())
        assert f"connect-src {server.base}" in header  # the kernel let it through …
        shown.get_by_text(re.compile(r"lets it reach this notebook's own origin "
                                     + re.escape(server.base))).first.wait_for()
        assert shown.locator(".mcpnb-app-verdict").get_attribute("data-verdict") == "failed"
    # Never loaded: the App's fetch of the kernel API would have gone out at once (it does
    # when app_frame.js skips the check: the App stays up, and this request is listed).
    requests: list[str] = page.requests  # type: ignore[attr-defined]
    assert [r for r in requests if "own-origin-app" in r] == []
    assert "LEAK" not in page.locator("body").inner_text()
