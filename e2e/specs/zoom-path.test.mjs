// Zoom that never moves the page (issue 35, item 3): the zoom path has its place in the toolbar
// from the first view, ancestors that do not fit fold into a "…" menu, and the flame graph's box
// is the same before a zoom, after a deep one and after zooming out again, at 900, 1280 and
// 1920 px. Every ancestor stays reachable by mouse (crumb or menu) and keyboard. A zoom changes
// the path in the frame it shows (Z4). Screenshots (light and dark, 900 and 1280 px, zoomed
// deep) go to e2e/screenshots/zoom-path-*.png.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { openViewer, useServerAndBrowser } from '../lib/fixture.mjs';

const env = useServerAndBrowser();

/** Depths clicked one after the other: six zooms, 13 frames on the path at the end. */
const DEPTHS = [2, 4, 6, 8, 10, 12];

/** Opens the demo's java profile (deep stacks) at `width` px in `scheme`. */
async function javaAt(t, width, scheme = 'light') {
  const v = await openViewer(t, env, { viewport: { width, height: 800 }, params: null });
  await v.page.emulateMedia({ colorScheme: scheme });
  await v.goto();
  await v.query({ app: 'java' });
  await v.waitForGraph();
  return v;
}

/** The canvas's box, rounded to 1/100 px. */
async function graphBox(v) {
  const b = await v.el('flame-canvas').boundingBox();
  return Object.fromEntries(Object.entries(b).map(([k, n]) => [k, Math.round(n * 100) / 100]));
}

/**
 * Waits until the path lists `n` frames and has folded what does not fit: its line is not cut
 * (beyond the current frame's own ellipsis) and the crumbs shown start where the menu's end.
 * Returns { labels, folded, shown }.
 */
async function settledPath(v, n) {
  await v.page.waitForFunction((n) => {
    const path = document.querySelector('[data-testid=breadcrumbs]');
    const line = path?.querySelector('.crumbs');
    return path && line && path.querySelectorAll('button').length === n && line.scrollWidth <= line.clientWidth + 1;
  }, n);
  const labels = await v.breadcrumbs();
  const folded = await v.el('crumb-more').locator('button').allTextContents();
  const shown = await v.el('breadcrumbs').locator('.crumbs .crumb').allTextContents();
  return { labels, folded, shown };
}

/** Zooms by clicking the widest full-colour bar at each of `depths`; checks the box each time. */
async function zoomDeep(v, depths, before, what) {
  let path;
  for (const depth of depths) {
    await v.clickBar(await v.findBar(depth));
    path = await settledPath(v, depth + 1);
    assert.deepEqual(await graphBox(v), before, `${what}, zoomed to depth ${depth}: the graph did not move`);
    // Every frame of the path is in the menu or on the line, once, root first.
    assert.deepEqual([...path.folded, ...path.shown], path.labels, `${what}, depth ${depth}: menu + line = the path`);
  }
  return path;
}

test('Z1. a zoom never moves the graph: same box before, after a deep zoom and after zooming out, at 900, 1280 and 1920 px', async (t) => {
  const boxes = {};
  for (const width of [900, 1280, 1920]) {
    const v = await javaAt(t, width);
    const before = await graphBox(v);
    const toolbar = await v.page.locator('.toolbar').boundingBox();
    const path = await zoomDeep(v, DEPTHS, before, `${width} px`);
    assert.deepEqual(await v.page.locator('.toolbar').boundingBox(), toolbar, `${width} px: the toolbar kept its size`);
    const current = await v.el('breadcrumbs').locator('.crumb.current').boundingBox();
    assert.ok(current.width >= 40, `${width} px: the zoomed frame's crumb shows (${current.width} px)`);
    if (width === 900) assert.ok(path.folded.length > 0, '900 px: 13 frames do not fit; the oldest fold into "…"');

    // Zoom out to the parent by its crumb on the line (or its menu entry when only the zoomed
    // frame is on the line), then to the root through the menu (or its crumb).
    const parent = path.labels.at(-2);
    if (path.shown.length >= 2) {
      await v.el('breadcrumbs').locator('.crumbs .crumb').nth(path.shown.length - 2).click();
    } else {
      await v.el('crumb-more').locator('summary').click();
      await v.el('crumb-more').locator('button').last().click();
    }
    const out = await settledPath(v, path.labels.length - 1);
    assert.equal(out.labels.at(-1), parent);
    assert.deepEqual(await graphBox(v), before, `${width} px: zoomed out by a crumb, the graph did not move`);
    if (out.folded.length > 0) {
      await v.el('crumb-more').locator('summary').click();
      await v.el('crumb-more').locator('button').first().click();
    } else {
      await v.el('breadcrumbs').locator('.crumb').first().click();
    }
    const root = await settledPath(v, 1);
    assert.deepEqual(root.labels, ['java']);
    assert.equal(await v.el('crumb-more').count(), 0, 'nothing folded at the root');
    assert.deepEqual(await graphBox(v), before, `${width} px: back at the root, the graph did not move`);
    boxes[width] = before;
    v.assertNoErrors();
    await v.close();
  }
  console.log('graph boxes (before = after):', JSON.stringify(boxes));
});

