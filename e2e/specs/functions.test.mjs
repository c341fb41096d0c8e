// The fleet's functions in the real page against the demo service: the Functions tab (a click
// lands in the right service with the function selected, a chip opens the service), What grew
// (the demo's planted api-gateway regression first; a click opens the comparison with it
// selected), the selected function's timeline read out as the endpoint answers, every view a
// URL and reachable by keyboard, and a trace id or span name (URL, form, embedding) opening that
// trace's profile.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { openViewer, useServerAndBrowser } from '../lib/fixture.mjs';

const env = useServerAndBrowser();
const REGRESSION = 'github.com/example/gateway/render.jsonEncodeResponse';

/** The rows of the list shown: function, the service a click opens, the chips. */
async function rows(v, list = 'function-list') {
  return v.frame.locator(`[data-testid="${list}"] li`).evaluateAll((lis) => lis.map((li) => ({
    fn: li.querySelector('[data-testid=function-row]').dataset.function,
    app: li.querySelector('[data-testid=function-row]').dataset.appService,
    chips: [...li.querySelectorAll('[data-testid=place-chip]')].map((c) => c.dataset.appService),
    change: li.querySelector('[data-testid=function-change]')?.textContent ?? null,
  })));
}

const param = (v, name) => new URL(v.page.url()).searchParams.get(name);

/** POSTs `body` to an endpoint from the page (same origin, the guard's rules) and returns `result`. */
async function call(v, endpoint, body) {
  return v.page.evaluate(async ([path, b]) => {
    const res = await fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(b) });
    const envelope = await res.json();
    if (res.status !== 200) throw new Error(`${res.status}: ${envelope.DESCRIPTION}`);
    return envelope.result;
  }, [`/v1/profile/${endpoint}`, body]);
}

test('F1. Functions: the keyboard opens the tab, a click lands in the right service with the function selected, a chip opens a service', async (t) => {
  const v = await openViewer(t, env);
  await v.el('home-tab-services').waitFor();
  await v.el('home-tab-functions').focus();
  await v.page.keyboard.press('Enter');
  const list = await v.poll(() => rows(v), (r) => r.length >= 10, { what: 'ten functions' });
  assert.equal(param(v, 'home'), 'functions', 'the tab is in the URL');
  const pick = list.find((r) => r.chips.length >= 2) ?? assert.fail('a function in several services');
  assert.equal(pick.app, pick.chips[0], 'a row opens its busiest service');
  // Keyboard: ↓ moves between rows; Enter on one opens it.
  await v.frame.locator('[data-testid=function-row]').first().focus();
  await v.page.keyboard.press('ArrowDown');
  assert.equal(await v.page.evaluate(() => document.activeElement?.dataset.function), list[1].fn);
  await v.frame.locator(`[data-testid=function-row][data-function="${pick.fn}"]`).click();
  const s = await v.waitForGraph();
  assert.equal(s.root, pick.app);
  assert.equal(param(v, 'app_service'), pick.app);
  assert.equal(param(v, 'select'), pick.fn, 'the selection is in the URL');
  await v.openTable();
  const selected = (await v.tableRows()).filter((r) => r.selected).map((r) => r.name);
  assert.deepEqual(selected, [pick.fn], 'the function is selected in the table');
  await v.el('function-readout').waitFor();
  // Back to the list, then a chip: that service, nothing selected.
  await v.page.goBack();
  await v.poll(() => rows(v), (r) => r.length >= 10, { what: 'the list again' });
  const chip = v.frame.locator(`[data-testid=function-row][data-function="${pick.fn}"] ~ .fn-places [data-testid=place-chip]`).nth(1);
  await chip.click();
  assert.equal((await v.waitForGraph()).root, pick.chips[1]);
  assert.equal(param(v, 'select'), null);
  v.assertNoErrors();
});

