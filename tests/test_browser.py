"""A real browser: JupyterLab on loopback, headless Chromium driven by Playwright.

The kernel tests prove the widgets send the right messages; only a browser
proves they *render*: that JupyterLab's widget manager (``jupyterlab_widgets``,
which ipywidgets depends on) turns the widget-view output into live views, that
the state diagram shows the current state, and that a click on the tool form's
Call button reaches the kernel and the result comes back into the page.

The browser is Debian's ``chromium`` (Playwright cannot download its own here).
Screenshots are kept in ``tests/artifacts/`` (git-ignored) for a human to look at.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import nbformat
import pytest

if TYPE_CHECKING:  # playwright is optional at import time: missing, the tests skip or fail
    from playwright.sync_api import Locator, Page, Route

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
INSTALL_HINT = (
    "the browser test needs Debian's chromium (`apt-get install -y chromium`, which .ci/run "
    "does) and the test extras (`pip install -e '.[test]'`: jupyterlab, playwright)"
)
NOTEBOOK = "browser.ipynb"
# JupyterLab's first start on two cores takes 10-20 s; the rest is seconds.
SERVER_START_TIMEOUT = 45
WAIT_MS = 30_000
# Poll page state on a timer: with requestAnimationFrame polling (Playwright's default)
# a wait was seen to stall in the headless page although its condition had become true.
POLL_MS = 250
# Chromium flags: no GPU, no sandbox (containers run as root), and nothing that
# phones home. Playwright adds --headless itself (headless=True) and gives the
# browser a fresh temporary profile (a --user-data-dir here would be refused).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-proxy-server",  # a proxy from the environment must not see loopback traffic
    "--disable-crash-reporter",  # no crashpad daemon outliving the browser, nothing in ~
]


def _require_browser_stack() -> ModuleType:
    """Import Playwright and find chromium; skip locally, fail in CI (where it must work)."""
    missing = []
    if not CHROMIUM.exists():
        missing.append(f"{CHROMIUM} is missing")
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        missing.append("jupyterlab is not installed")
    try:
        from playwright import sync_api
    except ImportError:
        missing.append("playwright is not installed")
        sync_api = None
    if missing:
        message = f"{'; '.join(missing)}: {INSTALL_HINT}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return sync_api


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _descendants(root: int) -> set[int]:
    """Every live process below ``root`` (kernels run in their own session, not group)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # Field 4 is the parent pid; the command name (field 2) may hold spaces.
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


class Lab:
    """A JupyterLab server on 127.0.0.1 with its own config, data, settings and runtime dirs."""

    def __init__(self, root: Path, home: Path) -> None:
        self.root = root
        self.port = _free_port()
        self.token = secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        settings = home / "settings"
        # No "would you like news?" toast over the notebook, and no update check.
        notification = settings / "@jupyterlab" / "apputils-extension"
        notification.mkdir(parents=True)
        (notification / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false", "checkForUpdates": False}))
        env = {
            **os.environ,
            # Nothing from the user's own Jupyter/IPython setup leaks in, nothing leaks out.
            "JUPYTER_CONFIG_DIR": str(home / "config"),
            "JUPYTER_DATA_DIR": str(home / "data"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "JUPYTERLAB_SETTINGS_DIR": str(settings),
            "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
            "IPYTHONDIR": str(home / "ipython"),
            # Lab extensions (the widget manager among them) live under the interpreter's
            # prefix; from a virtual environment that is the base interpreter's.
            "JUPYTER_PATH": os.pathsep.join(
                dict.fromkeys(str(Path(prefix) / "share" / "jupyter")
                              for prefix in (sys.prefix, sys.base_prefix))),
            "NO_PROXY": "127.0.0.1",
            "no_proxy": "127.0.0.1",
        }
        self.log_path = home / "jupyterlab.log"
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [
                sys.executable, "-m", "jupyterlab",
                "--no-browser",
                "--ServerApp.ip=127.0.0.1",
                f"--ServerApp.port={self.port}",
                "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={self.token}",
                f"--ServerApp.root_dir={root}",
                "--ServerApp.terminals_enabled=False",
                "--allow-root",  # CI containers run as root; harmless otherwise
                # window.jupyterapp: run cells through JupyterLab's own command, not key presses.
                "--LabApp.expose_app_in_browser=True",
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            ],
            env=env, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True,  # so a last-resort kill reaches the whole group
        )
        self._wait_ready()

    def _request(self, path: str, method: str = "GET") -> bytes:
        request = urllib.request.Request(
            self.base + path, method=method, headers={"Authorization": f"token {self.token}"})
        # No proxy handler: loopback requests must never go through one.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=5) as response:
            return bytes(response.read())

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.stop()
                raise RuntimeError(f"JupyterLab exited early:\n{self.log()}")
            try:
                self._request("/api/status")
                return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"JupyterLab did not answer in {SERVER_START_TIMEOUT}s:\n{self.log()}")

    def url(self, path: str) -> str:
        return f"{self.base}{path}?token={self.token}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]

    def stop(self) -> list[str]:
        """Shut down the server and its kernels; return any process that outlived it."""
        # Kernels (and the MCP servers they spawned) are the server's descendants, but
        # each kernel has its own session: remember them before the server goes away.
        below = _descendants(self.process.pid)
        if self.process.poll() is None:
            try:
                # The documented way: the server shuts its kernels down, then exits.
                self._request("/api/shutdown", method="POST")
                self.process.wait(timeout=20)
            except (urllib.error.URLError, ConnectionError, TimeoutError,
                    subprocess.TimeoutExpired):
                os.killpg(self.process.pid, signal.SIGTERM)
                try:
                    self.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(self.process.pid, signal.SIGKILL)
                    self.process.wait()
        self._log.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(pid) for pid in below):
            time.sleep(0.2)
        leftovers = []
        for pid in sorted(below):
            if _alive(pid):
                leftovers.append(Path(f"/proc/{pid}/cmdline").read_bytes()
                                 .replace(b"\0", b" ").decode(errors="replace"))
                os.kill(pid, signal.SIGKILL)
        return leftovers


