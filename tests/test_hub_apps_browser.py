"""An MCP App in a real browser behind JupyterHub's proxy (deploy/hub/, issue 34).

One learner logs in through the hub's login page in headless Chromium, and JupyterLab opens at
``/user/NAME/lab``: every request and the kernel's websocket go through the hub's proxy, and
the page's origin is the hub's, not the learner's server's. In that page:

* the lab's App (chapter 16's first App cell) renders in its sandboxed frame, initializes,
  shows the call's input and result, and its Refresh button calls an App-only tool through
  the host: App → page → kernel (through the proxy) → MCP server, and back;
* the hub's origin is kept out of a declared CSP. The kernel knows it from the environment
  the hub gives the learner's server (``$JUPYTERHUB_PUBLIC_URL``, set when the hub has a
  public URL) and withholds it; where it cannot know it (a hub without a public URL, where
  that variable is only a path), the page finds its own origin among those the App may reach
  and never loads the App (``reachesThisPage`` in ``app_frame.js``).

The learner's JupyterLab exposes its app object to the page (``window.jupyterapp``) as the
other browser tests' servers do, by a config file in the learner's home (Jupyter reads
``~/.jupyter``; the hub's spawner sets ``$HOME``): the hub's own configuration is not changed.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser_support import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    LAB,
    POLL_MS,
    WAIT_MS,
    app_view,
    cell,
    execution_count,
    outputs,
    require_browser_stack,
    run_in_kernel,
    screenshot_on_failure,
    wait_until_done,
    write_notebook,
)
from hub_support import SPAWN_TIMEOUT, Hub, running_hub

if TYPE_CHECKING:
    from playwright.sync_api import FrameLocator, Page, Route

#: The hub's start and stop (servers get 20 s to end their kernels) count in the first and last
#: test's time, on top of a notebook run in Chromium.
pytestmark = pytest.mark.timeout(600)

ROOT = Path(__file__).resolve().parent.parent
PEER = ROOT / "tests" / "peers" / "hostile_apps.py"
LEARNER = "ada"
APPS = "hub_apps.ipynb"
BACKSTOP = "hub_backstop.ipynb"
#: The cells of APPS: what the kernel believes the notebook's origins are, the lab's App
#: (chapter 16's first App cell), then an App whose CSP names the hub's origin.
KNOWN, CLOCK, WILDCARDS = 1, 3, 5
#: A hub without a public URL (zero-to-jupyterhub's default) gives the learner's server
#: $JUPYTERHUB_PUBLIC_URL as a bare path, and the kit has no MCP_NB_JUPYTER_URL: the kernel
#: cannot know where the page is served from.
NO_PUBLIC_URL = (
    "import os\n"
    f"os.environ['JUPYTERHUB_PUBLIC_URL'] = '/user/{LEARNER}/'\n"
    "for name in ('JUPYTERHUB_PUBLIC_HUB_URL', 'MCP_NB_JUPYTER_URL'):\n"
    "    os.environ.pop(name, None)"
)


def _prepare_home(home: Path, hub_origin: str) -> None:
    """The learner's home before their first start: JupyterLab's settings for a test page
    (the app object exposed, no news or update check) and the two notebooks."""
    (home / ".jupyter").mkdir(parents=True, exist_ok=True)
    (home / ".jupyter" / "jupyter_server_config.json").write_text(json.dumps({"LabApp": {
        "expose_app_in_browser": True,
        "check_for_updates_class": "jupyterlab.NeverCheckForUpdate"}}))
    notification = (home / ".jupyter" / "lab" / "user-settings" / "@jupyterlab"
                    / "apputils-extension")
    notification.mkdir(parents=True, exist_ok=True)
    (notification / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    # The lab and the peer from this checkout (a stdio server gets no PYTHONPATH of the
    # kernel's); the peer's App declares the hub's origin among its connectDomains.
    hostile = shlex.join([sys.executable, str(PEER), "--udp-port", "9",
                          "--notebook-origin", hub_origin])
    write_notebook(home / APPS, [
        "%load_ext mcp_nb",
        "from mcp_nb.notebook.app_origins import notebook_origins\n"
        "print('origins:', *notebook_origins())",
        f"%mcp connect apps --env PYTHONPATH={ROOT} --lab=--apps",
        "%mcp call clock label=Paris",
        f"hostile = %mcp connect hostile -- {hostile}",
        "%mcp call wildcards",
    ])
    write_notebook(home / BACKSTOP, [
        NO_PUBLIC_URL,
        "%load_ext mcp_nb",
        f"hostile = %mcp connect hostile -- {hostile}",
        "%mcp call wildcards",
    ])


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    require_browser_stack(LAB)
    root = tmp_path_factory.mktemp("hub")
    with running_hub(root, [LEARNER]) as running:
        _prepare_home(running.home(LEARNER), running.url.rstrip("/"))
        yield running


@pytest.fixture(scope="module")
def page(hub: Hub) -> Iterator[Page]:
    """The learner's browser, logged in through the hub's form; it may talk to the hub's
    public URL and nothing else (the learner's server is reachable only through the proxy)."""
    sync_api = require_browser_stack(LAB)
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 1400})
        refused: list[str] = []

        def only_the_hub(route: Route) -> None:
            if route.request.url.startswith(hub.url):
                route.continue_()
            else:
                refused.append(route.request.url)
                route.abort()

        context.route("**/*", only_the_hub)
        opened = context.new_page()
        opened.set_default_timeout(WAIT_MS)
        opened.websockets = []  # type: ignore[attr-defined]
        opened.on("websocket", lambda ws: opened.websockets.append(ws.url))  # type: ignore
        try:
            with screenshot_on_failure(opened, "hub-apps-failure-login.png"):
                opened.goto(hub.url + "hub/login")
                opened.locator("input[name=username]").fill(LEARNER)
                opened.locator("input[name=password]").fill(hub.password)
                opened.locator("input[type=submit]").click()
                opened.wait_for_url(re.compile(r"/(hub|user)/"))
            yield opened
        finally:
            context.close()
            browser.close()
            if refused:
                print("requests refused (not the hub):", *refused, sep="\n  ")


