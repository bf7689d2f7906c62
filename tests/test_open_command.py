"""README's "open the tour" command, run exactly as written in a fresh copy of the repository.

It installs into a new virtual environment and starts JupyterLab; the test waits
until the tour notebook is served and the kernel's environment imports mcp_nb,
then stops the server.  Only Jupyter's configuration comes from the test (a free
loopback port, no browser, a token, and allow_root because CI runs as root).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "open-command-test"


def _open_command() -> str:
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- open-command -->\n```\n(.*?)\n```\n<!-- /open-command -->", readme,
                      re.S)
    assert block, "README.md has no open-command block"
    return block.group(1).strip()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _copy_repository(target: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        source = ROOT / name
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            destination.symlink_to(os.readlink(source))
        elif source.is_file():
            shutil.copy2(source, destination)


@pytest.mark.timeout(900)
def test_the_open_command_serves_the_tour(tmp_path: Path) -> None:
    command = _open_command()
    assert command.endswith("jupyter lab notebooks/00_tour.ipynb")
    repo = tmp_path / "repo"
    _copy_repository(repo)
    config = tmp_path / "jupyter-config"
    config.mkdir()
    port = _free_port()
    (config / "jupyter_server_config.json").write_text(json.dumps({
        "ServerApp": {"ip": "127.0.0.1", "port": port, "port_retries": 0,
                      "open_browser": False, "allow_root": True},
        "IdentityProvider": {"token": TOKEN},
    }))
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(config), "BROWSER": "true",
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    env.pop("VIRTUAL_ENV", None)
    log = (tmp_path / "jupyter.log").open("w")
    process = subprocess.Popen(["bash", "-c", command], cwd=repo, env=env, stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)
    try:
        # Given a notebook, Jupyter serves the notebook's folder and opens the notebook in it.
        url = f"http://127.0.0.1:{port}/api/contents/00_tour.ipynb?token={TOKEN}"
        deadline = time.monotonic() + 600  # the install dominates
        tour = None
        while time.monotonic() < deadline and process.poll() is None:
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    tour = json.loads(response.read())
                break
            except urllib.error.HTTPError as exc:  # the server is up but says no: fail now
                raise AssertionError(f"{url}: {exc}") from None
            except OSError:  # not listening yet
                time.sleep(1)
        assert tour is not None, (tmp_path / "jupyter.log").read_text()[-3000:]
        assert tour["type"] == "notebook" and tour["content"]["cells"]
        lab = f"http://127.0.0.1:{port}/lab/tree/00_tour.ipynb?token={TOKEN}"
        with urllib.request.urlopen(lab, timeout=10) as response:
            assert response.status == 200
        python = repo / ".venv" / "bin" / "python"
        check = subprocess.run([str(python), "-c", "import mcp_nb, ipywidgets, ipykernel"],
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()
