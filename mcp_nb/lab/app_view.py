"""The lab's MCP App: one HTML document speaking the App protocol by hand (no SDK).

It shows what a View does, one message at a time: ``ui/initialize``, then
``ui/notifications/initialized``, its size, the tool's input and result as they
arrive, and a button that calls the app-only ``clock_refresh`` tool through the host.
With ``--app-fault=sandbox-probe`` it also tries what the sandbox must refuse it (the
notebook's DOM, cookies, storage, the kernel's API, a request straight to the page) and
reports the outcome to the host as ``notifications/message`` — the one way out it has.
A well-behaved render breaks no rule: no CSP violation in the browser's console.

``FAULT`` is replaced by the lab's ``--app-fault`` (see :mod:`mcp_nb.lab.knobs`), so the
same page can also misbehave on purpose.
"""

from __future__ import annotations

import json

_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>lab clock</title>
<style>
 body { font: 14px system-ui, sans-serif; margin: 8px; color: #222; }
 code { background: #f3f3f3; padding: 0 3px; }
 button { margin: 4px 0; }
 #isolation li { color: #176b2c; } #isolation li.leak { color: #b00020; }
</style></head>
<body>
<h3>lab clock <small>(an MCP App written by hand)</small></h3>
<p>input: <code id="input">waiting for ui/notifications/tool-input</code></p>
<p>result: <code id="result">waiting for ui/notifications/tool-result</code></p>
<p><button id="refresh">Refresh (app-only tool clock_refresh)</button>
   <code id="refreshed"></code></p>
<p><button id="fullscreen">Fullscreen (ui/request-display-mode)</button>
   <code id="mode">inline</code></p>
<p>sandbox check:</p><ul id="isolation"></ul>
<script>
"use strict";
const FAULT = __FAULT__;
let nextId = 1;
const pending = new Map();
function post(message) { window.parent.postMessage(message, "*"); }
function request(method, params) {
  const id = nextId++;
  post({ jsonrpc: "2.0", id, method, params });
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}
function notify(method, params) { post({ jsonrpc: "2.0", method, params }); }
function log(level, data) { notify("notifications/message", { level, logger: "lab-app", data }); }
function text(result) {
  return (result.content || []).filter((b) => b.type === "text").map((b) => b.text).join(" ");
}

window.addEventListener("message", (event) => {
  if (event.source !== window.parent) return;
  const m = event.data || {};
  if (m.id !== undefined && pending.has(m.id) && !m.method) {
    const { resolve, reject } = pending.get(m.id);
    pending.delete(m.id);
    if (m.error) reject(m.error); else resolve(m.result);
  } else if (m.method === "ui/notifications/tool-input") {
    document.getElementById("input").textContent = JSON.stringify(m.params.arguments);
  } else if (m.method === "ui/notifications/tool-result") {
    document.getElementById("result").textContent = text(m.params);
  } else if (m.method === "ui/notifications/tool-cancelled") {
    document.getElementById("result").textContent = "cancelled: " + m.params.reason;
  } else if (m.method === "ui/notifications/host-context-changed") {
    if (m.params.displayMode) document.getElementById("mode").textContent = m.params.displayMode;
  } else if (m.method === "ui/resource-teardown") {
    post({ jsonrpc: "2.0", id: m.id, result: {} });
  }
});

function attempt(what, action) {
  // Each thing the sandbox must refuse; a success is a leak, said in red and logged.
  const item = document.createElement("li");
  let outcome;
  try {
    const value = action();
    outcome = "LEAK: " + what + " gave " + JSON.stringify(String(value)).slice(0, 60);
    item.className = "leak";
  } catch (error) {
    outcome = "blocked: " + what + " (" + error.name + ")";
  }
  item.textContent = outcome;
  document.getElementById("isolation").appendChild(item);
  return outcome;
}

function spoof() {
  // A request posted straight to the notebook page, past the sandbox proxy: the host only
  // listens to its own proxy frame, so no answer may ever come back.
  return new Promise((resolve) => {
    let answered = false;
    const listen = (event) => { if (event.data && event.data.id === "spoof") answered = true; };
    window.addEventListener("message", listen);
    window.top.postMessage({ jsonrpc: "2.0", id: "spoof", method: "tools/call",
                             params: { name: "clock_refresh", arguments: {} } }, "*");
    setTimeout(() => {
      window.removeEventListener("message", listen);
      const said = answered ? "LEAK: a request posted to the notebook page was answered"
        : "blocked: a request posted straight to the notebook page (no answer)";
      const item = document.createElement("li");
      item.textContent = said;
      if (answered) item.className = "leak";
      document.getElementById("isolation").appendChild(item);
      resolve(said);
    }, 1000);
  });
}

async function isolation() {
  const lines = [
    attempt("the notebook's DOM (parent.document)", () => window.parent.document.title),
    attempt("the top page's DOM (top.document)", () => window.top.document.body.innerHTML),
    attempt("cookies (document.cookie)", () => document.cookie),
    attempt("localStorage", () => window.localStorage.length),
  ];
  let api;
  try {
    const response = await fetch("/api/kernels", { credentials: "include" });
    api = "LEAK: the kernel's REST API answered " + response.status;
  } catch (error) {
    api = "blocked: the kernel's REST API (/api/kernels) (" + error.name + ")";
  }
  const item = document.createElement("li");
  item.textContent = api;
  if (api.startsWith("LEAK")) item.className = "leak";
  document.getElementById("isolation").appendChild(item);
  lines.push(api);
  lines.push(await spoof());
  const leaked = lines.some((l) => l.startsWith("LEAK"));
  log(leaked ? "error" : "info", "sandbox check: " + lines.join("; "));
}

document.getElementById("refresh").addEventListener("click", async () => {
  const shown = document.getElementById("refreshed");
  try {
    shown.textContent = text(await request("tools/call", { name: "clock_refresh", arguments: {} }));
  } catch (error) {
    shown.textContent = "refused: " + error.message;
  }
});

let reported = 0;
function reportSize() {
  const height = Math.ceil(document.body.getBoundingClientRect().height) + 16;
  if (height === reported) return;
  reported = height;
  notify("ui/notifications/size-changed", { width: document.documentElement.scrollWidth, height });
  document.body.dataset.reportedHeight = String(height);  // what a test compares with
}

document.getElementById("fullscreen").addEventListener("click", async () => {
  const answer = await request("ui/request-display-mode", { mode: "fullscreen" });
  document.getElementById("mode").textContent = answer.mode;
});

(async () => {
  const answer = await request("ui/initialize", {
    protocolVersion: "2026-01-26", appInfo: { name: "lab-clock", version: "1" },
    appCapabilities: { availableDisplayModes: ["inline", "fullscreen"] } });
  document.body.dataset.theme = answer.hostContext && answer.hostContext.theme;
  if (FAULT === "no-initialized") return;  // never says initialized: the host must hold
  notify("ui/notifications/initialized", {});
  if (FAULT === "size-flood") {
    for (let i = 0; i < 500; i++) {
      notify("ui/notifications/size-changed", { width: 400, height: 100 + i });
    }
  }
  reportSize();
  // Content height (body plus its margins), again whenever it changes (the spec: the View
  // SHOULD send size-changed when its content size changes).
  new ResizeObserver(reportSize).observe(document.body);
  if (FAULT === "sandbox-probe") await isolation();
  if (FAULT === "model-only-call") {
    try {
      await request("tools/call", { name: "clock_reset", arguments: {} });
      log("error", "clock_reset (model-only) was called: the host let it through");
    } catch (error) {
      document.getElementById("refreshed").textContent = "clock_reset refused: " + error.message;
      log("info", "clock_reset (model-only) refused: " + error.message);
    }
  }
  if (FAULT === "undeclared-fetch") {
    try {
      await fetch("https://undeclared.example/data.json");
      log("error", "fetched an undeclared origin: the CSP let it through");
    } catch (error) {
      log("info", "fetch of undeclared https://undeclared.example refused (" + error.name + ")");
    }
  }
})();
</script></body></html>
"""


def app_html(fault: str | None) -> str:
    """The lab App's document, misbehaving as ``fault`` says (None: well behaved)."""
    return _TEMPLATE.replace("__FAULT__", json.dumps(fault))
