"""What a silent server costs the checkup (``python -m benchmarks.checkup_silent``).

Prints numbers (a benchmark, never a timed test); RESULTS.md keeps them.  A server that
never answers anything can only be *could not check*; the question is how long the
checkup waits to find that out, as a multiple of ``--timeout``.  Three silent servers:

- *stdio, exits at EOF*: reads its stdin and writes nothing (it leaves when stdin closes);
- *stdio, ignores EOF*: never reads, never writes, needs a signal to go;
- *HTTP*: accepts TCP connections and reads them, never sends a byte back.

Each is checked by ``python -m mcp_nb.check --timeout T`` in a fresh process, timed from
spawn to exit as a shell sees it (interpreter start and imports included, about 0.3 s
here); the report's own ``seconds`` is printed beside it.  ``--checkout DIR`` measures
another checkout's ``mcp_nb`` (a worktree of an earlier commit: before and after).
Target (issue 32): about 1.5 times ``--timeout``.

Usage::

    python -m benchmarks.checkup_silent [--runs 3] [--timeouts 2 5] [--checkout DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

EXITS_AT_EOF = "import sys\nfor _line in sys.stdin:\n    pass\n"
IGNORES_EOF = "import time\nwhile True:\n    time.sleep(60)\n"
SILENT_HTTP = """\
import socket, threading
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(64)
print(f"http://127.0.0.1:{listener.getsockname()[1]}/mcp", flush=True)
def hold(conn):
    try:
        while conn.recv(65536):
            pass
    except OSError:
        pass
held = []
while True:
    conn, _ = listener.accept()
    held.append(conn)
    threading.Thread(target=hold, args=(conn,), daemon=True).start()
"""


def checkup(root: Path, timeout: float, target: list[str]) -> tuple[float, float, int]:
    """One CLI run: (wall seconds, the report's seconds, exit status)."""
    with tempfile.TemporaryDirectory() as folder:
        saved = Path(folder) / "report.json"
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "mcp_nb.check", "--timeout", f"{timeout:g}", "--json",
             str(saved), *target], capture_output=True, text=True, check=False, cwd=root,
            env={**os.environ, "PYTHONPATH": str(root)})
        wall = time.perf_counter() - started
        report = json.loads(saved.read_text())
    return wall, report["seconds"], done.returncode


def measure(root: Path, runs: int, timeouts: list[float]) -> None:
    print(f"checkout {root}; load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as folder:
        scripts = {}
        for name, text in (("exits", EXITS_AT_EOF), ("ignores", IGNORES_EOF),
                           ("http", SILENT_HTTP)):
            scripts[name] = Path(folder) / f"{name}.py"
            scripts[name].write_text(text)
        http = subprocess.Popen([sys.executable, str(scripts["http"])], stdout=subprocess.PIPE,
                                text=True)
        try:
            assert http.stdout is not None
            url = http.stdout.readline().strip()
            targets = {"stdio, exits at EOF": ["--", sys.executable, str(scripts["exits"])],
                       "stdio, ignores EOF": ["--", sys.executable, str(scripts["ignores"])],
                       "HTTP, accepts and never answers": [url]}
            for timeout in timeouts:
                for label, target in targets.items():
                    walls, own, statuses = [], [], set()
                    for _ in range(runs):
                        wall, seconds, status = checkup(root, timeout, target)
                        walls.append(wall)
                        own.append(seconds)
                        statuses.add(status)
                    wall = statistics.median(walls)
                    print(f"--timeout {timeout:g}, {label}: wall median {wall:.2f} s "
                          f"({wall / timeout:.2f} x), report {statistics.median(own):.2f} s, "
                          f"exit {sorted(statuses)} ({runs} runs)")
        finally:
            http.kill()
            http.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeouts", type=float, nargs="+", default=[2.0, 5.0])
    parser.add_argument("--checkout", type=Path, default=ROOT)
    arguments = parser.parse_args()
    measure(arguments.checkout.resolve(), arguments.runs, arguments.timeouts)


if __name__ == "__main__":
    main()
