"""JupyterHub configuration for running the mcp_nb course on one machine (deploy/hub/README.md).

Every learner gets a Jupyter server of their own at ``/user/NAME/`` behind the hub's proxy,
with the kit's server extension (the OAuth "jupyter" callback route, the MCP App channel and
the kernel websocket)
and a copy of the course notebooks in a home of their own. ``deploy/hub/run_hub.py`` starts
it in one command; it passes the settings below as ``MCP_NB_HUB_*`` environment variables, so
this file can also be read by ``jupyterhub -f`` directly.

The spawner and the authenticator are the ones a single machine can use without system
accounts: ``SimpleLocalProcessSpawner`` runs every server as the hub's own user (no isolation
from the operating system's side: it is for a workshop machine and for tests; a school's hub
uses its own spawner, e.g. KubeSpawner with zero-to-jupyterhub) and
``SharedPasswordAuthenticator`` lets the listed learners in with one class password (the
successor of ``DummyAuthenticator``'s deprecated password).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

from jupyterhub.spawner import SimpleLocalProcessSpawner

c: Any = get_config()  # type: ignore[name-defined]  # noqa: F821  (JupyterHub provides it)

REPOSITORY = Path(__file__).resolve().parent.parent.parent
#: Everything the hub writes (its database, cookie secret, the learners' homes) lives here.
ROOT = Path(os.environ.get("MCP_NB_HUB_ROOT", REPOSITORY / ".cache" / "hub")).resolve()
HOMES = ROOT / "homes"
#: The course copied into each learner's home on their first start (both editions).
COURSE = Path(os.environ.get("MCP_NB_HUB_COURSE", REPOSITORY / "notebooks")).resolve()
PORT = int(os.environ.get("MCP_NB_HUB_PORT", "8000"))
PUBLIC_URL = f"http://127.0.0.1:{PORT}/"
LEARNERS = [name for name in os.environ.get("MCP_NB_HUB_LEARNERS", "").split(",") if name]

ROOT.mkdir(parents=True, exist_ok=True)
HOMES.mkdir(exist_ok=True)

# -- where it listens: loopback only -------------------------------------------------------
c.JupyterHub.bind_url = PUBLIC_URL
# The public URL makes each server's own public URL known to it ($JUPYTERHUB_PUBLIC_URL):
# the OAuth redirect of chapter 11 has to come back to the learner's server through here.
c.JupyterHub.public_url = PUBLIC_URL
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(os.environ.get("MCP_NB_HUB_API_PORT", "8081"))
c.ConfigurableHTTPProxy.api_url = (
    f"http://127.0.0.1:{os.environ.get('MCP_NB_HUB_PROXY_API_PORT', '8001')}")
c.ConfigurableHTTPProxy.command = [os.environ.get("MCP_NB_HUB_PROXY",
                                                  "configurable-http-proxy")]
c.ConfigurableHTTPProxy.pid_file = str(ROOT / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{ROOT / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(ROOT / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(ROOT / "jupyterhub.pid")
# Stopping the hub stops every learner's server and the proxy it started: nothing outlives it.
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True

# -- who may log in ------------------------------------------------------------------------
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = os.environ.get(
    "MCP_NB_HUB_PASSWORD", "learn-mcp-together")
if LEARNERS:
    c.Authenticator.allowed_users = set(LEARNERS)
else:  # a workshop: whoever knows the class password picks a name
    c.Authenticator.allow_all = True

# -- each learner's server ------------------------------------------------------------------
class CourseSpawner(SimpleLocalProcessSpawner):
    """SimpleLocalProcessSpawner, stopping a server with SIGTERM rather than SIGINT first.

    On SIGINT a Jupyter server started by ``jupyterhub.singleuser`` (JupyterHub 6, Jupyter
    Server 2) exits without shutting its kernels down: each kernel then sees its parent gone
    and ends itself with ``os._exit``, so its ``atexit`` handlers never run, and a server a
    notebook started with ``subprocess.Popen`` (chapter 11's lab servers) is left running
    after a stop or a cull (tests/test_hub_class.py found it). On SIGTERM the Jupyter server
    shuts each kernel down properly first. ``now=True`` is the spawner's own way to skip
    SIGINT: SIGTERM, then SIGKILL after ``term_timeout``.
    """

    async def stop(self, now: bool = False) -> None:
        await super().stop(now=True)


c.JupyterHub.spawner_class = CourseSpawner
c.CourseSpawner.home_dir_template = str(HOMES / "{username}")
# Time for the server to shut its kernels down (each ends its MCP servers) before SIGKILL.
c.CourseSpawner.term_timeout = 20
c.Spawner.ip = "127.0.0.1"
# Each learner's server serves their home (the spawner fills in {username}).
c.Spawner.notebook_dir = str(HOMES / "{username}")
c.Spawner.default_url = "/lab/tree/notebooks/00_tour.ipynb"
# The hub's own Python, so learners' kernels import the same mcp_nb (and $PYTHONPATH, which
# the spawner keeps, lets a source checkout shadow the installed kit).
c.Spawner.cmd = [sys.executable, "-m", "jupyterhub.singleuser"]
#: The extensions a learner's server loads, named here rather than taken from what happens to
#: be installed: the kit's (mcp_nb.auth.jupyter brings both of its points, the OAuth callback
#: and App channel routes, and the TCP_NODELAY kernel websocket) and JupyterLab with
#: Notebook 7. nbgrader's server extensions are off: grading is the teacher's side
#: (docs/teaching.md), and each would cost every learner's server an import at start.
EXTENSIONS = {
    "mcp_nb.auth.jupyter": True,
    "jupyterlab": True,
    "notebook": True,
    "nbgrader.server_extensions.formgrader": False,
    "nbgrader.server_extensions.validate_assignment": False,
    "nbgrader.server_extensions.assignment_list": False,
    "nbgrader.server_extensions.course_list": False,
}
c.Spawner.args = [
    f"--ServerApp.jpserver_extensions={EXTENSIONS!r}",
    # A hub on a workshop machine or in a container often runs as root; harmless otherwise.
    "--ServerApp.allow_root=True",
]
# Many servers start at once on a small machine: give them time.
c.Spawner.start_timeout = int(os.environ.get("MCP_NB_HUB_START_TIMEOUT", "180"))
c.Spawner.http_timeout = c.Spawner.start_timeout
c.Spawner.environment = {
    # The kit's "auto" OAuth callback then lands on this learner's server, through the proxy.
    "MCP_NB_JUPYTER_URL": lambda spawner: spawner.public_url,
    # Report activity to the hub often enough for idle culling to see a working learner.
    "JUPYTERHUB_ACTIVITY_INTERVAL": os.environ.get("MCP_NB_HUB_ACTIVITY_INTERVAL", "60"),
}
if marker := os.environ.get("MCP_NB_HUB_MARKER"):
    # Tests find every process a learner's server started by this variable (and by $HOME).
    c.Spawner.environment["MCP_NB_HUB_MARKER"] = lambda spawner: f"{marker}-{spawner.user.name}"


def copy_the_course(spawner: Any) -> None:
    """The course notebooks, copied into the learner's home on the first start only (a
    learner's own work survives a restart of their server)."""
    home = Path(spawner.home_dir)
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "notebooks").exists():
        shutil.copytree(COURSE, home / "notebooks", ignore=shutil.ignore_patterns(
            "scratch_*", ".ipynb_checkpoints", "__pycache__"))


