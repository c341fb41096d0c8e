// Comparing in the real page over the demo data: the last 20 minutes of api-gateway against the
// 20 before find the demo's regression (red, first by change); links and Back reproduce it;
// the two-column export imports back as the same diff; a saved snapshot opens by permalink, is
// listed by its name and serves as a baseline; a baseline that fails says so; a side without
// samples is named.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { openViewer, useServerAndBrowser } from '../lib/fixture.mjs';
import { labelShows } from '../lib/viewer.mjs';

const env = useServerAndBrowser();

/** The demo's regressing function (see server/src/demo/mod.rs). */
const REGRESSION = 'github.com/example/gateway/render.jsonEncodeResponse';

/** The last 20 minutes of the demo, and the 20 before. */
function ranges(server) {
  const end = server.startedAt;
  return { time_start: end - 1200 + 1, time_end: end, before: [end - 2400 + 1, end - 1200] };
}

/** The diff table's rows: [{ name, change (pp), changeText }]. */
async function diffRows(v) {
  const table = v.el('function-table');
  if (!(await table.count())) {
    // The table takes width from the graph: wait for the graph to be drawn again.
    await v.redrawAfter(() => v.el('table-toggle').click());
  }
  await v.el('function-table').locator('table.diff-table').waitFor();
  return v.el('function-table').locator('[data-testid=table-row]').evaluateAll((trs) => trs.map((tr) => {
    const change = tr.querySelector('td.change');
    return { name: tr.dataset.function, change: Number(change.dataset.change), changeText: change.textContent.trim(),
      swatch: getComputedStyle(change.querySelector('.swatch')).backgroundColor };
  }));
}

function rgb(css) {
  return css.match(/\d+/g).slice(0, 3).map(Number);
}

async function compareGateway(v) {
  const r = ranges(env.server);
  const done = v.completed;
  await v.goto({ app_service: 'api-gateway', time_start: r.time_start, time_end: r.time_end });
  await v.waitForRequestsCompleted(done + 1);
  await v.waitForGraph();
  await v.el('compare-menu').locator('summary').click();
  await v.el('compare-previous').click();
  await v.waitForRequestsCompleted(done + 2);
  await v.el('diff-legend').waitFor();
  return r;
}

test('C1. the last 20 minutes against the 20 before: the regression is red and first by change', async (t) => {
  const v = await openViewer(t, env, { params: null });
  const r = await compareGateway(v);
  const baselineBody = v.requests.at(-1).body;
  assert.deepEqual([baselineBody.time_start, baselineBody.time_end], r.before, 'the previous period');
  assert.equal(baselineBody.app_service, 'api-gateway');
  const url = new URL(v.page.url()).searchParams;
  assert.equal(Number(url.get('baseline_time_start')), r.before[0]);
  assert.equal(Number(url.get('baseline_time_end')), r.before[1]);
  assert.match(await v.el('diff-legend').textContent(), /shrank −[\d.]+ pp.*\+[\d.]+ pp grew/u);

  // On the graph, its bar is drawn in the same red family.
  // Long names are shortened from the front: `…render.jsonEncodeResponse`.
  const bar = (await v.bars()).find((b) => labelShows(b.label, REGRESSION));
  assert.ok(bar, 'the regression has a labelled bar');
  const [br, , bb] = rgb(bar.fill.startsWith('#') ? hexToRgb(bar.fill) : bar.fill);
  assert.ok(br > bb + 60, `bar fill ${bar.fill}`);

  // The tooltip tells both sides and the change.
  const tip = await v.hoverBar(bar);
  assert.equal(tip.name, REGRESSION, 'the hovered bar');
  const labels = tip.rows.map(([k]) => k);
  assert.deepEqual(labels.slice(0, 3), ['Baseline', 'Comparison', 'Change']);
  assert.match(tip.rows[2][1], /^\+[\d.]+ pp · \+\d+%$/u);
  await v.screenshot('compare');

  // The function table (it narrows the graph, so it is opened after the bar checks).
  const rows = await diffRows(v);
  assert.equal(rows[0].name, REGRESSION, `first by change: ${JSON.stringify(rows.slice(0, 4))}`);
  assert.ok(rows[0].change > 0.2, `it grew by ${rows[0].changeText}`);
  const [red, green, blue] = rgb(rows[0].swatch);
  assert.ok(red > 180 && red > blue + 60 && red > green + 60, `red swatch ${rows[0].swatch}`);
  const nameWidth = await v.el('function-table').locator('[data-testid=table-row] td.fn').first().evaluate((td) => td.clientWidth);
  assert.ok(nameWidth >= 150, `function names have room: ${nameWidth} px`);

  // Absolute mode re-colours; the choice is in the URL.
  await v.redrawAfter(() => v.el('diff-mode').click());
  assert.equal(new URL(v.page.url()).searchParams.get('diff'), 'absolute');
  v.assertNoErrors();
});

function hexToRgb(hex) {
  const n = parseInt(hex.slice(1), 16);
  return `rgb(${n >> 16}, ${(n >> 8) & 255}, ${n & 255})`;
}

test('C2. a compare link reproduces the comparison; stopping returns to one profile; Back comes back', async (t) => {
  const v = await openViewer(t, env, { params: null });
  await compareGateway(v);
  const link = v.page.url();
  const fresh = await openViewer(t, env, { params: null });
  await fresh.page.goto(link);
  await fresh.el('diff-legend').waitFor();
  assert.equal(fresh.requests.length, 2, 'both sides asked for');
  assert.equal((await diffRows(fresh))[0].name, REGRESSION);

  await fresh.el('stop-comparing').click();
  await fresh.poll(() => fresh.el('diff-legend').count(), (n) => n === 0, { what: 'one profile again' });
  assert.equal(new URL(fresh.page.url()).searchParams.get('baseline_time_start'), null);
  await fresh.page.goBack();
  await fresh.el('diff-legend').waitFor();
  v.assertNoErrors();
  fresh.assertNoErrors();
});

