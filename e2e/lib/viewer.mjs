// Browser launch and a page object for the Embers viewer.

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

import { E2E_DIR } from './server.mjs';

export const SCREENSHOT_DIR = path.join(E2E_DIR, 'screenshots');
/** Row height of the icicle graph, CSS px (root at y 0..18, depth d at 18*d). */
export const ROW_H = 18;
/** Canvas background in the light theme. */
const BACKGROUND = [255, 255, 255];
const PROFILE_PATH = '/v1/profile/ProfileTracing';

/** Chromium warns that preload ignores `integrity`; that is trunk's output, not a page error. */
const ALWAYS_IGNORED = [/integrity/i];

export function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
}

const UNIT_SCALE = { µs: 1, ms: 1e3, s: 1e6, min: 6e7, h: 3.6e9, B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, TiB: 1024 ** 4, PiB: 1024 ** 5 };

/** Parses a formatted value ("62.6 s", "812 µs", "3.1 MiB") into µs or bytes; NaN if it is none. */
export function parseValue(text) {
  const m = /^([\d.]+) (µs|ms|s|min|h|B|KiB|MiB|GiB|TiB|PiB)$/u.exec(String(text).trim());
  return m ? Number(m[1]) * UNIT_SCALE[m[2]] : NaN;
}

/** Parses the footer line of a drawn graph. */
export function parseStatus(text) {
  const m = /^(.*): ([\d,]+) nodes · ([\d,]+) functions · depth (\d+) · ([\d.,]+) (µs|ms|s|min|h|B|KiB|MiB|GiB|TiB|PiB|samples?)(?: (.+?))?(?: · shape ([AB]))? · decoded in (\d+) ms$/u
    .exec(text.trim());
  if (!m) return null;
  const scale = UNIT_SCALE;
  return {
    root: m[1],
    nodes: Number(m[2].replaceAll(',', '')),
    functions: Number(m[3].replaceAll(',', '')),
    depth: Number(m[4]),
    value: Number(m[5].replaceAll(',', '')) * (scale[m[6]] ?? 1),
    valueText: `${m[5]} ${m[6]}`,
    measure: m[7] ?? m[6],
    shape: m[8] ?? null,
    decodeMs: Number(m[9]),
  };
}

/**
 * Whether a bar label shows function `name`: the name itself, the name with its share
 * ("name (12.3%)", "name (self 1%)"), or the name elided ("nam…").
 */
export function labelShows(label, name) {
  if (label == null || !name) return false;
  if (label === name || label.startsWith(`${name} (`)) return true;
  return label.endsWith('…') && name.startsWith(label.slice(0, -1));
}

/**
 * A fresh browser context whose pages record what the renderer draws on the flame canvas
 * (bars, labels, hover outline), so tests can aim at a bar and read its label. Drawing itself
 * is untouched. The recorder runs in every frame (iframes too).
 */
export async function newContext(browser, { viewport = { width: 1280, height: 800 }, timezoneId } = {}) {
  const context = await browser.newContext({
    viewport,
    timezoneId,
    deviceScaleFactor: 1,
    colorScheme: 'light',
    reducedMotion: 'reduce',
    acceptDownloads: true,
  });
  await context.addInitScript(() => {
    const proto = CanvasRenderingContext2D.prototype;
    const { fillRect, fillText, strokeRect } = proto;
    const isFlame = (ctx) => ctx.canvas?.dataset?.testid === 'flame-canvas';
    window.__embersDraws = 0;
    window.__embersDraw = null;
    proto.fillRect = function (x, y, w, h) {
      if (isFlame(this)) {
        const c = this.canvas;
        // Against the backing store: a resize draws before the element's CSS size follows.
        const [cw, ch] = [c.width / devicePixelRatio, c.height / devicePixelRatio];
        if (x === 0 && y === 0 && w >= cw - 0.5 && h >= ch - 0.5) {
          // The background fill starts a new frame.
          window.__embersDraws++;
          window.__embersDraw = { bars: [], hover: null, width: w, height: h, background: String(this.fillStyle) };
        } else if (window.__embersDraw) {
          window.__embersDraw.bars.push({
            x, y, w, h, fill: String(this.fillStyle), alpha: this.globalAlpha, label: null,
          });
        }
      }
      return fillRect.call(this, x, y, w, h);
    };
    // Labels are drawn after all bars (one batch a frame): each belongs to the bar it starts in.
    proto.fillText = function (text, x, y, ...rest) {
      const bars = isFlame(this) && window.__embersDraw?.bars;
      const bar = bars && bars.findLast((b) => b.x <= x && x < b.x + b.w && b.y <= y && y < b.y + b.h);
      if (bar) bar.label = String(text);
      return fillText.call(this, text, x, y, ...rest);
    };
    proto.strokeRect = function (x, y, w, h) {
      if (isFlame(this) && window.__embersDraw) window.__embersDraw.hover = { x, y, w, h };
      return strokeRect.call(this, x, y, w, h);
    };
  });
  return context;
}

