"""The core, kernel and loop tests pass under every other CPython >= 3.10 on this machine.

The notebook loop's hand-off uses CPython's private corners (``asyncio._set_running_loop``,
the ``_signal`` C module), which any minor release may change, and users run
whatever Python they have.  ``scripts/python_versions.py`` (one implementation,
also run by hand) finds the interpreters, builds each a venv under
``.cache/python-versions/`` and runs its chosen tests there; this module runs it
for every minor version but the one running the suite, which the suite itself
covers.  One test per version, so the report says which one broke; a failure
shows the end of that run's output.

A machine without a given version simply has no test for it, but one with no
other version at all has proved nothing: that fails in CI (CI's machines carry
several under pyenv) and is skipped elsewhere.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
try:
    import python_versions
finally:
    sys.path.pop(0)

RUNNING = f"{sys.version_info[0]}.{sys.version_info[1]}"
OTHERS = python_versions.find_interpreters(except_running=True)
#: The minor versions pyproject.toml's classifiers say are supported (read as text: the suite
#: may run on 3.10, which has no tomllib).
CLAIMED = re.findall(r'"Programming Language :: Python :: (3\.\d+)"',
                     (python_versions.ROOT / "pyproject.toml").read_text())


def test_another_python_version_is_found() -> None:
    if OTHERS:
        return
    message = (f"no CPython >= 3.10 other than the running {RUNNING} was found (looked in "
               f"{python_versions.where_looked()}), so the compatibility run tested nothing; "
               f"install one, e.g. `pyenv install 3.13`")
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def test_every_version_the_classifiers_claim_is_tested() -> None:
    assert CLAIMED, "pyproject.toml's classifiers name no Python version"
    tested = {RUNNING, *(found.minor for found in OTHERS)}
    untested = [version for version in CLAIMED if version not in tested]
    if not untested:
        return
    message = (f"pyproject.toml claims CPython {', '.join(untested)}, which this machine does "
               f"not have (looked in {python_versions.where_looked()}), so nothing tests it")
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def runs(pytestconfig: pytest.Config) -> dict[str, python_versions.Result]:
    """Every version's run, side by side (one per core), each venv built once."""
    results = python_versions.run_versions(OTHERS)
    # Shown whether or not anything failed: the table is where CI's log says what each
    # version cost (the capture manager would otherwise swallow it with the setup's output).
    reporter = pytestconfig.pluginmanager.get_plugin("terminalreporter")
    capture = pytestconfig.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line("")
            for line in python_versions.table(results).splitlines():
                reporter.write_line(line)
    return {result.interpreter.minor: result for result in results}


# The whole compatibility run happens in the first test's fixture: several venvs and
# test runs, beyond the suite's per-test timeout.
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("interpreter", OTHERS, ids=str)
def test_core_kernel_and_loop_tests_pass_under(
        interpreter: python_versions.Interpreter,
        runs: dict[str, python_versions.Result]) -> None:
    result = runs[interpreter.minor]
    if not result.passed:  # the run's own output says why; a Python traceback here would not
        pytest.fail(f"CPython {interpreter} ({interpreter.executable}): {result.summary}; "
                    f"the end of {result.log}:\n{result.tail()}", pytrace=False)
