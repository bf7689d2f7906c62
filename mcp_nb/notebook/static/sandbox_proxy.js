// The sandbox proxy (MCP Apps 2026-01-26, "Sandbox proxy"): runs in the outer iframe,
// an srcdoc document with an opaque origin (sandbox="allow-scripts", never
// allow-same-origin), whose <head> already carries the App's Content Security Policy.
// It says sandbox-proxy-ready, receives the View's HTML in sandbox-resource-ready, loads
// it as its own srcdoc child (which inherits the policy), then passes messages between
// host and View, except the reserved ui/notifications/sandbox-* ones, which it neither
// forwards nor lets the View send.  It creates no requests of its own (the spec: SHOULD
// NOT).  The App cannot script this document: the View is a sandboxed frame of another
// opaque origin.  So the proxy is where the host's page holds the line against an App
// that floods or routes around the CSP:
//
//   - the View's first script is viewGuard (below), placed after the App's doctype and
//     before anything of the App's: it removes WebRTC, keeps the App from opening child
//     documents that would bring WebRTC back, and reports every CSP violation;
//   - ui/notifications/size-changed is coalesced: at most one per SIZE_EVERY_MS;
//   - a message over MAX_MESSAGE_BYTES, or over the rate (RATE_BURST, then RATE_PER_S),
//     never reaches the kernel: a request gets a JSON-RPC error from here, and the host
//     gets a small ui/notifications/sandbox-message-refused record instead;
//   - CSP violations (the View's, reported by its guard, and this document's own) go to
//     the host as ui/notifications/sandbox-csp-violation, within the same rate.
(() => {
  "use strict";
  const host = window.parent;
  const FEATURES = { camera: "camera", microphone: "microphone",
                     geolocation: "geolocation", clipboardWrite: "clipboard-write" };
  const MAX_MESSAGE_BYTES = 1024 * 1024;
  const RATE_BURST = 200;
  const RATE_PER_S = 100;
  const SIZE_EVERY_MS = 50;
  // What the host's error answers use for refusals (the spec's own examples: -32000).
  const REFUSED = -32000;
  let view = null;
  // Only the guard this proxy wrote knows it: the App cannot read the guard's closure,
  // and the guard's <script> element is gone before the App's first script runs.
  const secret = Array.from(crypto.getRandomValues(new Uint32Array(4)),
                            (n) => n.toString(36)).join("");
  const reserved = (data) => data !== null && typeof data === "object"
    && typeof data.method === "string" && data.method.startsWith("ui/notifications/sandbox-");
  const note = (method, params) => host.postMessage({ jsonrpc: "2.0", method, params }, "*");

  // -- the rate: a token bucket; what it refuses is summed up once a second ---------------
  let tokens = RATE_BURST;
  let filled = Date.now();
  let over = null;  // {dropped, requests, first} while refusing
  const takeToken = () => {
    const now = Date.now();
    tokens = Math.min(RATE_BURST, tokens + (now - filled) * RATE_PER_S / 1000);
    filled = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
  const refuseRate = (data) => {
    if (over === null) {
      over = { dropped: 0, requests: 0, methods: {} };
      setTimeout(() => {
        const said = over;
        over = null;
        note("ui/notifications/sandbox-message-refused", { reason: "rate", dropped: said.dropped,
          requests: said.requests, methods: said.methods,
          limit: `${RATE_BURST} at once, then ${RATE_PER_S}/s` });
      }, 1000);
    }
    over.dropped += 1;
    const method = data && typeof data.method === "string" ? data.method : "(response)";
    over.methods[method] = (over.methods[method] || 0) + 1;
    if (answerable(data)) {
      over.requests += 1;
      toView({ jsonrpc: "2.0", id: data.id, error: { code: REFUSED,
        message: `refused by the host's page: over ${RATE_PER_S} messages a second` } });
    }
  };
  const answerable = (data) => data !== null && typeof data === "object"
    && typeof data.method === "string" && (typeof data.id === "string"
      || (typeof data.id === "number" && Number.isInteger(data.id)));
  const toView = (message) => {
    if (view !== null && view.contentWindow) view.contentWindow.postMessage(message, "*");
  };
  const measured = (data) => {
    // The message's JSON size, as the kernel would receive it (unserializable: 0, the
    // host rejects it as malformed).
    try {
      const text = JSON.stringify(data === undefined ? null : data);
      return text === undefined ? 0 : text.length;
    } catch (error) {
      return 0;
    }
  };

  // -- the App's messages to the host ------------------------------------------------------
  const toHost = (data) => {
    if (!takeToken()) {
      refuseRate(data);
      return;
    }
    const size = measured(data);
    if (size > MAX_MESSAGE_BYTES) {
      const method = data && typeof data.method === "string" ? data.method : null;
      const id = data && (typeof data.id === "string" || typeof data.id === "number")
        ? data.id : null;
      if (answerable(data)) {
        toView({ jsonrpc: "2.0", id: data.id, error: { code: REFUSED, message:
          `refused by the host's page: ${size} bytes, over the ${MAX_MESSAGE_BYTES}-byte limit` } });
      }
      note("ui/notifications/sandbox-message-refused", { reason: "size", size,
        limit: MAX_MESSAGE_BYTES, method, id, answered: answerable(data) });
      return;
    }
    host.postMessage(data, "*");
  };
  let pendingSize = null;
  const sizeChanged = (data) => {
    // The latest size wins: the host follows it once per SIZE_EVERY_MS, not per message.
    if (pendingSize === null) {
      setTimeout(() => {
        const last = pendingSize;
        pendingSize = null;
        toHost(last);
      }, SIZE_EVERY_MS);
    }
    pendingSize = data;
  };

  // -- CSP violations ------------------------------------------------------------------------
  const violation = (event, where) => ({
    where, directive: event.effectiveDirective || event.violatedDirective,
    blocked: String(event.blockedURI || ""), sample: String(event.sample || "").slice(0, 80),
    source: String(event.sourceFile || ""), line: event.lineNumber || 0,
    disposition: event.disposition });
  document.addEventListener("securitypolicyviolation", (event) => {
    if (takeToken()) note("ui/notifications/sandbox-csp-violation", violation(event, "proxy"));
  });

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
        view.srcdoc = guarded(String(params.html || ""));
        document.body.appendChild(view);
        return;
      }
      toView(data);
    } else if (view !== null && event.source === view.contentWindow) {
      if (reserved(data)) {
        // Only the guard knows the secret: its violation reports go on, without it.
        if (data.method === "ui/notifications/sandbox-csp-violation" && data.params
            && data.params.secret === secret) {
          const { secret: _, ...report } = data.params;
          if (takeToken()) note(data.method, { ...report, where: "view" });
        }
        return;
      }
      if (data !== null && typeof data === "object"
          && data.method === "ui/notifications/size-changed" && !("id" in data)) {
        sizeChanged(data);
        return;
      }
      toHost(data);
    }
  });

  // -- the View's guard ----------------------------------------------------------------------
  function guarded(html) {
    // After the App's doctype (a script before it would put the App in quirks mode), else
    // first.  A doctype token ends at its first ">", whatever quotes it holds.
    const doctype = /^[\t\n\f\r ]*<!doctype[^>]*>/i.exec(html);
    const at = doctype ? doctype[0].length : 0;
    const guard = `<meta http-equiv="x-dns-prefetch-control" content="off">`
      + `<script>(${viewGuard})(${JSON.stringify(secret)});<\/script>`;
    return html.slice(0, at) + guard + noDeclarativeShadow(html.slice(at));
  }

  function noDeclarativeShadow(html) {
    // A closed shadow root the parser makes (<template shadowrootmode=closed>) is out of
    // every script's reach, the guard's too, and a frame inside it would go unseen: the
    // attribute is renamed, so the template stays an inert template.  (Also in the guard,
    // for the APIs that parse it at run time.)
    return html.replace(/shadowrootmode/gi, "data-shadowrootmode");
  }

  function viewGuard(secret) {
    // Runs in the App's own document before any script of the App's.  Kept to what the
    // CSP does not cover (docs/apps.md, "What the CSP does not cover").
    "use strict";
    const parent = window.parent;  // window.parent is [Replaceable]: keep the real one
    const post = parent.postMessage.bind(parent);
    document.currentScript.remove();  // the secret goes with it

    // WebRTC: connect-src does not govern it, and Chromium ignores CSP's webrtc directive.
    for (const name of Object.getOwnPropertyNames(window)) {
      if (/^(webkit)?RTC/.test(name)) delete window[name];
    }

    // Child documents: an about:blank child of a sandboxed frame gets a new opaque origin
    // (the App cannot reach its globals), but an <iframe srcdoc> or a javascript: URL
    // brings a fresh realm running the App's own code, WebRTC included.  frame-src
    // does not cover either, so such frames are removed the moment they appear (before
    // the child document commits: a mutation record is delivered at the end of the
    // script that inserted the frame, and the parser delivers them before each script).
    const report = (params) => post({ jsonrpc: "2.0",
      method: "ui/notifications/sandbox-csp-violation", params: { ...params, secret } }, "*");
    const scripted = (frame) => {
      if (frame.hasAttribute("srcdoc")) return "about:srcdoc";
      const src = (frame.getAttribute("src") || "").replace(/[\t\n\r]/g, "").trim();
      return /^javascript:/i.test(src) ? "javascript:" : null;
    };
    const roots = [];
    const sweep = (node) => {
      if (!(node instanceof Element)) return;
      const frames = node.matches("iframe, frame") ? [node]
        : Array.from(node.querySelectorAll("iframe, frame"));
      for (const frame of frames) {
        const what = scripted(frame);
        if (what !== null && frame.isConnected) {
          frame.remove();
          report({ directive: "frame-src", blocked: what, sample: "",
                   source: "", line: 0, disposition: "enforce",
                   note: "a child document with scripts of its own (it would bring WebRTC back)" });
        }
      }
      for (const element of [node, ...node.querySelectorAll("*")]) {
        if (element.shadowRoot) watch(element.shadowRoot);
      }
    };
    const observer = new MutationObserver((records) => {
      for (const record of records) {
        if (record.type === "attributes") sweep(record.target);
        for (const added of record.addedNodes) sweep(added);
      }
    });
    const watch = (root) => {
      if (roots.includes(root)) return;
      roots.push(root);
      observer.observe(root, { childList: true, subtree: true, attributes: true,
                               attributeFilter: ["srcdoc", "src"] });
      for (const child of root.children) sweep(child);
    };
    watch(document);
    // Declarative shadow roots: renamed in the App's HTML by the proxy; here, in what the
    // App parses at run time.  document.write may split the name across calls: whatever
    // was written last is kept long enough to see the name across the seam.
    const renamed = (html) => String(html).replace(/shadowrootmode/gi, "data-shadowrootmode");
    for (const [owner, name] of [[Element.prototype, "setHTMLUnsafe"],
                                 [ShadowRoot.prototype, "setHTMLUnsafe"],
                                 [Document, "parseHTMLUnsafe"]]) {
      const original = owner[name];
      if (typeof original === "function") {
        owner[name] = function (html, ...rest) { return original.call(this, renamed(html), ...rest); };
      }
    }
    let written = "";
    for (const name of ["write", "writeln"]) {
      const original = Document.prototype[name];
      Document.prototype[name] = function (...parts) {
        let text = parts.join("");
        const seam = written + text;
        const spans = /shadowrootmode/gi;
        for (let found; (found = spans.exec(seam)) !== null;) {
          if (found.index < written.length && found.index + 14 > written.length) {
            text = "x" + text;  // the name spans the seam: break it where this call starts
          }
        }
        text = renamed(text);
        written = (written + text).slice(-13);
        return original.call(this, text);
      };
    }
    // Shadow roots hide their content from the document's observer: watch each one.
    const attachShadow = Element.prototype.attachShadow;
    Element.prototype.attachShadow = function (...args) {
      const root = attachShadow.apply(this, args);
      watch(root);
      return root;
    };
    const internals = Object.getOwnPropertyDescriptor(ElementInternals.prototype, "shadowRoot");
    if (internals && internals.get) {
      Object.defineProperty(ElementInternals.prototype, "shadowRoot", { ...internals,
        get() { const root = internals.get.call(this); if (root) watch(root); return root; } });
    }

    // Every CSP violation in this document, reported with the directive that blocked it
    // (a listener on window in the capture phase runs before any the App adds).
    window.addEventListener("securitypolicyviolation", (event) => {
      report({ directive: event.effectiveDirective || event.violatedDirective,
               blocked: String(event.blockedURI || ""),
               sample: String(event.sample || "").slice(0, 80),
               source: String(event.sourceFile || ""), line: event.lineNumber || 0,
               disposition: event.disposition });
    }, true);
  }

  host.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready",
                     params: {} }, "*");
})();
