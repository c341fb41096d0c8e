// The explore workflow in the real page over the demo data: every service on the home view
// (language, value, share bar) → a click or Enter opens its flame graph with a timeline whose
// hover reads the answer's value; brushing the timeline queries the sub-range (Back returns),
// zoom out doubles it; grouping by pod or, on the whole host, by process; suggestions; the [p]
// drill-down.

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

/** The home rows as drawn: [{ name, lang, value (µs), bar, track (px) }]. */
function drawnRows(v) {
  return v.frame.locator('[data-testid="service-row"]').evaluateAll((els) => els.map((el) => ({
    name: el.dataset.appService,
    lang: el.querySelector('.svc-lang').textContent,
    valueText: el.querySelector('.svc-value').textContent,
    bar: el.querySelector('.svc-bar').getBoundingClientRect().width,
    track: el.querySelector('.svc-share').getBoundingClientRect().width,
  })));
}

/** The `result` of the next /v1/profile/timeline answer whose request `match`es. */
async function timelineAnswer(v, match) {
  const res = await v.page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/profile/timeline'
    && match(r.request().postDataJSON() ?? {}));
  return { request: res.request().postDataJSON(), answer: (await res.json()).result };
}

async function timelineBox(v) {
  const box = await v.el('timeline').boundingBox();
  assert.ok(box && box.width > 200, `timeline box ${JSON.stringify(box)}`);
  return box;
}

