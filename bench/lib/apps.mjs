// One driver per viewer: how to open it on a generated profile, wait for the first painted
// frame, and perform zoom / reset / hover / search so that lib/instrument.js can time them.
// All interactions are dispatched inside the page (synthetic DOM events), so timings are taken on
// the page's own clock and no CDP round trip sits inside a measurement.

import { instrument } from './instrument.mjs';

/** Chromium flags. 2D-canvas viewers run with the GPU disabled (software raster, like CI);
 *  speedscope needs WebGL, which headless Chromium then provides through SwiftShader. */
const COMMON_ARGS = [
  '--no-sandbox', '--disable-dev-shm-usage', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];
export const BROWSER_ARGS = {
  cpu: [...COMMON_ARGS, '--disable-gpu'],
  webgl: [...COMMON_ARGS, '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
};

export const VIEWPORT = { width: 1280, height: 800 };

async function newPage(browser, app, bytesMatch, { markers = false, bytesCount = 1 } = {}) {
  const context = await browser.newContext({
    viewport: VIEWPORT,
    deviceScaleFactor: 1,
    colorScheme: 'light',
    reducedMotion: 'reduce',
  });
  await context.addInitScript(instrument, { app, bytesMatch, markers, bytesCount });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('crash', () => errors.push('page crashed'));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/integrity|Failed to load resource/i.test(m.text())) {
      errors.push(`console.error: ${m.text().slice(0, 300)}`);
    }
  });
  return { context, page, errors };
}

/** Waits (polling from node) until the page recorded its first painted frame. */
async function waitPainted(page, errors, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await page.evaluate(() => {
      const B = window.__bench;
      return B && { tBytes: B.tBytes, tPainted: B.tPainted, info: B.paintedInfo, errors: B.errors, bytes: B.bytes };
    });
    if (s && s.tPainted !== null) return s;
    if (errors.some((e) => /crash|pageerror/.test(e))) {
      throw new Error(`page failed before painting: ${errors.join(' | ')}`);
    }
    if (Date.now() > deadline) {
      throw new Error(`no painted frame within ${timeoutMs} ms (bytes ${s?.tBytes == null ? 'not yet' : 'in'}; ${errors.join(' | ')})`);
    }
    await page.waitForTimeout(s && s.tBytes !== null ? 20 : 100);
  }
}

/** JS heap (after a forced GC, via CDP) plus wasm linear memory. */
export async function measureMemory(page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('HeapProfiler.enable');
  await cdp.send('HeapProfiler.collectGarbage');
  await cdp.send('HeapProfiler.collectGarbage');
  await cdp.send('Performance.enable');
  const { metrics } = await cdp.send('Performance.getMetrics');
  await cdp.detach();
  const m = Object.fromEntries(metrics.map((x) => [x.name, x.value]));
  const wasm = await page.evaluate(() => window.__bench.wasmBytes());
  return {
    jsHeapUsedMB: m.JSHeapUsedSize / 2 ** 20,
    jsHeapTotalMB: m.JSHeapTotalSize / 2 ** 20,
    wasmMB: wasm / 2 ** 20,
    totalMB: (m.JSHeapUsedSize + wasm) / 2 ** 20,
    domNodes: m.Nodes,
  };
}

/** Runs `n` timed interactions; `step(i)` returns the in-page result of __bench.time. */
async function repeat(n, step) {
  const samples = [];
  const failures = [];
  for (let i = 0; i < n; i++) {
    const r = await step(i);
    if (r && r.ok) samples.push(r.ms);
    else failures.push(r?.error ?? 'failed');
  }
  return { samples, failures };
}

// In-page helpers shared by the drivers (passed as strings would lose closures; each evaluate
// re-declares what it needs).

