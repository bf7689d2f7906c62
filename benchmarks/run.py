"""Benchmarks: mcp_nb against the official clients and the physical limit.

One command runs everything in one process tree on this machine and prints a
table (``python -m benchmarks``; ``--quick`` for the smoke run CI does)::

    python -m benchmarks            # full run, rewrites the generated part of RESULTS.md
    python -m benchmarks --quick    # tiny counts, prints only
    python -m benchmarks --baseline DIR --output FILE   # before/after: adds the mcp_nb in DIR

Every client is measured by the same driver (:mod:`benchmarks.driver`, run as a
script in a process of its own) against the same servers in the same run: the
canned server (``canned_server.py``, so the client dominates) and the lab
server.  Runs are repeated with the clients in a rotating order and each
figure is the median over the repeats, because the machine is small and shared.
Ratios are reported next to absolute times, since only they survive the noise;
the round trip is also measured with the clients taking turns in one process
(:mod:`benchmarks.interleaved`), whose ratios survive the machine's drift too.

fastmcp is installed into its own virtual environment under
``benchmarks/.venv-fastmcp`` (built on first use, git-ignored) so that it never
becomes a dependency of the project; if it cannot be built, its rows are
skipped with the reason printed.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import venv
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

if not __package__:  # run as a script (python benchmarks/run.py): make the package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks import call_cell, notebook_side

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "driver.py"
INTERLEAVED = HERE / "interleaved.py"
RESULTS = HERE / "RESULTS.md"
FASTMCP_VENV = HERE / ".venv-fastmcp"
#: fastmcp 4 is the line built on the mcp 2.x SDK the project tests against.
FASTMCP_REQUIREMENT = "fastmcp>=4,<5"

#: Driver key → the name the tables use.
CLIENTS = {"raw": "raw pipe", "floor": "asyncio floor", "mcp_nb": "mcp_nb",
           "sdk": "official SDK", "fastmcp": "fastmcp"}
#: Column names, including the optional older mcp_nb of ``--baseline``.
LABELS = {**CLIENTS, "baseline": "mcp_nb baseline", "hosted": "mcp_nb hosted (%mcp)"}
SERVERS = {
    "canned": [sys.executable, str(HERE / "canned_server.py")],
    "lab": [sys.executable, "-m", "mcp_nb.lab"],
}


@dataclass(frozen=True)
class Figure:
    key: str
    label: str
    unit: str
    scale: float
    #: Throughput: more is better, so its cost ratio is reference / value.
    higher_is_better: bool = False

    def cost_ratio(self, value: float, reference: float) -> float:
        """How many times the reference's cost: above 1 is slower or bigger."""
        return reference / value if self.higher_is_better else value / reference


FIGURES = (
    Figure("round_trip_median_s", "round trip, median", "µs", 1e6),
    Figure("round_trip_p99_s", "round trip, p99", "µs", 1e6),
    Figure("round_trip_cpu_s", "client CPU per round trip", "µs", 1e6),
    Figure("throughput_rps", "throughput, requests in flight", "req/s", 1.0, True),
    Figure("spawn_handshake_s", "spawn + handshake", "ms", 1e3),
    Figure("close_s", "graceful close", "ms", 1e3),
    Figure("idle_session_bytes", "memory per idle session", "KiB", 1 / 1024),
)
BY_KEY = {figure.key: figure for figure in FIGURES}


@dataclass(frozen=True)
class Settings:
    warmup: int
    calls: int
    burst: int
    inflight: int
    spawns: int
    idle: int
    repeats: int
    grace: float
    escalation_spawns: int
    #: Interleaved round trips: rounds of one block of calls per client.
    rounds: int
    block: int

    def driver_flags(self) -> list[str]:
        return [f"--warmup={self.warmup}", f"--calls={self.calls}", f"--burst={self.burst}",
                f"--inflight={self.inflight}", f"--spawns={self.spawns}", f"--idle={self.idle}"]