test('F2. What grew finds the planted regression first; a click compares api-gateway with it selected', async (t) => {
  const v = await openViewer(t, env, { params: { home: 'grew' } });
  const list = await v.poll(() => rows(v, 'grew-list'), (r) => r.length >= 5, { what: 'what grew' });
  assert.equal(list[0].fn, REGRESSION, `first: ${JSON.stringify(list.slice(0, 3))}`);
  assert.equal(list[0].app, 'api-gateway');
  assert.match(list[0].change, /^\+\d+\.\d pp$/);
  // A long name is shortened from the front: the function's own name stays readable.
  const shown = await v.frame.locator('[data-testid=grew-list] [data-testid=function-name]').first().textContent();
  assert.ok(shown.length < REGRESSION.length && shown.endsWith('render.jsonEncodeResponse'), `shown: ${shown}`);
  const color = await v.frame.locator('[data-testid=function-change]').first().evaluate((el) => getComputedStyle(el).color);
  const [r, , b] = color.match(/\d+/g).map(Number);
  assert.ok(r > b, `grew is red: ${color}`);
  // The same time yesterday: another baseline, in the URL.
  const asked = [];
  v.page.on('request', (req) => { if (req.url().endsWith('/v1/profile/functions')) asked.push(req.postDataJSON()); });
  await v.el('against-yesterday').click();
  await v.poll(() => asked.length, (n) => n >= 1, { what: 'a question against yesterday' });
  assert.equal(asked[0].time_start - asked[0].baseline_time_start, 86_400);
  await v.poll(() => param(v, 'against'), (a) => a === 'yesterday', { what: 'the baseline in the URL' });
  await v.el('against-previous').click();
  await v.poll(() => rows(v, 'grew-list'), (rs) => rs[0]?.fn === REGRESSION, { what: 'the previous period again' });
  await v.frame.locator('[data-testid=grew-list] [data-testid=function-row]').first().click();
  const s = await v.waitForGraph();
  assert.equal(s.root, 'api-gateway');
  assert.equal(param(v, 'select'), REGRESSION);
  assert.ok(param(v, 'baseline_time_start') && param(v, 'baseline_time_end'), 'compared with the previous period');
  await v.openTable();
  const table = await v.tableRows();
  assert.equal(table[0].name, REGRESSION, 'first by change in the comparison too');
  assert.ok(table[0].selected, 'and selected');
  v.assertNoErrors();
});

test('F3. the selected function\'s timeline reads out what the endpoint answers, grouped or not, and survives a reload', async (t) => {
  const v = await openViewer(t, env, { params: { app_service: 'redis-server' } });
  await v.waitForGraph();
  // Selecting by a click lays the function's timeline over the profile's: the graph stays put
  // (a strip of its own pushed the graph down under the pointer). The first click also zooms,
  // which may wrap the toolbar; × shows the profile's timeline again, keeping the selection,
  // and a second click on the same frame selects it again without zooming further.
  const bar = await v.findBar(1);
  await v.clickBar(bar);
  await v.el('function-readout').waitFor();
  await v.el('function-timeline-close').click();
  await v.poll(() => v.el('function-timeline').count(), (n) => n === 0, { what: 'the profile\'s timeline back' });
  const canvas = v.el('flame-canvas');
  const before = await canvas.boundingBox();
  await v.clickBar(await v.findBar(1));
  await v.el('function-readout').waitFor();
  assert.deepEqual(await canvas.boundingBox(), before, 'the graph did not move or resize');
  assert.equal(await v.el('timeline-scale').isVisible(), false, 'the profile\'s timeline is covered');
  await v.openTable();
  const fn = (await v.tableRows())[0].name;
  await v.frame.locator('[data-testid=table-row]').first().click();
  const readout = v.el('function-readout');
  await readout.waitFor();
  assert.equal(param(v, 'select'), fn);
  const u = new URL(v.page.url()).searchParams;
  const body = {
    app_service: 'redis-server', profile_language_type: u.get('profile_language_type'),
    profile_event_type: u.get('profile_event_type'), time_start: Number(u.get('time_start')),
    time_end: Number(u.get('time_end')), function: fn,
  };
  const sums = (a) => a.values.reduce(([s, tt], p) => [s + p[2], tt + p[3]], [0, 0]);
  const read = async () => [Number(await readout.getAttribute('data-self')), Number(await readout.getAttribute('data-total'))];
  const [self, total] = sums(await call(v, 'function_timeline', body));
  assert.ok(total > 0);
  assert.deepEqual(await read(), [self, total]);
  await v.el('function-group-by').selectOption('pod');
  const pods = await call(v, 'function_timeline', { ...body, group_by: 'pod' });
  assert.ok(new Set(pods.values.map((p) => p[1])).size >= 2, 'redis-server runs in several pods');
  await v.poll(() => v.frame.locator('[data-testid=function-timeline] [data-testid=legend-item], [data-testid=function-timeline] rect').count(), (n) => n > 0, { what: 'bars by pod' });
  assert.deepEqual(await read(), sums(pods), 'the same sums by pod');
  // The link reproduces the selection and its strip.
  await v.page.reload();
  await v.waitForGraph();
  await v.el('function-readout').waitFor();
  assert.deepEqual(await read(), [self, total]);
  await v.el('function-timeline-close').click();
  await v.poll(() => v.el('function-timeline').count(), (n) => n === 0, { what: 'the function\'s timeline closed' });
  assert.equal(await v.el('timeline-scale').isVisible(), true, 'the profile\'s timeline shows again');
  assert.equal(param(v, 'select'), fn, 'and the function stays selected');
  v.assertNoErrors();
});

