// The sub-second heatmap in the real page (issue 37 item 5): a process that runs one function in
// the first half of every second and another in the second half, ingested with its event times;
// the heatmap shows the pattern, a selection inside the first half of a second opens the graph
// of exactly those samples (the first function only), a second selection compares with it, and
// the page's address carries both.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { openViewer, useServerAndBrowser } from '../lib/fixture.mjs';
import { ingestTicks, TICK } from '../lib/ticks.mjs';

const env = useServerAndBrowser({ demo: false });

let ticks;

/** The page on the workload's graph with the heatmap open. */
async function openHeatmap(t, { dark = false } = {}) {
  ticks ??= await ingestTicks(env.server);
  const v = await openViewer(t, env, { params: null });
  if (dark) await v.page.emulateMedia({ colorScheme: 'dark' });
  const done = v.completed;
  await v.goto({ ...ticks.request, time_view: 'heatmap' });
  await v.waitForRequestsCompleted(done + 1);
  await v.waitForGraph();
  const grid = v.el('heatmap');
  await grid.waitFor({ state: 'visible' });
  return { v, grid };
}

/** The centre of cell (column, slot) of the grid on the page. */
async function cellPoint(v, column, slot) {
  const box = await v.page.locator('.heatmap-grid').boundingBox();
  const grid = v.el('heatmap');
  const [columns, slots] = await Promise.all([grid.getAttribute('data-columns'), grid.getAttribute('data-slots')]);
  return {
    x: box.x + (column + 0.5) * (box.width / Number(columns)),
    y: box.y + (slot + 0.5) * (box.height / Number(slots)),
  };
}

async function drag(v, from, to, { shift = false } = {}) {
  const a = await cellPoint(v, ...from);
  const b = await cellPoint(v, ...to);
  if (shift) await v.page.keyboard.down('Shift');
  await v.page.mouse.move(a.x, a.y);
  await v.page.mouse.down();
  await v.page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2, { steps: 3 });
  await v.page.mouse.move(b.x, b.y, { steps: 3 });
  await v.page.mouse.up();
  if (shift) await v.page.keyboard.up('Shift');
}

test('H1. the heatmap shows the pattern, and a window in the first half of a second is that function only', async (t) => {
  const { v, grid } = await openHeatmap(t);
  assert.equal(await grid.getAttribute('data-slots'), '50');
  assert.equal(Number(await grid.getAttribute('data-columns')), ticks.request.time_end - ticks.request.time_start + 1);
  // 5 events a 20 ms slot while the workload runs: the busiest cell holds 2 (10 ms apart).
  assert.equal(await grid.getAttribute('data-max'), String(TICK.eventsPerSlot));
  // Hover reads a cell's time and count.
  const p = await cellPoint(v, ticks.firstColumn + 1, 3);
  await v.page.mouse.move(p.x, p.y);
  await v.poll(() => v.el('heatmap-readout').textContent(), (s) => / · 2 samples$/u.test(s), { what: 'the hovered cell read out' });
  await v.screenshot('heatmap');

  // Slots 3..22 of the second column with data: [S+60, S+460) ms.
  const done = v.completed;
  await drag(v, [ticks.firstColumn + 1, 3], [ticks.firstColumn + 1, 22]);
  await v.waitForRequestsCompleted(done + 1);
  const s = await v.waitForGraph();
  const second = ticks.request.time_start + ticks.firstColumn + 1;
  await v.poll(() => v.el('time-window').textContent(), (w) => /\(400 ms\)$/u.test(w), { what: 'the window named' });
  const url = new URL(v.frame.url());
  assert.equal(url.searchParams.get('time_start_ms'), String(second * 1000 + 60));
  assert.equal(url.searchParams.get('time_end_ms'), String(second * 1000 + 460));
  await v.openTable();
  const names = (await v.tableRows()).map((r) => r.name);
  assert.ok(names.includes(TICK.first), names.join());
  assert.ok(!names.includes(TICK.second), `the second half's function is outside the window: ${names.join()}`);
  // 40 events of 10 ms each: 400 ms of CPU.
  assert.equal(s.value, 40 * TICK.weightUs, s.valueText);
  await v.screenshot('heatmap-window');

  // A link reproduces the window; "Whole range" goes back to all of it.
  const again = await openViewer(t, env, { params: null });
  const before = again.completed;
  await again.goto(Object.fromEntries(url.searchParams));
  await again.waitForRequestsCompleted(before + 1);
  const linked = await again.waitForGraph();
  assert.equal(linked.value, s.value);
  const back = again.completed;
  await again.el('time-window-clear').click();
  await again.waitForRequestsCompleted(back + 1);
  const whole = await again.waitForGraph();
  assert.ok(whole.value > s.value, `${whole.valueText} vs ${s.valueText}`);
  v.assertNoErrors();
  again.assertNoErrors();
});