test('C3. the two-column export imports back as the same comparison', async (t) => {
  const v = await openViewer(t, env, { params: null });
  await compareGateway(v);
  const file = await v.download('export-diff-folded');
  const lines = file.text.trim().split('\n');
  assert.match(lines[0], /^# Embers diff folded stacks: profile_event_type=on-cpu$/u);
  assert.ok(lines.slice(1).every((l) => /^\S.* \d+ \d+$/u.test(l)), lines.slice(0, 3).join('\n'));
  assert.ok(lines.some((l) => l.includes(REGRESSION)));
  const before = (await diffRows(v)).slice(0, 5).map((r) => r.name);

  const other = await openViewer(t, env);
  await other.el('service-list').waitFor();
  await other.el('import-file').setInputFiles({ name: 'gateway.difffolded', mimeType: 'text/plain', buffer: Buffer.from(file.text) });
  await other.el('diff-legend').waitFor();
  const after = (await diffRows(other)).slice(0, 5).map((r) => r.name);
  assert.deepEqual(after, before, 'the same ranking');
  v.assertNoErrors();
  other.assertNoErrors();
});

test('C4. a saved snapshot opens by permalink, is listed by name and serves as a baseline', async (t) => {
  const v = await openViewer(t, env, { params: null });
  const r = ranges(env.server);
  await v.goto({ app_service: 'api-gateway', time_start: r.before[0], time_end: r.before[1] });
  const s = await v.waitForGraph();
  await v.openExportMenu();
  await v.el('save-snapshot').click();
  await v.el('snapshot-link').waitFor();
  await v.screenshot('snapshot-saved');
  const permalink = await v.el('snapshot-link').getAttribute('href');
  const id = new URL(permalink).searchParams.get('snapshot');
  assert.ok(id && id.length >= 16, permalink);

  const other = await openViewer(t, env, { params: null });
  await other.page.goto(permalink);
  const shown = await other.waitForGraph();
  assert.equal(shown.root, 'api-gateway');
  assert.equal(shown.value, s.value, 'the same profile');
  assert.equal(new URL(other.page.url()).searchParams.get('snapshot'), id, 'the URL stays the permalink');
  await other.screenshot('snapshot-permalink');

  // Today's last 20 minutes against the snapshot, chosen by its name from the compare menu.
  const done = other.completed;
  await other.goto({ app_service: 'api-gateway', time_start: r.time_start, time_end: r.time_end });
  await other.waitForRequestsCompleted(done + 1);
  await other.waitForGraph();
  await other.el('compare-menu').locator('summary').click();
  const option = other.el('compare-snapshot').locator(`option[value="${id}"]`);
  await option.waitFor({ state: 'attached' });
  const name = await option.textContent();
  assert.match(name,
    /^api-gateway, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d–(\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d UTC$/u);
  await other.el('compare-snapshot').selectOption(id);
  await other.el('diff-legend').waitFor();
  assert.equal(new URL(other.page.url()).searchParams.get('baseline_snapshot'), id);
  // The bar calls the baseline by the snapshot's name, not its id.
  assert.equal(await other.el('baseline-label').textContent(), `snapshot “${name}”`);
  assert.equal((await diffRows(other))[0].name, REGRESSION);
  await other.screenshot('compare-snapshot');

  // The comparison's link brings both sides back.
  const third = await openViewer(t, env, { params: null });
  await third.page.goto(other.page.url());
  await third.el('diff-legend').waitFor();
  assert.equal((await diffRows(third))[0].name, REGRESSION);
  v.assertNoErrors();
  other.assertNoErrors();
  third.assertNoErrors();
});

test('C5. a baseline that fails says which side failed', async (t) => {
  const v = await openViewer(t, env, { params: null });
  const r = ranges(env.server);
  await v.goto({ app_service: 'api-gateway', time_start: r.time_start, time_end: r.time_end, baseline_snapshot: 'AAAAAAAAAAAAAAAAAAAAAAAAAA' });
  await v.el('error').waitFor();
  assert.match(await v.el('error').textContent(), /^The baseline failed\. /u);
  assert.equal(await v.status(), 'The baseline failed.');
  await v.screenshot('baseline-failed');
  v.assertNoErrors({ allow: [/404/] });
});

test('C6. a side without samples is named, not shown as a finding', async (t) => {
  const v = await openViewer(t, env, { params: null });
  const r = ranges(env.server);
  // A week before the demo: nothing there.
  const old = [r.time_start - 7 * 86400, r.time_end - 7 * 86400];
  await v.goto({ app_service: 'api-gateway', time_start: r.time_start, time_end: r.time_end, baseline_time_start: old[0], baseline_time_end: old[1] });
  await v.el('diff-empty').waitFor();
  assert.equal(await v.el('diff-empty').textContent(), 'The baseline has no samples: every frame is new.');
  await v.goto({ app_service: 'api-gateway', time_start: old[0], time_end: old[1], baseline_time_start: r.time_start, baseline_time_end: r.time_end });
  await v.poll(() => v.el('diff-empty').textContent().catch(() => ''), (text) => text.startsWith('The comparison'), { what: 'the comparison is named' });
  assert.equal(await v.el('diff-empty').textContent(), 'The comparison has no samples: every frame is gone.');
  v.assertNoErrors({ allow: [/404/] });
});