def _open(page: Page, hub: Hub, name: str) -> None:
    """Open notebook ``name`` at /user/NAME/lab (the hub spawns the server on the first
    visit) and run all its cells."""
    page.goto(f"{hub.base(LEARNER)}lab/tree/{name}", timeout=SPAWN_TIMEOUT * 1000)
    page.wait_for_function(
        """(name) => {
            const panel = window.jupyterapp?.shell?.currentWidget;
            return panel?.context?.path === name
                && panel.sessionContext?.session?.kernel?.status === 'idle';
        }""", arg=name, polling=POLL_MS, timeout=SPAWN_TIMEOUT * 1000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    wait_until_done(page)


@pytest.fixture(scope="module")
def apps_page(hub: Hub, page: Page) -> Page:
    with screenshot_on_failure(page, "hub-apps-failure-run.png"):
        _open(page, hub, APPS)
    return page


def _view(page: Page, index: int) -> FrameLocator:
    """An App's document: the View inside the sandbox proxy inside the cell's output."""
    return app_view(cell(page, index))


def _text(page: Page, index: int) -> str:
    return "\n".join(outputs(cell(page, index)).all_inner_texts())


def test_jupyterlab_runs_at_the_learners_path_behind_the_proxy(hub: Hub, apps_page: Page) -> None:
    assert apps_page.url.startswith(hub.base(LEARNER) + "lab/")
    hub_ws = "ws" + hub.url.removeprefix("http")
    kernels = [url for url in apps_page.websockets if "/api/kernels/" in url]  # type: ignore
    assert kernels and all(url.startswith(f"{hub_ws}user/{LEARNER}/api/kernels/")
                           for url in kernels), apps_page.websockets  # type: ignore


def test_the_kernel_knows_the_hubs_origin_is_the_pages(hub: Hub, apps_page: Page) -> None:
    # Printed before any App was shown: from the hub's environment, not from the page.
    known = _text(apps_page, KNOWN).split()
    assert hub.url.rstrip("/") in known, known


def test_the_app_renders_initializes_and_calls_the_server_through_the_kernel(
        apps_page: Page) -> None:
    view = _view(apps_page, CLOCK)
    with screenshot_on_failure(apps_page, "hub-apps-failure-clock.png"):
        view.locator("#input").filter(has_text='{"label":"Paris"}').wait_for()
        view.locator("#result").filter(has_text="tick 1 (Paris)").wait_for()
        outputs(cell(apps_page, CLOCK)).locator(
            'svg.mcpnb-app-diagram g.state.current[data-state="Interactive"]'
        ).wait_for(state="attached")  # in a folded accordion: present, not visible
        # clock_refresh is an App-only tool: the App's tools/call goes page → kernel (through
        # the proxy's websocket) → the lab server, and its answer comes back to the App.
        view.get_by_role("button", name=re.compile("Refresh")).click()
        view.locator("#refreshed").filter(has_text="tick 2 (UTC)").wait_for()
    cell(apps_page, CLOCK).screenshot(path=str(ARTIFACTS / "hub-apps-clock.png"))


def test_the_app_channel_runs_through_the_hubs_proxy(apps_page: Page) -> None:
    # The page's second App was drawn with the page's App channel open: a websocket from the
    # page through the hub's proxy to the learner's server, and on to the kernel.
    _view(apps_page, WILDCARDS).locator("#done").filter(has_text="rendered").wait_for()
    count = execution_count(apps_page, WILDCARDS)
    said = run_in_kernel(apps_page, f"frame = Out[{count}].frame\n"
                                    "print(frame.channel_end is not None and "
                                    "frame.channel_end.bound(frame.channel['frame']))")
    assert said.strip() == "True", said


def test_the_kernel_withholds_the_hubs_origin_from_a_declared_csp(
        hub: Hub, apps_page: Page) -> None:
    origin = hub.url.rstrip("/")
    with screenshot_on_failure(apps_page, "hub-apps-failure-wildcards.png"):
        _view(apps_page, WILDCARDS).locator("#done").filter(has_text="rendered").wait_for()
        header = _text(apps_page, WILDCARDS)
        assert re.search(r"dropped connectDomains: '" + re.escape(origin)
                         + r"': it reaches this notebook's own server", header), header
        assert "connect-src https://api.example.org;" in header
        # The frame's policy, as the page loaded it, does not name the hub.
        proxy = outputs(cell(apps_page, WILDCARDS)).locator("iframe.mcpnb-app-frame")
        assert origin not in (proxy.get_attribute("srcdoc") or "")


def test_the_page_refuses_an_app_that_reaches_it_when_the_kernel_cannot_know(
        hub: Hub, apps_page: Page) -> None:
    other = apps_page.context.new_page()
    try:
        with screenshot_on_failure(other, "hub-apps-failure-backstop.png"):
            _open(other, hub, BACKSTOP)
            shown = outputs(cell(other, 3))
            shown.get_by_text(re.compile(
                r"the App's CSP lets it reach this notebook's own origin "
                + re.escape(hub.url.rstrip("/")) + r" .*not loaded")).wait_for()
            # The frame, which never got the sandbox proxy's document, is gone.
            shown.locator("iframe.mcpnb-app-frame").wait_for(state="detached")
            shown.get_by_text("not rendered, for the reason above").wait_for()
        other.screenshot(path=str(ARTIFACTS / "hub-apps-backstop.png"))
    finally:
        other.close()