/** Dispatches a synthetic mouse event at client coordinates on the element found there. */
const MOUSE_JS = `
  window.__benchMouse = (type, x, y, opts = {}) => {
    const target = document.elementFromPoint(x, y);
    if (!target) throw new Error('nothing at ' + x + ',' + y);
    target.dispatchEvent(new MouseEvent(type, {
      bubbles: true, cancelable: true, composed: true, view: window,
      clientX: x, clientY: y, screenX: x, screenY: y, button: 0, buttons: type === 'mousedown' ? 1 : 0,
      detail: type === 'dblclick' ? 2 : 1, ...opts,
    }));
    return target.tagName;
  };`;

async function rectOf(page, selector) {
  return page.evaluate((sel) => {
    const el = document.querySelector(sel);
    if (!el) return null;
    const r = el.getBoundingClientRect();
    return { x: r.x, y: r.y, w: r.width, h: r.height };
  }, selector);
}

/** Waits until Embers has booted with its query in flight: the app started, the decode worker
 *  ready and warmed up, the server's request count at `requests` (the held queries), no other
 *  request of the page still open (its timeline, tag lists), and the page idle. */
async function waitBooted(page, server, requests, timeoutMs, open) {
  await page.waitForFunction(() => ['embers:app-started', 'embers:worker-ready', 'embers:worker-warm']
    .every((m) => performance.getEntriesByName(m).length > 0), null, { timeout: timeoutMs });
  const deadline = Date.now() + timeoutMs;
  while (server.requests.length < requests || open.size > 0) {
    if (Date.now() > deadline) throw new Error(`Embers did not settle (query sent: ${server.requests.length >= requests}; still open: ${[...open].join(', ')})`);
    await page.waitForTimeout(10);
  }
  // Idle: ten idle periods in a row with most of a frame left (the harness' own frame loop
  // keeps periods shorter than a frame), i.e. about ten frames without page work.
  await page.evaluate((timeoutMs) => new Promise((resolve, reject) => {
    const until = performance.now() + timeoutMs;
    let quiet = 0;
    const check = (deadline) => {
      quiet = deadline.timeRemaining() >= 8 ? quiet + 1 : 0;
      if (quiet >= 10) resolve();
      else if (performance.now() > until) reject(new Error('the page never went idle'));
      else requestIdleCallback(check);
    };
    requestIdleCallback(check);
  }), timeoutMs);
}

/** What one Embers render reports: timings, the page's own marks, the status line's figures. */
async function embersResult(page, s) {
  // Where the time went: the page's own performance marks (src/net/marks.rs), in ms since
  // navigation, like tBytes and tPainted.
  const marks = await page.evaluate(() => Object.fromEntries(performance.getEntriesByType('mark')
    .filter((m) => m.name.startsWith('embers:'))
    .map((m) => [m.name.slice(7), Math.round(m.startTime * 10) / 10])));
  const status = s.info.status;
  const decoded = /decoded in (\d+) ms/.exec(status);
  const nodes = /([\d,]+) nodes/.exec(status);
  return {
    renderMs: s.tPainted - s.tBytes,
    decodeMs: decoded ? Number(decoded[1]) : null,
    bytesAtMs: s.tBytes,
    paintedAtMs: s.tPainted,
    marks,
    responseBytes: s.bytes[0]?.size ?? null,
    nodesShown: nodes ? Number(nodes[1].replaceAll(',', '')) : null,
    status,
  };
}

// ------------------------------------------------------------------------------------------------
// Embers

