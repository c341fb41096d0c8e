// Reading real profiles on the page (issue #26), continued from transforms.test.mjs: the
// wall-clock view (on-CPU + off-CPU of one process) against the demo's data, long names in the
// table and on bars (shortened from the front, full in the title, copied whole), colour by
// package, and what earlier sessions left: the "too narrow to draw" bands, a restored 2D
// context, the address bar while typing, a service without the explore endpoints, and the page
// from 900 px wide. Screenshots go to e2e/screenshots/.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { openViewer, useServerAndBrowser } from '../lib/fixture.mjs';
import { foldedStacks } from '../lib/folded.mjs';
import { labelShows, parseStatus, parseValue } from '../lib/viewer.mjs';

const env = useServerAndBrowser();

/** A fixed range before the demo's live minutes begin, so repeated queries see the same data. */
const range = () => ({ time_start: String(env.server.startedAt - 3500), time_end: String(env.server.startedAt - 5) });

/** The displayed graph's folded export (stacks without the root) as { stack: value }. */
async function shownStacks(v) {
  const { text } = await v.download('export-folded');
  await v.el('export-menu').locator('summary').click();
  return foldedStacks(text);
}

const sum = (stacks) => Object.values(stacks).reduce((a, b) => a + b, 0);

test('W1. the wall-clock view adds on-CPU and off-CPU per stack, split into running and waiting', async (t) => {
  const v = await openViewer(t, env, { params: null });
  const q = { app_service: 'redis-server', ...range() };
  await v.goto({ ...q, profile_event_type: 'off-cpu' });
  await v.waitForGraph();
  const off = await shownStacks(v);
  await v.goto({ ...q, profile_event_type: 'on-cpu' });
  await v.waitForGraph();
  const on = await shownStacks(v);
  assert.ok(sum(on) > 0 && sum(off) > 0);

  // By mouse: Compare → Wall clock.
  await v.el('compare-menu').locator('summary').click();
  await v.el('compare-wall').click();
  await v.el('wall-bar').waitFor();
  await v.waitForCanvasStable();
  assert.equal(new URL(v.page.url()).searchParams.get('wall'), '1');
  const wall = await shownStacks(v);
  const want = { ...on };
  for (const [s, val] of Object.entries(off)) want[s] = (want[s] ?? 0) + val;
  assert.deepEqual(wall, want, 'every stack is its running + waiting time');
  const status = parseStatus(await v.status());
  assert.match(status.measure, /^wall-clock time \(running [\d.]+ \w+ \+ waiting [\d.]+ \w+\)$/);
  assert.ok(Math.abs(status.value - (sum(on) + sum(off))) <= (sum(on) + sum(off)) * 0.005);
  const key = async (id) => parseValue(/^\w+ ([\d.]+ \S+)/.exec(await v.el(id).textContent())[1]);
  assert.ok(Math.abs((await key('wall-running')) - sum(on)) <= sum(on) * 0.005);
  assert.ok(Math.abs((await key('wall-waiting')) - sum(off)) <= sum(off) * 0.005);

  // Bars are split: epoll_wait both ran and waited; dictFind only ran.
  const bars = await v.bars();
  const parts = (label) => {
    const first = bars.find((b) => b.label?.startsWith(label));
    assert.ok(first, `a bar labelled ${label}`);
    return bars.filter((b) => b.y === first.y && b.x >= first.x - 0.01 && b.x < first.x + 1000 && (b === first || Math.abs(b.x - (first.x + first.w)) < 0.01));
  };
  const epoll = parts('[l] epoll_wait');
  assert.equal(epoll.length, 2, 'running and waiting parts');
  assert.notEqual(epoll[0].fill, epoll[1].fill);
  // The tooltip says both.
  const tip = await v.hoverBar(epoll[0]);
  const rows = Object.fromEntries(tip.rows);
  assert.match(rows.Running, /^[\d.]+ \S+ · [\d.]+% of this frame$/);
  assert.match(rows.Waiting, /^[\d.]+ \S+ · [\d.]+% of this frame$/);
  await v.pointerAway();
  await v.screenshot('wall-clock');

  // The table adds each function's waiting time.
  await v.openTable();
  const waiting = await v.el('function-table').locator('[data-testid=waiting]').count();
  assert.ok(waiting > 0, 'a Waiting column');

  // A reload of the URL shows the same wall view; transforms apply to both sides.
  await v.page.reload();
  await v.el('wall-bar').waitFor();
  await v.waitForCanvasStable();
  assert.deepEqual(await shownStacks(v), want, 'the link reproduces the wall view');
  await v.redrawAfter(() => v.addNoise('idle'));
  const idle = await shownStacks(v);
  assert.ok(sum(idle) < sum(want));
  for (const s of Object.keys(idle)) assert.doesNotMatch(s, /pthread_cond_wait|epoll_wait/, s);
  assert.match(await v.el('view-note').textContent(), /^dropped /);
  // Back to one profile.
  await v.el('stop-wall').click();
  await v.el('wall-bar').waitFor({ state: 'detached' });
  assert.equal(new URL(v.page.url()).searchParams.get('wall'), null);
  v.assertNoErrors();
});