FULL = Settings(warmup=50, calls=2000, burst=2000, inflight=100, spawns=10, idle=20, repeats=5,
                grace=0.5, escalation_spawns=5, rounds=20, block=200)
QUICK = Settings(warmup=5, calls=20, burst=20, inflight=10, spawns=2, idle=5, repeats=1,
                 grace=0.2, escalation_spawns=1, rounds=2, block=10)
#: The clients that can take turns in one process (fastmcp needs its own interpreter).
INTERLEAVED_CLIENTS = ("raw", "mcp_nb", "hosted", "sdk")
#: The hosted path (what %mcp call runs on) is measured whenever mcp_nb is: the same package
#: behind a thread hop, so it only makes sense next to the direct session.
HOSTED_WITH = "mcp_nb"
#: The issue's target for the hosted path, judged on the interleaved ratio to the raw pipe.
HOSTED_TARGET = (3.0, "hosted path (%mcp call): at most 3x raw pipe")

#: Lab-server knobs that make mcp_nb escalate, and which configured waits they cost.
ESCALATIONS = {
    "ignores stdin close": (["--ignore-stdin-close"], 1),
    "ignores stdin close and SIGTERM": (["--ignore-stdin-close", "--ignore-sigterm"], 2),
}
#: How far past the configured grace periods a close may run (signal delivery, reaping).
ESCALATION_SLACK_S = 0.1
#: A close may look this much shorter than its grace periods: timers and clocks, not early kills.
CLOCK_SLACK_S = 0.01
#: The issue's targets for mcp_nb: (figure label, key, reference, highest cost ratio, wording).
TARGETS = (
    ("round trip, median", "round_trip_median_s", "raw", 2.0, "at most 2x raw pipe"),
    ("round trip, median", "round_trip_median_s", "sdk", 1 / 3,
     "at least 3x faster than the official SDK"),
    ("graceful close", "close_s", "raw", 1.5, "at most 1.5x raw pipe"),
)


def fastmcp_python() -> Path:
    """The interpreter of fastmcp's own virtual environment, built on first use.

    fastmcp is measured, never depended on: it lives outside the project's
    environment, so the test extra needs nothing more.
    """
    python = FASTMCP_VENV / "bin" / "python"
    probe = [str(python), "-c", "import fastmcp"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    print(f"building {FASTMCP_VENV} ({FASTMCP_REQUIREMENT}) …", file=sys.stderr, flush=True)
    venv.EnvBuilder(with_pip=True, clear=True).create(FASTMCP_VENV)
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         FASTMCP_REQUIREMENT], capture_output=True, text=True)
    if install.returncode != 0:
        last_line = (install.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"pip install {FASTMCP_REQUIREMENT} failed: {last_line}")
    return python


@dataclass(frozen=True)
class Contender:
    """How to run one column of the table: which interpreter drives which client."""

    python: Path | str
    client: str
    #: Put first on the driver's import path: an older mcp_nb to compare with.
    pythonpath: Path | None = None


def run_driver(contender: Contender, server: list[str], flags: list[str]) -> dict[str, Any]:
    """One driver process: one client against one server; its JSON figures."""
    client = contender.client
    command = [str(contender.python), str(DRIVER), client, json.dumps(server), *flags]
    env = dict(os.environ)
    if contender.pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(contender.pythonpath), env.get("PYTHONPATH")]))
    return run_json(command, f"driver {client}", env)


