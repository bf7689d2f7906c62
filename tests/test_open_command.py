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
import sys
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
    # Minutes of install pass before Jupyter binds: a port chosen free now may be a kernel's
    # by then (CI once read a ZMQ greeting there). Jupyter moves on to the next free one, and
    # says which in its runtime directory.
    port = _free_port()
    runtime = tmp_path / "runtime"
    (config / "jupyter_server_config.json").write_text(json.dumps({
        "ServerApp": {"ip": "127.0.0.1", "port": port, "port_retries": 50,
                      "open_browser": False, "allow_root": True},
        "IdentityProvider": {"token": TOKEN},
    }))
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(config), "BROWSER": "true",
           "JUPYTER_RUNTIME_DIR": str(runtime)}
    env.pop("VIRTUAL_ENV", None)
    log = (tmp_path / "jupyter.log").open("w")
    process = subprocess.Popen(["bash", "-c", command], cwd=repo, env=env, stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)
    try:
        # Given a notebook, Jupyter serves the notebook's folder and opens the notebook in it.
        deadline = time.monotonic() + 600  # the install dominates
        tour = None
        while time.monotonic() < deadline and process.poll() is None:
            served = sorted(runtime.glob("jpserver-*.json"))
            if not served:
                time.sleep(1)
                continue
            try:
                port = json.loads(served[0].read_text())["port"]
            except ValueError:  # being written
                time.sleep(0.2)
                continue
            url = f"http://127.0.0.1:{port}/api/contents/00_tour.ipynb?token={TOKEN}"
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
        # The kit's server extension is on (the install put its config in place): its
        # App channel answers, and says which kernel it does not know (not Jupyter's own 404).
        channel = (f"http://127.0.0.1:{port}/mcp_nb/apps/channel/"
                   f"00000000-0000-0000-0000-000000000000?token={TOKEN}")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(channel, timeout=10)
        assert refused.value.code == 404 and refused.value.reason == "no such kernel"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


def _requirements_of_the_open_command() -> list[str]:
    """What README's open command asks pip for: the project's dependencies, the extras it
    names (``".[tutorials]"``, an extra naming another through ``mcp_nb[...]`` included) and
    any package named beside it."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the suite also runs on 3.10
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

    def extra(name: str) -> list[str]:
        found = []
        for requirement in project["optional-dependencies"][name]:
            itself = re.fullmatch(r"mcp_nb\[(.*)\]", requirement)
            found += ([r for e in itself.group(1).split(",") for r in extra(e)] if itself
                      else [requirement])
        return found

    install = re.search(r"pip install (.*?) &&", _open_command())
    assert install, "the open command installs nothing with pip"
    requirements = list(project["dependencies"])
    for word in install.group(1).split():
        word = word.strip("\"'")
        if word.startswith("-") and word != "-e":
            continue
        if (this := re.fullmatch(r"\.(?:\[(.*)\])?", word)) is not None:
            requirements += [r for e in filter(None, (this.group(1) or "").split(","))
                             for r in extra(e)]
        elif word != "-e":
            requirements.append(word)
    return requirements


def _installed_with(requirements: list[str]) -> set[str]:
    """The distributions those requirements bring, dependencies of dependencies included (read
    from this environment's metadata, which has them all)."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    found: set[str] = set()
    pending = [(Requirement(r), "") for r in requirements]
    while pending:
        requirement, extra = pending.pop()
        if requirement.marker and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(requirement.name)
        wanted = {(name, e) for e in ("", *requirement.extras)}
        if all(w in found for w in wanted):
            continue
        found.update(wanted)
        try:
            requires = metadata.requires(requirement.name) or []
        except metadata.PackageNotFoundError:
            continue  # not installed here: its own dependencies cannot be read
        pending += [(Requirement(r), e) for r in requires for e in ("", *requirement.extras)]
    return {name for name, _extra in found}


def test_the_open_command_installs_everything_the_notebooks_import_or_run() -> None:
    """A chapter that imports (or runs with ``python -m``) a module README's open command does
    not install breaks for a newcomer, as chapter 12 did when pytest came only with the test
    extra. Every module the notebooks name must come from the standard library, mcp_nb, or a
    distribution the open command installs."""
    from importlib import metadata

    from packaging.utils import canonicalize_name

    installed = _installed_with(_requirements_of_the_open_command())
    providers = metadata.packages_distributions()
    modules: dict[str, set[str]] = {}
    for path in sorted((ROOT / "notebooks").rglob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            names = re.findall(r"^\s*(?:import|from)\s+(\w+)", source, re.M)
            names += re.findall(r"""-m["',\s]+(\w+)""", source)
            for name in names:
                modules.setdefault(name, set()).add(path.name)
    missing = {}
    for module, notebooks in sorted(modules.items()):
        if module in sys.stdlib_module_names or module in ("mcp_nb", "__future__"):
            continue
        distributions = {canonicalize_name(d) for d in providers.get(module, [])}
        if not distributions & installed:
            missing[module] = sorted(notebooks)
    assert not missing, (f"README's open command does not install what these notebooks use: "
                         f"{missing} (add it to the tutorials extra in pyproject.toml)")
