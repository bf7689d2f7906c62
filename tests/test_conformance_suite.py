"""The official conformance suite, both pinned versions: every non-auth client scenario
against ``python -m mcp_nb.conformance``, every server scenario against the lab server.

The scenario lists come from each suite's own ``conformance list`` at collection time
(installing the suite from npm into ``.cache/conformance/<version>`` on first use), so a
scenario a new suite version adds is run, never silently skipped. One test per suite
version, scenario and wire version; a failure shows the suite's own account. The
``auth/*`` client scenarios belong to the authorization tests. Results stay in
``.cache/conformance/results`` for ``scripts/conformance_report.py --results``.
"""

from __future__ import annotations

import subprocess

import pytest
from http_support import ROOT, lab_server

from mcp_nb.conformance.suite import SUITE_VERSIONS, Outcome, Suite

CACHE = ROOT / ".cache" / "conformance"
RESULTS = CACHE / "results"
#: The lab server's profile that serves the suite's fixture tools, resources and prompts.
LAB_FIXTURES = ("--fixtures", "conformance")

_SUITES = {version: Suite(version, CACHE) for version in SUITE_VERSIONS}
#: Why a suite could not be installed or listed: its tests fail with this (not the session).
_UNAVAILABLE: dict[str, str] = {}


def _runs(role: str) -> list[pytest.param]:
    params = []
    for version, suite in _SUITES.items():
        try:
            suite.install()
            listed = suite.scenarios(role)
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            _UNAVAILABLE[version] = f"conformance suite {version} is unavailable: {exc}"
            params.append(pytest.param(version, "(suite)", "-", id=f"{version}/(suite)"))
            continue
        for scenario in listed:
            if scenario.is_auth:
                continue
            for wire in suite.wire_versions(scenario):
                params.append(pytest.param(version, scenario.name, wire,
                                           id=f"{version}/{scenario.name}@{wire}"))
    return params


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    role = {"test_client_scenario": "client",
            "test_server_scenario": "server"}.get(metafunc.function.__name__)
    if role is not None:
        metafunc.parametrize(("version", "scenario", "wire"), _runs(role))


def _suite(version: str) -> Suite:
    if version in _UNAVAILABLE:
        pytest.fail(_UNAVAILABLE[version], pytrace=False)
    return _SUITES[version]


def _judge(outcome: Outcome) -> None:
    if not outcome.ok:
        pytest.fail(
            f"{outcome.label}: {outcome.passed}/{outcome.total} checks passed, "
            f"{outcome.failed} failed, {outcome.warnings} warnings, suite exit "
            f"{outcome.exit_code}\n\n{outcome.failure_text()}", pytrace=False)
    if not outcome.judged:
        # The suite itself cannot test it yet (it says why): shown, never counted as a pass.
        pytest.skip(f"{outcome.label}: the suite skipped every check: "
                    f"{'; '.join(outcome.skip_reasons())}")


@pytest.mark.timeout(300)
def test_client_scenario(version: str, scenario: str, wire: str) -> None:
    _judge(_suite(version).run_client(scenario, wire, RESULTS))


@pytest.mark.timeout(300)
def test_server_scenario(version: str, scenario: str, wire: str) -> None:
    suite = _suite(version)
    with lab_server(*LAB_FIXTURES) as lab:
        outcome = suite.run_server(scenario, wire, RESULTS, lab.ready_text)
    _judge(outcome)