def run_json(command: list[str], what: str, env: dict[str, str] | None = None) -> Any:
    """Run a measuring script from the repository root; the JSON of its last output line."""
    done = subprocess.run(command, capture_output=True, text=True, timeout=900,
                          cwd=HERE.parent, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure_clients(contenders: dict[str, Contender], servers: list[str],
                    settings: Settings) -> dict[str, dict[str, dict[str, Any]]]:
    """Figures per server per client: medians over ``settings.repeats`` driver runs."""
    samples: dict[str, dict[str, list[dict[str, Any]]]] = {
        server: {client: [] for client in contenders} for server in servers}
    order = list(contenders)
    for repeat in range(settings.repeats):
        # Rotate the order so that no client always runs first (cold caches) or last.
        shift = repeat % len(order)
        for server in servers:
            for client in order[shift:] + order[:shift]:
                print(f"  repeat {repeat + 1}/{settings.repeats}: {LABELS[client]} → {server}",
                      file=sys.stderr, flush=True)
                samples[server][client].append(run_driver(
                    contenders[client], SERVERS[server], settings.driver_flags()))
    return {
        server: {client: {
            "version": runs[0]["version"],
            **{key: statistics.median(run[key] for run in runs) for key in BY_KEY},
        } for client, runs in per_client.items()}
        for server, per_client in samples.items()
    }


def measure_interleaved(servers: list[str], clients: list[str],
                        settings: Settings) -> dict[str, dict[str, dict[str, Any]]]:
    """Per server: the clients' round trips taking turns in one process (interleaved.py)."""
    chosen = [client for client in INTERLEAVED_CLIENTS
              if client in clients or (client == "hosted" and HOSTED_WITH in clients)]
    if "mcp_nb" not in chosen or len(chosen) < 2:
        return {}
    results = {}
    for server in servers:
        print(f"  interleaved: {', '.join(LABELS[c] for c in chosen)} → {server}",
              file=sys.stderr, flush=True)
        command = [sys.executable, str(INTERLEAVED), json.dumps(SERVERS[server]),
                   f"--clients={','.join(chosen)}", f"--rounds={settings.rounds}",
                   f"--block={settings.block}", f"--warmup={settings.warmup}"]
        results[server] = run_json(command, "interleaved run")
    return results


def measure_escalations(settings: Settings) -> dict[str, dict[str, float]]:
    """mcp_nb's close of lab servers that ignore stdin close / SIGTERM, against the graces."""
    results = {}
    for name, (knobs, waits) in ESCALATIONS.items():
        figures = run_driver(Contender(sys.executable, "mcp_nb"), [*SERVERS["lab"], *knobs], [
            f"--spawns={settings.escalation_spawns}",
            f"--stdin-close-grace={settings.grace}", f"--sigterm-grace={settings.grace}"])
        configured = waits * settings.grace
        results[name] = {"configured_s": configured, "close_s": figures["close_s"],
                         "overshoot_s": figures["close_s"] - configured}
    return results


def _number(value: float) -> str:
    return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"


def _ratio_cell(figure: Figure, value: float, per_client: dict[str, dict[str, Any]],
                ref: str) -> str:
    """The cost ratio to client ``ref``; "-" if it was not run or measured nothing."""
    reference = per_client.get(ref, {}).get(figure.key)
    if not reference or not value:
        return "-"
    ratio = figure.cost_ratio(value, reference)
    # Two significant digits below 0.01: a tiny ratio is still a ratio, not "0.00".
    return f"{ratio:.2f}" if ratio >= 0.01 else f"{ratio:.2g}"


def figures_table(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    """One row per server, figure and client; ratios are costs (above 1 = worse)."""
    lines = ["| server | figure | unit | client | value | x raw pipe | x official SDK |",
             "|---|---|---|---|---:|---:|---:|"]
    for server, per_client in results.items():
        for figure in FIGURES:
            for client, figures in per_client.items():
                value = figures[figure.key]
                ratios = [_ratio_cell(figure, value, per_client, ref) for ref in ("raw", "sdk")]
                lines.append(f"| {server} | {figure.label} | {figure.unit} | {LABELS[client]} "
                             f"| {_number(value * figure.scale)} | {' | '.join(ratios)} |")
    return "\n".join(lines)


def interleaved_table(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    lines = ["| server | client | round trip, median (µs) | x raw pipe | x official SDK |",
             "|---|---|---:|---:|---:|"]
    for server, per_client in results.items():
        for client, row in per_client.items():
            ratios = ["-" if row[key] is None else f"{row[key]:.2f}" for key in ("x_raw", "x_sdk")]
            lines.append(f"| {server} | {LABELS[client]} | {_number(row['median_s'] * 1e6)} "
                         f"| {' | '.join(ratios)} |")
    return "\n".join(lines)


def escalation_table(results: dict[str, dict[str, float]]) -> str:
    lines = ["| lab server that … | configured grace (s) | mcp_nb close (s) | overshoot (s) |",
             "|---|---:|---:|---:|"]
    for name, row in results.items():
        lines.append(f"| {name} | {row['configured_s']:.2f} | {row['close_s']:.3f} "
                     f"| {row['overshoot_s']:+.3f} |")
    return "\n".join(lines)


def targets_table(results: dict[str, dict[str, dict[str, Any]]],
                  escalations: dict[str, dict[str, float]],
                  interleaved: dict[str, dict[str, dict[str, Any]]]) -> str:
    """The issue's targets, each judged on this run's medians (and on the interleaved ratios)."""
    rows = []
    for server, per_client in results.items():
        nb = per_client.get("mcp_nb")
        if nb is None:
            continue
        for label, key, ref, limit, wording in TARGETS:
            if ref not in per_client:
                continue
            ratio = BY_KEY[key].cost_ratio(nb[key], per_client[ref][key])
            rows.append(f"| {server} | {label}: {wording} | {ratio:.2f}x "
                        f"| {'met' if ratio <= limit else 'missed'} |")
        nb_turns = interleaved.get(server, {}).get("mcp_nb", {})
        for label, key, ref, limit, wording in TARGETS:
            ratio = nb_turns.get(f"x_{ref}")
            if key != "round_trip_median_s" or ratio is None:
                continue
            rows.append(f"| {server} | {label}, interleaved in one process: {wording} "
                        f"| {ratio:.2f}x | {'met' if ratio <= limit else 'missed'} |")
        hosted = interleaved.get(server, {}).get("hosted", {}).get("x_raw")
        if hosted is not None:
            limit, wording = HOSTED_TARGET
            rows.append(f"| {server} | round trip, median, interleaved in one process: {wording} "
                        f"| {hosted:.2f}x | {'met' if hosted <= limit else 'missed'} |")
    for name, row in escalations.items():
        met = -CLOCK_SLACK_S <= row["overshoot_s"] <= ESCALATION_SLACK_S
        rows.append(f"| lab | close of a server that {name}: the grace periods and no more "
                    f"(≤ {ESCALATION_SLACK_S:g} s over) | {row['overshoot_s']:+.3f} s "
                    f"| {'met' if met else 'missed'} |")
    return "\n".join(["| server | target | this run | verdict |", "|---|---|---:|---|", *rows])


def describe_machine(results: dict[str, dict[str, dict[str, Any]]], load_before: tuple[float, ...],
                     settings: Settings) -> str:
    cpu = "unknown CPU"
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as info:
        memory_kib = int(info.readline().split()[1])
    versions = sorted({figures["version"] for per_client in results.values()
                       for figures in per_client.values()})
    load_after = os.getloadavg()
    return "\n".join([
        f"- Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- Machine: {cpu}, {os.cpu_count()} cores, {memory_kib / 2**20:.0f} GiB RAM; "
        f"{platform.platform()}; Python {platform.python_version()}",
        "- Shared: other work ran on the machine during the run (load average "
        f"{load_before[0]:.2f} before, {load_after[0]:.2f} after).",
        f"- Clients: {'; '.join(versions)}",
        f"- Counts: {settings.calls} sequential tools/call for the round trip "
        f"(after {settings.warmup} warm-up calls); throughput {settings.burst} requests with "
        f"{settings.inflight} in flight; {settings.spawns} spawn/handshake/close cycles; "
        f"{settings.idle} idle sessions; {settings.repeats} repeats, medians reported.",
    ])


def report(results: dict[str, dict[str, dict[str, Any]]],
           escalations: dict[str, dict[str, float]],
           interleaved: dict[str, dict[str, dict[str, Any]]], machine: str,
           skipped: dict[str, str], notebook: str) -> str:
    parts = [machine, "", figures_table(results), ""]
    if interleaved:
        parts += ["Round trips interleaved in one process (blocks of calls taking turns; "
                  "ratios are medians of per-block ratios):", "",
                  interleaved_table(interleaved), ""]
    parts += ["Shutdown escalation (mcp_nb, lab server with fault knobs):", "",
              escalation_table(escalations), "", "Targets:", "",
              targets_table(results, escalations, interleaved), "", notebook]
    parts += [f"\n{LABELS[client]} skipped: {reason}" for client, reason in skipped.items()]
    return "\n".join(parts)


BEGIN = "<!-- generated by python -m benchmarks: begin -->"
END = "<!-- generated by python -m benchmarks: end -->"


def write_results(path: Path, generated: str) -> None:
    """Replace the generated part of RESULTS.md, keeping the hand-written notes around it."""
    text = path.read_text() if path.exists() else f"# Benchmark results\n\n{BEGIN}\n{END}\n"
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    path.write_text(f"{head}{BEGIN}\n{generated}\n{END}{tail}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="tiny counts: proves the benchmark works, measures nothing")
    parser.add_argument("--clients", default=",".join(CLIENTS),
                        help=f"comma-separated subset of {', '.join(CLIENTS)}")
    parser.add_argument("--servers", default=",".join(SERVERS),
                        help=f"comma-separated subset of {', '.join(SERVERS)}")
    parser.add_argument("--repeats", type=int, help="override the number of repeats")
    parser.add_argument("--baseline", type=Path, metavar="DIR",
                        help="also measure the mcp_nb package found in DIR, as 'mcp_nb "
                        "baseline' (make one with: git archive REV mcp_nb | tar -x -C DIR)")
    parser.add_argument("--output", type=Path,
                        help=f"file whose generated part to rewrite (default: {RESULTS.name} "
                        "for a full run, none for --quick)")
    options = parser.parse_args(argv)
    settings = QUICK if options.quick else FULL
    if options.repeats:
        settings = replace(settings, repeats=options.repeats)
    output = options.output or (None if options.quick else RESULTS)
    clients = options.clients.split(",")
    servers = options.servers.split(",")
    unknown = (set(clients) - set(CLIENTS)) | (set(servers) - set(SERVERS))
    if unknown:
        parser.error(f"unknown client or server: {', '.join(sorted(unknown))}")

    load_before = os.getloadavg()
    contenders = {client: Contender(sys.executable, client) for client in clients
                  if client != "fastmcp"}
    if options.baseline:
        contenders["baseline"] = Contender(sys.executable, "mcp_nb", options.baseline.resolve())
    skipped: dict[str, str] = {}
    if "fastmcp" in clients:
        try:
            contenders["fastmcp"] = Contender(fastmcp_python(), "fastmcp")
        except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
            skipped["fastmcp"] = str(exc)
            print(f"fastmcp skipped: {exc}", file=sys.stderr)
    results = measure_clients(contenders, servers, settings)
    interleaved = measure_interleaved(servers, clients, settings)
    escalations = measure_escalations(settings) if "lab" in servers else {}
    notebook = notebook_side.table(notebook_side.measure(
        messages=1_000 if options.quick else 10_000, repeats=1 if options.quick else 5))
    print("  %mcp call cells in real kernels", file=sys.stderr, flush=True)
    cells = call_cell.measure(
        **(dict(cells=6, warmup=3, blocks=1, profile_cells=3) if options.quick else {}),
        baseline=options.baseline)
    notebook += "\n\n" + call_cell.table(cells)
    machine = describe_machine(results, load_before, settings)
    if options.baseline:
        machine += f"\n- mcp_nb baseline: the package in {options.baseline.resolve()}"
    text = report(results, escalations, interleaved, machine, skipped, notebook)
    print(text)
    if output is not None:
        write_results(output, text)
        print(f"\nwrote {output}", file=sys.stderr)


if __name__ == "__main__":
    main()