/** The page object: one browser context + page on the viewer, with error collection. */
export class Viewer {
  /** Opens a fresh context on `server` (an object with `url`), at `/` or `/?params`. */
  static async open(browser, server, { params, viewport = { width: 1280, height: 800 }, baseUrl, timezoneId } = {}) {
    const context = await newContext(browser, { viewport, timezoneId });
    const page = await context.newPage();
    const v = new Viewer(context, page, baseUrl ?? server.url);
    if (params !== null) await v.goto(params);
    return v;
  }

  /**
   * Opens the portal page of `host` (a site from lib/host.mjs, another origin than the viewer's)
   * that embeds the viewer of `server` in an iframe at `/?embed=1&params`, or at `src` when
   * given, and records every message the frame posts to it in `window.got`. Returns a Viewer
   * whose DOM reads go to the iframe; `host*` methods talk to the portal page.
   */
  static async openEmbedded(browser, server, host, { params = '', src, viewport = { width: 1280, height: 800 } } = {}) {
    const context = await newContext(browser, { viewport });
    const page = await context.newPage();
    const v = new Viewer(context, page, server?.url);
    const frameSrc = src ?? `${server.url}/?embed=1${params ? `&${params}` : ''}`;
    await page.goto(host.hostUrl(frameSrc));
    const frame = await (await page.getByTestId('host-iframe').elementHandle()).contentFrame();
    assert.ok(frame, 'the iframe has a frame');
    v.frame = frame;
    await frame.waitForLoadState('load');
    return v;
  }

  constructor(context, page, url) {
    this.context = context;
    this.page = page;
    this.url = url;
    /** Where DOM reads go: the page, or the viewer's iframe (see openEmbedded). */
    this.frame = page.mainFrame();
    /** Console errors and uncaught page errors, as text. */
    this.errors = [];
    /** Every ProfileTracing request the page sent: { url, body }. */
    this.requests = [];
    /** How many ProfileTracing requests have finished or failed. */
    this.completed = 0;
    /** Console warnings, as text (the embed API says there why it ignores its host). */
    this.warnings = [];
    page.on('console', (msg) => {
      if (msg.type() === 'warning') this.warnings.push(msg.text());
      // The location names the resource behind "Failed to load resource" and CSP reports.
      const where = msg.location()?.url;
      if (msg.type() === 'error') this.errors.push(`console.error: ${msg.text()}${where ? ` (${where})` : ''}`);
    });
    page.on('pageerror', (err) => this.errors.push(`pageerror: ${err.message}`));
    page.on('crash', () => this.errors.push('page crashed'));
    page.on('request', (req) => {
      if (req.url().includes(PROFILE_PATH)) {
        let body = null;
        try { body = req.postDataJSON(); } catch { body = req.postData(); }
        this.requests.push({ url: req.url(), body });
      }
    });
    const done = (req) => { if (req.url().includes(PROFILE_PATH)) this.completed++; };
    page.on('requestfinished', done);
    page.on('requestfailed', done);
  }

  /**
   * Navigates to the viewer, with optional query parameters (object or string); waits for the
   * element `waitFor` (the query form; pass another test id for embedded pages).
   */
  async goto(params, { waitFor = 'query-form' } = {}) {
    const qs = params == null ? '' : typeof params === 'string' ? params : new URLSearchParams(params).toString();
    await this.page.goto(`${this.url}/${qs ? `?${qs}` : ''}`);
    await this.el(waitFor).waitFor({ state: 'visible' });
  }

  el(testid) {
    return this.frame.getByTestId(testid);
  }