test('F4. a trace id or span name opens that trace\'s profile: from the URL and from the form', async (t) => {
  const at = env.server.startedAt - 120;
  for (const [trace, span, folded] of [['4bf92f3577b34da6', 'GET /cart', 'main;cart.handler;render 700\n'], ['00f067aa0ba902b7', 'GET /pay', 'main;pay.handler 300\n']]) {
    const q = new URLSearchParams({ app_service: 'shop-web', profile_event_type: 'on-cpu', time: String(at), trace_id: trace, span_name: span });
    const res = await fetch(`${env.server.url}/v1/profile/ingest?${q}`, { method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: folded });
    assert.equal(res.status, 200, await res.text());
  }
  const range = { time_start: at - 60, time_end: at + 60 };
  const v = await openViewer(t, env, { params: { trace_id: '4bf92f3577b34da6', ...range } });
  let s = await v.waitForGraph();
  assert.equal(s.root, 'shop-web', 'the service of the trace, found without naming it');
  assert.equal(await v.el('tag-filter').inputValue(), "trace_id='4bf92f3577b34da6'");
  assert.equal(param(v, 'tag_filter'), "trace_id='4bf92f3577b34da6'");
  const total = () => v.page.evaluate(() => document.querySelector('[data-testid=status]').textContent);
  assert.match(await total(), /700 µs/, 'that trace\'s samples only');
  // From the form: a span name joins the filter when the query is sent.
  await v.el('tag-filter').fill('');
  await v.el('span-name').fill('GET /pay');
  await v.el('submit').click();
  await v.poll(() => param(v, 'tag_filter'), (f) => f === "span_name='GET /pay'", { what: 'the span in the URL' });
  s = await v.waitForGraph();
  assert.match(await total(), /300 µs/);
  assert.equal(await v.el('span-name').inputValue(), '', 'moved into the filter');
  v.assertNoErrors();
});

test('F9. The lists are an on-demand module: a plain home page asks for none of it; the Functions tab loads it with a note, says so when it cannot load, and loads on Try again', async (t) => {
  const v = await openViewer(t, env, { params: null });
  const asked = v.recordViewModules();
  // The module's wasm is held until the loading note has been seen, then refused once.
  let seen;
  const noteSeen = new Promise((resolve) => { seen = resolve; });
  let refuse = true;
  await v.page.route(/\/functions_view_bg\.wasm/, async (route) => {
    if (!refuse) return route.continue();
    await noteSeen;
    return route.fulfill({ status: 503, contentType: 'text/plain', body: 'unavailable' });
  });
  await v.goto();
  await v.el('service-list').waitFor();
  assert.deepEqual(asked, [], 'no view module on a plain home page');
  await v.el('home-tab-functions').click();
  await v.el('view-loading').waitFor();
  assert.match(await v.el('view-loading').textContent(), /Loading the Functions view/);
  seen();
  await v.el('view-error').waitFor();
  assert.match(await v.el('view-error').textContent(), /Could not load the Functions view/);
  refuse = false;
  await v.el('view-retry').focus();
  await v.page.keyboard.press('Enter');
  const list = await v.poll(() => rows(v), (r) => r.length >= 10, { what: 'ten functions after Try again' });
  assert.ok(list.length >= 10);
  assert.equal(await v.el('view-error').count(), 0, 'the error is gone');
  assert.ok(asked.includes('/functions_view.js') && asked.includes('/functions_view_bg.wasm'), asked.join(' '));
  // Back to the services and to Functions again: the module is in, nothing more is fetched.
  const before = asked.length;
  await v.el('home-tab-services').click();
  await v.el('service-list').waitFor();
  await v.el('home-tab-functions').click();
  await v.poll(() => rows(v), (r) => r.length >= 10, { what: 'the list again' });
  assert.equal(asked.length, before, `no second fetch: ${asked.slice(before).join(' ')}`);
  v.assertNoErrors({ allow: [/503|functions_view_bg\.wasm|Failed to load resource/] });
});