/** Real long names (model/tests/data/names/real-names.txt): Go import paths, C++ templates. */
const OWN = ['processSettingInitialWindowSize', 'match', 'assign', 'do_get_monthname', 'underflow'];
const LONG = {
  '[t] worker;net/http.(*conn).serve;net/http.(*http2serverConn).processSettingInitialWindowSize': 30,
  '[t] worker;net/http.(*conn).serve;vendor/golang.org/x/net/http/httpproxy.ipMatch.match': 25,
  '[t] worker;main;[l] std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::assign(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >&&)': 20,
  '[t] worker;main;std::__cxx11::time_get<wchar_t, std::istreambuf_iterator<wchar_t, std::char_traits<wchar_t> > >::do_get_monthname(std::istreambuf_iterator<wchar_t, std::char_traits<wchar_t> >, std::istreambuf_iterator<wchar_t, std::char_traits<wchar_t> >, std::ios_base&, std::_Ios_Iostate&, tm*) const': 15,
  '[t] worker;main;[l] std::__cxx11::basic_stringbuf<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> >::underflow()': 10,
};

async function openLongNames(t, { scheme = 'light', ...options } = {}) {
  const params = new URLSearchParams({ app_service: 'long-names', profile_event_type: 'on-cpu', time: String(env.server.startedAt - 600) });
  const folded = Object.entries(LONG).map(([s, n]) => `${s} ${n}`).join('\n');
  const res = await fetch(`${env.server.url}/v1/profile/ingest?${params}`, { method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: folded });
  assert.equal(res.status, 200, await res.text());
  const v = await openViewer(t, env, { ...options, params: null });
  await v.page.emulateMedia({ colorScheme: scheme });
  await v.goto();
  await v.query({ app: 'long-names' });
  await v.waitForGraph();
  return v;
}

