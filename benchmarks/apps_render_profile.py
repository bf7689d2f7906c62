"""Where an MCP App's render goes: ``%mcp call`` → the View's ``initialized``, step by step.

Run: ``python benchmarks/apps_render_profile.py [--renders N] [--trace] [--json FILE]``
(needs what ``benchmarks/apps_latency.py`` needs). One JupyterLab (the kit's server extension,
``TCP_NODELAY`` on, the session's resource cache on), the official
``@modelcontextprotocol/server-basic-vanillajs`` over stdio, ``%mcp call get-time`` one cell at a
time; the page's first render is left out. Every time is in milliseconds after the page sent
the cell's ``execute_request``, on one clock (epoch milliseconds: the kernel's message
headers, ``time.time()`` in the kernel, ``performance.timeOrigin + performance.now()`` in every
frame of the page; one machine):

* kernel: the cell starts (``execute_input``), the ``tools/call`` goes out and its answer is
  back, the App view is built (``resources/read`` or the session's copy, the policy, the
  widgets), the App frame's ``comm_open`` goes out, the cell's result, ``idle``;
* page: each of those arriving, the App frame's widget rendering (``performance`` marks of
  ``app_frame.js``), the frame entering the page, the sandbox proxy's document starting and
  saying ready, the View's document starting, parsed and loaded, its ``ui/initialize`` and
  ``initialized``;
* with ``--trace``, Chromium's trace of the renders: how long the renderer's main thread (which
  JupyterLab, the proxy and the View share: opaque-origin frames stay in their parent's
  process) was busy in each window between two steps, and on what.

The table goes into ``benchmarks/RESULTS.md`` by hand, beside the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

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

from benchmarks.apps_latency import EXTENSION, ISO, _run_cell, _wait_prompt  # noqa: E402

#: Kernel-side marks (epoch ms), by wrapping the steps of an App cell; benchmark only.
KERNEL_MARKS = """import time, json
import mcp_nb.notebook.apps as _apps
import mcp_nb.notebook.magics.operations as _ops
_marks = []
def _wrap(owner, name, label):
    original = getattr(owner, name)
    def wrapped(*args, **kwargs):
        _marks.append((time.time() * 1000, label))
        try:
            return original(*args, **kwargs)
        finally:
            _marks.append((time.time() * 1000, label + " done"))
    setattr(owner, name, wrapped)
_wrap(_ops, "app_view_for_call", "app view")
_wrap(_apps.AppView, "read_resource", "resource and policy")
_wrap(_apps.AppView, "load", "frame widgets")
_events = get_ipython().events
_events.register("pre_run_cell", lambda *a: _marks.append((time.time() * 1000, "cell starts")))
_events.register("post_run_cell", lambda *a: _marks.append((time.time() * 1000, "cell ends")))
import cProfile, pstats, io, os
_profiler = cProfile.Profile() if os.environ.get("PROFILE_CPROFILE") else None
if _profiler is not None:
    _events.register("pre_run_cell", lambda *a: _profiler.enable())
    _events.register("post_run_cell", lambda *a: _profiler.disable())"""

MEASURE = """start = (time.time() - basic.session.lifecycle.elapsed()) * 1000
wire = [(start + e.time * 1000, e.direction) for e in basic.session.transcript
        if e.method == "tools/call" and e.direction == "send"]
answers = {e.id for e in basic.session.transcript if e.method == "tools/call"
           and e.direction == "send"}
back = [start + e.time * 1000 for e in basic.session.transcript
        if e.direction == "recv" and e.id in answers]
if _profiler is not None:
    _out = io.StringIO()
    pstats.Stats(_profiler, stream=_out).sort_stats("cumulative").print_stats(60)
    open(os.environ["PROFILE_CPROFILE"], "w").write(_out.getvalue())
