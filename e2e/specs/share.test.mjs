// Sharing a view: the page URL carries query + view (search, zoom, inverted, ...), a fresh page
// reproduces it, Back/Forward step through zooms; and embedding in an iframe driven by
// postMessage.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { demoRange, openViewer, useServerAndBrowser } from '../lib/fixture.mjs';
import { Viewer } from '../lib/viewer.mjs';

const env = useServerAndBrowser();

/** The drawn bars without per-draw noise, for comparing two pages' pictures. */
const geometry = (bars) => bars.map((b) => [Math.round(b.x), b.y, Math.round(b.w), b.fill, b.alpha, b.label]);

test('A8. the URL carries search, zoom and inverted; a fresh page reproduces them; Back/Forward step zooms', async (t) => {
  const v = await openViewer(t, env);
  await v.query({ app: 'redis-server' });
  await v.waitForGraph();
  await v.redrawAfter(() => v.el('inverted-toggle').click());
  await v.search('ep_poll');
  await v.waitForCanvasStable();
  await v.clickBar(await v.findBar(1, { label: /^\[k\] ep_poll/ }));
  const zoom1 = await v.waitForCrumbs(2);
  assert.deepEqual(zoom1, ['redis-server', '[k] ep_poll']);
  await v.pointerAway();
  await v.waitForCanvasStable();
  await v.clickBar(await v.findBar(3, { dimmed: true }));
  const zoom2 = await v.waitForCrumbs(4);
  assert.deepEqual(zoom2.slice(0, 2), zoom1);
  await v.pointerAway();
  await v.waitForCanvasStable();

  const url = new URL(v.page.url());
  const q = url.searchParams;
  assert.equal(q.get('app_service'), 'redis-server');
  assert.ok(Number(q.get('time_start')) > 0 && Number(q.get('time_end')) - Number(q.get('time_start')) === 3600);
  assert.equal(q.get('inverted'), '1');
  assert.equal(q.get('search'), 'ep_poll');
  assert.equal(q.get('zoom'), zoom2.slice(1).join(';'));
  assert.equal(q.get('regex'), null);
  assert.equal(q.get('view'), null, 'defaults are left out');
  const status = await v.statusCore();
  const summary = await v.searchSummary();
  const bars = await v.bars();

  // A fresh page on that URL shows the same thing (one query, no clicks).
  const w = await openViewer(t, env, { params: url.search.slice(1) });
  await w.waitForGraph();
  assert.equal(w.requests.length, 1);
  assert.equal(await w.statusCore(), status);
  assert.equal(await w.el('search').inputValue(), 'ep_poll');
  assert.equal(await w.searchSummary(), summary);
  assert.deepEqual(await w.waitForCrumbs(4), zoom2);
  assert.equal(await w.el('inverted-toggle').getAttribute('aria-pressed'), 'true');
  await w.waitForCanvasStable();
  assert.deepEqual(geometry(await w.bars()), geometry(bars), 'the same bars are drawn');
  assert.equal(w.page.url(), url.href, 'the URL is kept as it is');
  w.assertNoErrors();

  // Back / Forward step through the zooms, without new queries; the rest of the view stays.
  const requests = v.requests.length;
  await v.page.goBack();
  assert.deepEqual(await v.waitForCrumbs(2), zoom1);
  assert.equal(new URL(v.page.url()).searchParams.get('zoom'), '[k] ep_poll');
  await v.page.goBack();
  assert.deepEqual(await v.waitForCrumbs(1), ['redis-server']);
  assert.equal(await v.el('search').inputValue(), 'ep_poll');
  assert.equal(await v.el('inverted-toggle').getAttribute('aria-pressed'), 'true');
  await v.page.goForward();
  assert.deepEqual(await v.waitForCrumbs(2), zoom1);
  await v.page.goForward();
  assert.deepEqual(await v.waitForCrumbs(4), zoom2);
  assert.equal(v.requests.length, requests, 'history steps do not query again');
  assert.equal(v.page.url(), url.href);

  // Other changes replace the entry instead of adding one.
  const length = await v.page.evaluate(() => history.length);
  await v.el('metric-toggle').click();
  await v.search('ep_poll, dictFind');
  await v.el('orientation-toggle').click();
  await v.poll(() => v.page.url(), (u) => u.includes('view=flame'), { what: 'view=flame in the URL' });
  const after = new URL(v.page.url()).searchParams;
  assert.equal(after.get('metric'), 'self');
  assert.equal(after.get('search'), 'ep_poll, dictFind');
  assert.equal(await v.page.evaluate(() => history.length), length, 'no new history entries');
  v.assertNoErrors();
});

