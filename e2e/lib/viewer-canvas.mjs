// The Viewer's reads of the flame canvas: pixels, the recorded bars and labels, hover and
// tooltip, breadcrumbs, redraws. Mixed into Viewer (lib/viewer.mjs); `this` is the Viewer.

import assert from 'node:assert/strict';

import { BACKGROUND, ROW_H } from './browser.mjs';

export class CanvasReads {
  /** Waits until the canvas has paint and two consecutive reads agree. */
  async waitForCanvasStable({ timeout = 10_000, testid = 'flame-canvas' } = {}) {
    const deadline = Date.now() + timeout;
    let prev = null;
    while (Date.now() < deadline) {
      const snap = await this.canvasSnapshot(null, { testid }).catch(() => null);
      if (snap && snap.painted > 0 && prev && prev.hash === snap.hash) return snap;
      prev = snap;
      await this.page.waitForTimeout(60);
    }
    throw new Error(`the canvas ${testid} did not settle to a painted picture`);
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
}
