"""The benchmark still runs: ``python -m benchmarks --quick``, end to end, in a subprocess.

A smoke run with tiny counts proves every client can be driven against every
server and that the table is complete and numeric.  It asserts no timings: CI
machines are too noisy for that, and the figures live in benchmarks/RESULTS.md.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ("canned", "lab")
FIGURES = ("round trip, median", "round trip, p99", "client CPU per round trip",
           "throughput, requests in flight", "spawn + handshake", "graceful close",
           "memory per idle session")
CLIENTS = ("raw pipe", "asyncio floor", "mcp_nb", "official SDK", "fastmcp")


@pytest.fixture(scope="module")
def quick_run() -> subprocess.CompletedProcess[str]:
    # The first run also builds fastmcp's own virtual environment (from PyPI).
    done = subprocess.run([sys.executable, "-m", "benchmarks", "--quick"], cwd=ROOT,
                          capture_output=True, text=True, timeout=850)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def table_rows(output: str) -> dict[tuple[str, str, str], list[str]]:
    """``(server, figure, client)`` → the value and ratio cells of the figures table."""
    rows = {}
    for line in output.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[0] in SERVERS:
            server, figure, _unit, client, *numbers = cells
            rows[(server, figure, client)] = numbers
    return rows


@pytest.mark.timeout(900)
@pytest.mark.parametrize("client", CLIENTS)
def test_every_figure_has_a_number_for(client: str,
                                       quick_run: subprocess.CompletedProcess[str]) -> None:
    skipped = re.search(rf"^{re.escape(client)} skipped: (.*)$", quick_run.stdout, re.MULTILINE)
    if skipped:
        pytest.skip(f"{client} could not be set up: {skipped.group(1)}")
    rows = table_rows(quick_run.stdout)
    for server in SERVERS:
        for figure in FIGURES:
            numbers = rows.get((server, figure, client))
            assert numbers is not None, f"no row for {client} / {figure} / {server}"
            value, *ratios = numbers
            assert math.isfinite(float(value)), numbers
            # A ratio is "-" only when its reference measured nothing (a 0 KiB delta).
            assert all(ratio == "-" or float(ratio) > 0 for ratio in ratios), numbers


@pytest.mark.timeout(900)
def test_targets_and_escalation_are_judged(quick_run: subprocess.CompletedProcess[str]) -> None:
    verdicts = re.findall(r"\| (met|missed) \|$", quick_run.stdout, re.MULTILINE)
    # Three targets per server, the two round-trip ones again on the interleaved ratios,
    # the hosted path's (interleaved), and the two escalation cases on the lab server.
    assert len(verdicts) == (3 + 2 + 1) * len(SERVERS) + 2
    assert "hosted path (%mcp call): at most 3x raw pipe" in quick_run.stdout
    assert "ignores stdin close and SIGTERM" in quick_run.stdout


@pytest.mark.timeout(900)
def test_interleaved_round_trips_are_reported(quick_run: subprocess.CompletedProcess[str]) -> None:
    rows = {}
    for line in quick_run.stdout.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0] in SERVERS:
            rows[(cells[0], cells[1])] = cells[2:]
    for server in SERVERS:
        for client in ("raw pipe", "mcp_nb", "mcp_nb hosted (%mcp)", "official SDK"):
            median, x_raw, x_sdk = rows[(server, client)]
            assert float(median) > 0 and float(x_raw) > 0 and float(x_sdk) > 0
        assert float(rows[(server, "raw pipe")][1]) == 1.0  # each block against itself


def test_the_transcript_widget_figures_are_reported(
        quick_run: subprocess.CompletedProcess[str]) -> None:
    assert "Transcript widget with 1,000 messages" in quick_run.stdout
    render = re.search(r"\| render \(build \+ first page\) \| ([\d.]+) ms \|", quick_run.stdout)
    assert render is not None and float(render.group(1)) > 0
    total = re.search(r"\| added to the notebook, in all \| ([\d,]+) \|", quick_run.stdout)
    assert total is not None and int(total.group(1).replace(",", "")) > 0


def test_the_http_round_trip_compares_two_trees() -> None:
    # This tree against itself as the baseline: the comparison's whole path, tiny counts.
    done = subprocess.run(
        [sys.executable, "benchmarks/http_round_trip.py", "--baseline", str(ROOT),
         "--pairs", "1", "--rounds", "1", "--calls", "5"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = dict(re.findall(r"^(this tree|baseline) +(\d+) +\d+$", done.stdout, re.MULTILINE))
    assert set(rows) == {"this tree", "baseline"}, done.stdout
    assert all(int(cpu) > 0 for cpu in rows.values())
    assert "less client CPU in" in done.stdout


def test_the_call_cell_is_measured_in_real_kernels() -> None:
    # This tree against itself as the baseline: both kernels, the three views, tiny counts.
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.call_cell", "--baseline", str(ROOT), "--cells", "4",
         "--warmup", "2", "--blocks", "2", "--profile-cells", "2"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(figures) == {"baseline", "mcp_nb"}
    for kernel in figures.values():
        assert kernel["run_cell"]["count"] == kernel["execute_request"]["count"] == 4
        assert kernel["run_cell"]["median_ms"] > 0 and kernel["execute_request"]["median_ms"] > 0
        assert set(kernel["references"]) == {"pass", "1"}
        # The profile saw the magic itself: the cell ran %mcp call, not something else.
        assert kernel["profile"]["by_package_ms"]["mcp_nb"] > 0
        assert any("operations.py" in row["function"] and "(call)" in row["function"]
                   for row in kernel["profile"]["by_cumulative"])
    assert re.search(r"^Target: run_cell median ≤ 2 ms: [\d.]+ ms, (met|missed)\.$",
                     done.stdout, re.MULTILINE)


def test_the_call_cell_table_is_in_the_report(quick_run: subprocess.CompletedProcess[str]) -> None:
    assert "Kernel CPU per `%mcp call add a=1 b=2` cell" in quick_run.stdout
    median = re.search(r"^\| run_cell, median \| ([\d.]+) \|$", quick_run.stdout, re.MULTILINE)
    assert median is not None and float(median.group(1)) > 0


@pytest.mark.timeout(900)
def test_nbgraders_costs_are_measured_on_a_real_server_and_a_real_course() -> None:
    # One JupyterLab each way, and one chapter's two editions graded in the test's layout.
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.nbgrader_costs", "server", "--rounds", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    starts = json.loads(done.stdout.strip().splitlines()[-1])
    assert starts["on"]["cpu_median"] > 0 and starts["off"]["cpu_median"] > 0
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.nbgrader_costs", "autograde", "15_security_model"],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    grading = json.loads(done.stdout.strip().splitlines()[-1])
    assert (grading["notebooks"], grading["graded"], grading["courses"]) == (2, 4, 1)
    # The kernels ran under autograde: its tree spent more than nbgrader itself.
    assert grading["autograde"]["cpu"] > grading["autograde"]["nbgrader"] > 0