print(json.dumps({"marks": _marks, "sent": [t for t, _ in wire], "answered": back}))"""

#: The page's clock, installed in every frame before its scripts (so the proxy's and the
#: View's documents get it too): messages seen at the top, the App frame entering the page.
PAGE_CLOCK = """(() => {
  const now = () => performance.timeOrigin + performance.now();
  if (window !== window.top) return;
  window.__profile = { events: [] };
  const log = (what, extra) => window.__profile.events.push(
    Object.assign({ at: now(), what }, extra || {}));
  window.__profileLog = log;
  const steps = new Set(["ui/notifications/sandbox-proxy-ready", "ui/initialize",
                         "ui/notifications/initialized"]);
  window.addEventListener("message", (event) => {
    const method = event.data && event.data.method;
    if (steps.has(method)) log(method);
  }, true);
  new MutationObserver((records) => {
    for (const record of records) {
      for (const node of record.addedNodes) {
        if (node.nodeType !== 1) continue;
        const has = (selector) => node.matches(selector) || node.querySelector(selector);
        if (has(".mcpnb-app")) log("App box in page");
        if (has("iframe.mcpnb-app-frame")) log("frame in page");
      }
    }
  }).observe(document, { childList: true, subtree: true });
})();"""

KERNEL_LOG = """() => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  kernel.anyMessage.connect((sender, args) => {
    const msg = args.msg;
    const type = msg.header.msg_type;
    const extra = { type, dir: args.direction, kernelAt: Date.parse(msg.header.date) };
    if (type === "comm_open") {
      const state = (msg.content.data || {}).state || {};
      extra.model = state._model_name;
      if ("proxy_doc" in state) extra.frame = true;
      extra.bytes = JSON.stringify(msg.content).length;
    }
    if (type === "status") extra.state = msg.content.execution_state;
    window.__profileLog("kernel " + type, extra);
  });
}"""

#: In a frame: when its document started, was parsed, loaded (epoch ms).
DOCUMENT_TIMES = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const at = (v) => (nav && v ? performance.timeOrigin + v : null);
  return { origin: performance.timeOrigin, interactive: at(nav && nav.domInteractive),
           contentLoaded: at(nav && nav.domContentLoadedEventEnd),
           loaded: at(nav && nav.loadEventEnd) };
}"""


class Profile:
    def __init__(self, renders: int, command: str, stack: ExitStack, levers_off: str) -> None:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        home = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        sources = ["%load_ext mcp_nb", f"basic = %mcp connect basic -- {command}",
                   f"import os; os.environ['MCP_NB_APP_LEVERS_OFF'] = {levers_off!r}\n"
                   + KERNEL_MARKS, "%mcp call get-time"]  # the page's first render, left out
        sources += ["%mcp call get-time"] * renders
        sources.append(MEASURE)
        self.first = 4
        self.measure_cell = len(sources) - 1
        write_notebook(root / "profile.ipynb", sources)
        self.server = JupyterServer(root, home, LAB, options=[EXTENSION])
        stack.callback(self.server.stop)
        self.page: Any = None
        self.documents: list[dict[str, Any]] = []

    def open(self, page: Any) -> None:
        self.page = page
        page.add_init_script(PAGE_CLOCK)
        open_notebook(page, self.server, "profile.ipynb")
        page.evaluate(KERNEL_LOG)
        for index in range(self.first):
            _run_cell(page, index)
            _wait_prompt(page, index)
            if index == self.first - 1:
                self._wait_app(index)

    def _wait_app(self, index: int) -> None:
        (outputs(cell(self.page, index)).frame_locator("iframe.mcpnb-app-frame")
         .frame_locator("iframe").locator("#server-time").filter(has_text=ISO)
         .wait_for(timeout=90_000))

    def render(self, index: int) -> None:
        cell(self.page, index).scroll_into_view_if_needed()
        self.page.wait_for_timeout(300)  # the page settles: each render starts from rest
        self.page.evaluate("() => { performance.mark('profile-run'); "
                           "window.__profileLog('run', {}); }")
        _run_cell(self.page, index)
        self._wait_app(index)
        self.page.wait_for_timeout(100)
        proxy = outputs(cell(self.page, index)).locator("iframe.mcpnb-app-frame")
        proxy_frame = proxy.element_handle().content_frame()
        view_frame = proxy_frame.child_frames[0]
        self.page.evaluate("""() => {
            for (const m of performance.getEntriesByType("mark")) {
                if (!m.name.startsWith("mcp_nb:")) continue;
                window.__profileLog(m.name, { markAt: performance.timeOrigin + m.startTime });
            }
            performance.clearMarks();
        }""")
        self.documents.append({"proxy": proxy_frame.evaluate(DOCUMENT_TIMES),
                               "view": view_frame.evaluate(DOCUMENT_TIMES)})

    def kernel_times(self) -> dict[str, Any]:
        _run_cell(self.page, self.measure_cell)
        printed = outputs(cell(self.page, self.measure_cell)).locator("pre").first
        printed.wait_for()
        return json.loads(printed.inner_text())


