// The browser for the end-to-end tests and a context that records what the flame canvas draws.

import { chromium } from 'playwright-core';

/** Row height of the icicle graph, CSS px (root at y 0..18, depth d at 18*d). */
export const ROW_H = 18;
/** Canvas background in the light theme. */
export const BACKGROUND = [255, 255, 255];

export function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
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
