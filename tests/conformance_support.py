"""The official conformance suite for the tests: one installed copy per pinned version,
the runs each test module takes from the suite's own listing, and one way to judge them."""

from __future__ import annotations

import subprocess

import pytest
from http_support import ROOT, cache_lock

from mcp_nb.conformance.suite import SUITE_VERSIONS, Outcome, Suite

CACHE = ROOT / ".cache" / "conformance"
RESULTS = CACHE / "results"

_SUITES = {version: Suite(version, CACHE) for version in SUITE_VERSIONS}
#: Why a suite could not be installed or listed: its tests fail with this (not the session).
_UNAVAILABLE: dict[str, str] = {}


def runs(role: str, *, auth: bool) -> list[pytest.param]:
    """(version, scenario, wire) for every listed scenario of ``role``: the ``auth/*`` ones
    when ``auth``, the others when not; a suite that cannot be listed gives one failing run."""
    params = []
    for version, suite in _SUITES.items():
        try:
            with cache_lock(suite.root):  # every xdist worker collects; one installs
                suite.install()
            listed = suite.scenarios(role)
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            _UNAVAILABLE[version] = f"conformance suite {version} is unavailable: {exc}"
            params.append(pytest.param(version, "(suite)", "-", id=f"{version}/(suite)"))
            continue
        for scenario in listed:
            if scenario.is_auth != auth:
                continue
            for wire in suite.wire_versions(scenario):
                params.append(pytest.param(version, scenario.name, wire,
                                           id=f"{version}/{scenario.name}@{wire}"))
    return params


def suite(version: str) -> Suite:
    if version in _UNAVAILABLE:
        pytest.fail(_UNAVAILABLE[version], pytrace=False)
    return _SUITES[version]


def judge(outcome: Outcome) -> None:
    """Fail with the suite's own account; skip (never pass) a run the suite could not judge."""
    if not outcome.ok:
        pytest.fail(
            f"{outcome.label}: {outcome.passed}/{outcome.total} checks passed, "
            f"{outcome.failed} failed, {outcome.warnings} warnings, suite exit "
            f"{outcome.exit_code}\n\n{outcome.failure_text()}", pytrace=False)
    if not outcome.judged:
        # The suite itself cannot test it yet (it says why): shown, never counted as a pass.
        pytest.skip(f"{outcome.label}: the suite skipped every check: "
                    f"{'; '.join(outcome.skip_reasons())}")