test('N1. long names keep their own name last in the table and on bars; copy gives the whole', async (t) => {
  for (const [width, scheme] of [[900, 'light'], [900, 'dark'], [1400, 'light'], [1400, 'dark']]) {
    const v = await openLongNames(t, { viewport: { width, height: 800 }, scheme });
    await v.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.server.url });
    await v.openTable();
    const rows = await v.tableRows();
    const long = rows.filter((r) => r.name.length > 40);
    assert.ok(long.length >= 4, `long rows: ${JSON.stringify(rows.map((r) => r.name))}`);
    for (const r of long) {
      assert.equal(r.title, r.name, 'the title is the full name');
      assert.ok(r.shown.length < r.name.length, `shortened: ${r.shown}`);
      // The function's own name shows (cut at its end only when even it does not fit).
      const own = OWN.find((o) => r.name.includes(`${o}(`) || r.name.endsWith(o));
      assert.ok(own && r.shown.includes(own.slice(0, 6)), `${r.shown} shows ${own} (${r.name})`);
      assert.ok(labelShows(r.shown, r.name), `${r.shown} is ${r.name} shortened`);
    }
    // The cell's text fits it: nothing is cut by the cell's own ellipsis.
    const overflowing = await v.el('function-table').locator('td.fn').evaluateAll((tds) => tds.filter((td) => td.scrollWidth > td.clientWidth + 1).map((td) => td.textContent));
    assert.deepEqual(overflowing, []);
    // Copy a selected function's full name.
    const name = long[0].name;
    await v.el('function-table').locator(`[data-testid=table-row][data-function="${name}"]`).click();
    await v.el('copy-name').click();
    assert.equal(await v.page.evaluate(() => navigator.clipboard.readText()), name);
    // Bar labels are shortened the same way (labelShows accepts front and middle elision).
    const labels = (await v.bars()).filter((b) => b.label?.includes('…')).map((b) => b.label);
    assert.ok(labels.some((l) => /^…|^\[l\] …|<…>/.test(l)), `front or middle elided labels: ${labels}`);
    await v.screenshot(`long-names-${width}-${scheme}`);

    // Colour by package: one colour per package, listed in the legend.
    const before = await v.canvasSnapshot();
    await v.redrawAfter(() => v.el('color-by').click());
    const legend = await v.el('legend').locator('li').allTextContents();
    assert.ok(legend.includes('std') && legend.includes('net/http'), `legend ${legend}`);
    assert.notEqual((await v.canvasSnapshot()).hash, before.hash);
    const drawn = await v.bars();
    const std = new Set(drawn.filter((b) => /assign|do_get_monthname|underflow/.test(b.label ?? '')).map((b) => b.fill));
    assert.equal(std.size, 1, `one colour for std: ${[...std]}`);
    await v.screenshot(`package-colours-${width}-${scheme}`);
    await v.el('color-by').click();
    v.assertNoErrors();
    await v.close();
  }
});

test('L1. frames too narrow to draw read as such: a hatched band with its own tooltip', async (t) => {
  const v = await openViewer(t, env);
  const lines = ['main;big 200000'];
  for (let i = 0; i < 4000; i++) lines.push(`main;tiny_${i} 1`);
  await v.importFile('narrow.folded', `${lines.join('\n')}\n`);
  await v.waitForGraph();
  const band = (await v.bars()).find((b) => b.depth === 2 && b.fill === '[object CanvasPattern]');
  assert.ok(band, 'the merged run is drawn with a pattern, not a colour');
  const tip = await v.hoverBar(band);
  assert.match(tip.name, /^\d+ frames too narrow to draw$/);
  assert.match(tip.kind, /the hatched band is not a frame/);
  v.assertNoErrors();
});

test('L2. labels come back after the 2D context is lost and restored', async (t) => {
  const v = await openViewer(t, env);
  await v.query({ app: 'redis-server' });
  await v.waitForGraph();
  await v.pointerAway();
  const before = await v.waitForCanvasStable();
  // What a restore does to the context: its state and pixels reset; then the event.
  await v.el('flame-canvas').evaluate((c) => {
    c.getContext('2d').reset();
    c.dispatchEvent(new Event('contextrestored'));
  });
  const after = await v.waitForCanvasStable();
  assert.equal(after.hash, before.hash, 'the same picture, labels in the same font');
  v.assertNoErrors();
});

test('L3. the address follows the search box once typing pauses', async (t) => {
  const v = await openViewer(t, env);
  await v.query({ app: 'redis-server' });
  await v.waitForGraph();
  await v.page.evaluate(() => {
    window.__replaced = 0;
    const replace = history.replaceState.bind(history);
    history.replaceState = (...a) => { window.__replaced++; return replace(...a); };
  });
  await v.el('search').focus();
  await v.page.keyboard.type('dictFind', { delay: 60 });
  assert.equal(new URL(v.page.url()).searchParams.get('search'), null, 'not while typing');
  await v.poll(() => new URL(v.page.url()).searchParams.get('search'), (s) => s === 'dictFind', { what: 'the search in the URL' });
  assert.equal(await v.page.evaluate(() => window.__replaced), 1, 'one write for the whole word');
  v.assertNoErrors();
});

