"""MCP Apps in a real JupyterLab: how long until an App is initialized, and an App's round trip.

Run: ``python benchmarks/apps_latency.py [--renders N] [--calls N]`` (needs what the browser
tests need: Debian's chromium, the test extras, node and npm; the example server is installed
into ``.cache/`` on first use).  Prints JSON; the figures and the machine go into
``benchmarks/RESULTS.md`` by hand.

* **call → initialized**: ``%mcp call get-time`` against the official
  ``@modelcontextprotocol/server-basic-vanillajs`` (stdio), one cell at a time; the time
  from the ``tools/call`` request on the MCP wire to the View's
  ``ui/notifications/initialized`` reaching the kernel, both read from the session's
  transcript (one clock).  It covers the call, ``resources/read`` of the 218 KB App, the
  widget reaching the page, the sandbox proxy and the View loading, and ``ui/initialize``.
* **App round trip**: ``tools/call`` posted from inside the View (as its button does) until
  the answer is back in the View, timed there with ``performance.now()``: View → proxy →
  page → kernel (comm) → MCP session → server and back.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from apps_support import install_example  # noqa: E402
from browser_support import (  # noqa: E402
    LAB,
    JupyterServer,
    browser_page,
    cell,
    open_notebook,
    outputs,
    write_notebook,
)

ISO = r"/\d{4}-\d\d-\d\dT/"
MEASURE = """import json
entries = list(basic.session.transcript)
calls = [e.time for e in entries if e.direction == "send" and e.method == "tools/call"]
ready = [e.time for e in entries if e.direction == "app→host"
         and e.method == "ui/notifications/initialized"]
asked = {e.id: e.time for e in entries if e.direction == "app→host"
         and e.method == "tools/call" and str(e.id).startswith("bench-")}
answered = {e.id: e.time for e in entries if e.direction == "host→app" and e.id in asked}
kernel = [answered[i] - asked[i] for i in asked if i in answered]
print(json.dumps({"calls": calls, "initialized": ready, "kernel": kernel}))"""

ROUND_TRIP = """async (count) => {
  const times = [];
  for (let i = 0; i < count; i++) {
    const id = "bench-" + i;
    const start = performance.now();
    await new Promise((resolve) => {
      const answered = (event) => {
        if (event.data && event.data.id === id) {
          window.removeEventListener("message", answered);
          resolve();
        }
      };
      window.addEventListener("message", answered);
      window.parent.postMessage({ jsonrpc: "2.0", id, method: "tools/call",
                                  params: { name: "get-time", arguments: {} } }, "*");
    });
    times.push(performance.now() - start);
  }
  return times;
}"""


def _run_cell(page: Any, index: int) -> None:
    page.evaluate("""(index) => {
        const panel = window.jupyterapp.shell.currentWidget;
        panel.content.activeCellIndex = index;
        return window.jupyterapp.commands.execute('notebook:run-cell');
    }""", index)


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"n": len(values), "median_ms": round(statistics.median(ordered), 1),
            "min_ms": round(ordered[0], 1), "max_ms": round(ordered[-1], 1)}


def measure(renders: int, calls: int) -> dict[str, Any]:
    command = shlex.join(install_example())
    with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as home:
        server = JupyterServer(Path(root), Path(home), LAB)
        try:
            write_notebook(Path(root) / "bench.ipynb", [
                "%load_ext mcp_nb", f"basic = %mcp connect basic -- {command}",
                *["%mcp call get-time"] * renders, MEASURE])
            with browser_page(server) as page:
                open_notebook(page, server, "bench.ipynb")
                for index in (0, 1):
                    _run_cell(page, index)
                    page.wait_for_function(
                        "(i) => /\\[\\d+\\]/.test(window.jupyterapp.shell.currentWidget"
                        ".content.widgets[i].promptNode.textContent)", arg=index, polling=50)
                for index in range(2, 2 + renders):
                    _run_cell(page, index)
                    (outputs(cell(page, index)).frame_locator("iframe.mcpnb-app-frame")
                     .frame_locator("iframe").locator("#server-time")
                     .filter(has_text=__import__("re").compile(r"\d{4}-\d\d-\d\dT"))
                     .wait_for())
                view = next(frame for frame in page.frames if frame.parent_frame is not None
                            and frame.parent_frame.url == "about:srcdoc")
                view.evaluate(ROUND_TRIP, 5)  # warm-up, not counted
                trips = view.evaluate(ROUND_TRIP, calls)
                measure_cell = 2 + renders
                _run_cell(page, measure_cell)
                printed = outputs(cell(page, measure_cell)).locator("pre").first
                printed.wait_for()
                times = json.loads(printed.inner_text())
        finally:
            server.stop()
    # The App's own calls come after the renders: pair each render's call with its App.
    ready = times["initialized"][:renders]
    starts = times["calls"][:renders]
    to_initialized = [(done - start) * 1000 for start, done in zip(starts, ready, strict=True)]
    return {"call_to_initialized": _summary(to_initialized),
            "app_tools_call_round_trip": _summary(trips),
            "of_which_in_the_kernel": _summary([t * 1000 for t in times["kernel"]])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--renders", type=int, default=10)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    print(json.dumps(measure(args.renders, args.calls), indent=2))


if __name__ == "__main__":
    main()
