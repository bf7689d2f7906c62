"""Browser-test machinery: a Jupyter server on loopback, headless Chromium, notebook helpers.

One :class:`JupyterServer` starts either front end, JupyterLab 4 (:data:`LAB`) or
Notebook 7 (:data:`NOTEBOOK`), each with its own config, data, settings and runtime
directories, and :meth:`JupyterServer.stop` leaves no process behind (it returns any
that outlived the server, killed). :func:`browser_page` opens Debian's chromium
through Playwright (which cannot download its own browser here), refusing every
request that is not to the server. The rest drives a notebook the same way in both
front ends: :func:`open_notebook`, :func:`run_all`, :func:`cell`.

A test module uses it with two short fixtures::

    @pytest.fixture(scope="module", params=FRONT_ENDS, ids=str)
    def server(request, tmp_path_factory):
        with jupyter_server(tmp_path_factory, request.param) as running:
            yield running

    @pytest.fixture(scope="module")
    def page(server):
        with browser_page(server) as opened:
            yield opened

Screenshots go to ``tests/artifacts/`` (git-ignored) for a human to look at.
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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import nbformat
import pytest

if TYPE_CHECKING:  # playwright is optional at import time: missing, the tests skip or fail
    from playwright.sync_api import FrameLocator, Locator, Page, Route

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
INSTALL_HINT = (
    "the browser test needs Debian's chromium (`apt-get install -y chromium`, which .ci/run "
    "does) and the test extras (`pip install -e '.[test]'`: jupyterlab, notebook, playwright)"
)
# A Jupyter server's first start on two cores takes 10-20 s; the rest is seconds.
SERVER_START_TIMEOUT = 60
#: Playwright's default wait for anything on the page.
WAIT_MS = 30_000
#: Poll page state on a timer: with requestAnimationFrame polling (Playwright's default)
#: a wait was seen to stall in the headless page although its condition had become true.
POLL_MS = 250
#: Chromium flags: no GPU, no sandbox (containers run as root), and nothing that
#: phones home. Playwright adds --headless itself (headless=True) and gives the
#: browser a fresh temporary profile (a --user-data-dir here would be refused).
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


@dataclass(frozen=True)
class FrontEnd:
    """A Jupyter front end: the module that serves it and where it opens a notebook."""

    name: str
    module: str
    notebook_route: str  # a path with "{}" for the notebook's name
    options: tuple[str, ...]  # command-line options of its own

    def __str__(self) -> str:  # the test id: test_x[lab], test_x[notebook]
        return self.name


LAB = FrontEnd(
    "lab", "jupyterlab", "/lab/tree/{}",
    # window.jupyterapp: run cells through the app's own command, not key presses.
    ("--LabApp.expose_app_in_browser=True",
     "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"))
NOTEBOOK = FrontEnd(
    "notebook", "notebook", "/notebooks/{}",
    ("--JupyterNotebookApp.expose_app_in_browser=True",))
FRONT_ENDS = (LAB, NOTEBOOK)
#: nbgrader (the ``teach`` and ``test`` extras, docs/teaching.md) enables its Jupyter server
#: extensions and its JupyterLab extension for every server of the environment it is installed
#: in. No browser test uses them, and loading them costs each server start about 0.7 s of CPU
#: (benchmarks/RESULTS.md), so the tests' servers turn them off (``nbgrader=True`` keeps them).
NBGRADER_SERVER_EXTENSIONS = tuple(f"nbgrader.server_extensions.{name}" for name in (
    "formgrader", "validate_assignment", "assignment_list", "course_list"))
NBGRADER_LAB_EXTENSION = "@jupyter/nbgrader"


def _without_nbgrader(config: Path) -> dict[str, str]:
    """Config that turns nbgrader's extensions off, written to the directory ``config``, and
    the environment that puts it first on Jupyter's config path.

    The settings are what ``jupyter server extension disable MODULE`` and ``jupyter
    labextension disable @jupyter/nbgrader`` write. The directory goes on
    ``JUPYTER_CONFIG_PATH``, which Jupyter searches before every other config directory: in a
    virtual environment the environment's own (where nbgrader enabled itself) comes before the
    user's, and a test's own ``--ServerApp.jpserver_extensions={...}`` on the command line
    replaces a dictionary given there, after which the environment's settings would apply."""
    _merge_json(config / "jupyter_server_config.json", {"ServerApp": {
        "jpserver_extensions": dict.fromkeys(NBGRADER_SERVER_EXTENSIONS, False)}})
    _merge_json(config / "labconfig" / "page_config.json",
                {"disabledExtensions": {NBGRADER_LAB_EXTENSION: True}})
    return {"JUPYTER_CONFIG_PATH": str(config)}


#: The kit's Jupyter server extension, as a regular install enables it (its
#: ``etc/jupyter/jupyter_server_config.d/mcp_nb.json``): the OAuth callback, the App channel,
#: the kernel websocket's TCP_NODELAY. An editable install (the test command's) skips that file.
KIT_SERVER_EXTENSION = "mcp_nb.auth.jupyter"