export const embers = {
  name: 'embers',
  browser: 'cpu',
  query: 'app_service=synthetic-service&time_start=1&time_end=2',
  answers: 1,
  /** Opens Embers on `server` (which must already answer ProfileTracing with the body) and
   *  times its render the way Grafana's is timed: the page is booted and idle when the answer
   *  arrives (the server holds it until then), so render is Embers' own work on the bytes.
   *  Navigation → painted, boot included, is the first view (`firstView`). */
  async render(browser, server, { timeoutMs }) {
    const { context, page, errors } = await newPage(browser, this.name, 'ProfileTracing', { bytesCount: this.answers });
    // The page's other requests (timeline, tag lists) are answered while it boots.
    const open = new Set();
    page.on('request', (r) => { if (!r.url().includes('ProfileTracing')) open.add(r.url()); });
    const settled = (r) => open.delete(r.url());
    page.on('requestfinished', settled);
    page.on('requestfailed', settled);
    server.hold();
    const sent = server.requests.length;
    try {
      await page.goto(`${server.url}/?${this.query}`);
      await waitBooted(page, server, sent + this.answers, timeoutMs, open);
    } finally {
      server.release();
    }
    const s = await waitPainted(page, errors, timeoutMs);
    return { context, page, errors, result: await embersResult(page, s) };
  },

  /** Navigation to a URL naming the profile → its graph painted (boot, transfer included). */
  async firstView(browser, server, { timeoutMs }) {
    const { context, page, errors } = await newPage(browser, this.name, 'ProfileTracing', { bytesCount: this.answers });
    try {
      await page.goto(`${server.url}/?${this.query}`);
      const s = await waitPainted(page, errors, timeoutMs);
      return { paintedAtMs: s.tPainted, result: await embersResult(page, s) };
    } finally {
      await context.close().catch(() => {});
    }
  },

  /** The first view without a query: navigation → the query form in the page (mounted by the
   *  booted wasm, so its handlers are attached), in ms since navigation. */
  async formView(browser, server, { timeoutMs }) {
    const { context, page } = await newPage(browser, this.name, 'ProfileTracing');
    try {
      await context.addInitScript(() => {
        new MutationObserver((_, o) => {
          if (document.querySelector('[data-testid=query-form]')) {
            window.__benchFormAt = performance.now();
            o.disconnect();
          }
        }).observe(document, { childList: true, subtree: true });
      });
      await page.goto(`${server.url}/`);
      await page.waitForFunction(() => window.__benchFormAt != null, null, { timeout: timeoutMs });
      return { formAtMs: await page.evaluate(() => window.__benchFormAt) };
    } finally {
      await context.close().catch(() => {});
    }
  },

  async interactions(page, n) {
    await page.evaluate(MOUSE_JS);
    const rect = await rectOf(page, '[data-testid=flame-canvas]');
    const row = (k) => rect.y + 18 * k + 9;
    const out = {};

    // Zoom: click a wide bar in row 2 (40 % across); reset: Escape.
    const zoomX = rect.x + rect.w * 0.4;
    const zoom = [];
    const reset = [];
    const zoomFail = [];
    const resetFail = [];
    for (let i = 0; i < n; i++) {
      const z = await page.evaluate(([x, y]) => window.__bench.time(
        () => window.__benchMouse('click', x, y),
        () => !document.querySelector('[data-testid=reset-zoom]')?.disabled,
      ), [zoomX, row(2)]);
      if (z.ok) zoom.push(z.ms);
      else zoomFail.push(z.error);
      const r = await page.evaluate(() => window.__bench.time(
        () => document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', code: 'Escape', bubbles: true, cancelable: true })),
        () => !!document.querySelector('[data-testid=reset-zoom]')?.disabled,
      ));
      if (r.ok) reset.push(r.ms);
      else resetFail.push(r.error);
    }
    out.zoom = { samples: zoom, failures: zoomFail };
    out.reset = { samples: reset, failures: resetFail };

    // Hover: alternate between two bars in different rows; each move changes the hovered bar
    // (outline redraw + tooltip content).
    const points = [[rect.x + rect.w * 0.3, row(3)], [rect.x + rect.w * 0.7, row(4)]];
    out.hover = await repeat(n, (i) => page.evaluate(([x, y]) => {
      const before = document.querySelector('[data-testid=tooltip]')?.textContent ?? null;
      return window.__bench.time(
        () => window.__benchMouse('mousemove', x, y),
        () => {
          const t = document.querySelector('[data-testid=tooltip]');
          return !!t && t.textContent !== before;
        },
      );
    }, points[i % 2]));
    await page.evaluate(([x, y]) => window.__benchMouse('mouseleave', x, y), points[0]).catch(() => {});

    // Search highlight: type a term (one input event) until the graph is redrawn with matches;
    // clearing it again is not timed.
    const hasSearch = await page.evaluate(() => !!document.querySelector('[data-testid=search]'));
    if (hasSearch) {
      const terms = ['alloc', 'decode', 'socket', 'flush'];
      out.search = await repeat(n, async (i) => {
        const r = await page.evaluate((term) => {
          const input = document.querySelector('[data-testid=search]');
          return window.__bench.time(
            () => {
              input.value = term;
              input.dispatchEvent(new InputEvent('input', { bubbles: true, data: term, inputType: 'insertText' }));
            },
            () => /match/.test(document.querySelector('[data-testid=search-summary]')?.textContent ?? ''),
          );
        }, terms[i % terms.length]);
        await page.evaluate(() => {
          const input = document.querySelector('[data-testid=search]');
          input.value = '';
          input.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'deleteContentBackward' }));
        });
        await page.evaluate(() => window.__bench.frames(3));
        return r;
      });
    }
    return out;
  },
};

