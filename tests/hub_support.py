"""A class on a JupyterHub (deploy/hub/), for the tests and the benchmark.

:func:`running_hub` starts ``deploy/hub/run_hub.py`` (JupyterHub from PyPI,
configurable-http-proxy from npm, one Jupyter server per learner under ``/user/NAME/``) on
loopback, and yields a :class:`Hub`: its URL, the class password, the learners' names and a
token for the hub's admin API. On exit it stops the hub, which stops every learner's server
and the proxy, and fails if any process the hub or a learner started is still there::

    with running_hub(tmp_path, 10) as hub:
        learner = Learner(hub, hub.learners[0])   # a person's browser, as HTTP
        async with learner:
            await learner.log_in()                # the hub's login form
            await learner.start_server()          # spawned, and opened through the proxy
            ...                                   # learner.base: http://…/user/learner01/

:func:`run_learner` is what one learner does in class: chapters 01, 05, 06, 07 and 11 in
kernels of their own server, through the proxy, the OAuth redirect of chapter 11 coming back
to ``/user/NAME/``. Processes are found by the ``MCP_NB_HUB_MARKER`` variable the hub gives each
learner's server, and by the learner's ``$HOME``, which every process below it inherits (the
kit's stdio servers too, whose environment is otherwise minimal).
"""

from __future__ import annotations

import contextlib
import html
import os
import re
import secrets
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
from http_support import ServerProcess, install_npm_package
from remote_kernel import Cell, CellRun, RemoteKernel, read_notebook, run_cells

ROOT = Path(__file__).resolve().parent.parent
RUN_HUB = ROOT / "deploy" / "hub" / "run_hub.py"
sys.path.insert(0, str(RUN_HUB.parent))
from run_hub import PROXY_CACHE, PROXY_PACKAGE, PROXY_VERSION, learner_names  # noqa: E402

sys.path.remove(str(RUN_HUB.parent))

LAUNCHED = re.compile(r"mcp_nb hub: (http://\S+)")
HUB_READY = re.compile(r"JupyterHub is now running at (http://\S+)")
#: A hub's first start on a loaded two-core machine (it creates its database, starts the proxy).
HUB_START_TIMEOUT = 120.0
#: Ten servers starting at once on two shared cores.
SPAWN_TIMEOUT = 240.0
#: The chapters a class runs (the English edition), in this order.
CHAPTERS = ("01_initialization", "05_timeouts_and_progress", "06_cancellation",
            "07_shutdown", "11_authorization")
#: What each chapter must show when it worked (beyond running without an error).
CHAPTER_SHOWS = {
    "01_initialization": ("'2025-11-25'", "✓ handshake completed by hand, on protocol 2025-06-18"),
    "05_timeouts_and_progress": ("✓ progress kept a slow request alive",),
    "06_cancellation": ("✓ request 5 cancelled with your reason",),
    "07_shutdown": ("✓ predicted right",),
    "11_authorization": ("'authorized'", "✓ refused by"),
}
#: Run after chapter 11 in its kernel: a new protected lab server, connected to with the
#: kit's default callback, which on a hub is the learner's own server (MCP_NB_JUPYTER_URL, set
#: by deploy/hub/jupyterhub_config.py); then a stdio session of the learner's own, left
#: running with the kernel for the isolation and stop checks.
HUB_CELLS = (
    'hub_lab = start_lab("--auth")\n'
    "hub_lab_url = hub_lab.url\n"
    "hub = %mcp connect hub {hub_lab_url} --auth\n"
    'print(hub.call_tool("echo", {"text": "authorized through the hub"}).text)\n'
    "facts = %mcp auth hub\n"
    "print(repr(facts))",
    "own = %mcp connect own_{name}\n"
    "own.call_tool('add', {'a': 1, 'b': 2}).text",
)
AUTHORIZE_LINK = re.compile(r'class="mcpnb-authorize" href="([^"]+)"')


def _environ(pid: int) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:  # gone meanwhile, or not ours to read
        return []


def _children() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    return children


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(
            errors="replace").strip()
    except OSError:
        return "(gone)"


def processes_marked(entries: Sequence[bytes], prefix: bytes = b"") -> set[int]:
    """Live processes whose environment holds one of ``entries`` (or an entry starting with
    ``prefix``), and every process below them."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            environ = _environ(int(entry.name))
            if any(e in entries or (prefix and e.startswith(prefix)) for e in environ):
                found.add(int(entry.name))
    children, stack = _children(), list(found)
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return {pid for pid in found if _alive(pid)}


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a message's JSON content (a widget's HTML value among them)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def kind_of(pid: int) -> str:
    """What a learner's process is: their server, a kernel, an HTTP or a stdio lab server."""
    line = command_line(pid)
    if "jupyterhub.singleuser" in line:
        return "server"
    if "ipykernel_launcher" in line:
        return "kernel"
    if "mcp_nb.lab" in line:
        return "http lab" if "--http" in line else "stdio lab"
    return "other"


