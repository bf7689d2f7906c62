"""The official conformance suite's ``auth/*`` client scenarios, both pinned versions,
against ``python -m mcp_nb.conformance`` — the same installer and runner as the
non-auth scenarios (:mod:`mcp_nb.conformance.suite`), one test per suite version,
scenario and wire version, the scenario list read from each suite's own listing.

Every one must pass, the extensions included (client credentials, DPoP, workload
identity federation, enterprise-managed authorization / cross-app access).
"""

from __future__ import annotations

import pytest
from conformance_support import RESULTS, judge, runs, suite


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.function.__name__ == "test_auth_scenario":
        metafunc.parametrize(("version", "scenario", "wire"), runs("client", auth=True))


@pytest.mark.timeout(300)
def test_auth_scenario(version: str, scenario: str, wire: str) -> None:
    judge(suite(version).run_client(scenario, wire, RESULTS))
