"""An MCP App that finds out what its opaque origin costs it, served over stdio by the official
MCP Python SDK, for the browser test of docs/apps.md's *The sandbox*.

The tool ``origin`` renders an App whose resource declares one origin in ``connectDomains``
(``--api``, an HTTP server the test runs on 127.0.0.1). The App tries ``localStorage`` and
``document.cookie``, then fetches ``--api``; it writes each outcome in its page
(``#storage``, ``#fetched``) for the test to read. The test's server records the ``Origin``
header the request came with.

``python origin_app.py --api http://127.0.0.1:PORT`` serves stdio.
"""

from __future__ import annotations

import argparse
import json

from mcp.server.mcpserver import MCPServer

MIME = "text/html;profile=mcp-app"
server = MCPServer("origin-app", instructions="An App that reports what its origin allows.")
options = argparse.Namespace(api="http://127.0.0.1:9")

# The View's side of the handshake, by hand; then the three tries, each outcome in the page.
SCRIPT = """
const post = (m) => window.parent.postMessage(m, "*");
function attempt(what, action) {
  try { return what + ": allowed (" + String(action()).slice(0, 40) + ")"; }
  catch (error) { return what + ": " + error.name; }
}
window.addEventListener("message", async (event) => {
  if (event.source !== window.parent || (event.data || {}).id !== 1) return;
  post({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
  document.getElementById("storage").textContent = [
    attempt("localStorage", () => window.localStorage.length),
    attempt("document.cookie", () => document.cookie),
  ].join("; ");
  let fetched;
  try {
    const response = await fetch(API + "/probe");
    fetched = "fetched: " + response.status + " " + (await response.text());
  } catch (error) {
    fetched = "fetch failed: " + error.name;
  }
  document.getElementById("fetched").textContent = fetched;
});
post({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {
  protocolVersion: "2026-01-26", appInfo: { name: "origin", version: "1" },
  appCapabilities: {} } });
"""


def origin_resource() -> str:
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
            "<p id='storage'></p><p id='fetched'></p>"
            f"<script>const API = {json.dumps(options.api)};\n{SCRIPT}</script></body></html>")


def origin() -> str:
    """Render the App that reports what its origin allows."""
    return "origin rendered"


server.add_tool(origin, name="origin", description=origin.__doc__ or "",
                meta={"ui": {"resourceUri": "ui://origin/app.html"}})


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--api", required=True)
    parser.parse_args(namespace=options)
    # The declared origin is known only now.
    server.resource("ui://origin/app.html", mime_type=MIME, meta={
        "ui": {"csp": {"connectDomains": [options.api]}}})(origin_resource)
    server.run("stdio")
