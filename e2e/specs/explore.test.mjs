// The explore workflow in the real page over the demo data: every service on the home view →
// a click opens its flame graph with a timeline; brushing the timeline queries the sub-range
// (Back returns); grouping by pod and narrowing to one; suggestions; the [p] drill-down.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { demoRange, openViewer, useServerAndBrowser } from '../lib/fixture.mjs';
import { parseValue } from '../lib/viewer.mjs';

const env = useServerAndBrowser();

/** The rows of the service list: [{ name, value (µs) }]. */
async function serviceRows(v) {
  const rows = await v.frame.locator('[data-testid="service-row"]').evaluateAll((els) => els
    .filter((el) => el.offsetParent !== null)
    .map((el) => ({ name: el.dataset.appService, value: el.querySelector('.svc-value').textContent })));
  return rows.map((r) => ({ ...r, value: parseValue(r.value) }));
}

async function timelineBox(v) {
  const box = await v.el('timeline').boundingBox();
  assert.ok(box && box.width > 200, `timeline box ${JSON.stringify(box)}`);
  return box;
}

test('E1. home lists every service ranked by CPU; a click opens its graph and timeline; Back returns', async (t) => {
  const v = await openViewer(t, env);
  await v.el('service-list').waitFor();
  await v.poll(() => serviceRows(v), (rows) => rows.length >= 10, { what: 'ten services' });
  const rows = await serviceRows(v);
  assert.equal(rows[0].name, 'Total', 'the whole host is pinned first');
  const ranked = rows.slice(1);
  for (const name of ['redis-server', 'nginx', 'api-gateway', 'java']) {
    assert.ok(ranked.some((r) => r.name === name), `${name} is listed: ${ranked.map((r) => r.name)}`);
  }
  for (let i = 1; i < ranked.length; i++) {
    assert.ok(ranked[i - 1].value >= ranked[i].value, `ranked: ${JSON.stringify(ranked)}`);
  }
  assert.ok(await v.frame.locator('.spark polyline').count() >= 10, 'sparklines drawn');
  await v.el('timeline').waitFor();
  await v.screenshot('home');

  // The filter box narrows the list.
  await v.el('service-filter').fill('redis');
  await v.poll(() => serviceRows(v), (r) => r.length === 1 && r[0].name === 'redis-server', { what: 'filtered list' });
  await v.el('service-filter').fill('');

  // Enter on a focused row opens it.
  await v.frame.locator('[data-app-service="nginx"]').focus();
  await v.page.keyboard.press('Enter');
  const s = await v.waitForGraph();
  assert.equal(s.root, 'nginx');
  assert.equal(new URL(v.page.url()).searchParams.get('app_service'), 'nginx');
  assert.equal(v.requests.at(-1).body.app_service, 'nginx');
  await v.el('timeline').waitFor();
  const buckets = Number(await v.el('timeline').getAttribute('data-buckets'));
  assert.ok(buckets >= 60 && buckets <= 300, `buckets ${buckets}`);
  assert.match(await v.el('timeline-scale').textContent(), /^CPU time per \d+ (s|min) · peak [\d.]+ /u);

  // Hovering the timeline reads a bucket out.
  const box = await timelineBox(v);
  await v.page.mouse.move(box.x + box.width * 0.5, box.y + 30);
  await v.el('timeline-tooltip').waitFor();
  assert.match(await v.el('timeline-tooltip').textContent(), /^\d\d:\d\d:\d\d–\d\d:\d\d:\d\d · /u);
  await v.screenshot('timeline');

  await v.page.goBack();
  await v.el('service-list').waitFor();
  assert.equal(new URL(v.page.url()).searchParams.get('app_service'), null);
  v.assertNoErrors();
});

test('E2. dragging across the timeline queries that range; Back returns to the wider one', async (t) => {
  const v = await openViewer(t, env, { params: { app_service: 'redis-server', ...demoRange(env.server) } });
  await v.waitForGraph();
  const first = v.requests.at(-1).body;
  const box = await timelineBox(v);
  const done = v.completed;
  await v.page.mouse.move(box.x + box.width * 0.25, box.y + 30);
  await v.page.mouse.down();
  await v.page.mouse.move(box.x + box.width * 0.4, box.y + 30, { steps: 4 });
  await v.el('timeline-brush').waitFor();
  await v.page.mouse.move(box.x + box.width * 0.5, box.y + 30, { steps: 4 });
  await v.page.mouse.up();
  await v.waitForRequestsCompleted(done + 1);
  await v.waitForGraph();
  const narrowed = v.requests.at(-1).body;
  const span = first.time_end - first.time_start;
  assert.ok(narrowed.time_start > first.time_start && narrowed.time_end < first.time_end, JSON.stringify(narrowed));
  const got = narrowed.time_end - narrowed.time_start;
  assert.ok(Math.abs(got - span * 0.25) < span * 0.05, `a quarter of the range: ${got} of ${span}`);
  const url = new URL(v.page.url()).searchParams;
  assert.equal(Number(url.get('time_start')), narrowed.time_start);
  assert.equal(Number(url.get('time_end')), narrowed.time_end);

  await v.page.goBack();
  await v.poll(async () => Number(new URL(v.page.url()).searchParams.get('time_start')), (s) => s === first.time_start, { what: 'the wider range in the URL' });
  await v.waitForGraph();
  assert.equal(v.requests.at(-1).body.time_start, first.time_start, 'Back asks for the wider range again');
  v.assertNoErrors();
});