  /**
   * Fills the form and submits it (Enter in the process field unless `submit: 'click'`).
   * Fields left undefined keep their value. Does not wait for the answer.
   */
  async fillForm({ app, wholeHost, language, event, tagFilter, preset, start, end, kernelDepth, baseUrl } = {}) {
    if (event !== undefined) await this.el('event-type').selectOption(event);
    if (language !== undefined) await this.el('language-type').selectOption(language);
    // The process field is disabled while whole host is checked.
    if (wholeHost === false) await this.el('whole-host').setChecked(false);
    if (app !== undefined) await this.el('app-service').fill(app);
    if (wholeHost === true) await this.el('whole-host').setChecked(true);
    if (tagFilter !== undefined) await this.el('tag-filter').fill(tagFilter);
    if (preset !== undefined) await this.el('time-preset').selectOption(preset);
    if (start !== undefined) await this.el('time-start').fill(start);
    if (end !== undefined) await this.el('time-end').fill(end);
    if (kernelDepth !== undefined) await this.el('kernel-depth').fill(String(kernelDepth));
    if (baseUrl !== undefined) await this.el('base-url').fill(baseUrl);
  }

  async submit(how = 'click') {
    if (how === 'enter') await this.el('tag-filter').press('Enter');
    else await this.el('submit').click();
  }

  /**
   * Fills, submits, waits for the request to complete and the page to settle; returns the
   * status text.
   */
  async query(fields = {}, { submit = 'click', timeout = 20_000 } = {}) {
    await this.fillForm(fields);
    const done = this.completed;
    await this.submit(submit);
    await this.waitForRequestsCompleted(done + 1, { timeout });
    return this.waitForSettled({ timeout });
  }

  /** Waits until `n` ProfileTracing requests in all have finished or failed. */
  async waitForRequestsCompleted(n, { timeout = 20_000 } = {}) {
    const deadline = Date.now() + timeout;
    while (this.completed < n) {
      if (Date.now() > deadline) {
        throw new Error(`only ${this.completed} of ${n} ProfileTracing requests completed within ${timeout} ms`);
      }
      await this.page.waitForTimeout(25);
    }
  }

  async status() {
    return (await this.el('status').textContent()).trim();
  }

  /** Waits until the status line matches `pattern` (RegExp or string); returns its text. */
  async waitForStatus(pattern, { timeout = 20_000 } = {}) {
    const re = pattern instanceof RegExp ? pattern : new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    const deadline = Date.now() + timeout;
    let last = '';
    while (Date.now() < deadline) {
      last = await this.status();
      if (re.test(last)) return last;
      await this.page.waitForTimeout(50);
    }
    throw new Error(`status did not match ${re} within ${timeout} ms; it reads: ${JSON.stringify(last)}`);
  }

  /** Waits until no query runs (not "Ready.", "Querying…", "Receiving…" or "Decoding…"). */
  waitForSettled(opts) {
    return this.waitForStatus(/^(?!Ready\.$)(?!Querying)(?!Receiving)(?!Decoding)/u, opts);
  }

  /** Waits for a drawn graph: status with a node count and a painted, stable canvas. */
  async waitForGraph({ timeout = 20_000 } = {}) {
    const text = await this.waitForStatus(/ nodes · /, { timeout });
    await this.waitForCanvasStable({ timeout });
    return parseStatus(text) ?? assert.fail(`unparsable status: ${text}`);
  }

  /** Waits until the canvas has paint and two consecutive reads agree. */
  async waitForCanvasStable({ timeout = 10_000 } = {}) {
    const deadline = Date.now() + timeout;
    let prev = null;
    while (Date.now() < deadline) {
      const snap = await this.canvasSnapshot().catch(() => null);
      if (snap && snap.painted > 0 && prev && prev.hash === snap.hash) return snap;
      prev = snap;
      await this.page.waitForTimeout(60);
    }
    throw new Error('the flame canvas did not settle to a painted picture');
  }

  /**
   * Reads the canvas backing store: size, count of non-background pixels and a hash.
   * With `keep`, the pixels are kept in the page under that name for canvasDiff. `testid`
   * picks another canvas (the sandwich halves), `bg` another background colour.
   */
  canvasSnapshot(keep, { testid = 'flame-canvas', bg = BACKGROUND } = {}) {
    return this.el(testid).evaluate((canvas, { keep, bg }) => {
      const ctx = canvas.getContext('2d');
      const { width, height } = canvas;
      const data = ctx.getImageData(0, 0, width, height).data;
      let painted = 0;
      let hash = 0x811c9dc5;
      const words = new Uint32Array(data.buffer, data.byteOffset, data.length / 4);
      for (let i = 0; i < words.length; i++) {
        const o = i * 4;
        if (data[o] !== bg[0] || data[o + 1] !== bg[1] || data[o + 2] !== bg[2]) painted++;
        hash = Math.imul(hash ^ words[i], 0x01000193) >>> 0;
      }
      if (keep) {
        window.__embersSnaps ??= {};
        window.__embersSnaps[keep] = { width, height, data: new Uint8ClampedArray(data) };
      }
      return { width, height, painted, hash: hash.toString(16), total: width * height };
    }, { keep: keep ?? null, bg });
  }

