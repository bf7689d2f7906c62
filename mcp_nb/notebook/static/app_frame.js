// The MCP App frame widget (anywidget ES module, shipped in the package; no build step,
// nothing fetched at run time).  The host's protocol runs in the kernel
// (mcp_nb.apps.AppHost): every exchange is checked and written into the session's
// transcript there.  The page makes only the host's opening moves itself, from what the
// kernel left in the widget (hostOpening below), so an App comes up while later cells
// still hold the kernel.
//
// Browser side of the contract:
//   - the outer iframe is the sandbox proxy: srcdoc (opaque origin) with sandbox =
//     model "sandbox" (allow-scripts only: never allow-same-origin, which on srcdoc
//     would hand the App this page's origin, its DOM, cookies and the kernel's API);
//   - messages whose event.source is that iframe go to the kernel as
//     {kind: "frame", message, posted, at, page} (posted: what the page answered itself;
//     at: when, by the page's clock in ms; page: this page's token); what the page posts
//     on its own later is {kind: "posted", message, at, page}; the kernel's
//     {kind: "frame", message} are posted to the frame;
//   - the kernel sets "height" (size-changed), "display_mode", "removed",
//     "bootstrap" (a call's outcome arriving later, a step held for initialized) and
//     "teardown" (one decided before the kernel heard initialized) as traits; the page
//     reports what it did with a teardown as {kind: "teardown", outcome, at, page}.

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

