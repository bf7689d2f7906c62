// The sandbox proxy (MCP Apps 2026-01-26, "Sandbox proxy"): runs in the outer iframe,
// an srcdoc document with an opaque origin (sandbox="allow-scripts", never
// allow-same-origin), whose <head> already carries the App's Content Security Policy.
// It says sandbox-proxy-ready, receives the View's HTML in sandbox-resource-ready, loads
// it as its own srcdoc child (which inherits the policy), then passes every message
// between host and View untouched, except the reserved ui/notifications/sandbox-*
// ones, which it neither forwards nor lets the View send.  It creates no requests of
// its own (the spec: SHOULD NOT).
(() => {
  "use strict";
  const host = window.parent;
  const FEATURES = { camera: "camera", microphone: "microphone",
                     geolocation: "geolocation", clipboardWrite: "clipboard-write" };
  let view = null;
  const reserved = (data) => data !== null && typeof data === "object"
    && typeof data.method === "string" && data.method.startsWith("ui/notifications/sandbox-");

  window.addEventListener("message", (event) => {
    const data = event.data;
    if (event.source === host) {
      if (reserved(data)) {
        if (data.method !== "ui/notifications/sandbox-resource-ready" || view !== null) return;
        const params = data.params || {};
        view = document.createElement("iframe");
        view.setAttribute("sandbox", typeof params.sandbox === "string"
          ? params.sandbox : "allow-scripts");
        const allow = Object.keys(params.permissions || {})
          .filter((key) => key in FEATURES).map((key) => FEATURES[key]);
        if (allow.length) view.setAttribute("allow", allow.join("; "));
        view.setAttribute("title", "MCP App");
        view.srcdoc = String(params.html || "");
        document.body.appendChild(view);
        return;
      }
      if (view !== null && view.contentWindow) view.contentWindow.postMessage(data, "*");
    } else if (view !== null && event.source === view.contentWindow) {
      if (reserved(data)) return;
      host.postMessage(data, "*");
    }
  });
  host.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready",
                     params: {} }, "*");
})();