def _as_installed(config: Path, *, nbgrader: bool) -> dict[str, str]:
    """The configuration a learner's regular install gives every server: the kit's server
    extension on; and, unless ``nbgrader``, nbgrader's off (:func:`_without_nbgrader`)."""
    _merge_json(config / "jupyter_server_config.json", {"ServerApp": {
        "jpserver_extensions": {KIT_SERVER_EXTENSION: True}}})
    if not nbgrader:
        _without_nbgrader(config)
    return {"JUPYTER_CONFIG_PATH": str(config)}


def _merge_json(path: Path, settings: dict[str, Any]) -> None:
    """Add ``settings`` (two levels deep) to the JSON file ``path``, keeping what it holds."""
    merged = json.loads(path.read_text()) if path.exists() else {}
    for key, value in settings.items():
        merged.setdefault(key, {})
        for inner, setting in value.items():
            if isinstance(setting, dict):
                merged[key].setdefault(inner, {}).update(setting)
            else:
                merged[key][inner] = setting
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(merged, indent=2))


def require_browser_stack(front_end: FrontEnd = LAB) -> ModuleType:
    """Import Playwright and find chromium; skip locally, fail in CI (where it must work)."""
    missing = []
    if not CHROMIUM.exists():
        missing.append(f"{CHROMIUM} is missing")
    try:
        __import__(front_end.module)
    except ImportError:
        missing.append(f"{front_end.module} is not installed")
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


def free_port() -> int:
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


class JupyterServer:
    """A Jupyter server for ``front_end`` on 127.0.0.1, isolated from the user's own setup.

    ``root`` is the directory it serves; ``home`` holds its config, data, settings,
    runtime and IPython directories and its log.  Started on construction; call
    :meth:`stop` (or use :func:`jupyter_server`).
    """

    def __init__(self, root: Path, home: Path, front_end: FrontEnd = LAB, *,
                 options: Sequence[str] = (),
                 environment: Callable[[str], dict[str, str]] | None = None,
                 nbgrader: bool = False) -> None:
        """``options`` go to the server's command line; ``environment(base)`` gives
        variables for the server and so for its kernels (``base`` is its own URL);
        ``nbgrader`` keeps nbgrader's extensions on (a test of them would need them)."""
        self.root = root
        self.front_end = front_end
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        settings = home / "settings"
        # No "would you like news?" toast over the notebook, and no update check.
        notification = settings / "@jupyterlab" / "apputils-extension"
        notification.mkdir(parents=True, exist_ok=True)
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
            **_as_installed(home / "config-first", nbgrader=nbgrader),
            **(environment(self.base) if environment is not None else {}),
        }
        self.log_path = home / f"{front_end.name}.log"
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [
                sys.executable, "-m", front_end.module,
                "--no-browser",
                "--ServerApp.ip=127.0.0.1",
                f"--ServerApp.port={self.port}",
                "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={self.token}",
                f"--ServerApp.root_dir={root}",
                "--ServerApp.terminals_enabled=False",
                "--allow-root",  # CI containers run as root; harmless otherwise
                *front_end.options,
                *options,
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
                raise RuntimeError(f"{self.front_end.module} exited early:\n{self.log()}")
            try:
                self._request("/api/status")
                return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(
            f"{self.front_end.module} did not answer in {SERVER_START_TIMEOUT}s:\n{self.log()}")

    def url(self, path: str) -> str:
        """``path`` on this server, with the token."""
        return f"{self.base}{path}?token={self.token}"

    def notebook_url(self, name: str) -> str:
        """Where this front end opens notebook ``name`` (relative to ``root``)."""
        return self.url(self.front_end.notebook_route.format(name))

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


@contextmanager
def jupyter_server(tmp_path_factory: pytest.TempPathFactory,
                   front_end: FrontEnd = LAB, **settings: Any) -> Iterator[JupyterServer]:
    """A running server (skipped or failed without the stack); fails if anything outlives it.

    ``settings`` are :class:`JupyterServer`'s ``options`` and ``environment``.
    """
    require_browser_stack(front_end)
    server = JupyterServer(tmp_path_factory.mktemp(f"{front_end.name}-root"),
                           tmp_path_factory.mktemp(f"{front_end.name}-home"), front_end,
                           **settings)
    try:
        yield server
    finally:
        leftovers = server.stop()
    assert leftovers == [], f"processes outlived the server's shutdown (killed now): {leftovers}"


@contextmanager
def browser_page(server: JupyterServer, *, width: int = 1280, height: int = 1400,
                 also: Sequence[JupyterServer] = ()) -> Iterator[Page]:
    """A page in headless chromium that may talk to ``server`` and nothing else (nor to the
    servers in ``also``, whose pages the caller opens in the same context)."""
    sync_api = require_browser_stack(server.front_end)
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": width, "height": height})
        # Only loopback: anything else the page asks for is refused (and listed on exit).
        refused: list[str] = []

        def only_the_server(route: Route) -> None:
            if any(route.request.url.startswith(allowed.base) for allowed in (server, *also)):
                route.continue_()
            else:
                refused.append(route.request.url)
                route.abort()

        context.route("**/*", only_the_server)
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        try:
            yield page
        finally:
            context.close()
            browser.close()
            if refused:
                print("requests refused (not the server):", *refused, sep="\n  ")


@contextmanager
def screenshot_on_failure(page: Page, name: str) -> Iterator[None]:
    """A failed browser check is much easier to read as a picture of the page."""
    try:
        yield
    except Exception:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / name))
        raise


