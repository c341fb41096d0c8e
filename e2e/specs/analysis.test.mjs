// Analysis features on the real page against the demo service: search (highlight, terms,
// regex, stepping, filter), the function table, the sandwich view, icicle/flame and inverted
// views. Noise control, keyboard navigation and the status line: noise-keys.test.mjs.
//
// Demo data used (server/src/demo.rs): redis-server on-CPU has dictFind / dictAddRaw / dictScan
// (three "dict" functions), a hot epoll leaf `[k] ep_poll`, and readQueryFromClient called both
// from aeProcessEvents (main thread) and IOThreadMain (io_thd_1).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { openRedis, useServerAndBrowser } from '../lib/fixture.mjs';
import { labelShows, parseSummary, ROW_H } from '../lib/viewer.mjs';

const env = useServerAndBrowser();

/** The demo's redis-server profile in a fresh viewer: { v, s } (s: the parsed status line). */
const redis = (t, options) => openRedis(t, env, options);

test('A1. search highlights matches, combines terms, reports bad regexes, steps and filters', async (t) => {
  const { v } = await redis(t);
  await v.canvasSnapshot('plain');
  const plainBars = await v.bars();
  assert.equal(await v.searchSummary(), '', 'no summary without a search');
  assert.ok(await v.el('search-next').isDisabled() && await v.el('search-prev').isDisabled());

  // Substring search: matching bars stay opaque, everything else is dimmed.
  let summary;
  await v.redrawAfter(async () => { summary = await v.search('dict'); });
  const dict = parseSummary(summary);
  assert.ok(dict, `summary ${JSON.stringify(summary)}`);
  assert.equal(dict.count, 3, 'dictFind, dictAddRaw and dictScan');
  assert.ok(dict.pct > 0 && dict.pct < 100, summary);
  await v.canvasSnapshot('search');
  assert.ok((await v.canvasDiff('plain', 'search')) > 10_000, 'the search changes the picture');
  const bars = await v.bars();
  assert.equal(bars.length, plainBars.length, 'a highlight search keeps every bar');
  const opaque = bars.filter((b) => b.alpha === 1);
  assert.ok(opaque.length >= 1 && opaque.length <= dict.count, `opaque bars: ${JSON.stringify(opaque.map((b) => b.label))}`);
  for (const b of opaque) assert.ok(b.label === null || ['dictFind', 'dictAddRaw', 'dictScan'].some((n) => labelShows(b.label, n)), `opaque bar ${b.label}`);
  assert.ok(opaque.some((b) => b.label?.startsWith('dictFind')), 'dictFind is highlighted');
  const root = bars.find((b) => b.depth === 0);
  assert.ok(root.alpha < 0.5, `non-matching root is dimmed (alpha ${root.alpha})`);
  const isDict = (label) => ['dictFind', 'dictAddRaw', 'dictScan'].some((n) => labelShows(label, n));
  const lit = bars.filter((b) => b.label && !isDict(b.label) && b.alpha >= 0.5);
  assert.deepEqual(lit.map((b) => b.label), [], 'all non-matching bars are dimmed');
  assert.ok(await v.el('search-next').isEnabled());
  await v.screenshot('search-highlight');

  // Case-insensitive; comma-separated terms add up (nested matches would count once).
  const one = parseSummary(await v.search('DICTFIND'));
  assert.equal(one.count, 1);
  const poll = parseSummary(await v.search('ep_poll'));
  assert.equal(poll.count, 1);
  const both = parseSummary(await v.search('dictFind, ep_poll'));
  assert.equal(both.count, 2);
  assert.ok(Math.abs(both.pct - (one.pct + poll.pct)) < 0.2, `${both.pct}% = ${one.pct}% + ${poll.pct}%`);
  assert.equal(await v.search('no-such-function-anywhere'), 'No matches');
  assert.ok(await v.el('search-next').isDisabled(), 'nothing to step to');

  // Regex mode: an invalid pattern is reported, nothing crashes, the graph stays.
  await v.el('search-regex').check();
  const bad = await v.search('([');
  assert.match(bad, /^Invalid regex: /);
  assert.equal(await v.el('search-summary').getAttribute('class'), 'search-summary bad');
  assert.ok(await v.el('search-next').isDisabled());
  assert.ok((await v.canvasSnapshot()).painted > 0, 'the graph is still drawn');
  assert.equal(parseSummary(await v.search('^dict(Find|Scan)$')).count, 2);
  assert.equal(await v.el('search-summary').getAttribute('class'), 'search-summary');
  assert.equal(parseSummary(await v.search('^dict')).count, 3);
  assert.match(v.page.url(), /[?&]search=%5Edict&regex=1(&|$)/);

  // Next / previous zoom to the matches in turn, and focus them.
  await v.el('search-next').click();
  const first = await v.waitForCrumbs((c) => c.length > 1);
  assert.match(first.at(-1), /^dict/, `breadcrumbs ${JSON.stringify(first)}`);
  assert.match(await v.announcer(), new RegExp(`^${first.at(-1)}, `));
  await v.el('search-next').click();
  const second = await v.waitForCrumbs((c) => c.join(';') !== first.join(';'));
  assert.match(second.at(-1), /^dict/);
  assert.notEqual(second.at(-1), first.at(-1));
  await v.el('search-prev').click();
  assert.deepEqual(await v.waitForCrumbs((c) => c.join(';') === first.join(';')), first, 'previous goes back');
  // Enter / Shift+Enter in the box step too.
  await v.el('search').press('Enter');
  assert.deepEqual(await v.waitForCrumbs((c) => c.join(';') === second.join(';')), second);
  await v.el('search').press('Shift+Enter');
  await v.waitForCrumbs((c) => c.join(';') === first.join(';'));
  // Stepping from the last match wraps to the first.
  const seen = [];
  let at = first;
  for (let i = 0; i < 3; i++) {
    await v.el('search-next').click();
    at = await v.waitForCrumbs((c) => c.join(';') !== at.join(';'));
    seen.push(at.at(-1));
  }
  assert.equal(new Set(seen).size, 3, `three distinct matches visited: ${seen}`);
  assert.equal(seen[2], first.at(-1), 'after the last match comes the first');

  // Filter mode keeps only the stacks through a match: one path down to dictFind.
  await v.el('reset-zoom').click();
  await v.waitForCrumbs(1);
  await v.search('^dictFind$');
  await v.el('search-next').click();
  const path = await v.waitForCrumbs((c) => c.at(-1) === 'dictFind');
  await v.el('reset-zoom').click();
  await v.waitForCrumbs(1);
  await v.pointerAway();
  await v.redrawAfter(() => v.el('search-filter').check());
  assert.match(v.page.url(), /[?&]filter=1(&|$)/);
  const filtered = await v.bars();
  assert.equal(filtered.length, path.length, `one bar per row of the path: ${JSON.stringify(filtered.map((b) => b.label))}`);
  assert.equal(Math.max(...filtered.map((b) => b.depth)), path.length - 1);
  filtered.forEach((b) => assert.ok(b.label === null || labelShows(b.label, path[b.depth]), `row ${b.depth}: ${b.label} vs ${path[b.depth]}`));
  const width = (await v.canvasSnapshot()).width;
  assert.ok(filtered.every((b) => b.x === 0 && b.w >= width - 1), 'every kept frame is the whole (filtered) total');
  assert.equal(parseSummary(await v.searchSummary()).pct, 100, 'the match is all that is left');
  await v.redrawAfter(() => v.el('search-filter').uncheck());
  assert.equal((await v.bars()).length, plainBars.length, 'unfiltered again');
  v.assertNoErrors();
});