/**
 * Scrolls Embers' graph from top to bottom in `n` steps, timing each redraw twice: from setting
 * scrollTop (includes waiting for the browser to fire `scroll`, which it does once per frame)
 * and from the `scroll` event itself (Embers' own work).
 */
export async function embersScroll(page, n) {
  const fromEvent = [];
  const total = await repeat(n, async (i) => {
    const r = await page.evaluate(([i, n]) => {
      // The graph's scroll container: the nearest scrollable ancestor of the canvas.
      let el = document.querySelector('[data-testid=flame-canvas]');
      while (el && !(el.scrollHeight > el.clientHeight + 1 && /auto|scroll/.test(getComputedStyle(el).overflowY))) el = el.parentElement;
      if (!el) return { ok: false, error: 'no scroll container' };
      const y = Math.round(((i + 1) / n) * (el.scrollHeight - el.clientHeight));
      let scrollAt = null;
      el.addEventListener('scroll', () => { scrollAt ??= performance.now(); }, { capture: true, once: true });
      return window.__bench.time(
        () => { el.scrollTop = y; },
        () => Math.abs(el.scrollTop - y) <= 1,
      ).then((r) => (r.ok && !r.draws ? { ok: false, error: 'no redraw after scrolling' } : { ...r, fromEventMs: scrollAt == null ? null : r.end - scrollAt }));
    }, [i, n]);
    if (r.ok && r.fromEventMs != null) fromEvent.push(r.fromEventMs);
    return r;
  });
  return { total, fromEvent: { samples: fromEvent, failures: [] } };
}

// ------------------------------------------------------------------------------------------------
// speedscope (its prebuilt app from the npm package, loading the profile with #profileURL=)

