"""MCP Apps in a real JupyterLab: the App's round trip and the time to ``initialized``, each lever
on and off in one run.

Run: ``python benchmarks/apps_latency.py [--renders N] [--calls N] [--json FILE]`` (needs what
the browser tests need: Debian's chromium, the test extras, node and npm; the official example
server is installed into ``.cache/`` on first use). Prints Markdown tables (and JSON with
``--json``); they go into ``benchmarks/RESULTS.md`` by hand, beside the machine's load (the
run prints ``uptime``'s load averages before and after).

The levers, each measured with and without in the same run:

* **nodelay**: the kit's server extension sets ``TCP_NODELAY`` on Jupyter Server's kernel
  websockets (:mod:`mcp_nb.kernel_websocket`). *Off* is the same extension with the stock
  connection class named in the configuration (which the extension respects), so nothing
  else differs. Each side has its own JupyterLab and browser page, both running at once and
  taking turns cell by cell (and block of 10 round trips by block), so the machine's load
  drifts over both alike.
* **cache**: the session's copy of the App's ``ui://`` resource (:mod:`mcp_nb.notebook.
  app_cache`; ``hosted.app_resources.enabled``).
* **frame_first**, **prestart**, **warm_proxy**, **warm_view**, **channel** (:mod:`mcp_nb.
  notebook.app_levers`): the App frame's widget first and the cell's other parts made after it from
  their drafts; the sandbox proxy loaded and given the View's HTML when the frame's model
  arrives, off-screen, then moved into the cell; one proxy kept loaded ahead for the next
  App; a View of the last App started ahead for the next render of the same App; the
  frame's messages through the App channel. Switched per cell through
  ``MCP_NB_APP_LEVERS_OFF`` in the kernel.

Within each notebook the render cells cycle through :data:`CONFIGS` (all on, all off,
warm_view off, and each other lever off on its own with warm_view off too: a warm View
would hide what the others do), so every configuration is measured in the same minutes.
Every render but the page's first is a render of an App the page showed before, so with
warm_view on it adopts a warm View; the page's first render (cold) has its own line, and
warm_view off is what a render of an App the page has not shown yet costs.

Figures:

* **call → initialized** (kernel clock): ``%mcp call get-time`` against
  ``@modelcontextprotocol/server-basic-vanillajs`` (stdio; its App is 218 KB of HTML and
  script), one cell at a time, 1.5 s apart (:data:`SETTLE_MS`); from the ``tools/call``
  request on the MCP wire to the View's ``ui/notifications/initialized`` reaching the kernel,
  both read from the session's transcript. The first render of a page (anywidget's module
  load, the sandbox's first frame) is reported on its own line. A second row renders the
  lab's own small App (``python -m mcp_nb.lab --apps``, ``%mcp call clock``, 8 KB written by
  hand) all on and all off, on the nodelay side only.
* **run → initialized** (page clock): from the page sending the cell's ``execute_request``
  to the View's ``initialized`` passing through the page, with the steps between (the App
  frame's widget model arriving, the cell's result, ``app_frame.js``'s ``initialize`` and
  ``render``, the View's document starting, its ``ui/initialize``), so what dominates can be
  read off.
* **App round trip**: ``tools/call`` posted from inside the View (as its button does) until
  the answer is back in the View, timed there with ``performance.now()``: View → proxy →
  page → kernel → MCP session → server and back; and the kernel's share of it (App lane
  entry in → answer out, transcript times). Timed in two Views of each page, in turns,
  block of 10 by block: one drawn with the **channel** lever off (the page to the kernel as
  widget messages on the kernel's websocket and shell channel) and one with it on (the App
  channel: :mod:`mcp_nb.notebook.app_channel`, the kit's server extension's websocket to a
  socket of the kernel's).
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
    ARTIFACTS,
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
PAGE_LEVERS = ("frame_first", "prestart", "warm_proxy", "warm_view")

#: name → (levers off, cache on): every render configuration, measured in turns.
CONFIGS: dict[str, tuple[tuple[str, ...], bool]] = {
    "all on": ((), True),
    "all off": ((*PAGE_LEVERS, "channel"), False),
    "warm_view off": (("warm_view",), True),
    "warm_view, channel off": (("warm_view", "channel"), True),
    "warm_view, cache off": (("warm_view",), False),
    "warm_view, frame_first off": (("warm_view", "frame_first"), True),
    "warm_view, prestart off": (("warm_view", "prestart"), True),
    "warm_view, warm_proxy off": (("warm_view", "warm_proxy"), True),
}
#: The App round trip's own lever: the App channel (mcp_nb.notebook.app_channel), per View.
TRIP_CONFIGS = {"channel off": "channel", "channel on": ""}
#: The lab's small App: the two ends, and a cold render with the other levers on.
LAB_CONFIGS = ("all on", "warm_view off", "all off")


def _config_cell(session: str, config: str, call: str) -> str:
    off, cache = CONFIGS[config]
    return (f"import os; os.environ['MCP_NB_APP_LEVERS_OFF'] = {','.join(off)!r}\n"
            f"{session}.app_resources.enabled = {cache}\n%mcp use {session}\n%mcp call {call}")


MEASURE = """import json
def _times(hosted):
    entries = list(hosted.session.transcript)
    calls = [e.time for e in entries if e.direction == "send" and e.method == "tools/call"]
    ready = [e.time for e in entries if e.direction == "app→host"
             and e.method == "ui/notifications/initialized"]
    asked = {e.id: e.time for e in entries if e.direction == "app→host"
             and e.method == "tools/call" and str(e.id).startswith("bench-")}
    answered = {e.id: e.time for e in entries if e.direction == "host→app" and e.id in asked}
    return {"calls": calls, "initialized": ready,
            "kernel": {name: [answered[i] - asked[i] for i in asked
                              if i in answered and i.startswith("bench-" + name + "-")]
                       for name in ("channel off", "channel on")}}