// Regression test for a fixed bug (viewer layout, style/main.css lines 143-145): `.search` is `min-width: 0` and
// `.search-summary` is `white-space: nowrap` without overflow handling, so a long summary
// overflows the search group and is painted underneath the Icicle/Inverted buttons. Reproduce
// at 1280 px: tick ".*", type "([" → "Invalid regex: Invalid regular expression: /([/i:
// Unterminated character class" runs under "Icicle ▼" and "Inverted" and is unreadable; the
// search box also shrinks from 410 px to its 140 px minimum as the summary grows. Fix: let the
// summary ellipsize (`min-width: 0; overflow: hidden; text-overflow: ellipsis`, full text in
// `title`) or wrap it onto its own line.
test('A1b. a long search summary stays clear of the view switches', async (t) => {
  const { v } = await redis(t);
  const overlap = async () => {
    const [summary, switches] = await Promise.all([v.el('search-summary'), v.el('orientation-toggle')].map((l) => l.boundingBox()));
    const clipped = await v.el('search-summary').evaluate((e) => e.scrollWidth > e.clientWidth + 1);
    return { right: Math.round(summary.x + summary.width), switches: Math.round(switches.x), clipped };
  };
  await v.search('dict');
  const ok = await overlap();
  assert.ok(ok.right <= ok.switches, `a short summary fits: ${JSON.stringify(ok)}`);
  await v.el('search-regex').check();
  assert.match(await v.search('(['), /^Invalid regex: /);
  await v.screenshot('search-bad-regex');
  const bad = await overlap();
  assert.ok(bad.right <= bad.switches, `the summary ends at x ${bad.right}, under the view switches starting at x ${bad.switches}`);
  v.assertNoErrors();
});