def _steps(events: list[dict[str, Any]], kernel: dict[str, Any],
           documents: list[dict[str, Any]], first: int) -> list[dict[str, float]]:
    """Each render's steps (ms after its execute_request), in the order they happen."""
    starts = [e for e in events if e["what"] == "kernel execute_request"]
    runs = starts[first:]  # the cells before and the first render are left out
    # Marks of the kernel: one "cell starts" per cell run; the measure cell's own at the end.
    marks = kernel["marks"]
    renders = []
    for index, start in enumerate(runs[:len(documents)]):
        t0 = start["at"]
        end = runs[index + 1]["at"] if index + 1 < len(runs) else float("inf")
        mine = [e for e in events if t0 <= e["at"] < end]
        row: dict[str, float] = {}

        def put(name: str, at: float | None, row: dict[str, float] = row,
                t0: float = t0) -> None:
            if at is not None and name not in row:
                row[name] = at - t0

        for e in mine:
            what = e["what"]
            if what == "kernel execute_input":
                put("kernel: cell starts (execute_input, kernel clock)", e["kernelAt"])
            elif what == "kernel comm_open" and e.get("model"):
                put("kernel: first comm_open sent (kernel clock)", e["kernelAt"])
                put("page: first comm_open arrives", e["at"])
                if e.get("frame"):
                    put("kernel: App frame comm_open sent (kernel clock)", e["kernelAt"])
                    put("page: App frame comm_open arrives", e["at"])
            elif what == "kernel execute_result":
                put("kernel: execute_result sent (kernel clock)", e["kernelAt"])
                put("page: execute_result arrives", e["at"])
            elif what == "kernel status" and e.get("state") == "idle":
                put("page: kernel idle arrives", e["at"])
            elif what.startswith("mcp_nb:"):
                put("page: app_frame.js " + what[7:], e["markAt"])
            elif not what.startswith("kernel") and what != "run":
                put("page: " + what, e["at"])
        row["widget models opened"] = sum(1 for e in mine if e["what"] == "kernel comm_open")
        row["widget state bytes"] = sum(e.get("bytes", 0) for e in mine
                                        if e["what"] == "kernel comm_open")
        for at, label in marks:
            if t0 <= at < end:
                put("kernel: " + label, at)
        for at in kernel["sent"]:
            if t0 <= at < end:
                put("kernel: tools/call sent", at)
        for at in kernel["answered"]:
            if t0 <= at < end:
                put("kernel: tools/call answered", at)
        docs = documents[index]
        put("proxy document starts", docs["proxy"]["origin"])
        put("proxy document parsed", docs["proxy"]["interactive"])
        put("View document starts", docs["view"]["origin"])
        put("View document parsed (domInteractive)", docs["view"]["interactive"])
        put("View document loaded", docs["view"]["loaded"])
        done = row.get("page: ui/notifications/initialized", float("inf"))
        # What happens after the View is up (the next warm proxy loading) is not this render's.
        renders.append({k: v for k, v in row.items() if v <= done or "widget" in k})
    return renders


def summary(renders: list[dict[str, float]]) -> list[tuple[str, float, float]]:
    names: dict[str, list[float]] = defaultdict(list)
    for row in renders:
        for name, value in row.items():
            names[name].append(value)
    rows = []
    for name, values in names.items():
        ordered = sorted(values)
        p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
        rows.append((name, statistics.median(ordered), p90))
    return sorted(rows, key=lambda r: r[1] if "models" not in r[0] and "bytes" not in r[0]
                  else 1e9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--renders", type=int, default=10)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--trace", type=Path, help="write Chromium's trace of the renders here")
    parser.add_argument("--levers-off", default="",
                        help="MCP_NB_APP_LEVERS_OFF in the kernel, e.g. frame_first,prestart")
    args = parser.parse_args()
    command = shlex.join(install_example())
    load = os.getloadavg()
    with ExitStack() as stack:
        profile = Profile(args.renders, command, stack, args.levers_off)
        page = stack.enter_context(browser_page(profile.server))
        profile.open(page)
        browser = page.context.browser
        if args.trace:
            browser.start_tracing(page=page, categories=[
                "devtools.timeline", "disabled-by-default-devtools.timeline", "blink.user_timing",
                "v8.execute", "toplevel", "disabled-by-default-devtools.timeline.frame"])
        for index in range(profile.first, profile.first + args.renders):
            profile.render(index)
        if args.trace:
            args.trace.write_bytes(browser.stop_tracing())
        kernel = profile.kernel_times()
        events = page.evaluate("() => window.__profile.events")
    renders = _steps(events, kernel, profile.documents, profile.first)
    if args.json:
        args.json.write_text(json.dumps({"renders": renders, "events": events,
                                         "kernel": kernel, "documents": profile.documents},
                                        indent=1))
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average "
          f"{load[0]:.2f} before, {os.getloadavg()[0]:.2f} after; {len(renders)} renders; "
          f"levers off: {args.levers_off or 'none'}\n")
    print("| step | median ms after execute_request | p90 |\n|---|---:|---:|")
    for name, median, p90 in summary(renders):
        print(f"| {name} | {median:.1f} | {p90:.1f} |")


if __name__ == "__main__":
    main()
