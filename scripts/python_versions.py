"""Run the core, kernel and loop tests under every CPython >= 3.10 on this machine.

A user's Python is seldom the one CI's ``.venv`` has, and the notebook loop leans
on CPython's private corners (``asyncio._set_running_loop``, the ``_signal`` C
module, ``BaseEventLoop._run_once`` in the tests), which can change in any minor
release.  So each minor version found gets a test run of its own::

    python scripts/python_versions.py                  # every version found
    python scripts/python_versions.py --except-running # all but this interpreter's X.Y
    python scripts/python_versions.py --list           # only say what was found
    python scripts/python_versions.py ~/bin/python3.14 # add interpreters found elsewhere

Interpreters are looked for in pyenv's versions folder (``$PYENV_ROOT``, else
``~/.pyenv``) and as ``python3`` / ``python3.X`` on ``PATH``; one per minor version
is kept (the newest patch release).  Each gets a virtual environment under
``.cache/python-versions/X.Y/`` with the project installed editable and only the
``compat`` extra (pytest and its plugins), built once and reused while the
interpreter, the checkout's place and ``pyproject.toml`` stay the same
(``--fresh`` rebuilds).  Its output goes to ``.cache/python-versions/X.Y.log``.

It prints a table (version, result, seconds) and exits 1 if any run failed or
none ran.  ``tests/test_python_versions.py`` runs it from the suite, one test
per version.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "python-versions"
#: ``requires-python`` in pyproject.toml.
MINIMUM = (3, 10)

#: The tests each version runs, and why each is here.
TESTS = (
    # The sans-I/O core: pydantic models, typing, the state machine (and its doctests).
    "mcp_nb/protocol",
    "tests/test_envelope.py",
    "tests/test_lifecycle.py",
    "tests/test_negotiation.py",
    "tests/test_stateless_core.py",
    # MCP Apps' host core (sans-I/O, driven with JSON) and the lab's App behind it.
    "mcp_nb/apps",
    "tests/test_apps.py",
    # Subprocesses, pipes, signals and anyio: the stdio transport and the session over it,
    # including the robustness tests (a hung request interrupted, oversized frames).
    "tests/test_stdio_framing.py",
    "tests/test_stdio_transport.py",
    "tests/test_session_lifecycle.py",
    "tests/test_session_robustness.py",
    # A real ipykernel of that version: the magics, interrupts as real SIGINTs.
    "tests/test_kernel.py",
    "tests/test_magics.py",
    "tests/test_magics_connect.py",
    "tests/test_magics_http.py",
    # The loop hand-off and its interrupt handling: the private asyncio and _signal calls.
    "mcp_nb/notebook/loop.py",
    "tests/test_background_loop.py",
)

#: What an interpreter is asked about itself (run by it, so it must parse on old versions).
_PROBE = (
    "import ensurepip, json, platform, sys, sysconfig; print(json.dumps({"
    "'implementation': sys.implementation.name, 'version': list(sys.version_info[:3]), "
    "'release': platform.python_version(), 'executable': sys.executable, "
    "'free_threaded': bool(sysconfig.get_config_var('Py_GIL_DISABLED'))}))"
)
_VERSIONED_NAME = re.compile(r"python3(\.\d+)?")
#: Upper bounds, so a wedged install or run ends with a failure rather than a hang.
_INSTALL_TIMEOUT = 900
_RUN_TIMEOUT = 1200
_TAIL_LINES = 60

# setuptools' editable build writes mcp_nb.egg-info into the checkout itself, so two
# installs at once would write the same files: the installs take turns (the test runs
# still overlap them).
_install_turn = threading.Lock()


@dataclass(frozen=True)
class Interpreter:
    """One CPython found on this machine."""

    executable: Path
    version: tuple[int, int, int]
    release: str  # as the interpreter spells it: 3.13.0, 3.14.0a1

    @property
    def minor(self) -> str:
        return f"{self.version[0]}.{self.version[1]}"

    def __str__(self) -> str:
        return self.release


@dataclass
class Result:
    """How one version's run went."""

    interpreter: Interpreter
    passed: bool
    setup_seconds: float
    test_seconds: float
    summary: str  # pytest's closing line, or what failed before the tests ran
    log: Path

    @property
    def seconds(self) -> float:
        return self.setup_seconds + self.test_seconds

    def tail(self, lines: int = _TAIL_LINES) -> str:
        """The end of the run's log: where pytest puts its failures and summary."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def candidates() -> list[Path]:
    """Every executable that may be a CPython 3: pyenv's versions, then PATH's entries."""
    pyenv_root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    found = sorted(pyenv_root.glob("versions/*/bin/python3"))
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        folder_path = Path(folder or ".")
        if folder_path == pyenv_root / "shims":
            continue  # they run the versions above (slowly: each is a shell script)
        with contextlib.suppress(OSError):
            found.extend(sorted(path for path in folder_path.iterdir()
                                if _wanted_name(path.name) and os.access(path, os.X_OK)))
    return found


def _wanted_name(name: str) -> bool:
    """``python3``, or ``python3.X`` with X new enough (older ones are not even asked)."""
    match = _VERSIONED_NAME.fullmatch(name)
    return match is not None and (match[1] is None or int(match[1][1:]) >= MINIMUM[1])


def probe(executable: Path) -> Interpreter | None:
    """The CPython >= 3.10 behind ``executable``, or None (another implementation, too old,
    free-threaded, no ``ensurepip`` to make a venv with, or not runnable at all: a pyenv
    shim for a version not selected only prints an error)."""
    try:
        done = subprocess.run([str(executable), "-c", _PROBE], capture_output=True,
                              text=True, timeout=30, stdin=subprocess.DEVNULL)
        facts = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None
    # Free-threaded builds are left out: the project's dependencies (pydantic-core, pyzmq)
    # are not all built for them yet, so a failure there would say nothing about mcp_nb.
    if not facts or facts["implementation"] != "cpython" or facts["free_threaded"]:
        return None
    version = tuple(facts["version"])
    if version[:2] < MINIMUM:
        return None
    return Interpreter(Path(facts["executable"]).resolve(), version, facts["release"])


def find_interpreters(extra: Iterable[Path] = (), *,
                      except_running: bool = False) -> list[Interpreter]:
    """One interpreter per minor version (the newest patch release), oldest first.

    ``extra`` executables are looked at first; with ``except_running`` the minor
    version running this code is left out (whoever runs this covers it).
    """
    paths: dict[Path, Path] = {}  # real path -> the first name it was found by
    for path in [*extra, *candidates()]:
        paths.setdefault(path.resolve(), path)
    # Asked all at once: pyenv's shims are shell scripts that take a while to answer.
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        probed = list(pool.map(probe, paths.values()))
    newest: dict[str, Interpreter] = {}
    for found in probed:
        if found is None:
            continue
        kept = newest.get(found.minor)
        if kept is None or found.version > kept.version:
            newest[found.minor] = found
    if except_running:
        newest.pop(f"{sys.version_info[0]}.{sys.version_info[1]}", None)
    return sorted(newest.values(), key=lambda found: found.version)


def where_looked() -> str:
    """Where :func:`candidates` looks, for a message saying that nothing was found."""
    pyenv_root = os.environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
    return f"{pyenv_root}/versions/*/bin/python3, and python3 / python3.X on PATH"


def _environment(venv: Path) -> dict[str, str]:
    """The environment of a version's run: this one, pointed at the version's venv."""
    env = {name: value for name, value in os.environ.items()
           if name not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTEST_ADDOPTS",
                           "PYTEST_CURRENT_TEST")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    # The kernel the kernel tests start must be this venv's python3, not a user-level
    # kernelspec's (tests/test_kernel.py checks the kernel's version too).
    env["JUPYTER_PREFER_ENV_PATH"] = "1"
    return env


def _recipe(interpreter: Interpreter) -> str:
    """What a venv was built from: a change in any of it means building it again."""
    facts = [str(interpreter.executable), interpreter.release, str(ROOT),
             hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()]
    return "\n".join(facts) + "\n"


def _step(command: Sequence[str | Path], log: TextIO, env: dict[str, str], timeout: float) -> int:
    log.write(f"$ {' '.join(map(str, command))}\n")
    log.flush()
    try:
        return subprocess.run([str(part) for part in command], cwd=ROOT, env=env,
                              stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                              timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        log.write(f"\n(stopped after {timeout:g} s)\n")
        return -1


def _build(interpreter: Interpreter, venv: Path, log: TextIO, env: dict[str, str],
           fresh: bool) -> tuple[str | None, float]:
    """Make the version's venv unless the one there was built the same way.

    Returns what failed (None when the venv is ready) and the seconds spent waiting
    for the turn to install, which are no work of this version's.
    """
    stamp = venv / "mcp_nb-recipe"
    recipe = _recipe(interpreter)
    if not fresh and stamp.exists() and stamp.read_text() == recipe \
            and (venv / "bin" / "python").exists():
        log.write(f"(reusing {venv}: built from the same interpreter and pyproject.toml)\n")
        return None, 0.0
    shutil.rmtree(venv, ignore_errors=True)
    if _step([interpreter.executable, "-m", "venv", venv], log, env, 300):
        return "could not make a venv", 0.0
    asked = time.monotonic()
    with _install_turn:
        waited = time.monotonic() - asked
        # pip's own cache (~/.cache/pip) is shared by every version and run.
        if _step([venv / "bin" / "python", "-m", "pip", "install", "-q", "-e", ".[compat]"],
                 log, env, _INSTALL_TIMEOUT):
            return "pip install -e .[compat] failed", waited
    stamp.write_text(recipe)
    return None, waited


def run_version(interpreter: Interpreter, *, fresh: bool = False) -> Result:
    """Build (or reuse) the version's venv and run :data:`TESTS` in it."""
    CACHE.mkdir(parents=True, exist_ok=True)
    venv = CACHE / interpreter.minor
    log_path = CACHE / f"{interpreter.minor}.log"
    env = _environment(venv)
    with log_path.open("w") as log:
        log.write(f"CPython {interpreter.release} ({interpreter.executable})\n")
        started = time.monotonic()
        failed, waited = _build(interpreter, venv, log, env, fresh)
        setup = time.monotonic() - started - waited
        if failed:
            return Result(interpreter, False, setup, 0.0, failed, log_path)
        started = time.monotonic()
        # No cache provider: the runs share the checkout, and the main run's last-failed
        # list is not theirs to rewrite.
        status = _step([venv / "bin" / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        *TESTS], log, env, _RUN_TIMEOUT)
        tests = time.monotonic() - started
    result = Result(interpreter, status == 0, setup, tests, "", log_path)
    result.summary = _closing_line(result.tail(5)) or f"pytest exited with {status}"
    return result