test('A2. the function table sorts, filters and selects, both ways with the graph', async (t) => {
  const { v } = await redis(t);
  assert.equal(await v.el('function-table').count(), 0, 'closed by default at 1280 px');
  assert.equal(await v.el('table-toggle').getAttribute('aria-pressed'), 'false');
  await v.openTable();
  assert.equal(await v.el('table-toggle').getAttribute('aria-pressed'), 'true');

  const rows = await v.tableRows();
  assert.ok(rows.length > 50, `${rows.length} rows`);
  assert.ok(!rows.some((r) => r.name === 'redis-server'), 'the root is not a row');
  assert.ok(rows.every((r) => Number.isFinite(r.self) && Number.isFinite(r.total) && r.self <= r.total * 1.001),
    'every row has self ≤ total');
  assert.match(await v.el('function-table').locator('.table-count').textContent(), new RegExp(`^${rows.length} functions\\.`));
  // Default: by self, descending.
  assert.match(await v.el('sort-self').textContent(), /▾$/);
  const selfs = rows.map((r) => r.self);
  assert.deepEqual(selfs, [...selfs].sort((a, b) => b - a), 'sorted by self, descending');
  assert.equal(rows[0].name, '[k] ep_poll', 'the hottest leaf first');
  await v.screenshot('table');

  await v.el('sort-total').click();
  const byTotal = await v.tableRows();
  assert.deepEqual(byTotal.map((r) => r.total), [...byTotal.map((r) => r.total)].sort((a, b) => b - a), 'sorted by total');
  assert.match(await v.el('sort-total').textContent(), /▾$/);
  assert.deepEqual(byTotal.slice(0, 2).map((r) => r.name).sort(), ['[l] __libc_start_main', '[t] redis-server'],
    'the main thread and its only child have the largest total');
  await v.el('sort-function').click();
  const names = (await v.tableRows()).map((r) => r.name);
  assert.deepEqual(names, [...names].sort(), 'sorted by name');
  assert.equal(names.length, rows.length);

  // The filter narrows the rows (case-insensitive substring).
  await v.el('table-filter').fill('DICT');
  const dict = await v.poll(() => v.tableRows(), (r) => r.length < rows.length, { what: 'filtered rows' });
  assert.deepEqual(dict.map((r) => r.name).sort(), ['dictAddRaw', 'dictFind', 'dictScan']);
  assert.equal((await v.el('function-table').locator('.table-count').textContent()).trim(), '3 functions.');

  // A row click selects the function and enables the sandwich view; the graph outlines it.
  assert.ok(await v.el('sandwich-toggle').isDisabled(), 'no sandwich without a selection');
  const before = await v.canvasSnapshot('unselected');
  const row = v.el('table-row').filter({ hasText: 'dictFind' });
  await v.redrawAfter(() => row.click());
  assert.deepEqual((await v.tableRows()).filter((r) => r.selected).map((r) => r.name), ['dictFind']);
  assert.match(await row.getAttribute('class'), /\bselected\b/);
  assert.ok(await v.el('sandwich-toggle').isEnabled(), 'Sandwich is enabled by a selection');
  await v.page.mouse.move(1, 1);
  const selected = await v.waitForCanvasStable();
  assert.notEqual(selected.hash, before.hash, 'the selected function is outlined in the graph');

  // A click on a bar selects the matching row.
  await v.el('table-filter').fill('');
  await v.poll(() => v.tableRows(), (r) => r.length === rows.length, { what: 'all rows back' });
  const bar = await v.findBar(6, { label: /^readQueryFromClient/ });
  await v.clickBar(bar);
  await v.waitForCrumbs((c) => c.at(-1) === 'readQueryFromClient');
  const sel = await v.poll(async () => (await v.tableRows()).filter((r) => r.selected).map((r) => r.name),
    (s) => s.length === 1 && s[0] === 'readQueryFromClient', { what: 'row selected from the graph' });
  assert.deepEqual(sel, ['readQueryFromClient']);
  v.assertNoErrors();
});