test('E3. grouping by pod shows one series per pod; clicking one narrows the tag filter', async (t) => {
  const v = await openViewer(t, env, { params: { app_service: 'redis-server', ...demoRange(env.server) } });
  await v.waitForGraph();
  await v.el('group-by').selectOption('pod');
  await v.el('timeline-legend').waitFor();
  const groups = await v.frame.locator('[data-testid="legend-item"]').evaluateAll((els) => els.map((e) => e.dataset.group));
  assert.ok(groups.length >= 2, `pods: ${groups}`);
  assert.ok(groups.every((g) => g.startsWith('redis')), `redis pods only: ${groups}`);
  await v.screenshot('timeline-by-pod');
  const pod = groups[0];
  const done = v.completed;
  await v.frame.locator(`[data-testid="legend-item"][data-group="${pod}"]`).click();
  await v.waitForRequestsCompleted(done + 1);
  const s = await v.waitForGraph();
  assert.equal(v.requests.at(-1).body.tag_filter, `pod='${pod}'`);
  assert.equal(await v.el('tag-filter').inputValue(), `pod='${pod}'`);
  assert.ok(s.value > 0);
  v.assertNoErrors();
});

test('E4. the form suggests processes, tag names and tag values from the service', async (t) => {
  const v = await openViewer(t, env);
  await v.el('service-list').waitFor();
  await v.el('app-service').fill('re');
  const options = (id) => v.frame.locator(`datalist#${id} option`).evaluateAll((els) => els.map((e) => e.value));
  // The list for the previous text stays until the answer for 're' replaces it (no flicker):
  // wait for the answer to 're' itself.
  await v.poll(() => options('process-options'),
    (o) => o.includes('redis-server') && o.every((p) => p.toLowerCase().startsWith('re')),
    { what: "process suggestions for 're'" });
  await v.poll(() => options('tag-names'), (o) => o.includes('pod') && o.includes('k8s.label.app'), { what: 'tag names' });
  await v.el('add-tag').click();
  await v.el('tag-name').fill('pod');
  await v.el('tag-value').fill('redis');
  await v.poll(() => options('tag-values-0'), (o) => o.length > 0 && o.every((p) => p.startsWith('redis')), { what: 'pod values' });
  v.assertNoErrors();
});

test('E5. a [p] frame of the whole-host graph opens that process', async (t) => {
  const v = await openViewer(t, env, { params: { app_service: 'Total', ...demoRange(env.server) } });
  await v.waitForGraph();
  const proc = await v.findBar(1, { label: /^\[p\] redis-server/ });
  const done = v.completed;
  await v.clickBar(proc);
  await v.el('open-process').waitFor();
  assert.match(await v.el('open-process').textContent(), /Open redis-server/);
  await v.el('open-process').click();
  await v.waitForRequestsCompleted(done + 1);
  const s = await v.waitForGraph();
  assert.equal(s.root, 'redis-server');
  const body = v.requests.at(-1).body;
  assert.equal(body.app_service, 'redis-server');
  assert.equal(body.time_start, demoRange(env.server).time_start, 'same range');
  v.assertNoErrors();
});

test('E6. opening a profile asks for its timeline and its tags once each', async (t) => {
  const v = await openViewer(t, env, { params: null });
  // What the strip asks for names the profile's process (the form's own suggestions do not).
  const asked = { timeline: [], tags: [] };
  v.page.on('request', (req) => {
    const kind = /\/v1\/profile\/(timeline|tags)$/.exec(new URL(req.url()).pathname)?.[1];
    if (kind && req.postDataJSON()?.app_service === 'redis-server') asked[kind].push(req.postDataJSON());
  });
  await v.goto({ app_service: 'redis-server', ...demoRange(env.server) });
  await v.waitForGraph();
  await v.el('timeline').waitFor();
  await v.poll(() => asked.tags.length, (n) => n >= 1, { what: 'the strip asked for tags' });
  assert.equal(asked.timeline.length, 1, `one timeline request, not one while loading and one after: ${JSON.stringify(asked.timeline)}`);
  assert.equal(asked.tags.length, 1, `one tags request: ${JSON.stringify(asked.tags)}`);
  v.assertNoErrors();
});