def _write_notebook(path: Path) -> None:
    cells = ["%load_ext mcp_nb", "%mcp connect", "%mcp state", "%mcp form add"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    notebook.metadata["kernelspec"] = {
        "name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, path)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    _require_browser_stack()
    root = tmp_path_factory.mktemp("lab-root")
    _write_notebook(root / NOTEBOOK)
    server = Lab(root, tmp_path_factory.mktemp("lab-home"))
    yield server
    leftovers = server.stop()
    assert leftovers == [], "processes outlived JupyterLab's shutdown (killed now)"


@pytest.fixture(scope="module")
def page(lab: Lab) -> Iterator[Page]:
    """The test notebook open in JupyterLab, all cells run, the widgets rendered."""
    sync_api = _require_browser_stack()
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 1400})
        # Only loopback: anything else the page asks for is refused (and listed on failure).
        refused: list[str] = []

        def only_loopback(route: Route) -> None:
            if route.request.url.startswith(lab.base):
                route.continue_()
            else:
                refused.append(route.request.url)
                route.abort()

        context.route("**/*", only_loopback)
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        try:
            with _screenshot_on_failure(page, "browser-failure-run.png"):
                _open_and_run(page, lab)
            page.screenshot(path=str(ARTIFACTS / "browser-notebook.png"))
            yield page
        finally:
            context.close()
            browser.close()
            if refused:
                print("requests refused (not loopback):", *refused, sep="\n  ")


@contextmanager
def _screenshot_on_failure(page: Page, name: str) -> Iterator[None]:
    """A failed browser check is much easier to read as a picture of the page."""
    try:
        yield
    except Exception:
        page.screenshot(path=str(ARTIFACTS / name))
        raise


def _open(page: Page, lab: Lab, name: str) -> None:
    """Open notebook ``name`` and wait until it is shown with its kernel idle."""
    page.goto(lab.url(f"/lab/tree/{name}"))
    # The app object exists before its plugins: wait until the notebook is the current
    # widget with its kernel idle (polled, as the page may still be navigating).
    page.wait_for_function(
        """(name) => {
            const panel = window.jupyterapp?.shell?.currentWidget;
            return panel?.context?.path === name
                && panel.sessionContext?.session?.kernel?.status === 'idle';
        }""",
        arg=name, polling=POLL_MS,
    )


def _open_and_run(page: Page, lab: Lab) -> None:
    _open(page, lab, NOTEBOOK)
    # Everything, with the command behind the menu's "Run → Run All Cells".
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    # Every cell done: prompts read "[n]:" and none "[*]:".
    page.wait_for_function(
        """() => {
            const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
            return prompts.length === 4 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
        }""",
        polling=POLL_MS,
    )
    # Failed cells, read from the notebook model (stderr chatter such as warnings is fine).
    errors = page.evaluate(
        """() => window.jupyterapp.shell.currentWidget.context.model.toJSON().cells
            .flatMap(cell => cell.outputs ?? [])
            .filter(output => output.output_type === 'error')
            .map(output => `${output.ename}: ${output.evalue}`)"""
    )
    assert errors == [], f"cells failed in the browser's kernel: {errors}"


def _cell(page: Page, index: int) -> Locator:
    return page.locator(".jp-Notebook .jp-CodeCell").nth(index)


def test_the_state_diagram_renders_as_a_live_widget_showing_operating(page: Page) -> None:
    cell = _cell(page, 2)  # %mcp state
    with _screenshot_on_failure(page, "browser-failure-state-diagram.png"):
        _check_state_diagram(cell)
    cell.scroll_into_view_if_needed()
    cell.screenshot(path=str(ARTIFACTS / "browser-state-diagram.png"))


def _check_state_diagram(cell: Locator) -> None:
    # Inside a live widget view (.jupyter-widgets), not the static text/html fallback
    # that holds the same SVG: this is what fails if the widget manager is missing.
    current = cell.locator(".jupyter-widgets.widget-html svg g.state.current")
    current.wait_for()
    assert current.count() == 1
    assert current.get_attribute("data-state") == "Operating"
    assert "Loading widget" not in cell.inner_text()


