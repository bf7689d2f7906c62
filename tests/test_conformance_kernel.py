"""The conformance suite judges the notebook user's path: ``%mcp`` magics in a real kernel.

``python -m mcp_nb.conformance --kernel`` types each scenario into a new ipykernel as
``%mcp connect URL`` and friends (:mod:`mcp_nb.conformance.kernel`). Every scenario it
plays runs in both pinned suite versions, at every wire version the suite lists for it,
like the API runs in ``test_conformance_suite.py``; a scenario that a suite version does
not have is left out of that version, and one that no version has fails here.
"""

from __future__ import annotations

import sys

import pytest
from conformance_support import RESULTS, judge, runs, suite

from mcp_nb.conformance.kernel import KERNEL_PLAYERS

KERNEL_COMMAND = (sys.executable, "-m", "mcp_nb.conformance", "--kernel")
#: Apart from the API runs' results, which docs/conformance.md is written from.
KERNEL_RESULTS = RESULTS.parent / "results-kernel"


def _kernel_runs() -> list:
    every = runs("client", auth=False) + runs("client", auth=True)
    return [param for param in every if param.values[1] in KERNEL_PLAYERS]


KERNEL_RUNS = _kernel_runs()


def test_every_kernel_scenario_is_in_a_pinned_suite() -> None:
    played = {param.values[1] for param in KERNEL_RUNS}
    assert played == set(KERNEL_PLAYERS), f"not listed by any suite: {set(KERNEL_PLAYERS) - played}"


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("version", "scenario", "wire"), KERNEL_RUNS)
def test_client_scenario_through_the_magics(version: str, scenario: str, wire: str) -> None:
    judge(suite(version).run_client(scenario, wire, KERNEL_RESULTS, KERNEL_COMMAND))
