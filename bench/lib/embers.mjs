// The Embers driver: open it on the bench server's profile (render timed on a booted, idle
// page), its first views, and its interactions (zoom, reset, hover, search, scrolling a deep
// graph). All interactions are dispatched inside the page (synthetic DOM events), so timings are
// taken on the page's own clock and no CDP round trip sits inside a measurement.

import { MOUSE_JS, newPage, rectOf, repeat, waitPainted } from './page.mjs';

/** Waits until Embers has booted with its query in flight: the app started, the decode worker
 *  ready and warmed up, the server's request count at `requests` (the held queries), no other
 *  request of the page still open (its timeline, tag lists), and the page idle. */
/** The URLs of the page's requests other than the profile query that have not finished yet
 *  (its timeline, tag lists), kept up to date as they come and go. */
export function otherRequestsOpen(page) {
  const open = new Set();
  page.on('request', (r) => { if (!r.url().includes('ProfileTracing')) open.add(r.url()); });
  const settled = (r) => open.delete(r.url());
  page.on('requestfinished', settled);
  page.on('requestfailed', settled);
  return open;
}

export async function waitBooted(page, server, requests, timeoutMs, open) {
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
  // navigation, like tBytes and tPainted; every mark in time order (a comparison decodes twice,
  // so a name can occur twice), and by name (the last of each).
  const markList = await page.evaluate(() => performance.getEntriesByType('mark')
    .filter((m) => m.name.startsWith('embers:'))
    .map((m) => [m.name.slice(7), Math.round(m.startTime * 10) / 10]));
  const marks = Object.fromEntries(markList);
  const status = s.info.status;
  const decoded = /decoded in (\d+) ms/.exec(status);
  const nodes = /([\d,]+) nodes/.exec(status);
  return {
    renderMs: s.tPainted - s.tBytes,
    decodeMs: decoded ? Number(decoded[1]) : null,
    bytesAtMs: s.tBytes,
    paintedAtMs: s.tPainted,
    marks,
    markList,
    responseBytes: s.bytes[0]?.size ?? null,
    nodesShown: nodes ? Number(nodes[1].replaceAll(',', '')) : null,
    status,
  };
}

