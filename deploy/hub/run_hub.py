"""Start a JupyterHub that runs the mcp_nb course, on this machine, in one command.

    python deploy/hub/run_hub.py --learners 10
    python deploy/hub/run_hub.py --learners ada,grace --port 8000 --root /tmp/class

It picks free loopback ports (``--port 0``, the default, picks the public one too), makes a
folder for the hub's database and the learners' homes (``--root``, a new temporary folder by
default), installs ``configurable-http-proxy`` from npm into ``.cache/`` on first use (or takes
``--proxy``), and runs JupyterHub in this process with ``jupyterhub_config.py`` beside this
file. JupyterHub logs ``JupyterHub is now running at URL`` when the class can log in; Ctrl-C
(or SIGTERM) stops the hub, the proxy and every learner's server.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONFIG = HERE / "jupyterhub_config.py"
REPOSITORY = HERE.parent.parent
PROXY_PACKAGE = "configurable-http-proxy"
#: Pinned, so a release cannot change the class under us (tests/hub_support.py uses it too).
PROXY_VERSION = "5.3.0"
PROXY_CACHE = REPOSITORY / ".cache" / PROXY_PACKAGE


def free_port() -> int:
    """A port no one listens on now (the OS's pick; released for JupyterHub to take)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def proxy_command(cache: Path = PROXY_CACHE) -> Path:
    """``configurable-http-proxy`` installed from npm into ``cache`` (once; later runs reuse
    it). The same folder and lock as the tests' npm installs, so neither installs twice."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise SystemExit("node and npm are needed for configurable-http-proxy "
                         "(or pass --proxy PATH)")
    finished = cache / f".installed-{PROXY_PACKAGE}"
    cache.parent.mkdir(parents=True, exist_ok=True)
    with open(cache.parent / f".{cache.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one installer at a time; released if we die
        if not finished.exists() or finished.read_text(encoding="utf-8") != PROXY_VERSION:
            shutil.rmtree(cache, ignore_errors=True)
            subprocess.run([npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund",
                            "--loglevel=error", f"{PROXY_PACKAGE}@{PROXY_VERSION}"],
                           check=True, timeout=240)
            finished.write_text(PROXY_VERSION, encoding="utf-8")
    return cache / "node_modules" / ".bin" / PROXY_PACKAGE


def learner_names(value: str) -> list[str]:
    """``10`` → learner01 … learner10; ``ada,grace`` → those names."""
    if value.isdigit():
        return [f"learner{i:02d}" for i in range(1, int(value) + 1)]
    return [name.strip() for name in value.split(",") if name.strip()]


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0,
                        help="the hub's public port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--learners", default="",
                        help="a number (learner01…) or comma-separated names; empty: anyone "
                             "with the class password")
    parser.add_argument("--password", default=os.environ.get("MCP_NB_HUB_PASSWORD"),
                        help="the class password (default: a new random one, printed)")
    parser.add_argument("--root", type=Path,
                        help="folder for the hub's database and the learners' homes "
                             "(default: a new temporary folder)")
    parser.add_argument("--proxy", type=Path,
                        help="configurable-http-proxy to run (default: install it from npm)")
    parser.add_argument("--cull-timeout", type=int,
                        help="stop servers idle for this many seconds (jupyterhub-idle-culler)")
    parser.add_argument("--course", type=Path, help="notebooks folder copied to each learner "
                                                    "(default: this repository's notebooks/)")
    return parser.parse_args(argv)


def hub_environment(args: argparse.Namespace) -> dict[str, str]:
    """The ``MCP_NB_HUB_*`` settings ``jupyterhub_config.py`` reads."""
    root = args.root or Path(tempfile.mkdtemp(prefix="mcp_nb-hub-"))
    settings = {
        "MCP_NB_HUB_ROOT": str(root.resolve()),
        "MCP_NB_HUB_PORT": str(args.port or free_port()),
        "MCP_NB_HUB_API_PORT": str(free_port()),
        "MCP_NB_HUB_PROXY_API_PORT": str(free_port()),
        "MCP_NB_HUB_PROXY": str(args.proxy or shutil.which(PROXY_PACKAGE) or proxy_command()),
        "MCP_NB_HUB_LEARNERS": ",".join(learner_names(args.learners)),
        "MCP_NB_HUB_PASSWORD": args.password or secrets.token_urlsafe(12),
    }
    if args.cull_timeout:
        settings["MCP_NB_HUB_CULL_TIMEOUT"] = str(args.cull_timeout)
    if args.course:
        settings["MCP_NB_HUB_COURSE"] = str(args.course.resolve())
    return settings


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    settings = hub_environment(args)
    os.environ.update(settings)
    learners = settings["MCP_NB_HUB_LEARNERS"] or "anyone"
    print(f"mcp_nb hub: http://127.0.0.1:{settings['MCP_NB_HUB_PORT']}/ for {learners}; "
          f"class password {settings['MCP_NB_HUB_PASSWORD']}; files in "
          f"{settings['MCP_NB_HUB_ROOT']}", flush=True)
    from jupyterhub.app import main as jupyterhub

    jupyterhub(["-f", str(CONFIG)])


if __name__ == "__main__":
    main()