  /**
   * Number of pixels that differ between two kept snapshots (Infinity if sizes differ),
   * ignoring pixels inside the `exclude` rectangles ({ x, y, w, h } in CSS px, widened by one
   * pixel for anti-aliasing).
   */
  canvasDiff(a, b, { exclude = [] } = {}) {
    return this.frame.evaluate(([a, b, exclude]) => {
      const x = window.__embersSnaps[a];
      const y = window.__embersSnaps[b];
      if (x.width !== y.width || x.height !== y.height) return Infinity;
      const skip = (px, py) => exclude.some((r) => px >= r.x - 1 && px <= r.x + r.w + 1 && py >= r.y - 1 && py <= r.y + r.h + 1);
      let n = 0;
      for (let i = 0; i < x.data.length; i += 4) {
        if (x.data[i] !== y.data[i] || x.data[i + 1] !== y.data[i + 1] || x.data[i + 2] !== y.data[i + 2]) {
          const p = i / 4;
          if (!skip(p % x.width, Math.floor(p / x.width))) n++;
        }
      }
      return n;
    }, [a, b, exclude]);
  }

  /**
   * The bars of the last drawn frame: [{ x, y, w, h, depth, fill, alpha, label, cx, cy }]
   * (CSS px; `label` is the text drawn on the bar, null when it was too narrow for one).
   */
  async bars() {
    const draw = await this.frame.evaluate(() => window.__embersDraw);
    assert.ok(draw, 'the flame canvas has not been drawn');
    return draw.bars.map((b) => ({
      ...b,
      depth: Math.round(b.y / ROW_H),
      cx: Math.floor(b.x + b.w / 2),
      cy: Math.floor(b.y + ROW_H / 2),
    }));
  }

  /** The hover outline of the last drawn frame, or null. */
  hoverOutline() {
    return this.frame.evaluate(() => window.__embersDraw?.hover ?? null);
  }

  /** How many frames the flame canvas has drawn so far. */
  drawCount() {
    return this.frame.evaluate(() => window.__embersDraws);
  }

  /**
   * The widest bar at `depth` whose label matches `label` (RegExp, optional); fails if none.
   * Only opaque bars count (a zoom dims ancestors) unless `dimmed` is true.
   */
  async findBar(depth, { label, dimmed = false } = {}) {
    const candidates = (await this.bars()).filter((b) => b.depth === depth
      && (dimmed || b.alpha === 1)
      && (!label || (b.label !== null && label.test(b.label))));
    assert.ok(candidates.length > 0, `no bar at depth ${depth}${label ? ` labelled ${label}` : ''}`);
    return candidates.reduce((a, b) => (b.w > a.w ? b : a));
  }

  /** Moves the pointer to the middle of `bar`; returns the tooltip's content. */
  async hoverBar(bar) {
    await this.el('flame-canvas').hover({ position: { x: bar.cx, y: bar.cy } });
    await this.el('tooltip').waitFor({ state: 'visible' });
    return this.tooltip();
  }

  /** Hovers the widest bar at `depth` (see findBar); returns { bar, tip }. */
  async hoverRow(depth, opts) {
    const bar = await this.findBar(depth, opts);
    return { bar, tip: await this.hoverBar(bar) };
  }

  /** Clicks the middle of `bar` (zooms into it). */
  async clickBar(bar) {
    await this.el('flame-canvas').click({ position: { x: bar.cx, y: bar.cy } });
  }