def memory_of(pids: set[int]) -> tuple[int, int]:
    """Resident and proportional set sizes (bytes) summed over ``pids`` (smaps_rollup)."""
    rss = pss = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                name, _, value = line.partition(":")
                if name in ("Rss", "Pss"):
                    kib = int(value.split()[0]) * 1024
                    rss, pss = (rss + kib, pss) if name == "Rss" else (rss, pss + kib)
    return rss, pss


def cpu_seconds(root: int) -> float:
    """CPU time (user + system) of ``root`` and every live process below it, with what their
    finished children used (counted by the parent that reaped them)."""
    ticks = os.sysconf("SC_CLK_TCK")
    children, stack, total = _children(), [root], 0
    while stack:
        pid = stack.pop()
        with contextlib.suppress(OSError, IndexError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            # utime, stime, cutime, cstime: fields 14-17 of stat, 12-15 after the name.
            total += sum(int(value) for value in fields[11:15])
        stack.extend(children.get(pid, []))
    return total / ticks


def wait_until_gone(pids: set[int], grace: float = 20.0) -> dict[int, str]:
    """Wait up to ``grace`` s for ``pids`` to end; kill and return (pid → command) the rest."""
    deadline = time.monotonic() + grace
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = {pid: command_line(pid) for pid in pids if _alive(pid)}
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return left


@dataclass
class Hub:
    """A running hub: where it is, who may log in, and how to find what each learner runs."""

    url: str
    password: str
    learners: list[str]
    admin_token: str
    root: Path
    marker: str
    process: ServerProcess

    def base(self, name: str) -> str:
        """The learner's server, through the proxy."""
        return f"{self.url}user/{name}/"

    def home(self, name: str) -> Path:
        return self.root / "homes" / name

    def processes(self, name: str) -> set[int]:
        """Every live process the learner's server started, the server itself included."""
        return processes_marked([f"MCP_NB_HUB_MARKER={self.marker}-{name}".encode(),
                                 f"HOME={self.home(name)}".encode()])

    def admin(self) -> httpx.AsyncClient:
        """An HTTP client for the hub's REST API with the admin service's token."""
        return httpx.AsyncClient(base_url=self.url + "hub/api/", trust_env=False, timeout=60,
                                 headers={"Authorization": f"token {self.admin_token}"})

    async def server_of(self, name: str) -> dict[str, Any] | None:
        """The hub's record of the learner's server (None: not running)."""
        async with self.admin() as api:
            user = (await api.get(f"users/{name}")).raise_for_status().json()
        return user["servers"].get("")  # type: ignore[no-any-return]

    async def stop_server(self, name: str) -> None:
        """Stop the learner's server through the hub's API and wait until the hub says so."""
        async with self.admin() as api:
            answer = await api.delete(f"users/{name}/server")
            assert answer.status_code in (202, 204), answer.text
        await self.wait_for_no_server([name])

    async def wait_for_no_server(self, names: Sequence[str], timeout: float = 120.0) -> None:
        with anyio.fail_after(timeout):
            for name in names:
                while await self.server_of(name) is not None:
                    await anyio.sleep(0.5)

    @contextlib.contextmanager
    def culler(self, timeout: int = 1) -> Iterator[ServerProcess]:
        """jupyterhub-idle-culler (PyPI) against this hub, culling servers idle ``timeout`` s,
        as the hub's config runs it with ``--cull-timeout``; stopped on exit."""
        env = {**os.environ, "JUPYTERHUB_API_TOKEN": self.admin_token}
        culler = ServerProcess(
            [sys.executable, "-u", "-c", "print('culler started', flush=True);"
             "from jupyterhub_idle_culler import main; main()",
             f"--url={self.url}hub/api", f"--timeout={timeout}", "--cull-every=2"],
            re.compile(r"(culler started)"), env=env)
        try:
            yield culler
        finally:
            culler.stop()

    def shut_down(self) -> dict[int, str]:
        """Stop the hub (it stops every learner's server and the proxy); return, killed, any
        process of this hub still there after it."""
        pid = self.process.process.pid
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.process.wait(timeout=120)
        with contextlib.suppress(AssertionError):
            self.process.stop()  # its group, if anything of it is left (reported below)
        return wait_until_gone(processes_marked(
            [], prefix=f"MCP_NB_HUB_MARKER={self.marker}".encode()))


@contextlib.contextmanager
def running_hub(folder: Path, learners: int | Sequence[str], *,
                cull_timeout: int | None = None) -> Iterator[Hub]:
    """A hub for ``learners`` (a number, or names) with everything under ``folder``; see the
    module's docstring. Fails on exit if a process of it outlived the hub."""
    proxy = install_npm_package(PROXY_PACKAGE, PROXY_VERSION, PROXY_CACHE)
    names = learner_names(str(learners) if isinstance(learners, int) else ",".join(learners))
    password, token = secrets.token_urlsafe(12), secrets.token_hex(24)
    marker = f"hub{os.getpid()}-{secrets.token_hex(4)}"
    env = {**os.environ, "MCP_NB_HUB_PASSWORD": password, "MCP_NB_HUB_ADMIN_TOKEN": token,
           "MCP_NB_HUB_MARKER": marker, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1",
           # This checkout's kit, in the hub, the learners' servers and their kernels (the
           # kit's stdio servers get a minimal environment: they import the installed kit).
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                        os.environ.get("PYTHONPATH")]))}
    argv = [sys.executable, str(RUN_HUB), "--learners", ",".join(names), "--root", str(folder),
            "--proxy", str(proxy.parent / ".bin" / PROXY_PACKAGE)]
    if cull_timeout is not None:
        argv += ["--cull-timeout", str(cull_timeout)]
    process = ServerProcess(argv, LAUNCHED, env=env)
    hub = Hub(process.ready_text, password, names, token, folder.resolve(), marker, process)
    try:
        process.wait_for(HUB_READY, HUB_START_TIMEOUT)
        yield hub
    finally:
        leftovers = hub.shut_down()
    assert leftovers == {}, f"processes outlived the hub (killed now): {leftovers}"


