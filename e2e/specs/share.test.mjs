// Sharing a view: the page URL carries query + view (search, zoom, inverted, ...), a fresh page
// reproduces it, Back/Forward step through zooms. (Embedding: embed.test.mjs.)

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { demoRange, openViewer, useServerAndBrowser } from '../lib/fixture.mjs';

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