  /** The tooltip as { name, kind, rows: [[label, value], ...], lead } (null when hidden). */
  async tooltip() {
    const tip = this.el('tooltip');
    if (!(await tip.isVisible())) return null;
    return tip.evaluate((el) => {
      const text = (sel) => el.querySelector(sel)?.textContent.trim() ?? null;
      const dts = [...el.querySelectorAll('dt')].map((d) => d.textContent.trim());
      const dds = [...el.querySelectorAll('dd')].map((d) => d.textContent.trim());
      return {
        name: text('.tip-name'),
        kind: text('.tip-kind'),
        rows: dts.map((d, i) => [d, dds[i]]),
        lead: el.querySelector('dt.lead')?.textContent.trim() ?? null,
        text: el.textContent,
      };
    });
  }

  /** The labels drawn on bars in the last frame, in drawing order. */
  async labels() {
    return (await this.bars()).map((b) => b.label).filter((l) => l !== null);
  }

  /** Moves the pointer off the graph (top-left corner of the page), clearing the hover. */
  async pointerAway() {
    await this.page.mouse.move(1, 1);
    await this.el('tooltip').waitFor({ state: 'hidden' });
  }

  /** The breadcrumb labels, root first. */
  async breadcrumbs() {
    return this.el('breadcrumbs').locator('button').allTextContents();
  }

  async errorText() {
    const e = this.el('error');
    return (await e.isVisible()) ? (await e.textContent()).trim() : null;
  }

