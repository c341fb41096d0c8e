// The home view in the real page against the real service: every language's services (a Golang
// service ingested beside the demo's eBPF ones), shares of the whole host as percentages, one
// sparkline per row in its own language, a row opening in its language, process suggestions
// from the same services list (one request for both), a click on a process in the whole host's
// timeline legend, and the two empty lists: an empty range and an empty store (with the ingest
// hint, whose URL works).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { demoRange, openViewer, useServerAndBrowser } from '../lib/fixture.mjs';
import { startServer } from '../lib/server.mjs';
import { parseValue, Viewer } from '../lib/viewer.mjs';

const env = useServerAndBrowser();
const GOLANG = 'gateway-go';
const FOLDED = 'main;net/http.(*conn).serve;gateway.handle 500\nmain;runtime.gcBgMarkWorker 200\n';

/** Ingests folded stacks over HTTP, as the README's curl line does. */
async function ingest(url, params) {
  const res = await fetch(`${url}/v1/profile/ingest?${new URLSearchParams(params)}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/octet-stream' },
    body: FOLDED,
  });
  assert.equal(res.status, 200, await res.text());
}

/** Ingests the Golang service into the demo server once (ten minutes before it started). */
let golang = null;
function withGolang() {
  golang ??= ingest(env.server.url, {
    app_service: GOLANG, profile_language_type: 'Golang', profile_event_type: 'on-cpu',
    time: String(env.server.startedAt - 600), host: 'node-a',
  });
  return golang;
}

/** The visible rows: name, language, value (µs), share text and bar width (%), sparkline. */
async function rows(v) {
  return v.frame.locator('[data-testid="service-row"]').evaluateAll((els) => els
    .filter((el) => el.offsetParent !== null)
    .map((el) => ({
      name: el.dataset.appService,
      language: el.dataset.language,
      value: el.querySelector('.svc-value').textContent,
      share: el.querySelector('.svc-pct').textContent,
      bar: parseFloat(el.querySelector('.svc-bar').style.width),
      spark: el.querySelector('.spark polyline') !== null,
    })));
}

/** Records the bodies the page posts to an explore endpoint. */
function record(v, endpoint) {
  const seen = [];
  v.page.on('request', (req) => {
    if (new URL(req.url()).pathname === `/v1/profile/${endpoint}`) seen.push(req.postDataJSON());
  });
  return seen;
}

const options = (v, id) => v.frame.locator(`datalist#${id} option`).evaluateAll((els) => els.map((e) => e.value));

test('H1. home lists every language, shares of the whole host, a sparkline per row; suggestions share its request', async (t) => {
  await withGolang();
  const v = await openViewer(t, env, { params: null });
  const services = record(v, 'services');
  const values = record(v, 'tag_values');
  const timelines = record(v, 'timeline');
  await v.goto(demoRange(env.server));
  await v.poll(() => rows(v), (r) => r.length >= 10 && r.every((x) => x.spark), { what: 'rows with sparklines' });
  const list = await rows(v);
  const golang = list.find((r) => r.name === GOLANG);
  assert.ok(golang, `the Golang service is listed: ${list.map((r) => r.name)}`);
  assert.equal(golang.language, 'Golang');
  assert.ok(list.some((r) => r.language === 'eBPF'), 'eBPF services too');

  // Shares: of the whole host, as percentages, the bar as wide as the percentage says.
  const [total, ...rest] = list;
  assert.equal(total.name, 'Total');
  assert.equal(total.share, '100%');
  const whole = parseValue(total.value);
  const gateway = rest.find((r) => r.name === 'api-gateway');
  const expected = (100 * parseValue(gateway.value)) / whole;
  assert.ok(Math.abs(parseFloat(gateway.share) - expected) < 0.6, `${gateway.share} ≈ ${expected}%`);
  assert.ok(Math.abs(gateway.bar - expected) < 0.6, `bar ${gateway.bar}% ≈ ${expected}%`);
  assert.ok(gateway.bar < 50 && total.bar === 100, `not a full bar: ${gateway.bar}% vs Total ${total.bar}%`);

  // The process field suggests from the same answer: no request of its own.
  await v.poll(() => options(v, 'process-options'), (o) => o.includes(GOLANG) && o.includes('redis-server'), { what: 'process suggestions' });
  await v.settle();
  // The event list asks apart which event types the range has (no event type named), once.
  const [eventList, asked] = [services.filter((b) => b.profile_event_type === undefined),
    services.filter((b) => b.profile_event_type !== undefined)];
  assert.equal(asked.length, 1, `one services request for home and suggestions: ${JSON.stringify(services)}`);
  assert.equal(asked[0].profile_language_type, undefined, 'home names no language');
  assert.equal(asked[0].profile_event_type, 'on-cpu');
  assert.ok(eventList.length <= 1, `the event list asks once: ${JSON.stringify(eventList)}`);
  assert.ok(!values.some((b) => b.tag === 'app_service'), 'no tag_values question for processes');
  // Sparklines: one grouped question per language and Total's own; the chart: one question.
  await v.el('timeline').waitFor();
  const sparks = timelines.filter((b) => b.group_limit === 50 || b.app_service === 'Total');
  assert.deepEqual(sparks.map((b) => `${b.app_service ?? '*'}/${b.profile_language_type}`).sort(),
    ['*/Golang', '*/eBPF', 'Total/eBPF'], JSON.stringify(sparks));
  const chart = timelines.filter((b) => b.group_by === 'app_service' && b.group_limit === undefined);
  assert.equal(chart.length, 1, `the chart asked once: ${JSON.stringify(chart)}`);
  assert.equal(chart[0].profile_language_type, 'eBPF', 'the busiest language');
  await v.screenshot('home-languages');
  v.assertNoErrors();
});

test('H2. a row opens its service in its own language; suggestions follow the event type', async (t) => {
  await withGolang();
  const v = await openViewer(t, env, { params: demoRange(env.server) });
  await v.poll(() => rows(v), (r) => r.some((x) => x.name === GOLANG), { what: 'the Golang row' });
  // Only on-CPU samples were ingested for it: off-CPU suggestions leave it out.
  await v.el('event-type').selectOption('off-cpu');
  await v.poll(() => options(v, 'process-options'), (o) => o.length > 0 && !o.includes(GOLANG), { what: 'off-CPU suggestions' });
  await v.el('event-type').selectOption('on-cpu');
  await v.poll(() => options(v, 'process-options'), (o) => o.includes(GOLANG), { what: 'on-CPU suggestions' });

  await v.frame.locator(`[data-app-service="${GOLANG}"]`).click();
  const s = await v.waitForGraph();
  assert.equal(s.root, GOLANG);
  const body = v.requests.at(-1).body;
  assert.equal(body.app_service, GOLANG);
  assert.equal(body.profile_language_type, 'Golang');
  assert.equal(await v.el('language-type').inputValue(), 'Golang');
  assert.equal(new URL(v.page.url()).searchParams.get('profile_language_type'), 'Golang');
  v.assertNoErrors();
});

test('H3. on the whole host grouped by process, a legend click opens that process; by host, it narrows the filter', async (t) => {
  const range = demoRange(env.server);
  const v = await openViewer(t, env, { params: { app_service: 'Total', ...range } });
  await v.waitForGraph();
  await v.el('group-by').selectOption('app_service');
  const item = v.frame.locator('[data-testid="legend-item"][data-group="redis-server"]');
  await item.waitFor();
  await v.screenshot('total-by-process');
  let done = v.completed;
  await item.click();
  await v.waitForRequestsCompleted(done + 1);
  assert.equal((await v.waitForGraph()).root, 'redis-server');
  let url = new URL(v.page.url()).searchParams;
  assert.equal(url.get('app_service'), 'redis-server');
  assert.equal(url.get('profile_language_type'), 'eBPF');
  assert.equal(url.get('tag_filter'), null, 'no filter: the whole host has no redis-server samples');
  assert.equal(await v.el('whole-host').isChecked(), false);

  await v.page.goBack();
  await v.poll(() => new URL(v.page.url()).searchParams.get('app_service'), (a) => a === 'Total', { what: 'back on Total' });
  await v.waitForGraph();
  // The whole host is per host: group it by host ("(none)" entries cannot be clicked).
  await v.el('group-by').selectOption('host');
  // The legend of the previous grouping stays until the host timeline arrives.
  const host = v.frame.locator('[data-testid="timeline-legend"][data-dimension="host"] [data-testid="legend-item"]:enabled').first();
  await host.waitFor();
  const name = await host.getAttribute('data-group');
  done = v.completed;
  await host.click();
  await v.waitForRequestsCompleted(done + 1);
  await v.waitForGraph();
  url = new URL(v.page.url()).searchParams;
  assert.equal(url.get('app_service'), 'Total', 'still the whole host');
  assert.equal(url.get('tag_filter'), `host='${name}'`);
  v.assertNoErrors();
});

test('H4. a range without profiles says so, without the ingest hint', async (t) => {
  const week = 7 * 24 * 3600;
  const v = await openViewer(t, env, {
    params: { time_start: env.server.startedAt - week - 3600, time_end: env.server.startedAt - week },
  });
  const empty = v.frame.locator('[data-testid="home-empty"][data-empty="range"]');
  await empty.waitFor();
  assert.match(await empty.textContent(), /No on-cpu profiles in this range\. Widen the time range/u);
  assert.equal(await v.el('ingest-hint').count(), 0);
  v.assertNoErrors();
});

test('H5. an empty store says so and shows how to ingest; the hinted URL works', async (t) => {
  const server = await startServer({ demo: false });
  t.after(() => server.stop());
  const v = await Viewer.open(env.browser, server, { params: {} });
  t.after(() => v.close());
  const empty = v.frame.locator('[data-testid="home-empty"][data-empty="store"]');
  await empty.waitFor();
  assert.match(await empty.textContent(), /The store is empty/u);
  const hint = await v.el('ingest-hint').textContent();
  assert.match(hint, /embers-server import --app-service myapp .*myapp\.folded/u);
  const url = /'(http[^']+\/v1\/profile\/ingest\?[^']+)'/u.exec(hint)?.[1];
  assert.ok(url?.startsWith(`${server.url}/v1/profile/ingest?app_service=myapp`), `hint URL: ${url}`);
  await v.screenshot('home-empty-store');

  const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: FOLDED });
  assert.equal(res.status, 200, await res.text());
  await v.page.reload();
  await v.frame.locator('[data-testid="service-row"][data-app-service="myapp"]').waitFor();
  v.assertNoErrors();
});
