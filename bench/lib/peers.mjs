// The peers' drivers: speedscope (its prebuilt app, WebGL) and Grafana's flame graph (a bare
// React page, canvas), opened on the same generated profile and timed like Embers.

import { MOUSE_JS, newPage, rectOf, repeat, waitPainted } from './page.mjs';

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

/** The same component showing only its flame graph (the header's "Flame Graph" view). */
export const grafanaGraph = { ...grafana, name: 'grafanaGraph', query: '?view=graph' };