test('E1. home lists every service ranked by CPU; a click opens its graph and timeline; Back returns', async (t) => {
  const v = await openViewer(t, env, { params: null });
  const servicesAnswer = v.page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/profile/services');
  await v.goto();
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
  // The chart is stacked by service, and its Group by says so once the tag list has arrived.
  await v.poll(() => v.frame.locator('[data-testid="legend-item"]').count(), (n) => n >= 3, { what: 'a legend per service' });
  await v.poll(() => v.el('group-by').inputValue(), (g) => g === 'app_service', { what: 'Group by showing app_service' });
  await v.screenshot('home');

  // Each row's language is the answer's; the share bar: Total's fills its track, each service's
  // is its value over the whole host's (Total's).
  const answered = (await (await servicesAnswer).json()).result.values;
  const drawn = await drawnRows(v);
  for (const row of drawn) {
    const a = answered.find(([name, lang]) => name === row.name && lang === row.lang);
    assert.ok(a && row.lang !== '', `${row.name} shows language ${JSON.stringify(row.lang)}; the answer: ${JSON.stringify(answered.filter((r) => r[0] === row.name))}`);
  }
  const [whole, ...services] = drawn;
  assert.equal(whole.name, 'Total');
  assert.ok(Math.abs(whole.bar - whole.track) <= 2, `Total's bar fills its track: ${whole.bar} of ${whole.track}`);
  const top = parseValue(whole.valueText);
  for (const r of services) {
    const want = (parseValue(r.valueText) / top) * r.track;
    assert.ok(Math.abs(r.bar - want) <= 2, `${r.name}: bar ${r.bar} px, ${r.valueText} of the whole host gives ${want.toFixed(1)} px`);
  }
  assert.ok(services.every((r) => r.bar <= whole.bar + 0.5), 'no bar is wider than Total\'s');

  // A click on a row opens that service.
  await v.frame.locator('[data-testid="service-row"][data-app-service="redis-server"]').click();
  assert.equal((await v.waitForGraph()).root, 'redis-server');
  assert.equal(new URL(v.page.url()).searchParams.get('app_service'), 'redis-server');
  assert.equal(v.requests.at(-1).body.app_service, 'redis-server');
  await v.el('timeline').waitFor();
  await v.page.goBack();
  await v.el('service-list').waitFor();

  // The filter box narrows the list.
  await v.el('service-filter').fill('redis');
  await v.poll(() => serviceRows(v), (r) => r.length === 1 && r[0].name === 'redis-server', { what: 'filtered list' });
  await v.el('service-filter').fill('');

  // Enter on a focused row opens it.
  await v.frame.locator('[data-app-service="nginx"]').focus();
  const nginxTimeline = timelineAnswer(v, (body) => body.app_service === 'nginx' && !body.group_by);
  await v.page.keyboard.press('Enter');
  const s = await v.waitForGraph();
  assert.equal(s.root, 'nginx');
  assert.equal(new URL(v.page.url()).searchParams.get('app_service'), 'nginx');
  assert.equal(v.requests.at(-1).body.app_service, 'nginx');
  await v.el('timeline').waitFor();
  const buckets = Number(await v.el('timeline').getAttribute('data-buckets'));
  assert.ok(buckets >= 60 && buckets <= 300, `buckets ${buckets}`);
  assert.match(await v.el('timeline-scale').textContent(), /^CPU time per \d+ (s|min) · peak [\d.]+ /u);

  // Hovering the timeline reads a bucket out: its value, in the event type's unit, is the
  // answer's for that bucket.
  const { request, answer } = await nginxTimeline;
  const box = await timelineBox(v);
  await v.page.mouse.move(box.x + box.width * 0.5, box.y + 30);
  await v.el('timeline-tooltip').waitFor();
  const head = await v.el('timeline-tooltip').locator('div').first().textContent();
  const m = /^\d\d:\d\d:\d\d–\d\d:\d\d:\d\d · (.+)$/u.exec(head);
  assert.ok(m, `read-out ${JSON.stringify(head)}`);
  assert.match(m[1], /^[\d.]+ (µs|ms|s|min|h)$/u, 'on-CPU time is read out in a time unit');
  const slot = box.width / buckets;
  const i = Math.round(Number(await v.frame.locator('.hover-bucket').getAttribute('x')) / slot);
  const start = Math.floor(request.time_start / answer.interval) * answer.interval + i * answer.interval;
  const want = answer.values.filter((row) => row[0] === start).reduce((s, row) => s + row.at(-1), 0);
  assert.ok(want > 0, `bucket ${i} (${start}) has samples: ${JSON.stringify(answer.values.slice(0, 3))}`);
  const shown = parseValue(m[1]);
  assert.ok(Math.abs(shown - want) <= want * 0.006, `read-out ${m[1]} = ${shown} µs; the answer's bucket ${i}: ${want} µs`);
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

test('E2b. zoom out after a brush doubles the range around the same middle and queries it', async (t) => {
  const v = await openViewer(t, env, { params: { app_service: 'redis-server', ...demoRange(env.server) } });
  await v.waitForGraph();
  const box = await timelineBox(v);
  let done = v.completed;
  await v.page.mouse.move(box.x + box.width * 0.4, box.y + 30);
  await v.page.mouse.down();
  await v.page.mouse.move(box.x + box.width * 0.6, box.y + 30, { steps: 4 });
  await v.page.mouse.up();
  await v.waitForRequestsCompleted(done + 1);
  await v.waitForGraph();
  const narrowed = v.requests.at(-1).body;
  done = v.completed;
  await v.el('timeline-zoom-out').click();
  await v.waitForRequestsCompleted(done + 1);
  await v.waitForGraph();
  const wider = v.requests.at(-1).body;
  const span = narrowed.time_end - narrowed.time_start;
  assert.equal(wider.time_end - wider.time_start, 2 * span, `twice ${span} s: ${JSON.stringify(wider)}`);
  const mid = (r) => (r.time_start + r.time_end) / 2;
  assert.ok(Math.abs(mid(wider) - mid(narrowed)) <= 1, `same middle: ${mid(wider)} vs ${mid(narrowed)}`);
  const url = new URL(v.page.url()).searchParams;
  assert.equal(Number(url.get('time_start')), wider.time_start);
  assert.equal(Number(url.get('time_end')), wider.time_end);
  v.assertNoErrors();
});

test('E3. grouping by pod shows one series per pod; clicking one narrows the tag filter', async (t) => {
  const v = await openViewer(t, env, { params: { app_service: 'redis-server', ...demoRange(env.server) } });
  await v.waitForGraph();
  await v.el('group-by').selectOption('pod');
  const legend = v.frame.locator('[data-testid="timeline-legend"][data-dimension="pod"]');
  await legend.waitFor();
  const groups = await legend.locator('[data-testid="legend-item"]').evaluateAll((els) => els.map((e) => e.dataset.group));
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

test('E7. the whole host grouped by process lists the services of the answer', async (t) => {
  const v = await openViewer(t, env, { params: { app_service: 'Total', ...demoRange(env.server) } });
  await v.waitForGraph();
  await v.el('timeline').waitFor();
  const grouped = timelineAnswer(v, (body) => body.group_by === 'app_service');
  await v.el('group-by').selectOption('app_service');
  const { request, answer } = await grouped;
  assert.ok(request.app_service == null, `the breakdown reads every process of the host: ${JSON.stringify(request)}`);
  assert.deepEqual(answer.columns, ['time', 'app_service', 'value']);
  await v.el('timeline-legend').waitFor();
  const legend = await v.poll(() => v.frame.locator('[data-testid="legend-item"]').evaluateAll((els) => els.map((e) => e.dataset.group)),
    (g) => g.length > 0, { what: 'legend entries' });
  const answered = [...new Set(answer.values.map((row) => row[1]))];
  assert.deepEqual([...legend].sort(), [...answered].sort(), 'one legend entry per group of the answer');
  for (const name of ['redis-server', 'nginx']) assert.ok(legend.includes(name), `${name} in ${legend}`);
  v.assertNoErrors();
});
