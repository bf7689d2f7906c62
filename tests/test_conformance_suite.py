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

import pytest
from conformance_support import RESULTS, judge, runs, suite
from http_support import lab_server

#: The lab server's profile that serves the suite's fixture tools, resources and prompts.
LAB_FIXTURES = ("--fixtures", "conformance")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    role = {"test_client_scenario": "client",
            "test_server_scenario": "server"}.get(metafunc.function.__name__)
    if role is not None:
        metafunc.parametrize(("version", "scenario", "wire"), runs(role, auth=False))


@pytest.mark.timeout(300)
def test_client_scenario(version: str, scenario: str, wire: str) -> None:
    judge(suite(version).run_client(scenario, wire, RESULTS))


@pytest.mark.timeout(300)
def test_server_scenario(version: str, scenario: str, wire: str) -> None:
    with lab_server(*LAB_FIXTURES) as lab:
        outcome = suite(version).run_server(scenario, wire, RESULTS, lab.ready_text)
    judge(outcome)