// Regression test for a fixed bug (a11y, src/components/table.rs `header`, the `aria-sort` attribute): every sorted column
// says aria-sort="descending", but the Function column sorts A→Z, i.e. ascending. A screen
// reader announces the wrong order. Fix: `aria-sort` = "ascending" for SortBy::Name.
test('A2b. the sorted name column says aria-sort=ascending', async (t) => {
  const { v } = await redis(t);
  await v.openTable();
  const header = (id) => v.el(id).locator('xpath=..');
  assert.equal(await header('sort-self').getAttribute('aria-sort'), 'descending');
  await v.el('sort-function').click();
  const names = (await v.tableRows()).map((r) => r.name);
  assert.deepEqual(names, [...names].sort(), 'A→Z');
  assert.equal(await header('sort-self').getAttribute('aria-sort'), 'none');
  assert.equal(await header('sort-function').getAttribute('aria-sort'), 'ascending');
  v.assertNoErrors();
});

test('A3. the sandwich view shows callers and callees of a function called from two places', async (t) => {
  const { v } = await redis(t);
  await v.openTable();
  await v.el('table-filter').fill('readQueryFromClient');
  await v.el('table-row').filter({ hasText: 'readQueryFromClient' }).click();
  await v.page.mouse.move(1, 1);
  const main = await v.waitForCanvasStable();
  await v.el('sandwich-toggle').click();
  await v.el('sandwich').waitFor({ state: 'visible' });
  assert.equal(await v.el('sandwich-toggle').getAttribute('aria-pressed'), 'true');
  assert.equal(await v.el('flame-canvas').count(), 0, 'the main graph is replaced');
  assert.deepEqual(await v.el('sandwich').locator('.sandwich-label').allTextContents(),
    ['Callers of readQueryFromClient', 'Callees of readQueryFromClient']);
  assert.match(v.page.url(), /[?&]sandwich=readQueryFromClient(&|$)/);

  // Both halves paint; wait until both settle.
  const callers = await v.waitForCanvasStable({ testid: 'sandwich-callers' });
  const callees = await v.waitForCanvasStable({ testid: 'sandwich-callees' });
  for (const [name, s] of [['callers', callers], ['callees', callees]]) {
    assert.ok(s.painted / s.total > 0.05, `${name}: ${s.painted} of ${s.total} pixels painted`);
  }
  // Callers: the function is the root at the bottom, its two callers right above it.
  assert.ok(await v.canvasRowBackground(callers.height - ROW_H / 2, { testid: 'sandwich-callers' }) <= 2, 'callers root row at the bottom');
  const callerCanvas = v.el('sandwich-callers');
  const tipAt = async (locator, x, y) => {
    await locator.hover({ position: { x, y } });
    await v.el('tooltip').waitFor({ state: 'visible' });
    return v.tooltip();
  };
  const rootTip = await tipAt(callerCanvas, callers.width / 2, callers.height - ROW_H / 2);
  assert.equal(rootTip.name, 'readQueryFromClient');
  assert.match(rootTip.rows[0][1], /· 100% of all/);
  const y1 = callers.height - ROW_H - ROW_H / 2;
  const leftCaller = await tipAt(callerCanvas, 5, y1);
  const rightCaller = await tipAt(callerCanvas, callers.width - 20, y1);
  assert.deepEqual([leftCaller.name, rightCaller.name].sort(), ['IOThreadMain', 'aeProcessEvents']);
  // Callees: the function at the top, what it calls below.
  assert.ok(await v.canvasRowBackground(ROW_H / 2, { testid: 'sandwich-callees' }) <= 2, 'callees root row at the top');
  const calleeTip = await tipAt(v.el('sandwich-callees'), 5, ROW_H + ROW_H / 2);
  assert.match(calleeTip.kind, /depth 1$/);
  assert.ok(['connSocketRead', 'processInputBuffer'].includes(calleeTip.name), `callee ${calleeTip.name}`);
  await v.page.mouse.move(1, 1);
  await v.screenshot('sandwich');

  // Closing returns to the main graph as it was.
  await v.el('sandwich-toggle').click();
  await v.el('flame-canvas').waitFor({ state: 'visible' });
  assert.equal(await v.el('sandwich').count(), 0);
  assert.equal(await v.el('sandwich-toggle').getAttribute('aria-pressed'), 'false');
  assert.doesNotMatch(v.page.url(), /sandwich=/);
  const back = await v.waitForCanvasStable();
  assert.equal(back.hash, main.hash, 'the main graph is drawn as before');
  v.assertNoErrors();
});

