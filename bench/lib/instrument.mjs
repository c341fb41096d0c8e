// In-page instrumentation, installed with page.addInitScript(instrument, opts) before any page
// script runs. Everything it records lives on window.__bench. Kept dependency-free: Playwright
// serialises this function's source into the page.
//
// opts = { app: 'embers' | 'speedscope' | 'grafana', bytesMatch: <regexp source>, markers: bool }
//
// What it measures:
// - tBytes: the moment the profile response's body is completely in the page. fetch() is wrapped:
//   for URLs matching bytesMatch the wrapper reads the whole body (arrayBuffer), builds an
//   equivalent Response over those bytes, then records the time and hands that Response over. So everything after tBytes —
//   UTF-8 decoding (text()), parsing, building, layout, drawing — is the viewer's own work, and
//   nothing before it (server, network, wasm/JS boot) is.
// - tPainted: the first requestAnimationFrame callback after tBytes in which the app-specific
//   "painted" predicate holds (see PAINTED below). rAF callbacks run just before the frame is
//   produced, so this is the frame that shows the graph.
// - wasm memories: WebAssembly.instantiate{,Streaming} are wrapped to keep every instance's
//   exported memory, so the harness can read linear-memory size (not visible in JS heap metrics).
// - time(action, check): interaction latency. Canvas 2D/WebGL draw calls and DOM mutations are
//   timestamped; the action is dispatched synchronously, then frames are awaited until nothing was
//   drawn or mutated for `quietFrames` frames (and `check()` holds). Latency = last draw call or
//   DOM mutation caused by the action − dispatch time (rasterisation/compositing after the last
//   call is not included, for any viewer). Answers to fetches the action starts are held until
//   that has settled, then let in, and the work they cause (from letting them in to its last
//   draw or mutation) is reported apart as followUpMs: the server's time is not the viewer's
//   latency, and whether an answer came within the quiet frames must not decide what counts.
// - toFrame(action, check): input → the first frame that shows the result, rendered (the
//   timeline step's measure; see B.toFrame).
// - tQuiet: "until the page is quiet" (issue 35): from tBytes on, every frame notes whether
//   anything was drawn (canvas 2D or WebGL) or the DOM changed since the last; tQuiet is the
//   rAF time of the first frame after the last such change, once the painted predicate held
//   and three frames in a row have been quiet. Answers the page asks for meanwhile (timelines,
//   tag lists) come as the server gives them and count: the page is not quiet until their
//   effects are drawn. Counting is on from tBytes only (a counter per draw call, no clock read).
export function instrument(opts) {
  if (window.__bench) return;
  const now = () => performance.now();
  const B = (window.__bench = {
    app: opts.app,
    tBytes: null,
    bytes: [],
    tPainted: null,
    paintedInfo: null,
    memories: [],
    draws: 0,
    glDraws: 0,
    lastDraw: 0,
    mutations: 0,
    lastMutation: 0,
    hooked: false,
    errors: [],
    holdNet: false,
    collecting: false,
    pending: 0,
    held: [],
    quietChanges: 0,
    tQuiet: null,
  });
  const match = new RegExp(opts.bytesMatch);
  // With opts.markers (profiling runs only), two named busy-waits of ~1 ms mark tBytes and
  // tPainted in a CPU profile, so its samples can be cut to exactly that window.
  // (Each loops itself: the samples must land in the marker's own frame.)
  const __benchMarkBytes = () => {
    const t = performance.now();
    while (performance.now() - t < 1);
  };
  const __benchMarkPainted = () => {
    const t = performance.now();
    while (performance.now() - t < 1);
  };

  // --- fetch: "bytes in the page" -------------------------------------------------------------
  const origFetch = window.fetch;
  window.fetch = async function (input, init) {
    // Asked while an interaction is timed: the answer waits until that interaction's own work
    // has settled (see B.time).
    const held = B.holdNet;
    if (held) B.pending++;
    const res = await origFetch.call(this, input, init);
    if (held) {
      B.pending--;
      // Only while B.time still collects: one given up on passes straight through.
      if (B.collecting) await new Promise((release) => B.held.push(release));
    }
    const url = res.url || String(input && input.url ? input.url : input);
    if (!match.test(url)) return res;
    const buf = await res.arrayBuffer();
    const tRead = now();
    const copy = new Response(buf, { status: res.status, statusText: res.statusText, headers: res.headers });
    try {
      Object.defineProperty(copy, 'url', { value: res.url });
    } catch {}
    // Taken after building the stand-in Response (which copies the bytes), so that copy is the
    // harness' cost, not the viewer's.
    const t = now();
    B.bytes.push({ url, t, size: buf.byteLength, copyMs: t - tRead });
    // A comparison waits for both answers: its bytes are in the page when the last one is.
    if (B.tBytes === null && B.bytes.length >= (opts.bytesCount ?? 1)) {
      if (opts.markers) __benchMarkBytes();
      B.tBytes = now();
      B.glDrawsAtBytes = B.glDraws;
      watchQuiet();
    }
    return copy;
  };

  // --- wasm linear memories -------------------------------------------------------------------
  for (const name of ['instantiate', 'instantiateStreaming']) {
    const orig = WebAssembly[name];
    if (!orig) continue;
    WebAssembly[name] = async function (...args) {
      const r = await orig.apply(this, args);
      try {
        const inst = r && r.instance ? r.instance : r;
        const mem = inst && inst.exports && inst.exports.memory;
        if (mem instanceof WebAssembly.Memory) B.memories.push(mem);
      } catch {}
      return r;
    };
  }
  B.wasmBytes = () => B.memories.reduce((s, m) => s + m.buffer.byteLength, 0);

  // --- WebGL draw calls (always on: speedscope's paint predicate needs them; they are few) ----
  for (const Ctx of [window.WebGLRenderingContext, window.WebGL2RenderingContext]) {
    if (!Ctx) continue;
    for (const m of ['drawArrays', 'drawElements', 'drawArraysInstanced', 'drawElementsInstanced']) {
      const orig = Ctx.prototype[m];
      if (!orig) continue;
      Ctx.prototype[m] = function (...a) {
        B.glDraws++;
        B.draws++;
        B.lastDraw = now();
        return orig.apply(this, a);
      };
    }
  }

  // --- 2D draw calls and DOM mutations (installed on demand, for interactions only) -----------
  B.hook = () => {
    if (B.hooked) return;
    B.hooked = true;
    const proto = CanvasRenderingContext2D.prototype;
    for (const m of ['fillRect', 'strokeRect', 'clearRect', 'fillText', 'strokeText', 'drawImage', 'putImageData', 'fill', 'stroke']) {
      const orig = proto[m];
      proto[m] = function (...a) {
        B.draws++;
        B.lastDraw = now();
        return orig.apply(this, a);
      };
    }
    new MutationObserver((records) => {
      B.mutations += records.length;
      B.lastMutation = now();
    }).observe(document.documentElement, { subtree: true, childList: true, attributes: true, characterData: true });
  };

  // --- "until the page is quiet" (see the header) ----------------------------------------------
  const DRAW_METHODS = ['fillRect', 'strokeRect', 'clearRect', 'fillText', 'strokeText', 'drawImage', 'putImageData', 'fill', 'stroke'];
  function watchQuiet() {
    const proto = CanvasRenderingContext2D.prototype;
    for (const m of DRAW_METHODS) {
      const orig = proto[m];
      proto[m] = function (...a) {
        B.quietChanges++;
        return orig.apply(this, a);
      };
    }
    new MutationObserver((records) => {
      B.quietChanges += records.length;
    }).observe(document.documentElement, { subtree: true, childList: true, attributes: true, characterData: true });
    const changes = () => B.quietChanges + B.glDraws;
    let seen = changes();
    let lastChangeFrame = B.tBytes;
    let quiet = 0;
    const step = () => {
      const c = changes();
      if (c !== seen) {
        seen = c;
        quiet = 0;
        // This frame shows what changed since the last one.
        lastChangeFrame = now();
      } else {
        quiet++;
      }
      if (quiet >= 3 && B.tPainted !== null) {
        B.tQuiet = Math.max(lastChangeFrame, B.tPainted);
        return;
      }
      if (now() - B.tBytes < 120_000) requestAnimationFrame(step);
    };
    requestAnimationFrame(step);
  }

  B.frame = () => new Promise((r) => requestAnimationFrame(() => r()));
  B.frames = async (n) => {
    for (let i = 0; i < n; i++) await B.frame();
  };

  /** Times one interaction; see the header. `action` must dispatch synchronously. */
  B.time = async (action, check, { quietFrames = 3, timeoutMs = 10_000, hold = true } = {}) => {
    B.hook();
    await B.frames(2);
    // Not held: what the action asks the network for is answered as it comes, and the page
    // is settled only once the answers' effects are drawn too ("until the page is quiet").
    if (!hold) return B.settle(action, check, { quietFrames, timeoutMs });
    B.holdNet = true;
    B.collecting = true;
    const local = await B.settle(action, check, { quietFrames, timeoutMs });
    B.holdNet = false;
    const letIn = () => {
      B.collecting = false;
      return B.held.splice(0);
    };
    if (!local.ok) {
      letIn().forEach((release) => release());
      return local;
    }
    // Answers to what the action asked the network for: awaited, then let in, and the work
    // they cause timed on (followUpMs) — a server's time is not the viewer's latency, and
    // must not land in a measure depending on whether it came within the quiet frames.
    const t1 = now();
    while (B.pending > 0 && now() - t1 < timeoutMs) await B.frame();
    const held = letIn();
    if (!held.length) return { ...local, followUpMs: null };
    const after = await B.settle(() => held.forEach((release) => release()), null, { quietFrames, timeoutMs });
    return { ...local, followUpMs: after.ok ? after.ms : null, heldFetches: held.length };
  };

  /** Dispatches `action` and waits until it has settled: the time of its last draw call or
   *  DOM mutation. */
  B.settle = async (action, check, { quietFrames, timeoutMs }) => {
    const d0 = B.draws;
    const m0 = B.mutations;
    B.lastDraw = 0;
    B.lastMutation = 0;
    const t0 = now();
    action();
    const tSync = now();
    let quiet = 0;
    let seen = -1;
    const before = d0 + m0;
    // The rAF time of the frame that shows the last change (the "quiet" measure's end).
    let changeFrame = tSync;
    for (;;) {
      await B.frame();
      const s = B.draws + B.mutations;
      if (s === seen) quiet++;
      else {
        quiet = 0;
        if (seen !== -1 || s !== before) changeFrame = now();
        seen = s;
      }
      const ok = !check || check();
      if (quiet >= quietFrames && ok) break;
      if (now() - t0 > timeoutMs) {
        return { ok: false, error: `no settled response within ${timeoutMs} ms (check ${ok})`, ms: null };
      }
    }
    const draws = B.draws - d0;
    const mutations = B.mutations - m0;
    const end = Math.max(tSync, draws ? B.lastDraw : 0, mutations ? B.lastMutation : 0);
    return { ok: true, ms: end - t0, syncMs: tSync - t0, draws, mutations, t0, end, quietMs: changeFrame - t0 };
  };

  /** Resolves once the current frame's rendering (style, layout, paint) is done: a task posted
   *  from a rAF callback runs after that frame's update. `inFrame` runs in the rAF callback. */
  const frameDone = (inFrame) => new Promise((resolve) => {
    requestAnimationFrame(() => {
      const v = inFrame ? inFrame() : undefined;
      const c = new MessageChannel();
      c.port1.onmessage = () => resolve(v);
      c.port2.postMessage(0);
    });
  });

  /** Input → next frame painted. `aligned` dispatches `action` at the start of a frame, as
   *  Chromium dispatches continuous input (mousemove) just before the frame's rAF callbacks;
   *  otherwise it is dispatched now, as discrete input (mouseup) is. Then frames pass until
   *  one shows `check()` (read when that frame's DOM is final: after its rendering for the
   *  frame of the input, in its rAF callback for later ones). Latency = the end of that frame's
   *  rendering − dispatch; raster and compositing after it are not included. */
  B.toFrame = async (action, check, { aligned = true, timeoutMs = 10_000 } = {}) => {
    await B.frames(2);
    let t0 = null;
    const dispatch = () => {
      t0 = now();
      action();
    };
    if (aligned) await frameDone(dispatch);
    else {
      dispatch();
      await frameDone();
    }
    let shown = check();
    while (!shown) {
      if (now() - t0 > timeoutMs) return { ok: false, error: `no frame showed the result within ${timeoutMs} ms`, ms: null };
      shown = await frameDone(check);
    }
    return { ok: true, ms: now() - t0 };
  };

  // --- "painted" predicates -------------------------------------------------------------------
  /** Whether a horizontal line of the canvas has any pixel that is not near-white. */
  const lineInked = (canvas, y) => {
    if (!canvas || canvas.width === 0 || y >= canvas.height) return false;
    const ctx = canvas.getContext('2d');
    if (!ctx) return false;
    const d = ctx.getImageData(0, Math.floor(y), canvas.width, 1).data;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3] > 0 && (d[i] < 240 || d[i + 1] < 240 || d[i + 2] < 240)) return true;
    }
    return false;
  };
  const PAINTED = {
    // The status line reports the loaded profile ("… N nodes · …") and the canvas shows bars in
    // row 2 (rows are 18 CSS px; the canvas is drawn whole, so row 2 means the frame is complete).
    embers() {
      const status = document.querySelector('[data-testid=status]');
      if (!status || !/ nodes/.test(status.textContent)) return null;
      const c = document.querySelector('[data-testid=flame-canvas]');
      const dpr = window.devicePixelRatio || 1;
      if (!lineInked(c, (18 * 2 + 9) * dpr)) return null;
      return { status: status.textContent.trim() };
    },
    // Compare mode: the same, once the diff legend is up (the diff of both answers is drawn).
    embersCompare() {
      if (!document.querySelector('[data-testid=diff-legend]')) return null;
      return PAINTED.embers();
    },
    // The profile's canvas (data-testid=flameGraph) is sized for the real profile (the page mounts
    // a 2-level dummy first) and shows bars in row 2 (rows are 22 CSS px).
    grafana() {
      if (!window.bench || !window.bench.nodes) return null;
      const c = document.querySelector('canvas[data-testid=flameGraph]');
      const dpr = window.devicePixelRatio || 1;
      if (!c || c.height < 22 * 3 * dpr) return null;
      if (!lineInked(c, (22 * 2 + 11) * dpr)) return null;
      return { canvasHeight: c.height };
    },
    // speedscope draws the flame chart on one page-sized WebGL canvas (not readable after
    // compositing): painted = its flame-chart views are mounted (≥ 2 view canvases besides the
    // WebGL one) and WebGL has issued draw calls since the bytes arrived.
    speedscope() {
      if (B.tBytes === null || B.glDrawsAtBytes === undefined) return null;
      const drawn = B.glDraws - B.glDrawsAtBytes;
      if (drawn <= 0 || document.querySelectorAll('canvas').length < 3) return null;
      return { glDraws: drawn };
    },
  };
  const poll = () => {
    if (B.tPainted !== null) return;
    if (B.tBytes !== null) {
      try {
        const info = PAINTED[opts.app]();
        if (info) {
          B.tPainted = now();
          if (opts.markers) __benchMarkPainted();
          B.paintedInfo = info;
          return;
        }
      } catch (e) {
        B.errors.push(String(e));
      }
    }
    requestAnimationFrame(poll);
  };
  requestAnimationFrame(poll);
}