export const embers = {
  name: 'embers',
  browser: 'cpu',
  query: 'app_service=synthetic-service&time_start=1&time_end=2',
  answers: 1,
  // Interactions run against a service with the explore endpoints, as Embers' own: the strip
  // above the graph is there, and a click that selects opens the function's timeline in it.
  usesExplore: true,
  /** Opens Embers on `server` (which must already answer ProfileTracing with the body) and
   *  times its render the way Grafana's is timed: the page is booted and idle when the answer
   *  arrives (the server holds it until then), so render is Embers' own work on the bytes.
   *  Navigation → painted, boot included, is the first view (`firstView`). */
  async render(browser, server, { timeoutMs }) {
    const { context, page, errors } = await newPage(browser, this.name, 'ProfileTracing', { bytesCount: this.answers });
    // The page's other requests (timeline, tag lists) are answered while it boots.
    const open = otherRequestsOpen(page);
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

  /** Zoom "until the page is quiet": a pointer press on a wide bar in row 2 → the first frame
   *  after which nothing is drawn or changed for three frames, the answers the click asks for
   *  (the selected function's timeline) let through as the server gives them. */
  async zoomQuiet(page, n) {
    await page.evaluate(MOUSE_JS);
    const rect = await rectOf(page, '[data-testid=flame-canvas]');
    const [x, y] = [rect.x + rect.w * 0.4, rect.y + 18 * 2 + 9];
    return repeat(n, async () => {
      const r = await page.evaluate(([x, y]) => window.__bench.time(
        () => {
          const target = document.elementFromPoint(x, y);
          const at = { bubbles: true, cancelable: true, composed: true, view: window, clientX: x, clientY: y, button: 0 };
          target.dispatchEvent(new PointerEvent('pointerdown', { ...at, buttons: 1, pointerId: 1, isPrimary: true }));
          target.dispatchEvent(new MouseEvent('mousedown', { ...at, buttons: 1, detail: 1 }));
          target.dispatchEvent(new PointerEvent('pointerup', { ...at, buttons: 0, pointerId: 1, isPrimary: true }));
          target.dispatchEvent(new MouseEvent('mouseup', { ...at, buttons: 0, detail: 1 }));
          target.dispatchEvent(new MouseEvent('click', { ...at, buttons: 0, detail: 1 }));
        },
        () => !document.querySelector('[data-testid=reset-zoom]')?.disabled,
        { hold: false },
      ), [x, y]);
      // Back to the whole graph, settled, before the next press (not timed).
      await page.evaluate(() => window.__bench.time(
        () => document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', code: 'Escape', bubbles: true, cancelable: true })),
        () => !!document.querySelector('[data-testid=reset-zoom]')?.disabled,
        { hold: false },
      ));
      return r.ok ? { ...r, ms: r.quietMs } : r;
    });
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
    const followUp = [];
    for (let i = 0; i < n; i++) {
      const z = await page.evaluate(([x, y]) => window.__bench.time(
        () => window.__benchMouse('click', x, y),
        () => !document.querySelector('[data-testid=reset-zoom]')?.disabled,
      ), [zoomX, row(2)]);
      if (z.ok) zoom.push(z.ms);
      else zoomFail.push(z.error);
      // The click also selects: the function's timeline follows once the service answers.
      if (z.ok && z.followUpMs != null) followUp.push(z.followUpMs);
      const r = await page.evaluate(() => window.__bench.time(
        () => document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', code: 'Escape', bubbles: true, cancelable: true })),
        () => !!document.querySelector('[data-testid=reset-zoom]')?.disabled,
      ));
      if (r.ok) reset.push(r.ms);
      else resetFail.push(r.error);
    }
    out.zoom = { samples: zoom, failures: zoomFail };
    if (followUp.length) out.zoomFollowUp = { samples: followUp, failures: [] };
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
    Object.assign(out, await embersTransforms(page, Math.min(n, 3)));
    // Last: its presses select functions whose timelines the service answers.
    out.zoomQuiet = await this.zoomQuiet(page, n);
    return out;
  },
};

/** The transforms timed (issue #26): a key on the frame with keyboard focus, or a menu entry. */
const TRANSFORMS = [
  ['drop', 'd'], ['merge', 'm'], ['recursion', 'r'], ['focus', 'f'], ['through', 't'],
  ['idle', 'i'], ['spin', 's'], ['all recursion', 'menu:rec'], ['libraries', 'menu:libs'],
];

/**
 * Applies each transform `n` times, timed from the key (or menu choice) to the graph redrawn
 * with its chip: a key acts on the frame with keyboard focus, which ↓ from the root puts on
 * its widest child; the chip is cleared again untimed. Keys are `transform:<name>` samples.
 */
async function embersTransforms(page, n) {
  const out = {};
  if (!(await page.evaluate(() => !!document.querySelector('[data-testid=noise-add]')))) return out;
  for (const [name, key] of TRANSFORMS) {
    out[`transform:${name}`] = await repeat(n, async () => {
      await page.evaluate(() => {
        const canvas = document.querySelector('[data-testid=flame-canvas]');
        document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true, cancelable: true }));
        canvas.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowDown', bubbles: true, cancelable: true }));
      });
      await page.evaluate(() => window.__bench.frames(3));
      const r = await page.evaluate((key) => window.__bench.time(
        () => {
          if (key.startsWith('menu:')) {
            const menu = document.querySelector('[data-testid=noise-add]');
            menu.value = key.slice(5);
            menu.dispatchEvent(new Event('change', { bubbles: true }));
          } else {
            document.body.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true, cancelable: true }));
          }
        },
        () => document.querySelectorAll('[data-testid=chip]').length === 1,
      ), key);
      await page.evaluate(() => document.querySelector('[data-testid=chips] button.ghost')?.click());
      await page.evaluate(() => window.__bench.frames(3));
      return r;
    });
  }
  return out;
}

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

/** Embers comparing two answers (the server gives both sides the same body, so the diff's
 *  union tree is as big as one profile): a comparison costs two decodes, the diff and its
 *  layout. Rendered = both answers in the page → the diff painted with its legend. */
export const embersCompare = {
  ...embers,
  name: 'embersCompare',
  query: `${embers.query}&baseline_time_start=0&baseline_time_end=1`,
  answers: 2,
};