test('A4. icicle/flame orientation and the inverted (bottom-up) view', async (t) => {
  const { v, s } = await redis(t);
  const icicle = await v.canvasSnapshot();
  const toggle = v.el('orientation-toggle');
  assert.equal((await toggle.textContent()).trim(), 'Icicle ▼');
  // Icicle: the root spans the top row; the bottom of the canvas is empty (depth 21 fits).
  let bars = await v.bars();
  let root = bars.find((b) => b.label?.startsWith('redis-server'));
  assert.equal(root.y, 0);
  assert.ok(await v.canvasRowBackground(ROW_H / 2) <= 2, 'top row painted');
  assert.equal(await v.canvasRowBackground(icicle.height - 2), icicle.width, 'bottom row empty');

  await v.redrawAfter(() => toggle.click());
  assert.equal((await toggle.textContent()).trim(), 'Flame ▲');
  assert.equal(await toggle.getAttribute('aria-pressed'), 'true');
  assert.match(v.page.url(), /[?&]view=flame(&|$)/);
  const flame = await v.canvasSnapshot();
  bars = await v.bars();
  root = bars.find((b) => b.label?.startsWith('redis-server'));
  assert.equal(root.y, flame.height - ROW_H, 'the root row is at the bottom');
  assert.ok(root.x === 0 && root.w >= flame.width - 1);
  assert.ok(await v.canvasRowBackground(flame.height - ROW_H / 2) <= 2, 'bottom row painted');
  assert.equal(await v.canvasRowBackground(2), flame.width, 'top row empty');
  // The deepest row sits right under the top of the graph part.
  const topBar = bars.reduce((a, b) => (b.y < a.y ? b : a));
  assert.equal(topBar.y, flame.height - (s.depth + 1) * ROW_H);
  // Hit-testing follows: the bottom row is the root, the one above it a thread.
  assert.equal((await v.hoverBar({ cx: 100, cy: flame.height - ROW_H / 2 })).name, 'redis-server');
  const threadTip = await v.hoverBar({ cx: flame.width - 100, cy: flame.height - ROW_H - ROW_H / 2 });
  assert.equal(threadTip.name, '[t] redis-server');
  assert.match(threadTip.kind, /depth 1$/);
  await v.pointerAway();
  await v.screenshot('flame-orientation');
  await v.redrawAfter(() => toggle.click());
  assert.equal((await v.waitForCanvasStable()).hash, icicle.hash, 'back to the icicle picture');

  // Inverted: depth 1 holds the leaves where time is spent, not the threads.
  const topDown = (await v.bars()).filter((b) => b.depth === 1 && b.label);
  assert.ok(topDown.every((b) => b.label.startsWith('[t] ')), `top-down row 1: ${topDown.map((b) => b.label)}`);
  await v.redrawAfter(() => v.el('inverted-toggle').click());
  assert.equal(await v.el('inverted-toggle').getAttribute('aria-pressed'), 'true');
  assert.match(v.page.url(), /[?&]inverted=1(&|$)/);
  const inverted = (await v.bars()).filter((b) => b.depth === 1 && b.label);
  assert.ok(inverted.length >= 3, `inverted row 1: ${inverted.map((b) => b.label)}`);
  assert.ok(inverted.every((b) => !b.label.startsWith('[t] ')), `no threads in inverted row 1: ${inverted.map((b) => b.label)}`);
  const { tip } = await v.hoverRow(1);
  assert.equal(tip.name, '[k] ep_poll', 'the widest leaf');
  assert.match(tip.kind, /^kernel frame · depth 1$/);
  const { tip: caller } = await v.hoverRow(2);
  assert.equal(caller.name, '[k] do_epoll_wait', 'its caller above it');
  assert.equal((await v.findBar(0)).label, 'redis-server (100%)', 'same root and total');
  await v.pointerAway();
  await v.screenshot('inverted');
  await v.redrawAfter(() => v.el('inverted-toggle').click());
  assert.equal((await v.waitForCanvasStable()).hash, icicle.hash, 'top-down again');
  v.assertNoErrors();
});
