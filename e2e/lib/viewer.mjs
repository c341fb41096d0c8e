// The page object for the Embers viewer: navigation, the query form, status and waits, errors.
// Canvas reads (lib/viewer-canvas.mjs) and panel actions (lib/viewer-panels.mjs) are mixed in.

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

import { newContext } from './browser.mjs';
import { parseStatus } from './parse.mjs';
import { E2E_DIR } from './server.mjs';
import { CanvasReads } from './viewer-canvas.mjs';
import { PanelActions } from './viewer-panels.mjs';

export { BACKGROUND, launchBrowser, newContext, ROW_H } from './browser.mjs';
export { labelShows, parseStatus, parseSummary, parseValue } from './parse.mjs';

export const SCREENSHOT_DIR = path.join(E2E_DIR, 'screenshots');
const PROFILE_PATH = '/v1/profile/ProfileTracing';

/** Chromium warns that preload ignores `integrity`; that is trunk's output, not a page error. */
const ALWAYS_IGNORED = [/integrity/i];

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
    await this.frameOut();
    return parseStatus(text) ?? assert.fail(`unparsable status: ${text}`);
  }

  /**
   * Waits for the next animation frame and the task after it: what the page put off until its
   * frame was out (the address bar's write after an answer or a keystroke) has then run, since
   * its frame callback was queued before this one.
   */
  frameOut() {
    return this.page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0))));
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
   * Starts recording the on-demand view modules the page asks for (`*_view.js` and
   * `*_view_bg.wasm`); returns the list of their paths, filled as requests go out.
   */
  recordViewModules() {
    const asked = [];
    this.page.on('request', (r) => {
      if (/_view(_bg)?\.(js|wasm)/.test(r.url())) asked.push(new URL(r.url()).pathname);
    });
    return asked;
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

  /** The status line without its "decoded in N ms" tail (which differs between loads). */
  async statusCore() {
    return (await this.status()).replace(/ · decoded in \d+ ms$/u, '');
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
   * Checks that `fn` (async) keeps giving `expected` (deep-equal) for `ms`: reads it through the
   * whole window and fails at the first other value. A "nothing happens" check needs a window;
   * this one is watched, not slept through. Returns the value.
   */
  async stays(fn, expected, ms, { what = 'value' } = {}) {
    const until = Date.now() + ms;
    for (;;) {
      const got = await fn();
      assert.deepEqual(got, expected, `${what} changed within the ${ms} ms it had to stay`);
      if (Date.now() >= until) return got;
      await this.page.waitForTimeout(20);
    }
  }

  /**
   * Lets the page finish reacting to the last input: the viewer's effects run as microtasks,
   * so after one animation frame and a task they have run and the DOM is up to date.
   */
  settle() {
    return this.frame.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0))));
  }

  async close() {
    await this.context.close();
  }
}

for (const mixin of [CanvasReads, PanelActions]) {
  for (const name of Object.getOwnPropertyNames(mixin.prototype)) {
    if (name !== 'constructor') Object.defineProperty(Viewer.prototype, name, Object.getOwnPropertyDescriptor(mixin.prototype, name));
  }
}