def _closing_line(tail: str) -> str:
    """pytest's summary line (``498 passed in 43.60s``), without its ``=`` rule."""
    for line in reversed(tail.splitlines()):
        if re.search(r"\b(passed|failed|error|errors|no tests ran)\b", line):
            return line.strip("= ")
    return ""


def run_versions(interpreters: Sequence[Interpreter], *, jobs: int | None = None,
                 fresh: bool = False,
                 on_result: Callable[[Result], None] | None = None) -> list[Result]:
    """Run every version, ``jobs`` at a time (one per core by default), in their order.

    The runs start real servers and kernels and time some waits, so more runs than
    cores would only make each slower and flakier.
    """
    if not interpreters:
        return []
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(interpreters)))
    with concurrent.futures.ThreadPoolExecutor(jobs, thread_name_prefix="python") as pool:
        futures = [pool.submit(run_version, found, fresh=fresh) for found in interpreters]
        results = []
        for future in futures:
            results.append(future.result())
            if on_result is not None:
                on_result(results[-1])
    return results


def table(results: Sequence[Result]) -> str:
    """A Markdown table: version, result, setup and test seconds, pytest's summary."""
    rows = ["| CPython | result | setup s | tests s | pytest |",
            "| --- | --- | ---: | ---: | --- |"]
    rows += [f"| {r.interpreter} | {'passed' if r.passed else 'FAILED'} | "
             f"{r.setup_seconds:.1f} | {r.test_seconds:.1f} | {r.summary} |" for r in results]
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("interpreters", nargs="*", type=Path,
                        help="more interpreters to consider (besides pyenv's and PATH's)")
    parser.add_argument("--except-running", action="store_true",
                        help=f"leave out this interpreter's minor version "
                             f"({sys.version_info[0]}.{sys.version_info[1]})")
    parser.add_argument("--jobs", type=int, help="runs at once (default: one per core)")
    parser.add_argument("--fresh", action="store_true", help="rebuild every venv")
    parser.add_argument("--list", action="store_true", help="only list what was found")
    options = parser.parse_args(argv)

    interpreters = find_interpreters(options.interpreters,
                                     except_running=options.except_running)
    if not interpreters:
        print(f"no CPython >= 3.10 found (looked in {where_looked()})", file=sys.stderr)
        return 1
    for found in interpreters:
        print(f"CPython {found.release}: {found.executable}")
    if options.list:
        return 0
    started = time.monotonic()
    results = run_versions(interpreters, jobs=options.jobs, fresh=options.fresh)
    print()
    print(table(results))
    print(f"\n{len(results)} version(s) in {time.monotonic() - started:.1f} s; "
          f"logs in {CACHE.relative_to(ROOT)}/")
    for result in results:
        if not result.passed:
            print(f"\n--- CPython {result.interpreter}: {result.summary}\n{result.tail()}")
    return 0 if all(result.passed for result in results) else 1


if __name__ == "__main__":
    sys.exit(main())