test('A8b. a shared link opens the sandwich, chips, metric and orientation it names', async (t) => {
  const range = demoRange(env.server);
  const params = new URLSearchParams({
    app_service: 'redis-server', time_start: range.time_start, time_end: range.time_end,
    transforms: 'kernel:0,hide:beforeSleep', metric: 'self', view: 'flame', sandwich: 'readQueryFromClient',
  });
  const v = await openViewer(t, env, { params: params.toString() });
  await v.el('sandwich').waitFor({ state: 'visible' });
  assert.equal(v.requests.length, 1);
  assert.deepEqual(await v.el('sandwich').locator('.sandwich-label').allTextContents(),
    ['Callers of readQueryFromClient', 'Callees of readQueryFromClient']);
  assert.deepEqual(await v.chips(), ['Kernel hidden', 'Hidden: beforeSleep']);
  assert.equal(await v.el('metric-toggle').getAttribute('data-metric'), 'self');
  assert.equal(await v.el('orientation-toggle').getAttribute('aria-pressed'), 'true');
  assert.equal(await v.el('sandwich-toggle').getAttribute('aria-pressed'), 'true');
  for (const testid of ['sandwich-callers', 'sandwich-callees']) {
    const snap = await v.poll(() => v.canvasSnapshot(null, { testid }), (s) => s.painted > 1000, { what: `${testid} painted` });
    assert.ok(snap.painted > 1000);
  }
  // Closing the sandwich shows the main graph, in flame orientation.
  await v.el('sandwich-toggle').click();
  const s = await v.waitForGraph();
  const root = (await v.bars()).find((b) => b.label?.startsWith('redis-server'));
  assert.equal(root.y, (await v.canvasSnapshot()).height - 18, 'root at the bottom');
  assert.ok(s.nodes > 0);
  assert.equal(new URL(v.page.url()).searchParams.get('sandwich'), null);
  v.assertNoErrors();
});

test('A9. embedded: no form; the host drives it with postMessage and hears back', async (t) => {
  const v = await Viewer.openEmbedded(env.browser, env.server);
  t.after(() => v.close());
  const ready = await v.waitForHostMessage('embers:ready');
  assert.ok(ready.fromFrame);
  assert.equal(await v.el('query-form').count(), 0, 'no query form when embedded');
  assert.equal(await v.frame.locator('.app.embedded').count(), 1);
  assert.equal(await v.status(), 'Ready.');

  // A query from the host runs in the frame and is reported back.
  let n = (await v.hostMessages()).length;
  const request = { app_service: 'nginx', profile_language_type: 'eBPF', profile_event_type: 'on-cpu', ...demoRange(env.server) };
  await v.hostPost({ type: 'embers:query', request });
  const loaded = await v.waitForHostMessage('embers:loaded', { after: n });
  assert.ok(loaded.fromFrame);
  assert.equal(loaded.data.app_service, 'nginx');
  assert.ok(loaded.data.nodes > 0 && loaded.data.root_total > 0, JSON.stringify(loaded.data));
  const s = await v.waitForGraph();
  assert.equal(s.root, 'nginx');
  assert.equal(s.nodes, loaded.data.nodes, 'the frame shows what it reported');
  assert.equal(v.requests.length, 1);
  assert.equal(v.requests[0].body.app_service, 'nginx');
  const frameUrl = new URL(v.frame.url());
  assert.equal(frameUrl.searchParams.get('embed'), '1', 'the frame URL keeps embed=1');
  assert.equal(frameUrl.searchParams.get('app_service'), 'nginx');
  assert.ok((await v.el('analysis-bar').count()) === 1, 'the analysis bar is there');
  await v.screenshot('embed');

  // A result the host already has: folded stacks.
  n = (await v.hostMessages()).length;
  await v.hostPost({ type: 'embers:load', body: 'main;a 1\nmain;b 2' });
  const folded = await v.waitForHostMessage('embers:loaded', { after: n });
  assert.deepEqual(folded.data, { type: 'embers:loaded', app_service: 'embedded', nodes: 4, root_total: 3 });
  const f = await v.waitForGraph();
  assert.equal(f.nodes, 4);
  assert.equal(f.depth, 2);
  assert.deepEqual(await v.labels(), ['embedded (100%)', 'main (100%)', 'a (33.3%)', 'b (66.7%)']);

  // Clicking a bar tells the host which frame was picked.
  n = (await v.hostMessages()).length;
  await v.clickBar(await v.findBar(2, { label: /^b / }));
  const select = await v.waitForHostMessage('embers:select', { after: n });
  assert.deepEqual(select.data, { type: 'embers:select', name: 'b', path: ['main', 'b'], total: 2, self: 2, depth: 2 });

  // A name for the root of folded stacks.
  n = (await v.hostMessages()).length;
  await v.hostPost({ type: 'embers:load', body: 'x;y 5\n', name: 'my-app.folded' });
  assert.equal((await v.waitForHostMessage('embers:loaded', { after: n })).data.app_service, 'my-app');
  assert.equal((await v.waitForGraph()).root, 'my-app');

  // Messages that are not from the parent, or not for us, are ignored.
  const before = await v.status();
  await v.frame.evaluate(() => window.postMessage({ type: 'embers:load', body: 'evil;z 9' }, '*'));
  await v.hostPost({ type: 'something-else', body: 'q;r 1' });
  await v.hostPost('just a string');
  await v.page.waitForTimeout(300);
  assert.equal(await v.status(), before, 'ignored');

  // A bad body is an error for the host, and the frame stays usable.
  n = (await v.hostMessages()).length;
  await v.hostPost({ type: 'embers:load', body: '{"OPT_STATUS":' });
  const error = await v.waitForHostMessage('embers:error', { after: n });
  assert.match(error.data.message, /^Could not import embedded\.json: /);
  assert.match(await v.errorText(), /Could not import embedded\.json/);
  n = (await v.hostMessages()).length;
  await v.hostPost({ type: 'embers:query', request });
  await v.waitForHostMessage('embers:loaded', { after: n });
  assert.equal((await v.waitForGraph()).root, 'nginx');
  assert.equal(await v.errorText(), null);
  const types = (await v.hostMessages()).map((m) => m.data.type);
  assert.equal(types.filter((x) => x === 'embers:ready').length, 1, `messages: ${types}`);
  v.assertNoErrors();
});