test('Z2. the folded ancestors are reached with Tab and Enter; Esc resets; the graph stays put', async (t) => {
  const v = await javaAt(t, 900);
  const before = await graphBox(v);
  const path = await zoomDeep(v, DEPTHS, before, '900 px');
  assert.ok(path.folded.length >= 2, `folded ${JSON.stringify(path.folded)}`);
  // Tab order: the "…" menu, then its ancestors; Enter opens it and picks one.
  await v.el('crumb-more').locator('summary').focus();
  await v.page.keyboard.press('Enter');
  await v.el('crumb-more').locator('button').first().waitFor({ state: 'visible' });
  await v.page.keyboard.press('Tab');
  await v.page.keyboard.press('Tab');
  assert.equal(await v.page.evaluate(() => document.activeElement?.textContent), path.folded[1]);
  await v.page.keyboard.press('Enter');
  const out = await settledPath(v, 2);
  assert.deepEqual(out.labels, path.labels.slice(0, 2));
  assert.deepEqual(await graphBox(v), before, 'zoomed out by keyboard, the graph did not move');
  // Zoomed in again, Esc goes back to the root.
  await zoomDeep(v, [3, 5], before, '900 px again');
  await v.page.keyboard.press('Escape');
  await settledPath(v, 1);
  assert.deepEqual(await graphBox(v), before, 'after Esc, the graph did not move');
  v.assertNoErrors();
});

test('Z3. screenshots zoomed deep at 900 and 1280 px, light and dark: one calm line', async (t) => {
  for (const [width, scheme] of [[900, 'light'], [900, 'dark'], [1280, 'light'], [1280, 'dark']]) {
    const v = await javaAt(t, width, scheme);
    const before = await graphBox(v);
    await zoomDeep(v, DEPTHS, before, `${width} px ${scheme}`);
    await v.pointerAway();
    await v.screenshot(`zoom-path-${width}-${scheme}`);
    if (width === 900) {
      await v.el('crumb-more').locator('summary').click();
      await v.el('crumb-more').locator('button').first().waitFor({ state: 'visible' });
      await v.screenshot(`zoom-path-${width}-${scheme}-menu`);
    }
    v.assertNoErrors();
    await v.close();
  }
});

/**
 * Records, from now on, every frame as the page painted it (read in a task after the frame's
 * rendering): whether the path's line is cut and the graph's box; and in which frame each change
 * inside the path was made. `window.__zp.clickFrame` is the frame a click came in.
 */
function recordFrames() {
  const nav = document.querySelector('[data-testid=breadcrumbs]');
  const line = nav.querySelector('.crumbs');
  const canvas = document.querySelector('[data-testid=flame-canvas]');
  const zp = (window.__zp = { frame: 0, clickFrame: null, frames: [], changes: [], on: true });
  document.addEventListener('click', () => { zp.clickFrame ??= zp.frame; }, { capture: true });
  new MutationObserver(() => zp.changes.push(zp.frame))
    .observe(nav, { subtree: true, childList: true, attributes: true, characterData: true });
  const loop = () => requestAnimationFrame(() => {
    const c = new MessageChannel();
    c.port1.onmessage = () => {
      const b = canvas.getBoundingClientRect();
      zp.frames.push({ frame: zp.frame, cut: line.scrollWidth > line.clientWidth + 1, box: [b.x, b.y, b.width, b.height] });
      zp.frame++;
    };
    c.port2.postMessage(0);
    if (zp.on) loop();
  });
  loop();
}

/**
 * Clicks `bar` from inside an animation-frame callback, as the benchmark dispatches its clicks
 * and Chromium its frame-aligned input: work the page defers to "the next animation frame" then
 * lands in a later frame than the click's own, instead of in the same one.
 */
async function clickInAnimationFrame(v, bar) {
  const canvas = await v.el('flame-canvas').boundingBox();
  await v.page.evaluate(([x, y]) => requestAnimationFrame(() => {
    document.elementFromPoint(x, y).dispatchEvent(new MouseEvent('click', {
      bubbles: true, cancelable: true, composed: true, view: window, clientX: x, clientY: y, button: 0, detail: 1,
    }));
  }), [canvas.x + bar.cx, canvas.y + bar.cy]);
}

test('Z4. a zoom changes the path in the frame that shows it (clicked, or clicked from an animation frame): no later frame changes it, none shows it cut or the graph moved (900 px, deep)', async (t) => {
  const v = await javaAt(t, 900);
  const start = await v.page.evaluate(() => {
    const b = document.querySelector('[data-testid=flame-canvas]').getBoundingClientRect();
    return [b.x, b.y, b.width, b.height];
  });
  let folded = 0;
  for (const [i, depth] of DEPTHS.entries()) {
    const bar = await v.findBar(depth);
    await v.page.evaluate(recordFrames);
    if (i % 2 === 0) await v.clickBar(bar);
    else await clickInAnimationFrame(v, bar);
    const path = await settledPath(v, depth + 1);
    folded = path.folded.length;
    // Three more frames, so a change one frame late would be seen.
    await v.page.waitForFunction((n) => window.__zp.frames.length >= n + 3, (await v.page.evaluate(() => window.__zp.frames.length)));
    const zp = await v.page.evaluate(() => {
      window.__zp.on = false;
      return window.__zp;
    });
    assert.notEqual(zp.clickFrame, null, `depth ${depth}: the click was seen`);
    assert.ok(zp.changes.length > 0, `depth ${depth}: the path changed`);
    assert.deepEqual([...new Set(zp.changes)], [zp.clickFrame], `depth ${depth}: every change to the path in the click's frame (frames of the changes: ${JSON.stringify(zp.changes)})`);
    for (const f of zp.frames.filter((f) => f.frame >= zp.clickFrame)) {
      assert.equal(f.cut, false, `depth ${depth}: frame ${f.frame - zp.clickFrame} after the click shows the path cut`);
      assert.deepEqual(f.box, start, `depth ${depth}: frame ${f.frame - zp.clickFrame} after the click shows the graph moved`);
    }
  }
  assert.ok(folded > 0, '900 px: the deep path folded ancestors (the case where a late fold would show)');
  v.assertNoErrors();
});