class Learner:
    """One person at a browser, as HTTP: the hub's cookies, then a token for their server."""

    def __init__(self, hub: Hub, name: str) -> None:
        self.hub, self.name = hub, name
        self.base = hub.base(name)
        self.http = httpx.AsyncClient(base_url=hub.url, trust_env=False, timeout=120)
        self.token = ""

    async def __aenter__(self) -> Learner:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.http.aclose()

    @property
    def headers(self) -> dict[str, str]:
        """What authenticates a request to the learner's own server."""
        return {"Authorization": f"token {self.token}"}

    def _xsrf(self) -> dict[str, str]:
        return {"X-XSRFToken": self.http.cookies.get("_xsrf", path="/hub/") or ""}

    async def log_in(self, password: str | None = None) -> httpx.Response:
        """The hub's login form, as a browser fills it in; the answer to the POST."""
        form = (await self.http.get("hub/login")).raise_for_status()
        xsrf = re.search(r'name="_xsrf" value="([^"]+)"', form.text)
        assert xsrf is not None, "the login form carries no _xsrf field"
        return await self.http.post("hub/login", data={
            "username": self.name, "password": self.hub.password if password is None
            else password, "_xsrf": html.unescape(xsrf.group(1))})

    async def start_server(self) -> None:
        """Ask the hub for the learner's server, wait until it is ready, open it in the
        "browser" (the OAuth hand-shake between the server and the hub sets its cookie), and
        make an API token for the REST and websocket traffic to it."""
        answer = await self.http.post(f"hub/api/users/{self.name}/server", headers=self._xsrf())
        assert answer.status_code in (201, 202), f"{answer.status_code}: {answer.text}"
        with anyio.fail_after(SPAWN_TIMEOUT):
            while True:
                user = (await self.http.get(f"hub/api/users/{self.name}")).raise_for_status()
                if user.json()["servers"].get("", {}).get("ready"):
                    break
                await anyio.sleep(0.5)
        page = await self.http.get(f"user/{self.name}/lab", follow_redirects=True)
        assert page.status_code == 200 and str(page.url).startswith(self.base), (
            page.status_code, str(page.url))
        made = await self.http.post(f"hub/api/users/{self.name}/tokens", headers=self._xsrf(),
                                    json={"note": "mcp_nb class test", "expires_in": 7200})
        assert made.status_code == 201, made.text
        self.token = made.json()["token"]

    def kernel(self) -> RemoteKernel:
        return RemoteKernel(self.http, self.base, self.headers)

    async def follow_authorization(self, authorization_url: str) -> tuple[str, int]:
        """The person clicks *Authorize*: the authorization server redirects (the lab's
        approves at once) to the learner's server, which the browser then loads with its
        cookies. Returns where the redirect went and how the server answered."""
        approval = await self.http.get(authorization_url)
        location = approval.headers.get("location", "")
        landed = await self.http.get(location) if location else approval
        return location, landed.status_code