test('H2. Shift selects a second window: the first half against the second half of a second', async (t) => {
  const { v } = await openHeatmap(t, { dark: true });
  const column = ticks.firstColumn + 2;
  let done = v.completed;
  await drag(v, [column, 2], [column, 20]);
  await v.waitForRequestsCompleted(done + 1);
  await v.waitForGraph();
  done = v.completed;
  await drag(v, [column, 27], [column, 45], { shift: true });
  await v.waitForRequestsCompleted(done + 1);
  const url = new URL(v.frame.url());
  await v.poll(() => new URL(v.frame.url()).searchParams.get('baseline_time_start_ms'), (x) => x !== null, { what: 'the baseline window in the address' });
  await v.openTable();
  await v.el('function-table').locator('table.diff-table').waitFor();
  const rows = await v.tableRows();
  assert.ok(rows.some((r) => r.name === TICK.first) && rows.some((r) => r.name === TICK.second), rows.map((r) => r.name).join());
  await v.screenshot('heatmap-compare-dark');
  assert.ok(url.searchParams.get('time_start_ms'));
  v.assertNoErrors();
});

test('H3. keyboard: arrows move the cursor, Enter marks the start and the end', async (t) => {
  const { v } = await openHeatmap(t);
  await v.page.locator('.heatmap-grid').focus();
  // From cell (0, 0): to the first column with data, slot 30, then five slots down.
  for (let i = 0; i < ticks.firstColumn; i++) await v.page.keyboard.press('ArrowRight');
  for (let i = 0; i < 30; i++) await v.page.keyboard.press('ArrowDown');
  await v.page.keyboard.press('Enter');
  for (let i = 0; i < 5; i++) await v.page.keyboard.press('ArrowDown');
  const done = v.completed;
  await v.page.keyboard.press('Enter');
  await v.waitForRequestsCompleted(done + 1);
  await v.waitForGraph();
  await v.openTable();
  const names = (await v.tableRows()).map((r) => r.name);
  assert.ok(names.includes(TICK.second) && !names.includes(TICK.first), names.join());
  v.assertNoErrors();
});

test('H4. the time views are an on-demand module: a plain query page fetches no view module; the Heatmap loads it with a note, the Stack chart needs nothing more', async (t) => {
  ticks ??= await ingestTicks(env.server);
  const v = await openViewer(t, env, { params: null });
  const asked = v.recordViewModules();
  // The module's wasm is held until the loading note has been seen.
  let seen;
  const noteSeen = new Promise((resolve) => { seen = resolve; });
  await v.page.route(/\/time_view_bg\.wasm/, async (route) => {
    await noteSeen;
    return route.continue();
  });
  const done = v.completed;
  await v.goto({ ...ticks.request });
  await v.waitForRequestsCompleted(done + 1);
  await v.waitForGraph();
  await v.el('heatmap-toggle').waitFor();
  assert.deepEqual(asked, [], 'no view module on a plain query page');
  await v.el('heatmap-toggle').click();
  await v.el('view-loading').waitFor();
  assert.match(await v.el('view-loading').textContent(), /Loading the time view/);
  seen();
  const grid = v.el('heatmap');
  await grid.waitFor({ state: 'visible' });
  assert.equal(await grid.getAttribute('data-max'), String(TICK.eventsPerSlot), 'the heatmap drawn from the module');
  assert.equal(await v.el('view-loading').count(), 0, 'the note is gone');
  assert.deepEqual([...asked].sort(), ['/time_view.js', '/time_view_bg.wasm']);
  // The other time view is in the same module: switching fetches nothing.
  await v.el('stack-chart-toggle').click();
  await v.el('stack-chart').waitFor({ state: 'visible' });
  assert.equal(new URL(v.frame.url()).searchParams.get('time_view'), 'stack');
  assert.equal(asked.length, 2, `no second fetch: ${asked.join(' ')}`);
  v.assertNoErrors();
});