function styleVariables(values) {
  // The page's own answer keeps what the kernel's host_styles keeps (mcp_nb.apps.styles):
  // non-empty strings of at most 300 characters with none of ; { } < > \, sorted by key.
  const kept = {};
  for (const key of Object.keys(values || {}).sort()) {
    const value = values[key];
    if (typeof value !== "string" || !value.trim() || value.length > 300
        || /[;{}<>\\]/.test(value)) continue;
    kept[key] = value.trim();
  }
  return Object.keys(kept).length ? kept : null;
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

const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

// The host's opening moves, made by this page from what the kernel left in the widget
// (model "bootstrap", mcp_nb.apps.AppHost.bootstrap). Under Run All the kernel reads this
// page's messages only after every cell already queued, so a View that waited for it would
// come up last, or after the last cell had closed its session. The page answers a
// well-formed ui/initialize the way the kernel's host judges one (an id, params with an
// appCapabilities object, once, after the View's HTML went out; answered with the View's
// own id) and, after ui/notifications/initialized, posts tool-input, then tool-result or
// tool-cancelled when known. It tells the kernel what it posted and when: the kernel
// checks and records each step in its place, and answers everything else itself.
function hostOpening(model, post, context) {
  // loading → loaded → initializing → initialized → input → done (or gone)
  let stage = "loading";
  let initializeId = null;
  const boot = () => model.get("bootstrap") || {};
  const notify = (method, params) => {
    const message = { jsonrpc: "2.0", method, params };
    post(message);
    return message;
  };
  const deliver = () => {
    const posted = [];
    const b = boot();
    // --step: the kernel sends each in a cell of its own, or hands it to this page (held).
    const may = (step) => b.deliver || released(b, step);
    if (stage === "initialized" && isObject(b.arguments) && may("input")) {
      posted.push(notify("ui/notifications/tool-input", { arguments: b.arguments }));
      stage = "input";
    }
    if (stage === "input" && isObject(b.result) && may("outcome")) {
      posted.push(notify("ui/notifications/tool-result", b.result));
      stage = "done";
    } else if (stage === "input" && typeof b.cancelled === "string" && may("outcome")) {
      posted.push(notify("ui/notifications/tool-cancelled", { reason: b.cancelled }));
      stage = "done";
    }
    return posted;
  };
  const answerInitialize = (data) => {
    // The host context as the kernel's HostContext takes it from "created" (same values).
    const result = JSON.parse(JSON.stringify(boot().initialize));
    const hostContext = isObject(result.hostContext) ? result.hostContext : {};
    hostContext.theme = context.theme === "dark" ? "dark" : "light";
    if (context.width) {
      hostContext.containerDimensions = Object.assign({}, hostContext.containerDimensions,
                                                      { width: context.width });
    }
    if (context.locale) hostContext.locale = String(context.locale);
    if (context.timeZone) hostContext.timeZone = String(context.timeZone);
    const styles = styleVariables(context.styles);
    if (styles) hostContext.styles = { variables: styles };
    result.hostContext = hostContext;
    const reply = { jsonrpc: "2.0", id: data.id, result };
    post(reply);
    stage = "initializing";
    return [reply];
  };
  const kernelStep = (message) => {
    // The kernel sent a step itself (it had heard initialized): never post it a second time.
    if (message.method === "ui/notifications/tool-input" && stage === "initialized") {
      stage = "input";
    } else if (stage === "input" && (message.method === "ui/notifications/tool-result"
               || message.method === "ui/notifications/tool-cancelled")) {
      stage = "done";
    }
  };
  return {
    // The View's message `data`: what the page posted in answer (often nothing).
    fromView(data) {
      if (!isObject(data) || data.jsonrpc !== "2.0" || stage === "gone") return [];
      const params = "params" in data ? data.params : {};
      if (!isObject(params)) return [];  // malformed: the kernel rejects it
      if (data.method === "ui/initialize" && (typeof data.id === "string"
          || Number.isInteger(data.id))) {
        if (stage !== "loaded") return [];
        initializeId = data.id;
        if (isObject(params.appCapabilities) && isObject(boot().initialize)) {
          return answerInitialize(data);
        }
        return [];  // the kernel's host refuses it, saying why
      }
      if (data.method === "ui/notifications/initialized" && !("id" in data)
          && stage === "initializing") {
        stage = "initialized";
        return deliver();
      }
      return [];
    },
    // What the kernel posts goes through here too: it may have done a step itself.
    fromKernel(message) {
      if (!isObject(message)) return;
      if (message.method === "ui/notifications/sandbox-resource-ready" && stage === "loading") {
        stage = "loaded";
      } else if (!("method" in message) && message.id === initializeId
                 && "result" in message && stage === "loaded") {
        stage = "initializing";
      } else {
        kernelStep(message);
      }
    },
    resourcePosted() { if (stage === "loading") stage = "loaded"; },
    // The call's outcome reached the widget later (a background call), or the kernel handed
    // this page a held step: post it if due.
    changed() { return stage === "initialized" || stage === "input" ? deliver() : []; },
    // Whether the View said ui/notifications/initialized (and nothing ended it since).
    initialized() { return ["initialized", "input", "done"].includes(stage); },
    stop() { stage = "gone"; },
  };
}

function released(boot, step) {
  // The steps the kernel held for the View's initialized and handed to this page ("input",
  // "outcome"; mcp_nb.apps.handoff): in --step mode, a step the kernel was asked for before
  // it had read this page's messages.
  return Array.isArray(boot.release) && boot.release.includes(step);
}

// A teardown the kernel decided before it heard the View say initialized (model "teardown":
// {message: the host's ui/resource-teardown request, wait: seconds}). This page knows: if
// the View is initialized it sends the request and waits, within the bound, for the answer
// (which it relays like any other message); if not, nothing may be sent, so it removes the
// frame. It tells the kernel which ({kind: "teardown", outcome: "sent" | "removed" |
// "no-answer"}); the frame goes on the answer, or when the wait runs out.
function pageTeardown(model, opening, toView, dropFrame, report) {
  let asked = null;
  let timer = null;
  return {
    check() {
      const handed = model.get("teardown") || {};
      if (asked !== null || !isObject(handed.message) || model.get("removed")) return;
      asked = handed.message;
      const initialized = opening.initialized();
      opening.stop();  // nothing more of the opening moves after a teardown
      if (!initialized) {
        dropFrame();
        report("removed");
        return;
      }
      toView(asked);
      report("sent");
      const wait = typeof handed.wait === "number" ? handed.wait : 2;
      timer = setTimeout(() => {
        timer = null;
        dropFrame();
        report("no-answer");
      }, wait * 1000);
    },
    // Every message the View posts comes here too, after it went to the kernel.
    fromView(data) {
      if (timer === null || !isObject(data) || "method" in data || data.id !== asked.id) return;
      clearTimeout(timer);
      timer = null;
      dropFrame();
    },
    stop() { if (timer !== null) clearTimeout(timer); timer = null; },
  };
}

function pageToken() {
  return Math.random().toString(36).slice(2) + Date.now().toString(36);
}

// -- the person's consent and the page's own origin (the host's guard rails) ---------------

const DEFAULT_PORTS = { "http:": "80", "https:": "443", "ws:": "80", "wss:": "443" };

function reachesThisPage(origins) {
  // Whether a CSP source the kernel approved lets the App reach this page's own origin
  // (Jupyter's REST API and kernels).  The kernel withholds the servers it knows; behind a
  // proxy (JupyterHub, Binder) only the page knows where it is served from.
  const here = new URL(location.origin);
  const herePort = here.port || DEFAULT_PORTS[here.protocol];
  return (origins || []).some((source) => {
    const match = /^[a-z]+:\/\/([^/:]+)(?::(\d+|\*))?/i.exec(source);
    if (!match) return false;
    const host = match[1].toLowerCase();
    const hostOk = host.startsWith("*.") ? here.hostname.endsWith(host.slice(1))
      : host === here.hostname;
    const port = match[2];
    const portOk = port === "*" || (port === undefined ? ["80", "443"].includes(herePort)
      : port === herePort);
    return hostOk && portOk;
  });
}

function followConsent(model, frame) {
  // The person allowed the App's declared permissions (a button the host draws outside
  // the frame): a frame's permissions are fixed when its document loads, so the proxy is
  // loaded again with them.
  const reload = () => {
    if (model.get("removed")) return;
    if (model.get("allow")) frame.setAttribute("allow", model.get("allow"));
    else frame.removeAttribute("allow");
    frame.srcdoc = model.get("proxy_doc");
  };
  model.on("change:allow", reload);
  return () => model.off("change:allow", reload);
}

// -- the proxy ahead of time (model "levers": prestart, warm_proxy, warm_view) -----------
// prestart: the sandbox proxy is loaded, and handed the View's HTML, the moment the frame's
// model arrives (anywidget's initialize), in an off-screen holder, while the notebook still
// draws the cell; render() then moves the loaded frame into the cell (Element.moveBefore
// keeps an iframe's document, where appendChild would load it again) and replays what the
// proxy and the View said meanwhile, with the times they said it. warm_proxy: the page keeps
// one proxy loaded for the next App with the same proxy document, sandbox and allow (the
// same CSP). A proxy serves one App only: it leaves the pool before it is given a View's
// HTML, and the pool is refilled with a new document. warm_view: once an App is up, the page
// starts a second View of it in a new proxy, off-screen, for the next render of the same
// App (the same resource, CSP and permissions) in this page: that render adopts a View that
// has already parsed and run its code and asked ui/initialize, which nobody has answered
// yet; its answer is this render's own (the call, the input, the result). Until then the
// View has been told nothing but its HTML, and what it says is kept for the render, as for a
// prestarted proxy. It is dropped unclaimed after WARM_VIEW_MS.

const POOL = Symbol.for("mcp_nb.app_frame.pool");  // one per page, whichever module instance
const SAID_LIMIT = 256;       // messages kept for a render that has not claimed its proxy
const UNCLAIMED_MS = 30000;   // a started proxy no render claimed by then is dropped
// The next warm proxy loads once the App that took one is up (its View said initialized:
// the proxies and Views share one process, so not while that View starts), or after this.
const REFILL_MS = 1000;
// A warm View waits with its ui/initialize unanswered: the Apps SDK gives up on a request
// after 60 s (the MCP TypeScript SDK's default timeout), so it is dropped well before (not
// started again: each start takes a core for a while). One per App, for the WARM_VIEWS Apps
// shown last.
const WARM_VIEW_MS = 45000;
const WARM_VIEWS = 2;
// A View starting takes a core for a while (the proxies and Views share one process): a warm
// one starts once no App has been drawn for this long, not while the next App comes up (Run
// All draws them one after the other).
const WARM_VIEW_QUIET_MS = 500;

const movable = () => typeof Element.prototype.moveBefore === "function";
const proxyKey = (model) => JSON.stringify([model.get("sandbox"), model.get("allow"),
                                            model.get("proxy_doc")]);
// initialize() and render() get different stand-ins for one model (anywidget's): the
// model's resource_message, one object the kernel sets once, tells them it is one model.
const modelKey = (model) => model.get("resource_message");
// warm_view: which View a warm one is (the proxy document, sandbox, allow and the HTML).
const viewKey = (model) => JSON.stringify([proxyKey(model), model.get("resource_message")]);
const proxyReady = () => ({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready",
                            params: {} });

// Steps of a render on the page's performance timeline (DevTools shows them;
// benchmarks/apps_render_profile.py reads them).
const mark = (name) => { if (performance.mark) performance.mark(`mcp_nb:${name}`); };

function pool() {
  if (!window[POOL]) {
    window[POOL] = { warm: null, views: new Map(), holder: null, started: new WeakMap(),
                     pending: new Map(), quiet: null, ahead: new Map(), seen: new Set() };
  }
  return window[POOL];
}

function holder() {
  // Off-screen, inert (no focus, no clicks) and hidden from assistive technology.
  const p = pool();
  if (p.holder === null || !p.holder.isConnected) {
    p.holder = document.createElement("div");
    p.holder.className = "mcpnb-app-holder";
    p.holder.setAttribute("aria-hidden", "true");
    p.holder.inert = true;
    Object.assign(p.holder.style, { position: "fixed", left: "-10000px", top: "0",
                                    width: "800px", height: "600px", overflow: "hidden",
                                    pointerEvents: "none" });
    document.body.appendChild(p.holder);
  }
  return p.holder;
}

function loadProxy(model) {
  // A proxy loading in the holder. Until an App has it, only its readiness counts; then
  // what it says is kept (at most SAID_LIMIT messages) for the render that claims it.
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", model.get("sandbox"));
  if (model.get("allow")) frame.setAttribute("allow", model.get("allow"));
  frame.setAttribute("referrerpolicy", "no-referrer");
  Object.assign(frame.style, { width: "100%", height: `${model.get("height")}px`,
                               display: "block", boxSizing: "border-box" });
  const proxy = { frame, key: proxyKey(model), ready: false, resource: null,
                  resourcePosted: false, said: [], dropped: 0, claimed: false, gone: false,
                  timer: null, started: () => {}, view: null };
  proxy.listen = (event) => {
    if (event.source !== frame.contentWindow || event.source === null) return;
    const data = event.data;
    if (!proxy.ready && isObject(data) && data.method === proxyReady().method) {
      proxy.ready = true;
      postResource(proxy);
    }
    if (proxy.resource === null) return;  // warm, no App's yet
    if (proxy.said.length < SAID_LIMIT) proxy.said.push({ data, at: Date.now() });
    else proxy.dropped += 1;
  };
  window.addEventListener("message", proxy.listen);
  holder().appendChild(frame);
  frame.srcdoc = model.get("proxy_doc");
  return proxy;
}

function postResource(proxy) {
  // The View's HTML, built by the kernel beforehand, as the page posts it in render().
  if (proxy.ready && !proxy.resourcePosted && isObject(proxy.resource)
      && proxy.resource.method && proxy.frame.contentWindow) {
    proxy.resourcePosted = true;
    proxy.frame.contentWindow.postMessage(proxy.resource, "*");
    mark("resource posted ahead");
  }
}

function dropProxy(proxy) {
  proxy.gone = true;
  window.removeEventListener("message", proxy.listen);
  if (proxy.timer !== null) clearTimeout(proxy.timer);
  proxy.frame.remove();
  proxy.said = [];
}

function fitsWarmView(model) {
  // The warm View of this very App, if the page has one ready to take.
  const levers = model.get("levers") || {};
  if (!levers.warm_view) return null;
  const proxy = pool().views.get(viewKey(model));
  return proxy !== undefined && !proxy.gone && proxy.frame.isConnected ? proxy : null;
}

function claimProxy(model) {
  // A proxy for this model's App, given its HTML: a warm View of this very App, else the
  // warm proxy if it fits, else a new one.
  const p = pool();
  const levers = model.get("levers") || {};
  let proxy = null;
  const view = fitsWarmView(model);
  if (view !== null) {
    proxy = view;  // its HTML posted, its View started (and maybe waiting on ui/initialize)
    p.views.delete(proxy.view);
    clearTimeout(proxy.timer);
    delete proxy.frame.dataset.mcpnbWarmView;
    mark("warm View claimed");
  } else if (levers.warm_proxy && p.warm !== null && p.warm.key === proxyKey(model)
      && p.warm.frame.isConnected) {
    proxy = p.warm;
    p.warm = null;
  } else {
    proxy = loadProxy(model);
  }
  if (proxy.view === null) {
    proxy.resource = model.get("resource_message");
    if (proxy.ready) {
      proxy.said.unshift({ data: proxyReady(), at: Date.now() });  // it said so before: now
      postResource(proxy);
    }
  }
  proxy.timer = setTimeout(() => { if (!proxy.claimed) dropProxy(proxy); }, UNCLAIMED_MS);
  if (levers.warm_proxy || levers.warm_view) {
    // The next proxy (and View) load once this App is up: they share its process.
    const ahead = (up) => {
      if (levers.warm_proxy) refill(model);
      if (levers.warm_view && up) warmViewWhenQuiet(model);
    };
    const later = setTimeout(() => ahead(false), REFILL_MS);
    proxy.started = () => {
      clearTimeout(later);
      proxy.started = () => {};
      ahead(true);
    };
  }
  return proxy;
}

function warmViewWhenQuiet(model) {
  // warm_view, once the page has drawn no App for WARM_VIEW_QUIET_MS (appDrawn() waits anew).
  const p = pool();
  p.pending.set(viewKey(model), model);
  appDrawn();
}

function appDrawn() {
  // An App is being drawn: the warm Views waiting to start wait a little more.
  const p = pool();
  if (p.quiet !== null) clearTimeout(p.quiet);
  p.quiet = null;
  if (p.pending.size === 0) return;
  p.quiet = setTimeout(() => {
    p.quiet = null;
    const waiting = [...p.pending.values()];
    p.pending.clear();
    for (const model of waiting) warmView(model);
  }, WARM_VIEW_QUIET_MS);
}

function warmView(model) {
  // The App that just came up, started again ahead of the next render of it (warm_view).
  // Never one the person gave permissions to (camera, microphone, …): a View that may use
  // them runs only where the person can see it.
  if (model.get("allow")) return;
  const p = pool();
  const key = viewKey(model);
  const had = p.views.get(key);
  if (had !== undefined && !had.gone) {
    p.views.delete(key);  // kept, as the App shown last
    p.views.set(key, had);
    return;
  }
  const proxy = loadProxy(model);
  proxy.frame.dataset.mcpnbWarmView = "";  // told apart from the warm proxy (DevTools, tests)
  proxy.view = key;
  proxy.resource = model.get("resource_message");  // posted once the proxy says ready
  proxy.timer = setTimeout(() => {
    if (p.views.get(key) === proxy) p.views.delete(key);
    dropProxy(proxy);
  }, WARM_VIEW_MS);
  p.views.set(key, proxy);
  for (const [oldest, old] of p.views) {  // in the order they were shown
    if (p.views.size <= WARM_VIEWS) break;
    p.views.delete(oldest);
    dropProxy(old);
  }
}

function refill(model) {
  const p = pool();
  if (p.warm !== null && p.warm.key === proxyKey(model) && p.warm.frame.isConnected) return;
  if (p.warm !== null) dropProxy(p.warm);
  p.warm = loadProxy(model);  // a new document: no App has had it
}

function startAhead(frame, content) {
  // prestart through the App channel: the kernel sent what the page needs to start this
  // frame's View (its proxy document, sandbox, allow, reach, HTML and levers) as the frame's
  // widget was made, and it got here before the widget made its way through JupyterLab and
  // anywidget. The same start as initialize()'s, kept for it under the frame's id.
  const p = pool();
  const settings = { get: (name) => content[name] };
  const levers = content.levers || {};
  if (p.seen.has(frame) || p.ahead.has(frame) || !levers.prestart || !movable()
      || !isObject(content.resource_message) || reachesThisPage(content.reach)) return;
  mark("started through the channel");
  const proxy = claimProxy(settings);
  p.ahead.set(frame, proxy);
  // Not drawn by this page (another tab of the kernel's, an output never shown): dropped.
  setTimeout(() => {
    if (p.ahead.get(frame) === proxy) p.ahead.delete(frame);
  }, UNCLAIMED_MS);
}

function takeAhead(model) {
  // The proxy the channel started for this model's frame, if any (and not dropped since).
  const p = pool();
  const route = model.get("channel");
  const frame = isObject(route) && typeof route.frame === "string" ? route.frame : null;
  if (frame === null) return null;
  p.seen.add(frame);  // from now on the model starts it, never the channel
  const proxy = p.ahead.get(frame) || null;
  p.ahead.delete(frame);
  return proxy !== null && !proxy.gone ? proxy : null;
}

function initialize({ model, signal }) {
  openChannel(model.get("channel"));  // this kernel's App channel, for the Apps drawn next
  appDrawn();  // warm_view: not while this App comes up
  const ahead = takeAhead(model);
  // prestart: the model is here before its cell is drawn.
  const levers = model.get("levers") || {};
  if (!levers.prestart || !movable() || model.get("removed") || !isObject(modelKey(model))
      || reachesThisPage(model.get("reach"))) {
    if (ahead !== null) dropProxy(ahead);
    return;
  }
  mark("initialize");
  const proxy = ahead !== null ? ahead : claimProxy(model);
  if (isObject(modelKey(model))) pool().started.set(modelKey(model), proxy);
  if (signal) signal.addEventListener("abort", () => { if (!proxy.claimed) dropProxy(proxy); });
}

function adoptProxy(model) {
  // render(): the proxy initialize() started, or the warm one claimed now (warm_proxy
  // without prestart); null for the cold path (the frame is made and loaded in the cell).
  const p = pool();
  const levers = model.get("levers") || {};
  const key = modelKey(model);
  let proxy = isObject(key) ? p.started.get(key) || null : null;
  if (isObject(key)) p.started.delete(key);
  if (proxy !== null && proxy.gone) proxy = null;
  if (proxy === null && movable() && !model.get("removed")
      && !reachesThisPage(model.get("reach"))
      && (fitsWarmView(model) !== null || (levers.warm_proxy && p.warm !== null
                                  && p.warm.key === proxyKey(model)))) {
    proxy = claimProxy(model);
  }
  if (proxy === null) return null;
  proxy.claimed = true;
  if (proxy.timer !== null) clearTimeout(proxy.timer);
  window.removeEventListener("message", proxy.listen);  // render's own listener from now on
  return proxy;
}

function replay(proxy, frame, onMessage, send, page) {
  // What the proxy and the View said before this render claimed them, in order, with the
  // times they said it; and how much was not kept, as the proxy's own refusals are said.
  const said = proxy.said;
  proxy.said = [];
  for (const { data, at } of said) onMessage({ source: frame.contentWindow, data, said: at });
  if (proxy.dropped) {
    const message = { jsonrpc: "2.0", method: "ui/notifications/sandbox-message-refused",
                      params: { reason: "rate", dropped: proxy.dropped, requests: 0, methods: {},
                                limit: `${SAID_LIMIT} before the cell was shown` } };
    send({ kind: "frame", message, posted: [], at: Date.now(), page });
  }
}

function moveIntoCell(box, frame) {
  // Once the cell is on the page: moved, not re-inserted. A stand-in keeps the frame's
  // place (and height) meanwhile. The page's own DOM changes say when (a MutationObserver
  // while the cell is being attached, usually milliseconds): not a timer, which a page in the
  // background may see throttled to once a minute, nor a size, which a cell out of view
  // (content-visibility) never gets. Returns a function that stops waiting.
  const stand = document.createElement("div");
  stand.style.height = frame.style.height;
  box.appendChild(stand);
  let watch = null;
  const stop = () => { if (watch !== null) watch.disconnect(); watch = null; };
  const move = () => {
    if (!frame.isConnected || !stand.isConnected && box.isConnected) {  // removed meanwhile
      stop();
      return;
    }
    if (!box.isConnected) return;
    stop();
    try {
      box.moveBefore(frame, stand);
    } catch (error) {
      // Never expected (both are in this document); said, so a stuck App can be told why.
      console.warn("mcp_nb: the App's frame could not be moved into its cell", error);
      return;
    }
    stand.remove();
    mark("moved into the cell");
  };
  watch = new MutationObserver(move);
  watch.observe(document.body, { childList: true, subtree: true });
  move();
  return stop;
}

// -- the App channel (mcp_nb/notebook/app_channel.py) ---------------------------------------
// One websocket per kernel to the kit's server extension, which passes lines to and from a
// socket of the kernel's: an App frame's messages without the kernel's shell channel (no
// status busy/idle for the page to redraw, no kernel message for JupyterLab to route). A
// frame that finds its kernel's channel open when it is drawn sends everything through it (and
// is answered there); otherwise, or once the channel closes, widget messages as before.

const CHANNELS = Symbol.for("mcp_nb.app_frame.channels");  // per page: kernel id → channel

function pageConfig() {
  // JupyterLab's and Notebook's page settings: the base URL, the token if the page uses one,
  // and whether this server serves the channel (the kit's server extension says so).
  const element = document.getElementById("jupyter-config-data");
  try {
    return element ? JSON.parse(element.textContent || "{}") : {};
  } catch (error) {
    return {};
  }
}

function channelUrl(kernel) {
  const config = pageConfig();
  const base = config.wsUrl
    || `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}${config.baseUrl || "/"}`;
  const url = `${base.replace(/\/?$/, "/")}mcp_nb/apps/channel/${encodeURIComponent(kernel)}`;
  return config.token ? `${url}?token=${encodeURIComponent(config.token)}` : url;
}

function openChannel(route) {
  // The page's channel to this frame's kernel if it is open now (null otherwise); opening one
  // for the frames drawn after this one if there is none yet. A channel that failed is not
  // tried again by this page for that kernel (no extension, a kernel elsewhere: it stays so).
  if (!isObject(route) || typeof route.kernel !== "string" || typeof route.frame !== "string"
      || typeof WebSocket !== "function" || !pageConfig().mcpNbAppChannel) return null;
  if (!window[CHANNELS]) window[CHANNELS] = new Map();
  let channel = window[CHANNELS].get(route.kernel);
  if (channel === undefined) {
    channel = { ws: null, frames: new Map(), opened: false };
    window[CHANNELS].set(route.kernel, channel);
    try {
      channel.ws = new WebSocket(channelUrl(route.kernel));
    } catch (error) {
      return null;  // a URL the browser refuses: widget messages for this page
    }
    channel.ws.onmessage = (event) => {
      let said = null;
      try { said = JSON.parse(event.data); } catch (error) { return; }
      if (!isObject(said) || typeof said.frame !== "string" || !isObject(said.content)) return;
      if (said.content.kind === "ahead") {
        startAhead(said.frame, said.content);
        return;
      }
      const frame = channel.frames.get(said.frame);
      if (frame !== undefined) frame(said.content);
    };
    channel.ws.onclose = () => {
      // Opened once and closed (the server or kernel went): a later frame may try anew.
      // Never opened (no extension, a kernel elsewhere): this page does not try again.
      if (channel.opened) window[CHANNELS].delete(route.kernel);
    };
    channel.ws.onopen = () => { channel.opened = true; };
  }
  return channel.ws !== null && channel.ws.readyState === WebSocket.OPEN ? channel : null;
}

function frameSender(model) {
  // send(content): this frame's messages to the kernel, through the channel when it was open
  // as the frame was drawn and still is, else as widget messages; listen(onCustom) takes
  // what the kernel sends through the channel. Returns { send, listen, stop }.
  const route = model.get("channel");
  let channel = openChannel(route);
  const send = (content) => {
    if (channel !== null && channel.ws.readyState === WebSocket.OPEN) {
      channel.ws.send(JSON.stringify({ frame: route.frame, secret: route.secret, content }));
      return;
    }
    channel = null;
    model.send(content);
  };
  return {
    send,
    listen(onCustom) { if (channel !== null) channel.frames.set(route.frame, onCustom); },
    stop() { if (channel !== null) channel.frames.delete(route.frame); },
  };
}

// One App, one frame: a second view of the same output (JupyterLab's "Create New View for
// Output") would start a second View against one host lifecycle. It shows a note instead.
const hosted = new WeakSet();

function render({ model, el }) {
  // The host's words in the notebook's language (AppFrame.labels); English if absent.
  const label = (key, english) => (model.get("labels") || {})[key] || english;
  const one = modelKey(model);  // each view gets its own stand-in of the model (modelKey)
  if (hosted.has(one)) {
    el.textContent = label("other_view", "(this MCP App is shown in another view of this output)");
    return () => {};
  }
  hosted.add(one);
  const sender = frameSender(model);  // the App channel, or widget messages
  const send = sender.send;
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
  inline.addEventListener("click", () => send({ kind: "escape" }));
  bar.appendChild(barText);
  bar.appendChild(inline);
  mark("render");
  appDrawn();  // warm_view: not while this App comes up
  // prestart / warm_proxy: a proxy already loading or loaded in the page's holder.
  const adopted = adoptProxy(model);
  const frame = adopted !== null ? adopted.frame : document.createElement("iframe");
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
      opening.stop();
      frame.remove();
      box.textContent = label("torn_down", "(App torn down)");
    }
  };
  // What only the browser knows, told to the kernel in "created" and used by the page's
  // own ui/initialize answer alike.
  const context = { theme: theme(), width: Math.round(el.clientWidth || 0),
                    locale: navigator.language,
                    origin: location.origin, styles: hostStyles(model),
                    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone };
  const page = pageToken();
  const toView = (message) => {
    if (frame.contentWindow) frame.contentWindow.postMessage(message, "*");
  };
  const opening = hostOpening(model, toView, context);
  const dropFrame = () => {
    opening.stop();
    frame.remove();
    box.textContent = label("torn_down", "(App torn down)");
  };
  const teardown = pageTeardown(model, opening, toView, dropFrame, (outcome) => {
    send({ kind: "teardown", outcome, at: Date.now(), page });
  });
  let resourcePosted = adopted !== null && adopted.resourcePosted;
  if (resourcePosted) opening.resourcePosted();
  const onMessage = (event) => {
    if (event.source !== frame.contentWindow) return;
    const data = event.data;
    const at = event.said || Date.now();  // said: when an adopted proxy said it
    if (!resourcePosted && data && data.method === "ui/notifications/sandbox-proxy-ready"
        && model.get("resource_message") && model.get("resource_message").method) {
      // The host's answer to this, built by the kernel beforehand: posted at once instead
      // of after a round trip to the kernel (which records it all the same).
      resourcePosted = true;
      frame.contentWindow.postMessage(model.get("resource_message"), "*");
      opening.resourcePosted();
    }
    const message = asJson(data);
    if (adopted !== null && message && message.method === "ui/notifications/initialized") {
      adopted.started();  // warm_proxy: the next one may load now
    }
    const posted = opening.fromView(message);
    send({ kind: "frame", message, posted, at, page });
    teardown.fromView(message);
  };
  const onCustom = (content) => {
    if (content && content.kind === "frame" && frame.contentWindow) {
      opening.fromKernel(content.message);
      frame.contentWindow.postMessage(content.message, "*");
    }
  };
  const onBootstrap = () => {
    const at = Date.now();
    for (const message of opening.changed()) send({ kind: "posted", message, at, page });
  };
  const onKey = (event) => {
    if (event.key === "Escape" && model.get("display_mode") === "fullscreen") {
      send({ kind: "escape" });
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
      send({ kind: "theme", theme: now, styles: hostStyles(model) });
    }
  });
  themeWatch.observe(document.body, { attributes: true,
                                      attributeFilter: ["data-jp-theme-light"] });
  model.on("msg:custom", onCustom);
  sender.listen(onCustom);
  model.on("change:height", place);
  model.on("change:display_mode", place);
  model.on("change:removed", removed);
  model.on("change:bootstrap", onBootstrap);
  model.on("change:teardown", teardown.check);

  // What only the browser knows, before the frame exists (so it precedes the proxy); "page"
  // tells this page from a later one (a reload), "frame" whether it builds the frame, and
  // "bootstrap" that it makes the host's opening moves itself.
  send(Object.assign({ kind: "created", page, bootstrap: true,
                             frame: !model.get("removed") }, context));
  place();
  box.appendChild(bar);
  const stopMoving = adopted !== null ? moveIntoCell(box, frame) : () => {};
  if (adopted === null) box.appendChild(frame);
  el.appendChild(box);
  const unfollowConsent = followConsent(model, frame);
  if (reachesThisPage(model.get("reach"))) {
    send({ kind: "page-origin-refused", origin: location.origin });
  } else if (adopted !== null) {
    replay(adopted, frame, onMessage, send, page);
  } else if (!model.get("removed")) {
    frame.srcdoc = model.get("proxy_doc");
  }
  removed();
  teardown.check();  // handed before this page showed the App: nothing was shown to tear down

  return () => {
    window.removeEventListener("message", onMessage);
    window.removeEventListener("keydown", onKey);
    themeWatch.disconnect();
    model.off("msg:custom", onCustom);
    model.off("change:height", place);
    model.off("change:display_mode", place);
    model.off("change:removed", removed);
    model.off("change:bootstrap", onBootstrap);
    model.off("change:teardown", teardown.check);
    teardown.stop();
    opening.stop();
    unfollowConsent();
    hosted.delete(one);
    stopMoving();
    if (adopted !== null && !box.contains(frame)) frame.remove();  // never reached the cell
    // The output is going (cleared, cell re-run): the frame dies with it, so the host
    // can only say so afterwards (docs/apps.md: teardown on clear is best effort).
    try { send({ kind: "view-removed" }); } catch (error) { /* comm already closed */ }
    sender.stop();
  };
}

export default { initialize, render };
