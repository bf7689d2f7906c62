// The MCP App frame widget (anywidget ES module, shipped in the package; no build step,
// nothing fetched at run time).  It only moves messages: the host's protocol runs in
// the kernel (mcp_nb.apps.AppHost), so every exchange is checked, answered and written
// into the session's transcript there.
//
// Browser side of the contract:
//   - the outer iframe is the sandbox proxy: srcdoc (opaque origin) with sandbox =
//     model "sandbox" (allow-scripts only: never allow-same-origin, which on srcdoc
//     would hand the App this page's origin, its DOM, cookies and the kernel's API);
//   - messages whose event.source is that iframe go to the kernel as
//     {kind: "frame", message}; the kernel's {kind: "frame", message} are posted to it;
//   - the kernel sets "height" (size-changed), "display_mode", "removed" as traits.

function theme() {
  const light = document.body && document.body.dataset
    ? document.body.dataset.jpThemeLight : undefined;
  if (light === "true") return "light";
  if (light === "false") return "dark";
  return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches
    ? "dark" : "light";
}

function hostStyles(model) {
  // hostContext.styles: the spec's CSS variables, each read from the JupyterLab theme variable
  // that plays its part (AppFrame.style_sources, mcp_nb.apps.styles), as this page shows them.
  const sources = model.get("style_sources") || {};
  const computed = window.getComputedStyle(document.body);
  const values = {};
  for (const [key, source] of Object.entries(sources)) {
    const value = computed.getPropertyValue(source).trim();
    if (value) values[key] = value;
  }
  return values;
}

function asJson(data) {
  // What the App posted, as JSON the kernel can read; anything else becomes a marker the
  // host rejects as malformed (a Blob or a function cannot cross the comm).
  try {
    return JSON.parse(JSON.stringify(data === undefined ? null : data));
  } catch (error) {
    return { "mcp_nb:unserializable": String(error) };
  }
}

// One App, one frame: a second view of the same output (JupyterLab's "Create New View for
// Output") would start a second View against one host lifecycle. It shows a note instead.
const hosted = new WeakSet();

function render({ model, el }) {
  // The host's words in the notebook's language (AppFrame.labels); English if absent.
  const label = (key, english) => (model.get("labels") || {})[key] || english;
  if (hosted.has(model)) {
    el.textContent = label("other_view", "(this MCP App is shown in another view of this output)");
    return () => {};
  }
  hosted.add(model);
  const box = document.createElement("div");
  box.className = "mcpnb-app";
  const bar = document.createElement("div");
  bar.className = "mcpnb-app-bar";
  const barText = document.createElement("span");
  // Esc reaches this page only while it has the focus (a click inside the App gives the
  // focus to the App's own document), so the way back is also a button of the host's.
  const inline = document.createElement("button");
  inline.textContent = label("back_inline", "Back inline");
  inline.className = "mcpnb-app-inline";
  inline.addEventListener("click", () => model.send({ kind: "escape" }));
  bar.appendChild(barText);
  bar.appendChild(inline);
  const frame = document.createElement("iframe");
  frame.className = "mcpnb-app-frame";
  frame.setAttribute("sandbox", model.get("sandbox"));
  if (model.get("allow")) frame.setAttribute("allow", model.get("allow"));
  frame.setAttribute("title", model.get("title"));
  frame.setAttribute("referrerpolicy", "no-referrer");
  frame.style.width = "100%";
  frame.style.display = "block";
  frame.style.boxSizing = "border-box";
  frame.style.border = model.get("border") ? "1px solid #c8c8c8" : "0";
  frame.style.borderRadius = model.get("border") ? "6px" : "0";

  const place = () => {
    frame.style.height = `${model.get("height")}px`;
    const full = model.get("display_mode") === "fullscreen";
    Object.assign(box.style, full
      ? { position: "fixed", inset: "0", zIndex: "10000", background: "var(--jp-layout-color0, #fff)",
          padding: "8px", overflow: "auto" }
      : { position: "", inset: "", zIndex: "", background: "", padding: "", overflow: "" });
    if (full) frame.style.height = "calc(100vh - 40px)";
    barText.textContent = full ? label("fullscreen", "fullscreen (asked by the App) · Esc or ") : "";
    bar.style.display = full ? "block" : "none";
  };
  const removed = () => {
    if (model.get("removed")) {
      frame.remove();
      box.textContent = label("torn_down", "(App torn down)");
    }
  };
  let resourcePosted = false;
  const onMessage = (event) => {
    if (event.source !== frame.contentWindow) return;
    const data = event.data;
    if (!resourcePosted && data && data.method === "ui/notifications/sandbox-proxy-ready"
        && model.get("resource_message") && model.get("resource_message").method) {
      // The host's answer to this, built by the kernel beforehand: posted at once instead
      // of after a round trip to the kernel (which records it all the same).
      resourcePosted = true;
      frame.contentWindow.postMessage(model.get("resource_message"), "*");
    }
    model.send({ kind: "frame", message: asJson(data) });
  };
  const onCustom = (content) => {
    if (content && content.kind === "frame" && frame.contentWindow) {
      frame.contentWindow.postMessage(content.message, "*");
    }
  };
  const onKey = (event) => {
    if (event.key === "Escape" && model.get("display_mode") === "fullscreen") {
      model.send({ kind: "escape" });
    }
  };
  window.addEventListener("message", onMessage);
  window.addEventListener("keydown", onKey);
  // JupyterLab's theme switch flips body[data-jp-theme-light]: tell the kernel, which tells
  // the View with ui/notifications/host-context-changed once it may.
  let shownTheme = theme();
  const themeWatch = new MutationObserver(() => {
    const now = theme();
    if (now !== shownTheme) {
      shownTheme = now;
      model.send({ kind: "theme", theme: now, styles: hostStyles(model) });
    }
  });
  themeWatch.observe(document.body, { attributes: true,
                                      attributeFilter: ["data-jp-theme-light"] });
  model.on("msg:custom", onCustom);
  model.on("change:height", place);
  model.on("change:display_mode", place);
  model.on("change:removed", removed);

  // What only the browser knows, before the frame exists (so it precedes the proxy).
  model.send({ kind: "created", theme: theme(), styles: hostStyles(model),
               width: Math.round(el.clientWidth || 0),
               locale: navigator.language,
               timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone });
  place();
  box.appendChild(bar);
  box.appendChild(frame);
  el.appendChild(box);
  if (!model.get("removed")) frame.srcdoc = model.get("proxy_doc");
  removed();

  return () => {
    window.removeEventListener("message", onMessage);
    window.removeEventListener("keydown", onKey);
    themeWatch.disconnect();
    model.off("msg:custom", onCustom);
    model.off("change:height", place);
    model.off("change:display_mode", place);
    model.off("change:removed", removed);
    hosted.delete(model);
    // The output is going (cleared, cell re-run): the frame dies with it, so the host
    // can only say so afterwards (docs/apps.md: teardown on clear is best effort).
    try { model.send({ kind: "view-removed" }); } catch (error) { /* comm already closed */ }
  };
}

export default { render };
