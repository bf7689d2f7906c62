"""The official conformance suite's ``auth/*`` client scenarios, both pinned versions,
against ``python -m mcp_nb.conformance`` — the same installer and runner as the
non-auth scenarios (:mod:`mcp_nb.conformance.suite`), one test per suite version,
scenario and wire version, the scenario list read from each suite's own listing.

Every one must pass, the extensions included (client credentials, DPoP, workload
identity federation, enterprise-managed authorization / cross-app access).
"""

from __future__ import annotations

import pytest
from http_support import ROOT

from mcp_nb.conformance.suite import SUITE_VERSIONS, Outcome, Suite

CACHE = ROOT / ".cache" / "conformance"
RESULTS = CACHE / "results"
_SUITES = {version: Suite(version, CACHE) for version in SUITE_VERSIONS}


def _auth_runs() -> list[pytest.param]:
    params = []
    for version, suite in _SUITES.items():
        suite.install()
        for scenario in suite.scenarios("client"):
            if not scenario.is_auth:
                continue
            for wire in suite.wire_versions(scenario):
                params.append(pytest.param(version, scenario.name, wire,
                                           id=f"{version}/{scenario.name}@{wire}"))
    return params


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.function.__name__ == "test_auth_scenario":
        metafunc.parametrize(("version", "scenario", "wire"), _auth_runs())


@pytest.mark.timeout(300)
def test_auth_scenario(version: str, scenario: str, wire: str) -> None:
    outcome: Outcome = _SUITES[version].run_client(scenario, wire, RESULTS)
    if not outcome.ok:
        pytest.fail(
            f"{outcome.label}: {outcome.passed}/{outcome.total} checks passed, "
            f"{outcome.failed} failed, {outcome.warnings} warnings, suite exit "
            f"{outcome.exit_code}\n\n{outcome.failure_text()}", pytrace=False)