c.Spawner.pre_spawn_hook = copy_the_course

# -- services -------------------------------------------------------------------------------
services: list[dict[str, Any]] = []
roles: list[dict[str, Any]] = []
if token := os.environ.get("MCP_NB_HUB_ADMIN_TOKEN"):
    # A teacher's script (and the tests) start, stop and inspect servers with this token.
    services.append({"name": "class-admin", "api_token": token})
    roles.append({"name": "class-admin", "services": ["class-admin"],
                  "scopes": ["admin:users", "admin:servers", "admin:server_state"]})
if cull_timeout := os.environ.get("MCP_NB_HUB_CULL_TIMEOUT"):
    # jupyterhub-idle-culler stops the servers idle for longer than this (seconds).
    services.append({"name": "idle-culler", "command": [
        sys.executable, "-m", "jupyterhub_idle_culler", f"--timeout={cull_timeout}",
        f"--cull-every={max(1, min(int(cull_timeout) // 2, 300))}"]})
    roles.append({"name": "idle-culler", "services": ["idle-culler"],
                  "scopes": ["list:users", "read:users:activity", "read:servers",
                             "delete:servers"]})
c.JupyterHub.services = services
c.JupyterHub.load_roles = roles
c.JupyterHub.last_activity_interval = int(os.environ.get("MCP_NB_HUB_ACTIVITY_INTERVAL", "60"))