export const speedscope = {
  name: 'speedscope',
  browser: 'webgl',
  async render(browser, server, { dataUrl, timeoutMs }) {
    const { context, page, errors } = await newPage(browser, 'speedscope', 'speedscope\\.json');
    await page.goto(`${server.url}/speedscope/#profileURL=${encodeURIComponent(dataUrl)}&title=synthetic-service`);
    const s = await waitPainted(page, errors, timeoutMs);
    const paintedAtMs = s.tPainted;
    // Also note when speedscope stops drawing after the first frame (it fills its row atlas
    // lazily), to document how far "first frame" is from "settled".
    const settled = await page.evaluate(async () => {
      const B = window.__bench;
      let quiet = 0;
      let seen = B.glDraws;
      const t0 = performance.now();
      while (quiet < 5 && performance.now() - t0 < 10_000) {
        await B.frame();
        if (B.glDraws === seen) quiet++;
        else {
          quiet = 0;
          seen = B.glDraws;
        }
      }
      return B.lastDraw;
    });
    return {
      context,
      page,
      errors,
      result: {
        renderMs: s.tPainted - s.tBytes,
        settledMs: Math.max(settled, s.tPainted) - s.tBytes,
        bytesAtMs: s.tBytes,
        paintedAtMs,
        responseBytes: s.bytes[0]?.size ?? null,
      },
    };
  },

  async interactions(page, n) {
    await page.evaluate(MOUSE_JS);
    // The flame chart is the last (largest) view canvas; rows are ~20 CSS px below a time axis.
    const rect = await page.evaluate(() => {
      const cs = [...document.querySelectorAll('canvas')].slice(1);
      const c = cs.reduce((a, b) => (b.clientHeight > a.clientHeight ? b : a));
      const r = c.getBoundingClientRect();
      return { x: r.x, y: r.y, w: r.width, h: r.height };
    });
    const row = (k) => rect.y + 31 + 20 * k;
    const out = {};
    const zoomAt = [rect.x + rect.w * 0.4, row(2)];
    const zoom = [];
    const reset = [];
    const zf = [];
    const rf = [];
    for (let i = 0; i < n; i++) {
      // Zoom to a frame: speedscope zooms on double-click over the hovered frame.
      await page.evaluate(([x, y]) => window.__benchMouse('mousemove', x, y), zoomAt);
      await page.evaluate(() => window.__bench.frames(2));
      const z = await page.evaluate(([x, y]) => window.__bench.time(
        () => window.__benchMouse('dblclick', x, y),
        null,
      ), zoomAt);
      if (z.ok && z.draws > 0) zoom.push(z.ms);
      else zf.push(z.error ?? 'no redraw');
      // Reset: the "0" key zooms out to the whole profile.
      const r = await page.evaluate(() => window.__bench.time(
        () => window.dispatchEvent(new KeyboardEvent('keydown', { key: '0', code: 'Digit0', bubbles: true })),
        null,
      ));
      if (r.ok && r.draws > 0) reset.push(r.ms);
      else rf.push(r.error ?? 'no redraw');
    }
    out.zoom = { samples: zoom, failures: zf };
    out.reset = { samples: reset, failures: rf };
    const points = [[rect.x + rect.w * 0.3, row(3)], [rect.x + rect.w * 0.7, row(4)]];
    out.hover = await repeat(n, (i) => page.evaluate(([x, y]) => window.__bench.time(
      () => window.__benchMouse('mousemove', x, y),
      null,
    ).then((r) => (r.ok && r.draws + r.mutations === 0 ? { ok: false, error: 'no response' } : r)), points[i % 2]));
    return out;
  },
};

// ------------------------------------------------------------------------------------------------
// Grafana's flame graph (@grafana/flamegraph in a bare React page, bench/grafana/)