test('L4. without the explore endpoints (a bare querier) the page says so once and stays out of the way', async (t) => {
  const v = await openViewer(t, env, { params: null });
  const asked = [];
  // DeepFlow's querier answers unknown paths with gin's plain 404.
  await v.page.route(/\/v1\/profile\/(services|timeline|tags|tag_values)$/, (route) => {
    asked.push(new URL(route.request().url()).pathname);
    return route.fulfill({ status: 404, contentType: 'text/plain', body: '404 page not found' });
  });
  await v.goto();
  await v.el('explore-missing').waitFor();
  assert.match(await v.el('explore-missing').textContent(), /need the Embers service/);
  assert.equal(await v.el('error').count(), 0, 'no red banner');
  await v.query({ app: 'redis-server' });
  await v.waitForGraph();
  assert.equal(await v.el('timeline-error').count(), 0);
  assert.equal(await v.el('explore-missing').count(), 0, 'said once (on home), not again on the profile');
  const before = asked.length;
  await v.query({ app: 'nginx' });
  await v.waitForGraph();
  assert.equal(asked.filter((p) => p.endsWith('/timeline')).length, asked.filter((p, i) => i < before && p.endsWith('/timeline')).length, 'no more timeline requests');
  await v.screenshot('bare-querier');

  // Opened on a profile link, the strip says it once, on that profile only.
  const w = await openViewer(t, env, { params: null });
  await w.page.route(/\/v1\/profile\/(services|timeline|tags|tag_values)$/, (route) => route.fulfill({ status: 404, contentType: 'text/plain', body: '404 page not found' }));
  await w.goto({ app_service: 'redis-server' });
  await w.waitForGraph();
  await w.el('explore-missing').waitFor();
  assert.equal(await w.el('timeline-error').count(), 0);
  await w.query({ app: 'nginx' });
  await w.waitForGraph();
  assert.equal(await w.el('explore-missing').count(), 0, 'not on the next profile');
  v.assertNoErrors({ allow: [/404/] });
  w.assertNoErrors({ allow: [/404/] });
});

test('L5. from 900 px wide: nothing in the toolbar is cut or overlaps, the form is a fifth of the height', async (t) => {
  for (const [width, scheme] of [[900, 'light'], [900, 'dark'], [1400, 'light'], [1400, 'dark']]) {
    const v = await openViewer(t, env, { viewport: { width, height: 800 }, params: null });
    await v.page.emulateMedia({ colorScheme: scheme });
    await v.goto();
    await v.query({ app: 'java' });
    await v.waitForGraph();
    const boxes = await v.page.locator('.toolbar > *').evaluateAll((els) => els
      .filter((el) => el.offsetParent !== null)
      .map((el) => { const r = el.getBoundingClientRect(); return { what: el.className || el.tagName, x: r.x, y: r.y, w: r.width, h: r.height, cut: el.scrollWidth > el.clientWidth + 1 }; }));
    for (const [i, a] of boxes.entries()) {
      for (const b of boxes.slice(i + 1)) {
        const overlap = a.x < b.x + b.w - 0.5 && b.x < a.x + a.w - 0.5 && a.y < b.y + b.h - 0.5 && b.y < a.y + a.h - 0.5;
        assert.ok(!overlap, `${width}: ${a.what} overlaps ${b.what}`);
      }
    }
    const legend = boxes.find((b) => String(b.what).includes('legend'));
    assert.ok(legend && !legend.cut, `${width}: the legend is whole`);
    const crumbs = boxes.find((b) => String(b.what).includes('breadcrumbs'));
    assert.ok(crumbs && !crumbs.cut && crumbs.w > 30, `${width}: the breadcrumbs show the profile's name`);
    const form = await v.el('query-form').boundingBox();
    assert.ok(form.height <= 800 / 5, `${width}: the form is ${form.height} px tall`);
    await v.screenshot(`layout-${width}-${scheme}`);
    v.assertNoErrors();
    await v.close();
  }
});