  async screenshot(name) {
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await this.page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`) });
  }

  /**
   * Asserts that no console error or page error happened, apart from those matching `allow`
   * (each allowance a RegExp for an error the test provoked on purpose).
   */
  assertNoErrors({ allow = [] } = {}) {
    if (process.env.E2E_DEBUG) console.log('console/page errors seen:', JSON.stringify(this.errors));
    const unexpected = this.errors.filter((e) => ![...ALWAYS_IGNORED, ...allow].some((re) => re.test(e)));
    assert.deepEqual(unexpected, [], `console/page errors:\n${unexpected.join('\n')}`);
  }


  // ---- Analysis features (search, table, noise control, export/import) ----

  /** The status line without its "decoded in N ms" tail (which differs between loads). */
  async statusCore() {
    return (await this.status()).replace(/ · decoded in \d+ ms$/u, '');
  }

  /**
   * Waits until the breadcrumbs satisfy `want` (a count, or a predicate on the labels);
   * returns the labels.
   */
  async waitForCrumbs(want, { timeout = 10_000 } = {}) {
    const ok = typeof want === 'number' ? (c) => c.length === want : want;
    const deadline = Date.now() + timeout;
    let crumbs = [];
    while (Date.now() < deadline) {
      crumbs = await this.breadcrumbs();
      if (ok(crumbs)) return crumbs;
      await this.page.waitForTimeout(40);
    }
    throw new Error(`breadcrumbs did not become ${want} within ${timeout} ms; they are ${JSON.stringify(crumbs)}`);
  }

  /**
   * Runs `action` and waits until the flame canvas has drawn at least one new frame and
   * settled; returns the settled snapshot.
   */
  async redrawAfter(action, { timeout = 10_000 } = {}) {
    const before = await this.drawCount();
    await action();
    await this.frame.waitForFunction((n) => window.__embersDraws > n, before, { timeout });
    return this.waitForCanvasStable({ timeout });
  }

  /** Waits until `fn` (async, returning a value) gives a value `ok` accepts; returns it. */
  async poll(fn, ok, { timeout = 10_000, what = 'condition' } = {}) {
    const deadline = Date.now() + timeout;
    let last;
    while (Date.now() < deadline) {
      last = await fn();
      if (ok(last)) return last;
      await this.page.waitForTimeout(40);
    }
    throw new Error(`${what} not met within ${timeout} ms; last value ${JSON.stringify(last)}`);
  }

  /**
   * Lets the page finish reacting to the last input: the viewer's effects run as microtasks,
   * so after one animation frame and a task they have run and the DOM is up to date.
   */
  settle() {
    return this.frame.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0))));
  }

  /** The search summary text. */
  async searchSummary() {
    return (await this.el('search-summary').textContent()).trim();
  }

  /**
   * Replaces the search text and waits until the summary reacts (non-empty for a non-empty
   * search); returns the summary.
   */
  async search(text) {
    await this.el('search').fill(text);
    await this.settle();
    if (!text.trim()) return this.poll(() => this.searchSummary(), (t) => t === '', { what: 'empty search summary' });
    return this.poll(() => this.searchSummary(), (t) => t !== '', { what: 'search summary' });
  }

  /** Opens the function table (closed by default below 1500 px). */
  async openTable() {
    const toggle = this.el('table-toggle');
    if ((await toggle.getAttribute('aria-pressed')) !== 'true') await toggle.click();
    await this.el('function-table').waitFor({ state: 'visible' });
  }

  /** The table's rows: [{ name, selfText, totalText, self, total, selected }] (µs/bytes). */
  async tableRows() {
    const rows = await this.el('function-table').locator('[data-testid=table-row]').evaluateAll((trs) => trs.map((tr) => {
      const cells = tr.querySelectorAll('td');
      const value = (td) => td.firstChild?.nodeType === Node.TEXT_NODE ? td.firstChild.textContent.trim() : td.textContent.trim();
      return {
        name: cells[0].textContent,
        selfText: value(cells[1]),
        totalText: value(cells[2]),
        selfPct: cells[1].querySelector('.pct')?.textContent ?? null,
        selected: tr.classList.contains('selected'),
      };
    }));
    return rows.map((r) => ({ ...r, self: parseValue(r.selfText), total: parseValue(r.totalText) }));
  }

  /** Picks a step in the noise-control menu (threads, kernel0, kernel2, unresolved, focus). */
  async addNoise(value) {
    await this.el('noise-add').selectOption(value);
    await this.settle();
  }

  /** The noise-control chips' texts (without the remove button). */
  async chips() {
    await this.settle();
    if (!(await this.el('chips').isVisible())) return [];
    return this.el('chip').evaluateAll((els) => els.map((el) => el.firstChild.textContent.trim()));
  }

  /** Opens the Export menu (a <details>). */
  async openExportMenu() {
    const menu = this.el('export-menu');
    if (!(await menu.evaluate((d) => d.open))) await menu.locator('summary').click();
  }

  /** Clicks an export item and returns the download as { name, buffer, text }. */
  async download(testid) {
    await this.openExportMenu();
    const [dl] = await Promise.all([this.page.waitForEvent('download'), this.el(testid).click()]);
    const file = await dl.path();
    const { readFile } = await import('node:fs/promises');
    const buffer = await readFile(file);
    return { name: dl.suggestedFilename(), buffer, text: buffer.toString('utf8') };
  }

  /** Imports a file through the Export menu's file input. */
  async importFile(name, content, mimeType = 'text/plain') {
    await this.el('import-file').setInputFiles({ name, mimeType, buffer: Buffer.from(content) });
  }

  /** The RGB of one pixel of a canvas (CSS px = device px here). */
  canvasPixel(x, y, testid = 'flame-canvas') {
    return this.el(testid).evaluate((c, [x, y]) => [...c.getContext('2d').getImageData(x, y, 1, 1).data.slice(0, 3)], [x, y]);
  }

  /** How many pixels of canvas row `y` are exactly `bg` (default: light background). */
  canvasRowBackground(y, { testid = 'flame-canvas', bg = BACKGROUND } = {}) {
    return this.el(testid).evaluate((c, [y, bg]) => {
      const d = c.getContext('2d').getImageData(0, y, c.width, 1).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i] === bg[0] && d[i + 1] === bg[1] && d[i + 2] === bg[2]) n++;
      return n;
    }, [y, bg]);
  }

  /** Text of the frame the announcer (aria-live) reads out. */
  async announcer() {
    return (await this.el('announcer').textContent()).trim();
  }

  /** data-testid of the focused element (in the viewer's frame), or its tag name. */
  activeTestid() {
    return this.frame.evaluate(() => document.activeElement?.dataset?.testid ?? document.activeElement?.tagName ?? null);
  }

  // ---- Host page of an embedded viewer (openEmbedded) ----

  /** Messages the iframe posted to the host so far: [{ data, fromFrame }]. */
  hostMessages() {
    return this.page.evaluate(() => window.got);
  }

  /** Waits until the host has received a message of `type` (the n-th one, default the first). */
  async waitForHostMessage(type, { after = 0, timeout = 20_000 } = {}) {
    const msgs = await this.poll(async () => (await this.hostMessages()).slice(after), (m) => m.some((x) => x.data?.type === type),
      { timeout, what: `host message ${type}` });
    return msgs.find((x) => x.data?.type === type);
  }

  /** Posts `message` from the host page to the iframe. */
  hostPost(message) {
    return this.page.evaluate((m) => document.querySelector('iframe').contentWindow.postMessage(m, '*'), message);
  }

  async close() {
    await this.context.close();
  }
}