@dataclass
class LearnerRun:
    """What one learner did: each chapter's cells and time, the OAuth redirects, memory."""

    name: str
    chapters: dict[str, list[CellRun]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    redirects: list[tuple[str, int]] = field(default_factory=list)
    #: The kernel left running (chapter 11's, with its lab servers), for later checks.
    kernel_id: str = ""
    token: str = ""
    cookies: httpx.Cookies = field(default_factory=httpx.Cookies)
    #: From the login form's POST to a server ready and opened through the proxy.
    start_seconds: float = 0.0
    rss: int = 0
    pss: int = 0
    #: PSS by kind of process (:func:`kind_of`), bytes.
    pss_by_kind: dict[str, int] = field(default_factory=dict)
    processes: int = 0
    error: str = ""

    def failures(self) -> list[str]:
        """Each chapter that failed, with why: a cell's error, or a missing sign of success."""
        found = [f"{self.name}: {self.error}"] if self.error else []
        for chapter, runs in self.chapters.items():
            errors = [f"{run.error} in {run.source[:80]!r}" for run in runs if run.failed]
            text = "\n".join(run.text() for run in runs)
            missing = [sign for sign in CHAPTER_SHOWS.get(chapter, ()) if sign not in text]
            if errors or missing:
                # The chapter's last words, so a miss says what was shown instead.
                found.append(f"{self.name} {chapter}: errors {errors}, missing {missing}, "
                             f"shown last {text[-400:]!r}")
        return found


async def run_chapter(learner: Learner, chapter: str, *, extra: Sequence[str] = (),
                      keep: bool = False, redirects: list[tuple[str, int]] | None = None,
                      ) -> tuple[list[CellRun], str]:
    """Open ``notebooks/CHAPTER.ipynb`` in a kernel of the learner's server and run every code
    cell, then ``extra``; a person follows any *Authorize* link a cell shows (where it went
    and how it landed go to ``redirects``). Returns the runs and the kernel's id (its kernel
    is ended unless ``keep``)."""
    path = f"notebooks/{chapter}.ipynb"
    cells = await read_notebook(learner.http, learner.base, learner.headers, path)
    kernel = learner.kernel()
    followed = [] if redirects is None else redirects

    async def person(url: str) -> None:
        followed.append(await learner.follow_authorization(url))

    async with anyio.create_task_group() as group:
        def react(message: dict[str, Any]) -> None:
            for link in AUTHORIZE_LINK.findall("\n".join(_strings(message.get("content")))):
                group.start_soon(person, html.unescape(link))

        await kernel.start(path)
        try:
            runs = await run_cells(kernel, [*cells, *map(Cell, extra)], on_message=react)
        finally:
            await kernel.close(keep=keep)
    return runs, kernel.kernel_id


async def run_learner(hub: Hub, name: str, chapters: Sequence[str] = CHAPTERS) -> LearnerRun:
    """One learner's class: log in, get a server, run ``chapters`` (the last one's kernel
    stays, with :data:`HUB_CELLS` run in it), and measure the memory of all it runs."""
    run = LearnerRun(name)
    async with Learner(hub, name) as learner:
        try:
            answer = await learner.log_in()
            assert answer.status_code == 302, f"login answered {answer.status_code}"
            started = time.monotonic()
            await learner.start_server()
            run.start_seconds = time.monotonic() - started
            run.token = learner.token
            run.cookies = httpx.Cookies(learner.http.cookies)
            for chapter in chapters:
                last = chapter == chapters[-1]
                extra = [cell.replace("{name}", name) for cell in HUB_CELLS] if last else []
                started = time.monotonic()
                run.chapters[chapter], kernel_id = await run_chapter(
                    learner, chapter, extra=extra, keep=last, redirects=run.redirects)
                run.seconds[chapter] = time.monotonic() - started
                if last:
                    run.kernel_id = kernel_id
            pids = hub.processes(name)
            run.processes = len(pids)
            run.rss, run.pss = memory_of(pids)
            for pid in pids:
                kind = kind_of(pid)
                run.pss_by_kind[kind] = run.pss_by_kind.get(kind, 0) + memory_of({pid})[1]
        except Exception:
            run.error = traceback.format_exc(limit=4)
    return run


async def run_class(hub: Hub, names: Sequence[str], *, at_once: int,
                    chapters: Sequence[str] = CHAPTERS) -> dict[str, LearnerRun]:
    """Every learner of ``names`` runs the class; at most ``at_once`` of them at a time (the
    rest wait their turn, as a class arriving over a few minutes does)."""
    limit = anyio.Semaphore(at_once)
    runs: dict[str, LearnerRun] = {}

    async def one(name: str) -> None:
        async with limit:
            runs[name] = await run_learner(hub, name, chapters)

    async with anyio.create_task_group() as group:
        for name in names:
            group.start_soon(one, name)
    return runs