print(json.dumps({name: _times(hosted) for name, hosted in SESSIONS.items()}))"""

#: Installed before the notebook's page loads: what reaches the top page, and when.
PAGE_CLOCK = """(() => {
  if (window !== window.top) return;
  window.__mcpnbTimeline = [];
  const steps = new Set(["ui/initialize", "ui/notifications/initialized"]);
  window.addEventListener("message", (event) => {
    const method = event.data && event.data.method;
    if (steps.has(method)) window.__mcpnbTimeline.push([performance.now(), method]);
  }, true);
  // app_frame.js's own steps (performance marks), as they happen.
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.name.startsWith("mcp_nb:")) {
        window.__mcpnbTimeline.push([entry.startTime, entry.name]);
      }
    }
  }).observe({ entryTypes: ["mark"] });
  // The App frame entering the cell.
  new MutationObserver((records) => {
    for (const record of records) {
      for (const node of record.addedNodes) {
        if (node.nodeType === 1 && (node.matches("iframe.mcpnb-app-frame")
            || node.querySelector("iframe.mcpnb-app-frame")) && node.closest(".jp-Cell")) {
          window.__mcpnbTimeline.push([performance.now(), "frame in cell"]);
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

ROUND_TRIP = """async ([count, name]) => {
  const times = [];
  for (let i = 0; i < count; i++) {
    const id = "bench-" + name + "-" + Math.random().toString(36).slice(2) + "-" + i;
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

#: After each render, before the next cell: what the page does in the background for the
#: next App (a warm proxy's refill, a warm View) done by then. With 100 ms (until 2026-11-28)
#: the other page's warm View could start during a render and be counted in it.
SETTLE_MS = 1500

#: In the View's frame: when its document started (ms after the page's time origin).
VIEW_START = "() => performance.timeOrigin"

STEPS = ("frame model", "execute_result", "mcp_nb:initialize", "mcp_nb:render",
         "View document starts", "frame in cell", "ui/initialize",
         "ui/notifications/initialized")


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
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return {"n": len(values), "median_ms": round(statistics.median(ordered), 1),
            "p90_ms": round(p90, 1), "min_ms": round(ordered[0], 1),
            "max_ms": round(ordered[-1], 1)}


def _render_steps(timeline: list[list[Any]]) -> list[dict[str, float]]:
    """Each render's steps, in ms after its execute_request ("_start", page clock)."""
    renders: list[dict[str, float]] = []
    for at, step in sorted(timeline, key=lambda item: item[0]):
        if step == "execute_request":
            renders.append({"_start": at})
        elif renders and step not in renders[-1]:
            renders[-1][step] = at - renders[-1]["_start"]
    return renders


class Side:
    """One JupyterLab (TCP_NODELAY on or off) and its notebook page: the basic example's App
    in every configuration, in turns, and (``small``) the lab's App, all on and all off."""

    def __init__(self, nodelay: bool, renders: int, command: str, stack: ExitStack, *,
                 small: bool) -> None:
        self.nodelay = nodelay
        options = [EXTENSION] if nodelay else [
            EXTENSION, f"--ServerApp.kernel_websocket_connection_class={STOCK}"]
        root = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        home = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        sessions = {"basic": command}
        if small:
            sessions["lab"] = shlex.join([sys.executable, "-m", "mcp_nb.lab", "--apps"])
        sources = ["%load_ext mcp_nb"]
        sources += [f"{name} = %mcp connect {name} -- {cmd}" for name, cmd in sessions.items()]
        sources.append(f"SESSIONS = {{{', '.join(f'{n!r}: {n}' for n in sessions)}}}")
        self.setup = len(sources)
        sources.append("%mcp use basic\n%mcp call get-time")  # the page's first render, alone
        if small:
            sources.append("%mcp use lab\n%mcp call clock")  # and the lab App's first
        #: Per round, the (cell index, session, config) of its renders, in the order they run.
        self.rounds: list[list[tuple[int, str, str]]] = []
        for _ in range(renders):
            self.rounds.append([])
            for session, configs, call in (("basic", CONFIGS, "get-time"),
                                           ("lab", LAB_CONFIGS if small else (), "clock")):
                for config in configs:
                    self.rounds[-1].append((len(sources), session, config))
                    sources.append(_config_cell(session, config, call))
        self.plan = [render for round_ in self.rounds for render in round_]
        #: The Views the round trips are timed in, one per TRIP_CONFIGS entry (drawn after
        #: the page's first App: by then the page's App channel is open).
        self.trip_cells: dict[str, int] = {}
        for name, off in TRIP_CONFIGS.items():
            self.trip_cells[name] = len(sources)
            sources.append(f"import os; os.environ['MCP_NB_APP_LEVERS_OFF'] = {off!r}\n"
                           "%mcp use basic\n%mcp call get-time")
        sources.append(MEASURE)
        self.measure_cell = len(sources) - 1
        write_notebook(root / "bench.ipynb", sources)
        self.server = JupyterServer(root, home, LAB, options=options)
        stack.callback(self.server.stop)
        self.small = small
        self.page: Any = None
        self.trips: dict[str, list[float]] = {}
        #: Per render cell: (session, config, the View's document start, page clock).
        self.views: list[tuple[str, str, float | None]] = []

    def open(self, page: Any) -> None:
        self.page = page
        #: The page's console (every frame's), printed if an App does not come up.
        self.console: list[str] = []
        page.on("console", lambda message: self.console.append(f"{message.type}: {message.text}"))
        page.on("pageerror", lambda error: self.console.append(f"page error: {error}"))
        page.add_init_script(PAGE_CLOCK)
        open_notebook(page, self.server, "bench.ipynb")
        page.evaluate(KERNEL_CLOCK)
        for index in range(self.setup):
            _run_cell(page, index)
            _wait_prompt(page, index)
        self.render(self.setup, "basic")
        if self.small:
            self.render(self.setup + 1, "lab")

    def render(self, index: int, session: str) -> float | None:
        """Run one App cell and wait until its View shows the tool's result; return when
        the View's document started (page clock, ms), if it can be told."""
        self.page.bring_to_front()  # the shown tab: a hidden one may be throttled
        # In view, as a person running it sees it (JupyterLab may skip drawing cells out of
        # view, and an App that is not drawn may not start).
        cell(self.page, index).scroll_into_view_if_needed()
        _run_cell(self.page, index)
        view = (outputs(cell(self.page, index)).frame_locator("iframe.mcpnb-app-frame")
                .frame_locator("iframe"))
        shown = (view.locator("#server-time").filter(has_text=ISO) if session == "basic"
                 else view.locator("#result").filter(has_not_text="waiting"))
        try:
            shown.wait_for(timeout=90_000)
        except Exception:
            # What the cell and the page said, for whoever reads the failed run.
            self.page.screenshot(path=str(ARTIFACTS / "apps-latency-failure.png"),
                                 full_page=True)
            proxies = outputs(cell(self.page, index)).locator("iframe.mcpnb-app-frame")
            views = [len(proxies.nth(i).element_handle().content_frame().child_frames)
                     for i in range(proxies.count())]
            print(f"cell {index}: {len(views)} App frame(s), with {views} View(s) each",
                  file=sys.stderr)
            print(f"cell {index} did not show its App; the cell says:",
                  outputs(cell(self.page, index)).last.inner_text()[:2000],
                  "the page's console:", *self.console[-40:], sep="\n", file=sys.stderr)
            raise
        proxy = outputs(cell(self.page, index)).locator("iframe.mcpnb-app-frame")
        inner = proxy.element_handle().content_frame().child_frames[0]
        origin = self.page.evaluate("() => performance.timeOrigin")
        started = inner.evaluate(VIEW_START) - origin
        # A person reads the App before running the next cell; the page's work for the next
        # App (refilling the warm proxy, starting a warm View 500 ms after the last App was
        # drawn) happens then, and not during the next render measured, on this page or on
        # the other JupyterLab's, which shares the browser and the machine's two cores.
        self.page.wait_for_timeout(SETTLE_MS)
        return started

    def round_trips(self, count: int) -> None:
        """``count`` round trips in each round-trip View, in turns."""
        self.page.bring_to_front()
        for name in TRIP_CONFIGS:
            self.trips.setdefault(name, []).extend(
                self._view(self.trip_cells[name]).evaluate(ROUND_TRIP, [count, name]))

    def clear(self, renders: list[tuple[int, str, str]]) -> None:
        """Clear these render cells' outputs, and let the page and kernel settle."""
        for index, _session, _config in renders:
            self.page.evaluate("""(index) => {
                const panel = window.jupyterapp.shell.currentWidget;
                panel.content.activeCellIndex = index;
                return window.jupyterapp.commands.execute('notebook:clear-cell-output');
            }""", index)
        self.page.wait_for_timeout(500)

    def _view(self, index: int) -> Any:
        """The View in cell ``index``."""
        proxy = outputs(cell(self.page, index)).locator("iframe.mcpnb-app-frame")
        return proxy.element_handle().content_frame().child_frames[0]

    def trip_views(self) -> None:
        """Draw the round trips' Views (the basic example's session is the one timed)."""
        for index in self.trip_cells.values():
            self.render(index, "basic")

    def results(self, starts: dict[int, float | None]) -> dict[str, Any]:
        timeline = self.page.evaluate("() => window.__mcpnbTimeline")
        _run_cell(self.page, self.measure_cell)
        printed = outputs(cell(self.page, self.measure_cell)).locator("pre").first
        printed.wait_for()
        times = json.loads(printed.inner_text())
        log = self.server.log_path.read_text(errors="replace")
        applied = "TCP_NODELAY=on" in log
        assert applied == self.nodelay, f"TCP_NODELAY: expected {self.nodelay}, log {applied}"
        steps = _render_steps(timeline)[self.setup:]  # from the first render cell on
        first = 1 + (1 if self.small else 0)
        renders = steps[first:first + len(self.plan)]
        assert len(renders) == len(self.plan), (len(renders), len(self.plan))
        to_initialized: dict[str, list[float]] = {}
        for name in times:
            ready, calls = times[name]["initialized"], times[name]["calls"]
            # The cells' calls come first; the View's own (the round trips) after them all.
            to_initialized[name] = [(done - start) * 1000
                                    for start, done in zip(calls, ready, strict=False)]
        result: dict[str, Any] = {
            "first_render_ms": round(to_initialized["basic"][0], 1),
            "app_tools_call_round_trip": {name: _summary(trips)
                                          for name, trips in self.trips.items()},
            "of_which_in_the_kernel": {
                name: _summary([t * 1000 for t in times["basic"]["kernel"][name]])
                for name in TRIP_CONFIGS},
            "basic": {}, "lab": {},
        }
        seen = {"basic": 1, "lab": 1}  # each session's first render is on its own
        by: dict[tuple[str, str], dict[str, list[float]]] = {}
        for (index, session, config), page_steps in zip(self.plan, renders, strict=True):
            figures = by.setdefault((session, config), {"call_to_initialized": []})
            figures["call_to_initialized"].append(to_initialized[session][seen[session]])
            seen[session] += 1
            start = starts.get(index)
            if start is not None:
                page_steps = {**page_steps,
                              "View document starts": start - page_steps["_start"]}
            for step in ("ui/notifications/initialized", *STEPS):
                if step in page_steps and page_steps[step] <= page_steps.get(
                        "ui/notifications/initialized", float("inf")):  # not the next App's
                    figures.setdefault(step, []).append(page_steps[step])
        for (session, config), figures in by.items():
            result[session][config] = {
                "in_order_ms": [round(v, 1) for v in figures["call_to_initialized"]],
                "call_to_initialized": _summary(figures.pop("call_to_initialized")),
                "run_to_initialized": _summary(figures["ui/notifications/initialized"]),
                "run_to_step_ms": {step: round(statistics.median(values), 1)
                                   for step, values in figures.items()},
            }
        return result


def measure(renders: int, calls: int, command: str) -> dict[str, dict[str, Any]]:
    """Both JupyterLabs at once, taking turns cell by cell and block by block, so a busy
    minute of this shared machine slows both sides of every lever alike."""
    with ExitStack() as stack:
        sides = {"off": Side(False, renders, command, stack, small=False),
                 "on": Side(True, renders, command, stack, small=True)}
        # One browser, a page per server (each its own tab, as a person with two would have).
        first = stack.enter_context(browser_page(sides["off"].server, also=[sides["on"].server]))
        sides["off"].open(first)
        sides["on"].open(first.context.new_page())
        starts: dict[str, dict[int, float | None]] = {"off": {}, "on": {}}
        for number in range(renders):
            # Configuration by configuration, the two sides in turn; then the lab's App.
            turns = max(len(side.rounds[number]) for side in sides.values())
            for turn in range(turns):
                for name, side in sides.items():
                    if turn < len(side.rounds[number]):
                        index, session, _config = side.rounds[number][turn]
                        starts[name][index] = side.render(index, session)
            # A notebook shows a handful of Apps, not a hundred: the round's are cleared
            # (each frame goes, the kernel hears so) before the next round starts.
            for side in sides.values():
                side.clear(side.rounds[number])
        for side in sides.values():
            side.trip_views()
            for name, index in side.trip_cells.items():
                side._view(index).evaluate(ROUND_TRIP, [5, name])  # warm-up, not counted
        block = 10
        for done in range(0, calls, block):
            for side in sides.values():
                side.round_trips(min(block, calls - done))
        return {name: side.results(starts[name]) for name, side in sides.items()}


def _cell(figure: dict[str, Any]) -> str:
    return f"{figure['median_ms']} ms (p90 {figure['p90_ms']})"


def table(results: dict[str, dict[str, Any]]) -> str:
    """The Markdown tables for RESULTS.md."""
    rows = ["`%mcp call` → the View's `initialized`, kernel clock, median (p90), "
            f"{results['on']['basic']['all on']['call_to_initialized']['n']} renders each:", "",
            "| configuration | nodelay off | nodelay on | target |", "|---|---:|---:|---:|"]
    for config in CONFIGS:
        rows.append(f"| {config} | "
                    + " | ".join(_cell(results[n]["basic"][config]["call_to_initialized"])
                                 for n in ("off", "on")) + " | ≤ 300 ms |")
    for config in LAB_CONFIGS:
        rows.append(f"| the lab's small App, {config} | | "
                    + _cell(results["on"]["lab"][config]["call_to_initialized"]) + " | |")
    rows.append(f"| first render of the page | {results['off']['first_render_ms']} ms | "
                f"{results['on']['first_render_ms']} ms | |")
    rows += ["", "Page clock, nodelay on: ms after the page sent `execute_request`, medians:", "",
             "| step | " + " | ".join(CONFIGS) + " |",
             "|---|" + "---:|" * len(CONFIGS)]
    steps = results["on"]["basic"]
    for step in STEPS:
        rows.append(f"| {step} | " + " | ".join(
            str(steps[c]["run_to_step_ms"].get(step, "")) for c in CONFIGS) + " |")
    trip = {n: results[n]["app_tools_call_round_trip"] for n in ("off", "on")}
    kernel = {n: results[n]["of_which_in_the_kernel"] for n in ("off", "on")}
    calls = trip["on"]["channel on"]["n"]
    rows += ["", f"App `tools/call` round trip, median (p90), {calls} calls each:", "",
             "| View | nodelay off | nodelay on | target |", "|---|---:|---:|---:|"]
    for name in TRIP_CONFIGS:
        rows += [f"| {name} | {_cell(trip['off'][name])} | {_cell(trip['on'][name])} "
                 "| ≤ 20 ms |",
                 f"| … {name}: min; in the kernel, median | {trip['off'][name]['min_ms']} ms; "
                 f"{kernel['off'][name]['median_ms']} ms | {trip['on'][name]['min_ms']} ms; "
                 f"{kernel['on'][name]['median_ms']} ms | |"]
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--renders", type=int, default=10,
                        help="renders per configuration and side")
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--json", type=Path, help="also write the figures here as JSON")
    args = parser.parse_args()
    command = shlex.join(install_example())
    load = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    results = measure(args.renders, args.calls, command)
    after = os.getloadavg()
    results["run"] = {"date": started, "load_before": load,  # type: ignore[assignment]
                      "load_after": after}
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    print(f"{started}; load averages (1, 5, 15 min) {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
          f"before, {after[0]:.2f} {after[1]:.2f} {after[2]:.2f} after\n")
    print(table(results))


if __name__ == "__main__":
    main()
