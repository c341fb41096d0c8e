// The stack chart in the real page (issue 37 item 5): the workload that alternates between two
// functions every half second, drawn over time from the samples endpoint; its spans follow the
// clock (hover reads them), the wheel zooms and the address keeps the zoom, the search dims
// what does not match, and "Open as flame graph" shows the graph of exactly the window.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { openViewer, useServerAndBrowser } from '../lib/fixture.mjs';
import { ingestTicks, TICK } from '../lib/ticks.mjs';

const env = useServerAndBrowser({ demo: false });

let ticks;

async function openChart(t, { dark = false, params = {} } = {}) {
  ticks ??= await ingestTicks(env.server);
  const v = await openViewer(t, env, { params: null });
  if (dark) await v.page.emulateMedia({ colorScheme: 'dark' });
  const done = v.completed;
  await v.goto({ ...ticks.request, time_view: 'stack', ...params });
  await v.waitForRequestsCompleted(done + 1);
  await v.waitForGraph();
  await v.el('stack-chart').waitFor({ state: 'visible' });
  return v;
}

/** The chart's canvas box and the Unix ms of its edges (from the window read-out). */
async function canvasBox(v) {
  return v.el('stack-chart-canvas').boundingBox();
}

/** What the tooltip says at the leaf row (depth 2: main, loop, tick_*) at x (0..1 of the width). */
async function leafAt(v, share) {
  const box = await canvasBox(v);
  await v.page.mouse.move(box.x + share * box.width, box.y + 2 * 18 + 9);
  const tip = v.el('stack-chart-tooltip');
  await tip.waitFor({ state: 'visible' });
  return (await tip.locator('.tip-name').textContent()).trim();
}

test('S1. the chart follows the clock: first function, then second, each half a second', async (t) => {
  const v = await openChart(t);
  const thread = await v.el('stack-chart-thread').locator('option').first().textContent();
  assert.equal(thread, `thread ${TICK.tid} · ${TICK.seconds * 100} samples`);
  // Eight seconds on the width: 1/16 of it is a half second. Sample a quarter into each half.
  for (let s = 0; s < TICK.seconds; s += 3) {
    assert.equal(await leafAt(v, (s + 0.25) / TICK.seconds), TICK.first, `second ${s}, first half`);
    assert.equal(await leafAt(v, (s + 0.75) / TICK.seconds), TICK.second, `second ${s}, second half`);
  }
  const detail = await v.el('stack-chart-tooltip').locator('.tip-kind').textContent();
  assert.match(detail, /^500 ms · from /u);
  await v.screenshot('stack-chart');
  v.assertNoErrors();
});

test('S2. the wheel zooms around the pointer, the address keeps the zoom, search dims the rest', async (t) => {
  const v = await openChart(t, { dark: true });
  const box = await canvasBox(v);
  await v.page.mouse.move(box.x + box.width / 16, box.y + 40);
  for (let i = 0; i < 6; i++) await v.page.mouse.wheel(0, -200);
  await v.poll(() => new URL(v.frame.url()).searchParams.get('chart_end_ms'), (x) => x !== null, { what: 'the zoom in the address' });
  const url = new URL(v.frame.url());
  const [a, b] = [Number(url.searchParams.get('chart_start_ms')), Number(url.searchParams.get('chart_end_ms'))];
  assert.ok(b - a < 8000 / 4, `zoomed in: ${b - a} ms shown`);
  assert.ok(a >= ticks.firstSecond * 1000 - 1 && a < ticks.firstSecond * 1000 + 500, `around the pointer: ${a}`);
  await v.search(TICK.second);
  await v.screenshot('stack-chart-zoomed-dark');
  // Reload from the address: the same window.
  const again = await openViewer(t, env, { params: null });
  const done = again.completed;
  await again.goto(Object.fromEntries(url.searchParams));
  await again.waitForRequestsCompleted(done + 1);
  await again.el('stack-chart').waitFor({ state: 'visible' });
  // The address keeps whole milliseconds: the reloaded chart shows exactly those.
  const ms = b - a;
  const shown = ms < 1000 ? `${ms} ms shown` : `${ms / 1000} s shown`;
  await again.poll(() => again.el('stack-chart-window').textContent(), (w) => w === shown, { what: 'the window of the address' });
  v.assertNoErrors();
  again.assertNoErrors();
});

test('S3. keys zoom and pan; "Open as flame graph" shows exactly the window', async (t) => {
  const v = await openChart(t);
  await v.page.locator('.stack-chart-area').focus();
  // Zoom to the first 1/8 of the eight seconds: +, + , + halve around the middle; 0 resets.
  await v.page.keyboard.press('0');
  for (let i = 0; i < 3; i++) await v.page.keyboard.press('+');
  await v.poll(() => v.el('stack-chart-window').textContent(), (w) => w === '1 s shown', { what: 'a second shown' });
  // Pan left to the start: the window is then [first second, +1 s).
  for (let i = 0; i < 40; i++) await v.page.keyboard.press('ArrowLeft');
  const done = v.completed;
  await v.el('stack-chart-open').click();
  await v.waitForRequestsCompleted(done + 1);
  const s = await v.waitForGraph();
  // One second of samples: 100 × 10 ms, both functions.
  assert.equal(s.value, 100 * TICK.weightUs, s.valueText);
  const url = new URL(v.frame.url());
  assert.equal(url.searchParams.get('time_start_ms'), String(ticks.firstSecond * 1000));
  v.assertNoErrors();
});