def test_the_tool_form_calls_the_tool(page: Page) -> None:
    cell = _cell(page, 3)  # %mcp form add
    with _screenshot_on_failure(page, "browser-failure-tool-form.png"):
        _call_add_through_the_form(cell)
    cell.scroll_into_view_if_needed()
    cell.screenshot(path=str(ARTIFACTS / "browser-tool-form.png"))


def _call_add_through_the_form(cell: Locator) -> None:
    form = cell.locator(".jupyter-widgets.widget-vbox").first
    for name, value in (("a", "2"), ("b", "3")):
        box = form.get_by_label(f"{name} *", exact=True)  # "*": required in the inputSchema
        box.fill(value)
        # Number boxes sync to the kernel on change, which needs Enter or a blur.
        box.press("Enter")
    form.get_by_role("button", name="Call").click()
    result = form.locator(".widget-html", has_text=re.compile(r"\b5(\.0)?\b"))
    result.wait_for()
    assert "done" in form.inner_text()


UNTRUSTED = "untrusted.ipynb"


def _executed_untrusted_notebook(path: Path) -> None:
    """A notebook run by nbclient and saved unsigned: JupyterLab opens it untrusted."""
    from nbclient import NotebookClient

    cells = ["%load_ext mcp_nb", "%mcp connect", "%mcp state", "%mcp view",
             "%mcp shutdown"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    notebook.metadata["kernelspec"] = {
        "name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    notebook.metadata.pop("widgets", None)  # as scripts/run_notebooks.py saves them
    nbformat.write(notebook, path)


def test_static_diagrams_survive_an_untrusted_notebook(lab: Lab, page: Page) -> None:
    _executed_untrusted_notebook(lab.root / UNTRUSTED)
    other = page.context.new_page()
    try:
        with _screenshot_on_failure(other, "browser-failure-untrusted.png"):
            _open(other, lab, UNTRUSTED)
            cells = other.locator(".jp-Notebook .jp-CodeCell")
            cells.nth(4).wait_for()
            trusted = other.evaluate(
                "() => window.jupyterapp.shell.currentWidget.context.model.cells.get(0)"
                ".trusted")
            assert trusted is False  # opened as a stranger's notebook would be
            state = cells.nth(2).locator(".jp-OutputArea-output")
            diagram = state.locator('img[src^="data:image/svg+xml;base64,"]')
            diagram.wait_for()
            assert diagram.get_attribute("alt").startswith("StateDiagram: Operating")
            # The image really decodes (a sanitizer that mangled it would leave it 0 wide).
            other.wait_for_function(
                "(img) => img.complete && img.naturalWidth > 0", arg=diagram.element_handle(),
                polling=POLL_MS)
            # No inline SVG survived to spill its <title> tooltips as text.
            assert "the client offers a protocol version" not in state.inner_text()
            view = cells.nth(3).locator(".jp-OutputArea-output")
            assert view.locator('img[src^="data:image/svg+xml;base64,"]').count() == 2
        cells.nth(2).screenshot(path=str(ARTIFACTS / "browser-untrusted-state.png"))
    finally:
        other.close()


EXPLORE = "explore.ipynb"


def test_the_explorer_end_to_end(lab: Lab, page: Page) -> None:
    cells = ["%load_ext mcp_nb", "%mcp connect", "%mcp explore"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    notebook.metadata["kernelspec"] = {
        "name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, lab.root / EXPLORE)
    other = page.context.new_page()
    try:
        with _screenshot_on_failure(other, "browser-failure-explorer.png"):
            _open(other, lab, EXPLORE)
            other.evaluate(
                "() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
            explorer = other.locator(".jp-Notebook .jp-CodeCell").nth(2)
            tabs = explorer.locator(".lm-TabBar-tab")
            tabs.filter(has_text="Tools").first.wait_for()

            # A tool through its form.
            explorer.locator("select").first.select_option(label="add — Add")
            for name, value in (("a", "2"), ("b", "3")):
                box = explorer.get_by_label(f"{name} *", exact=True)
                box.fill(value)
                box.press("Enter")
            explorer.get_by_role("button", name="Call").click()
            explorer.locator(".widget-html", has_text=re.compile(r"\b5\b")).first.wait_for()
            explorer.screenshot(path=str(ARTIFACTS / "browser-explorer-tool.png"))

            # A resource, read and shown.
            tabs.filter(has_text="Resources").first.click()
            explorer.locator("select:visible").first.select_option(
                label="lab://static/hello.txt — hello.txt")
            explorer.get_by_text("Hello from the mcp_nb lab server").wait_for()

            # A prompt, its argument, its messages.
            tabs.filter(has_text="Prompts").first.click()
            explorer.locator("select:visible").first.select_option(index=0)
            box = explorer.get_by_label("name *", exact=True)
            box.fill("Ada")
            box.press("Enter")
            explorer.get_by_role("button", name="Get").click()
            explorer.get_by_text("greeting for Ada").first.wait_for()

            # The call's log line, in the Notifications tab.
            tabs.filter(has_text="Notifications").first.click()
            explorer.get_by_text("add called").wait_for()
        explorer.screenshot(path=str(ARTIFACTS / "browser-explorer.png"))
    finally:
        other.close()