export const grafana = {
  name: 'grafana',
  browser: 'cpu',
  query: '',
  async render(browser, server, { dataUrl, timeoutMs }) {
    const { context, page, errors } = await newPage(browser, 'grafana', 'grafana\\.json');
    await page.goto(`${server.url}/grafana/${this.query}`);
    await page.waitForFunction(() => window.bench && window.bench.ready, null, { timeout: 30_000 });
    await page.evaluate(() => window.bench.ready);
    await page.evaluate((url) => {
      window.bench.load(url).catch((e) => window.__bench.errors.push(String(e)));
    }, dataUrl);
    const s = await waitPainted(page, errors, timeoutMs);
    return {
      context,
      page,
      errors,
      result: { renderMs: s.tPainted - s.tBytes, bytesAtMs: s.tBytes, responseBytes: s.bytes[0]?.size ?? null },
    };
  },

  /** The first view: navigation to a page that loads the profile at boot (`&load=`, no dummy
   *  profile first) → its graph painted, in ms since navigation. */
  async firstView(browser, server, { dataUrl, timeoutMs }) {
    const { context, page, errors } = await newPage(browser, 'grafana', 'grafana\\.json');
    try {
      const sep = this.query ? '&' : '?';
      await page.goto(`${server.url}/grafana/${this.query}${sep}load=${encodeURIComponent(dataUrl)}`);
      const s = await waitPainted(page, errors, timeoutMs);
      return { paintedAtMs: s.tPainted };
    } finally {
      await context.close().catch(() => {});
    }
  },

  async interactions(page, n) {
    await page.evaluate(MOUSE_JS);
    const rect = await rectOf(page, 'canvas[data-testid=flameGraph]');
    const row = (k) => rect.y + 22 * k + 11;
    const out = {};
    const zoomAt = [rect.x + rect.w * 0.4, row(2)];
    const zoom = [];
    const reset = [];
    const zf = [];
    const rf = [];
    const RESET = '[aria-label="Reset focus and sandwich state"]';
    for (let i = 0; i < n; i++) {
      // Zoom = click the bar (opens the context menu; not timed) + "Focus block" (timed).
      await page.evaluate(([x, y]) => window.__benchMouse('click', x, y), zoomAt);
      await page.waitForFunction(() => [...document.querySelectorAll('[role=menuitem]')].some((e) => /Focus block/.test(e.textContent)), null, { timeout: 10_000 });
      const z = await page.evaluate((RESET) => window.__bench.time(
        () => [...document.querySelectorAll('[role=menuitem]')].find((e) => /Focus block/.test(e.textContent)).click(),
        () => !!document.querySelector(RESET),
      ), RESET);
      if (z.ok) zoom.push(z.ms);
      else zf.push(z.error);
      const r = await page.evaluate((RESET) => window.__bench.time(
        () => document.querySelector(RESET).click(),
        () => !document.querySelector(RESET),
      ), RESET);
      if (r.ok) reset.push(r.ms);
      else rf.push(r.error);
    }
    out.zoom = { samples: zoom, failures: zf };
    out.reset = { samples: reset, failures: rf };
    const points = [[rect.x + rect.w * 0.3, row(3)], [rect.x + rect.w * 0.7, row(4)]];
    out.hover = await repeat(n, (i) => page.evaluate(([x, y]) => {
      const tip = () => [...document.querySelectorAll('p')].find((p) => /Samples:/.test(p.textContent))?.parentElement;
      const before = tip()?.textContent ?? null;
      return window.__bench.time(
        () => window.__benchMouse('mousemove', x, y),
        () => {
          const t = tip();
          return !!t && t.textContent !== before;
        },
      );
    }, points[i % 2]));
    return out;
  },
};

/** Embers comparing two answers (the server gives both sides the same body, so the diff's
 *  union tree is as big as one profile): a comparison costs two decodes, the diff and its
 *  layout. Rendered = both answers in the page → the diff painted with its legend. */
export const embersCompare = {
  ...embers,
  name: 'embersCompare',
  query: `${embers.query}&baseline_time_start=0&baseline_time_end=1`,
  answers: 2,
};

/** The same component showing only its flame graph (the header's "Flame Graph" view). */
export const grafanaGraph = { ...grafana, name: 'grafanaGraph', query: '?view=graph' };

export const APPS = { embers, embersCompare, speedscope, grafana, grafanaGraph };

// ------------------------------------------------------------------------------------------------
// Where Embers spends its render time: one extra load under the CDP sampling profiler. The server
// holds the ProfileTracing answer until the page has booted and the profiler runs, so the samples
// cover "bytes → first painted frame" (plus the loopback transfer) and nothing of the boot.

const CANVAS_GLUE = /^__wbg_(fillRect|fillText|strokeRect|strokeText|measureText|clearRect|setTransform|setLineDash|getContext|scale|save|restore|beginPath|rect|fill|stroke|set(Font|FillStyle|StrokeStyle|GlobalAlpha|LineWidth|TextBaseline|TextAlign)|font|fillStyle|strokeStyle|globalAlpha|lineWidth|textBaseline|textAlign)_/;
const STRING_GLUE = /passStringToWasm|getStringFromWasm|getArrayU8FromWasm|cachedText|decodeText|encodeString|__wbg_text_|TextDecoder|TextEncoder/;

