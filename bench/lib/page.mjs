// What every viewer driver shares: the browser flags, a fresh instrumented page, waiting for
// the first painted frame, memory, repeating a timed interaction, synthetic mouse events.

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

export async function newPage(browser, app, bytesMatch, { markers = false, bytesCount = 1 } = {}) {
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
export async function waitPainted(page, errors, timeoutMs) {
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

/** Waits until the page is quiet after its bytes arrived (instrument.mjs, tQuiet): ms from the
 *  bytes to the first frame after which nothing was drawn or changed for three frames. */
export async function waitQuiet(page, timeoutMs) {
  const h = await page.waitForFunction(() => {
    const B = window.__bench;
    return B && B.tQuiet != null ? B.tQuiet - B.tBytes : null;
  }, null, { timeout: timeoutMs, polling: 50 });
  return h.jsonValue();
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
export async function repeat(n, step) {
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
export const MOUSE_JS = `
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

export async function rectOf(page, selector) {
  return page.evaluate((sel) => {
    const el = document.querySelector(sel);
    if (!el) return null;
    const r = el.getBoundingClientRect();
    return { x: r.x, y: r.y, w: r.width, h: r.height };
  }, selector);
}
