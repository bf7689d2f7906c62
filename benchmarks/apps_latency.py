"""MCP Apps in a real JupyterLab: the App's round trip and the time to ``initialized``, each lever
on and off in one run.

Run: ``python benchmarks/apps_latency.py [--renders N] [--calls N] [--json FILE]`` (needs what
the browser tests need: Debian's chromium, the test extras, node and npm; the official example
server is installed into ``.cache/`` on first use). Prints a Markdown table (and JSON with
``--json``); the table goes into ``benchmarks/RESULTS.md`` by hand, beside the machine's load.

The levers, each measured with and without in the same run:

* **nodelay**: the kit's server extension sets ``TCP_NODELAY`` on Jupyter Server's kernel
  websockets (:mod:`mcp_nb.kernel_websocket`). *Off* is the same extension with the stock
  connection class named in the configuration (which the extension respects), so nothing
  else differs. Each side has its own JupyterLab and browser, both running at once and
  taking turns cell by cell (and block of 10 round trips by block), so the machine's load
  drifts over both alike.
* **cache**: the session's copy of the App's ``ui://`` resource (:mod:`mcp_nb.notebook.
  app_cache`). Renders alternate off/on in one notebook (``hosted.app_resources.enabled``).

Figures:

* **call → initialized** (kernel clock): ``%mcp call get-time`` against
  ``@modelcontextprotocol/server-basic-vanillajs`` (stdio), one cell at a time; from the
  ``tools/call`` request on the MCP wire to the View's ``ui/notifications/initialized``
  reaching the kernel, both read from the session's transcript. The first render of a page
  (anywidget's module load, the sandbox's first frame) is reported on its own line.
* **run → initialized** (page clock): from the page sending the cell's ``execute_request`` to
  the View's ``initialized`` passing through the page; with the steps between (the App frame's
  widget model arriving, the cell's result arriving, the proxy's ``sandbox-proxy-ready``, the
  View's ``ui/initialize``), so what dominates can be read off.
* **App round trip**: ``tools/call`` posted from inside the View (as its button does) until the
  answer is back in the View, timed there with ``performance.now()``: View → proxy → page →
  kernel (comm) → MCP session → server and back; and the kernel's share of it (App lane entry
  in → answer out, transcript times).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
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

EXTENSION = "--ServerApp.jpserver_extensions={'mcp_nb.auth.jupyter': True}"
STOCK = "jupyter_server.services.kernels.connection.channels.ZMQChannelsWebsocketConnection"
ISO = re.compile(r"\d{4}-\d\d-\d\dT")

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

#: Installed before the notebook's page loads: what reaches the top page, and when.
PAGE_CLOCK = """(() => {
  if (window !== window.top) return;
  window.__mcpnbTimeline = [];
  const steps = new Set(["ui/notifications/sandbox-proxy-ready", "ui/initialize",
                         "ui/notifications/initialized"]);
  window.addEventListener("message", (event) => {
    const method = event.data && event.data.method;
    if (steps.has(method)) window.__mcpnbTimeline.push([performance.now(), method]);
  }, true);
  // The App frame (the sandbox proxy) entering the page: from here to sandbox-proxy-ready is
  // what a proxy frame kept warm could save at most.
  new MutationObserver((records) => {
    for (const record of records) {
      for (const node of record.addedNodes) {
        if (node.nodeType === 1 && (node.matches("iframe.mcpnb-app-frame")
            || node.querySelector("iframe.mcpnb-app-frame"))) {
          window.__mcpnbTimeline.push([performance.now(), "frame in page"]);
        }
      }
    }
  }).observe(document, { childList: true, subtree: true });
})();"""

#: Once the notebook is open: the kernel's messages as the page sends and receives them.
KERNEL_CLOCK = """() => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  kernel.anyMessage.connect((sender, args) => {
    const msg = args.msg;
    const type = msg.header.msg_type;
    let step = null;
    if (args.direction === "send" && type === "execute_request") step = "execute_request";
    else if (type === "comm_open" && msg.content.data && msg.content.data.state
             && "proxy_doc" in msg.content.data.state) step = "frame model";
    else if (type === "execute_result") step = "execute_result";
    if (step) window.__mcpnbTimeline.push([performance.now(), step]);
  });
}"""

ROUND_TRIP = """async (count) => {
  const times = [];
  for (let i = 0; i < count; i++) {
    const id = "bench-" + Math.random().toString(36).slice(2) + "-" + i;
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

STEPS = ("frame model", "execute_result", "frame in page", "ui/notifications/sandbox-proxy-ready",
         "ui/initialize", "ui/notifications/initialized")


def _run_cell(page: Any, index: int) -> None:
    page.evaluate("""(index) => {
        const panel = window.jupyterapp.shell.currentWidget;
        panel.content.activeCellIndex = index;
        return window.jupyterapp.commands.execute('notebook:run-cell');
    }""", index)


def _wait_prompt(page: Any, index: int) -> None:
    page.wait_for_function(
        "(i) => /\\[\\d+\\]/.test(window.jupyterapp.shell.currentWidget"
        ".content.widgets[i].promptNode.textContent)", arg=index, polling=50)


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"n": len(values), "median_ms": round(statistics.median(ordered), 1),
            "min_ms": round(ordered[0], 1), "max_ms": round(ordered[-1], 1)}


def _render_steps(timeline: list[list[Any]]) -> list[dict[str, float]]:
    """Each render's steps, in ms after its execute_request (page clock)."""
    renders: list[dict[str, float]] = []
    for at, step in timeline:
        if step == "execute_request":
            renders.append({"_start": at})
        elif renders and step not in renders[-1]:
            renders[-1][step] = at - renders[-1]["_start"]
    return [{k: v for k, v in r.items() if k != "_start"} for r in renders]


class Side:
    """One JupyterLab (TCP_NODELAY on or off) and its notebook page."""

    def __init__(self, nodelay: bool, renders: int, command: str, stack: ExitStack) -> None:
        self.nodelay = nodelay
        options = [EXTENSION] if nodelay else [
            EXTENSION, f"--ServerApp.kernel_websocket_connection_class={STOCK}"]
        root = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        home = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        sources = ["%load_ext mcp_nb", f"basic = %mcp connect basic -- {command}",
                   "%mcp call get-time"]  # the page's first render, on its own
        # Cache off, on, off, on …: both sides of the lever in the same minutes.
        sources += [f"basic.app_resources.enabled = {index % 2 == 1}\n%mcp call get-time"
                    for index in range(2 * renders)]
        sources.append(MEASURE)
        self.measure_cell = len(sources) - 1
        write_notebook(root / "bench.ipynb", sources)
        self.server = JupyterServer(root, home, LAB, options=options)
        stack.callback(self.server.stop)
        self.page: Any = None
        self.trips: list[float] = []

    def open(self, page: Any) -> None:
        self.page = page
        page.add_init_script(PAGE_CLOCK)
        open_notebook(page, self.server, "bench.ipynb")
        page.evaluate(KERNEL_CLOCK)
        for index in (0, 1):
            _run_cell(page, index)
            _wait_prompt(page, index)

    def render(self, index: int) -> None:
        self.page.bring_to_front()  # the shown tab: a hidden one may be throttled
        # In view, as a person running it sees it (JupyterLab may skip drawing cells out of
        # view, and an App that is not drawn may not start).
        cell(self.page, index).scroll_into_view_if_needed()
        _run_cell(self.page, index)
        (outputs(cell(self.page, index)).frame_locator("iframe.mcpnb-app-frame")
         .frame_locator("iframe").locator("#server-time").filter(has_text=ISO)
         .wait_for(timeout=90_000))
        self.page.wait_for_timeout(100)  # let the render settle before the next cell

    def view(self) -> Any:
        return next(frame for frame in self.page.frames if frame.parent_frame is not None
                    and frame.parent_frame.url == "about:srcdoc")

    def round_trips(self, count: int) -> None:
        self.page.bring_to_front()
        self.trips += self.view().evaluate(ROUND_TRIP, count)

    def results(self, renders: int) -> dict[str, Any]:
        timeline = self.page.evaluate("() => window.__mcpnbTimeline")
        _run_cell(self.page, self.measure_cell)
        printed = outputs(cell(self.page, self.measure_cell)).locator("pre").first
        printed.wait_for()
        times = json.loads(printed.inner_text())
        log = self.server.log_path.read_text(errors="replace")
        applied = "TCP_NODELAY=on" in log
        assert applied == self.nodelay, f"TCP_NODELAY: expected {self.nodelay}, log {applied}"
        ready, starts = times["initialized"], times["calls"]
        to_initialized = [(done - start) * 1000 for start, done in
                          zip(starts[:1 + 2 * renders], ready[:1 + 2 * renders], strict=True)]
        steps = _render_steps(timeline)
        result: dict[str, Any] = {
            "first_render_ms": round(to_initialized[0], 1),
            "app_tools_call_round_trip": _summary(self.trips),
            "of_which_in_the_kernel": _summary([t * 1000 for t in times["kernel"]]),
        }
        for label, parity in (("cache_off", 0), ("cache_on", 1)):
            mine = [v for index, v in enumerate(to_initialized[1:]) if index % 2 == parity]
            page_steps = [s for index, s in enumerate(steps[1:]) if index % 2 == parity]
            result[label] = {
                "call_to_initialized": _summary(mine),
                "run_to_step_ms": {step: round(statistics.median(
                    s[step] for s in page_steps if step in s), 1) for step in STEPS},
            }
        return result


def measure(renders: int, calls: int, command: str) -> dict[str, dict[str, Any]]:
    """Both JupyterLabs at once, taking turns cell by cell and block by block, so a busy
    minute of this shared machine slows both sides of every lever alike."""
    with ExitStack() as stack:
        sides = {"off": Side(False, renders, command, stack),
                 "on": Side(True, renders, command, stack)}
        # One browser, a page per server (each its own tab, as a person with two would have).
        first = stack.enter_context(browser_page(sides["off"].server, also=[sides["on"].server]))
        sides["off"].open(first)
        sides["on"].open(first.context.new_page())
        for index in range(2, 3 + 2 * renders):
            for side in sides.values():
                side.render(index)
        for side in sides.values():
            side.view().evaluate(ROUND_TRIP, 5)  # warm-up, not counted
        block = 10
        for done in range(0, calls, block):
            for side in sides.values():
                side.round_trips(min(block, calls - done))
        return {name: side.results(renders) for name, side in sides.items()}


def table(results: dict[str, dict[str, Any]]) -> str:
    """The Markdown table for RESULTS.md: every lever's side, one row per figure."""
    rows = ["| figure | nodelay off, cache off | nodelay off, cache on | nodelay on, cache off "
            "| nodelay on, cache on | target |", "|---|---:|---:|---:|---:|---:|"]
    sides = [(n, c) for n in ("off", "on") for c in ("cache_off", "cache_on")]

    def cells(get: Any) -> str:
        return " | ".join(get(results[n], c) for n, c in sides)

    rows.append("| `%mcp call` → `initialized`, median (kernel clock) | " + cells(
        lambda r, c: f"{r[c]['call_to_initialized']['median_ms']} ms") + " | ≤ 300 ms |")
    rows.append("| … min-max | " + cells(
        lambda r, c: f"{r[c]['call_to_initialized']['min_ms']}-"
                     f"{r[c]['call_to_initialized']['max_ms']}") + " | |")
    for step in STEPS:
        rows.append(f"| run cell → {step}, median (page clock) | " + cells(
            lambda r, c, step=step: f"{r[c]['run_to_step_ms'][step]} ms") + " | |")
    trip = {n: results[n]["app_tools_call_round_trip"] for n in ("off", "on")}
    kernel = {n: results[n]["of_which_in_the_kernel"] for n in ("off", "on")}
    rows.append(f"| App `tools/call` round trip, median (min-max) | {trip['off']['median_ms']} ms "
                f"({trip['off']['min_ms']}-{trip['off']['max_ms']}) | (same) | "
                f"{trip['on']['median_ms']} ms ({trip['on']['min_ms']}-{trip['on']['max_ms']}) "
                "| (same) | ≤ 20 ms |")
    rows.append(f"| … of which in the kernel, median | {kernel['off']['median_ms']} ms | (same) | "
                f"{kernel['on']['median_ms']} ms | (same) | |")
    rows.append(f"| first render of the page (kernel clock) | {results['off']['first_render_ms']}"
                f" ms | | {results['on']['first_render_ms']} ms | | |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--renders", type=int, default=10, help="renders per cache side")
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--json", type=Path, help="also write the figures here as JSON")
    args = parser.parse_args()
    command = shlex.join(install_example())
    load = os.getloadavg()[0]
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    results = measure(args.renders, args.calls, command)
    results["run"] = {"date": started, "load_before": load,  # type: ignore[assignment]
                      "load_after": os.getloadavg()[0]}
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    print(f"{started}; load average {load:.2f} before, {os.getloadavg()[0]:.2f} after\n")
    print(table(results))


if __name__ == "__main__":
    main()