export function categorize(callFrame, jsGlueUrl) {
  const { functionName: fn, url } = callFrame;
  if (fn === '(idle)') return 'idle';
  if (fn === '(program)') return 'browser (style, layout, paint, raster, …)';
  if (fn === '(garbage collector)') return 'garbage collection';
  if (fn === '(root)') return null;
  if (/\.wasm$|^wasm:/.test(url) || /^(wasm-function|\$)/.test(fn)) return 'wasm (decode, model, layout, UI)';
  if (url && url.includes(jsGlueUrl)) {
    if (CANVAS_GLUE.test(fn)) return 'canvas 2D calls';
    if (STRING_GLUE.test(fn)) return 'strings across the JS↔wasm boundary';
    return 'JS glue (DOM, events, other imports)';
  }
  if (!url && /^(text|json|arrayBuffer)$/.test(fn)) return 'reading the Response body (text/json/arrayBuffer)';
  if (fn === 'instrument' || /__bench|lineInked|poll/.test(fn) || url === '') return 'harness instrumentation / native';
  return 'other JS';
}

export async function profileEmbers(browser, server, { timeoutMs }) {
  const { context, page, errors } = await newPage(browser, 'embers', 'ProfileTracing', { markers: true });
  try {
    server.hold();
    const n0 = server.requests.length;
    await page.goto(`${server.url}/?app_service=synthetic-service&time_start=1&time_end=2`);
    const deadline = Date.now() + 30_000;
    while (server.requests.length === n0) {
      if (Date.now() > deadline) throw new Error('Embers sent no ProfileTracing request');
      await page.waitForTimeout(20);
    }
    await page.waitForTimeout(300);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
    await cdp.send('Profiler.start');
    server.release();
    const s = await waitPainted(page, errors, timeoutMs);
    const { profile } = await cdp.send('Profiler.stop');
    await cdp.detach();
    const glue = await page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name).find((n) => /\/embers-[0-9a-f]+\.js$/.test(n)) ?? 'embers-');
    const glueName = glue.slice(glue.lastIndexOf('/') + 1);
    return { renderMs: s.tPainted - s.tBytes, status: s.info.status, ...summarizeProfile(profile, glueName) };
  } finally {
    server.release();
    await context.close().catch(() => {});
  }
}

function summarizeProfile(profile, glueName) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n);
  // Sample times, and the window between the two markers (see instrument.mjs).
  const times = [];
  let t = profile.startTime;
  for (const d of profile.timeDeltas) times.push((t += d));
  const isMarker = (i, name) => byId.get(profile.samples[i])?.callFrame.functionName === name;
  let from = 0;
  let to = profile.samples.length;
  const lastBytes = profile.samples.findLastIndex((_, i) => isMarker(i, '__benchMarkBytes'));
  const firstPainted = profile.samples.findIndex((_, i) => isMarker(i, '__benchMarkPainted'));
  const windowed = lastBytes >= 0 && firstPainted > lastBytes;
  if (windowed) {
    from = lastBytes + 1;
    to = firstPainted;
  }
  const selfUs = new Map();
  for (let i = from; i < to; i++) {
    const dt = i + 1 < times.length ? times[i + 1] - times[i] : 0;
    selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + dt);
  }
  const cats = {};
  const fns = {};
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    const cat = categorize(node.callFrame, glueName);
    if (!cat) continue;
    cats[cat] = (cats[cat] ?? 0) + us / 1000;
    const f = node.callFrame;
    // Native functions (no URL) are named with their caller, e.g. `decode ← getStringFromWasm0`.
    const caller = !f.url && parentOf.get(id)?.callFrame.functionName;
    const key = `${f.functionName || '(anonymous)'}${f.url ? ` ${f.url.slice(f.url.lastIndexOf('/') + 1)}` : ''}${caller ? ` ← ${caller}` : ''}`;
    fns[key] = (fns[key] ?? 0) + us / 1000;
  }
  const round = (o) => Object.fromEntries(Object.entries(o).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Math.round(v * 10) / 10]));
  return {
    windowed,
    profiledMs: windowed ? (times[to] - times[from]) / 1000 : (profile.endTime - profile.startTime) / 1000,
    categoriesMs: round(cats),
    topFunctionsMs: Object.fromEntries(Object.entries(round(fns)).slice(0, 15)),
  };
}