def write_notebook(path: Path, cells: Sequence[str]) -> None:
    """A notebook of code ``cells`` for the python3 kernel, unexecuted."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    notebook.metadata["kernelspec"] = {
        "name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, path)


def open_notebook(page: Page, server: JupyterServer, name: str) -> None:
    """Open notebook ``name`` and wait until it is shown with its kernel idle."""
    page.goto(server.notebook_url(name))
    # The app object exists before its plugins: wait until the notebook is the current
    # widget with its kernel idle (polled, as the page may still be navigating).
    # Both front ends' shells have a currentWidget, the notebook panel.
    page.wait_for_function(
        """(name) => {
            const panel = window.jupyterapp?.shell?.currentWidget;
            return panel?.context?.path === name
                && panel.sessionContext?.session?.kernel?.status === 'idle';
        }""",
        arg=name, polling=POLL_MS,
    )


def notebook_trusted(page: Page) -> bool:
    """Whether the open notebook's first cell is trusted (an unsigned one opens untrusted)."""
    return bool(page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.context.model.cells.get(0).trusted"))


def run_all(page: Page) -> None:
    """Run every cell of the shown notebook and wait until each is done and none failed.

    For a notebook not run yet in this page: a cell already numbered counts as done.
    """
    # The command behind the menu's "Run → Run All Cells", in both front ends.
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    wait_until_done(page)


def start_all(page: Page) -> None:
    """Start running every cell of the shown notebook, without waiting (a cell may wait for
    the test to act in the page, e.g. click a link or type into an input box)."""
    # The command's promise settles when the cells have run: not returned, not waited for.
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")


def wait_until_done(page: Page) -> None:
    """Wait until every cell of the shown notebook is done; assert none failed."""
    # Every cell done: prompts read "[n]:", none "[*]:" or "[ ]:".
    page.wait_for_function(
        """() => {
            const node = window.jupyterapp.shell.currentWidget.node;
            const prompts = [...node.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
            return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
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


def cells(page: Page) -> Locator:
    """The shown notebook's code cells, in order (not those of notebooks in hidden tabs)."""
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-CodeCell")


def cell(page: Page, index: int) -> Locator:
    """The open notebook's code cell ``index`` (from 0)."""
    return cells(page).nth(index)


def outputs(cell_locator: Locator) -> Locator:
    """A cell's output area (what the kernel displayed)."""
    return cell_locator.locator(".jp-OutputArea-output")


def run_cell(page: Page, index: int) -> None:
    """Run the shown notebook's cell ``index`` alone (JupyterLab's run-cell command), and wait
    until it has an execution count."""
    page.evaluate("""(index) => {
        const panel = window.jupyterapp.shell.currentWidget;
        panel.content.activeCellIndex = index;
        return window.jupyterapp.commands.execute('notebook:run-cell');
    }""", index)
    page.wait_for_function(
        "(i) => /\\[\\d+\\]/.test(window.jupyterapp.shell.currentWidget"
        ".content.widgets[i].promptNode.textContent)", arg=index)


def execution_count(page: Page, index: int) -> int:
    """The execution count cell ``index`` shows (its ``Out[n]`` in the kernel)."""
    prompt = page.evaluate("(i) => window.jupyterapp.shell.currentWidget.content.widgets[i]"
                           ".promptNode.textContent", index)
    found = re.search(r"\d+", prompt or "")
    assert found, f"cell {index} has no execution count: {prompt!r}"
    return int(found.group())


def app_view(cell_locator: Locator) -> FrameLocator:
    """The MCP App's View in a cell's output: inside the App frame (the sandbox proxy)."""
    return outputs(cell_locator).frame_locator("iframe.mcpnb-app-frame").frame_locator("iframe")


def live_widgets(cell_locator: Locator, kind: str = "") -> Locator:
    """The live widget views in a cell (not the static fallback saved beside them).

    ``kind`` narrows them to one ipywidgets view class: ``"html"``, ``"vbox"``, …
    """
    return cell_locator.locator(f".jupyter-widgets.widget-{kind}" if kind
                                else ".jupyter-widgets")


def run_in_kernel(page: Any, code: str) -> str:
    """Run ``code`` in the JupyterLab notebook's kernel, outside any cell; what it printed."""
    return str(page.evaluate("""async (code) => {
        const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
        const future = kernel.requestExecute({ code, store_history: false });
        let out = "";
        future.onIOPub = (msg) => {
            const { msg_type: type } = msg.header;
            if (type === "stream") out += msg.content.text;
            if (type === "error") out += `${msg.content.ename}: ${msg.content.evalue}`;
        };
        await future.done;
        return out;
    }""", code))
