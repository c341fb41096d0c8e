// Analysis features on the real page against the demo service, continued from
// analysis.test.mjs: noise control (chips), keyboard navigation, and the status line describing
// the graph on screen.
//
// Demo data used (server/src/demo.rs): the per-host Total graph (Total → [p] process → [t]
// thread), and redis-server's threads (main, io_thd_1) with their library and kernel frames.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { openRedis, openViewer, useServerAndBrowser } from '../lib/fixture.mjs';
import { foldedStats } from '../lib/folded.mjs';
import { parseStatus, parseSummary } from '../lib/viewer.mjs';

const env = useServerAndBrowser();

/** The demo's redis-server profile in a fresh viewer: { v, s } (s: the parsed status line). */
const redis = (t, options) => openRedis(t, env, options);

test('A5. noise control: fold threads, hide/cap kernel frames, hide patterns, chips', async (t) => {
  const v = await openViewer(t, env);
  // Per-host Total: Total → [p] process → [t] thread; folding threads leaves depth 1.
  await v.query({ wholeHost: true });
  const host = await v.waitForGraph();
  assert.equal(host.depth, 2);
  const hostPicture = await v.canvasSnapshot();
  await v.redrawAfter(() => v.addNoise('threads'));
  assert.deepEqual(await v.chips(), ['Threads folded']);
  assert.equal(await v.el('noise-add').inputValue(), '', 'the menu returns to its placeholder');
  let bars = await v.bars();
  assert.equal(Math.max(...bars.map((b) => b.depth)), 1, 'depth 1 after folding threads');
  assert.ok(!bars.some((b) => b.label?.startsWith('[t] ')), 'no thread frames left');
  assert.ok(bars.filter((b) => b.depth === 1 && b.label).every((b) => b.label.startsWith('[p] ')));
  assert.equal(new URL(v.page.url()).searchParams.get('transforms'), 'threads');
  await v.redrawAfter(() => v.el('chips').getByRole('button', { name: 'Clear all' }).click());
  assert.deepEqual(await v.chips(), []);
  assert.equal(await v.el('chips').count(), 0);
  assert.equal((await v.waitForCanvasStable()).hash, hostPicture.hash, 'Clear all restores the graph');

  // A process: hide kernel frames, then cap them at 2 (one kernel step at a time).
  await v.query({ wholeHost: false, app: 'redis-server' });
  const plain = await v.waitForGraph();
  const plainStatus = await v.status();
  const plainPicture = await v.canvasSnapshot();
  assert.ok(parseSummary(await v.search('[k]')).count > 10, 'kernel frames present');
  await v.search('');
  await v.redrawAfter(() => v.addNoise('kernel0'));
  assert.deepEqual(await v.chips(), ['Kernel hidden']);
  assert.equal(await v.search('[k]'), 'No matches', 'no [k] frame left');
  await v.search('');
  bars = await v.bars();
  assert.ok(!bars.some((b) => b.label?.startsWith('[k] ')), 'no [k] labels drawn');
  assert.ok(Math.max(...bars.map((b) => b.depth)) < plain.depth, 'the kernel part of the stacks is gone');
  assert.equal((await v.findBar(0)).label, 'redis-server (100%)');

  await v.redrawAfter(() => v.addNoise('kernel2'));
  assert.deepEqual(await v.chips(), ['Kernel ≤ 2'], 'the kernel cap replaces "Kernel hidden"');
  const capped = parseSummary(await v.search('[k]'));
  assert.ok(capped.count > 0, 'two kernel frames per stack are back');
  await v.search('');
  assert.equal(new URL(v.page.url()).searchParams.get('transforms'), 'kernel:2');

  // A hide pattern adds a chip and clears the box.
  await v.el('hide-pattern').fill('aeMain, beforeSleep');
  await v.redrawAfter(() => v.el('hide-pattern').press('Enter'));
  assert.deepEqual(await v.chips(), ['Kernel ≤ 2', 'Hidden: aeMain, beforeSleep']);
  assert.equal(await v.el('hide-pattern').inputValue(), '');
  assert.equal(await v.search('aeMain'), 'No matches');
  assert.equal(await v.search('beforeSleep'), 'No matches');
  // The frames below a hidden one move up to its parent.
  await v.search('aeProcessEvents');
  await v.el('search-next').click();
  assert.deepEqual(await v.waitForCrumbs((c) => c.at(-1) === 'aeProcessEvents'),
    ['redis-server', '[t] redis-server', '[l] __libc_start_main', 'main', 'aeProcessEvents']);
  await v.el('reset-zoom').click();
  await v.search('');
  assert.equal(new URL(v.page.url()).searchParams.get('transforms'), 'kernel:2,hide:aeMain, beforeSleep');

  // Removing a chip undoes just that step.
  await v.redrawAfter(() => v.el('chip').filter({ hasText: 'Kernel' }).getByRole('button').click());
  assert.deepEqual(await v.chips(), ['Hidden: aeMain, beforeSleep']);
  assert.ok(parseSummary(await v.search('[k]')).count > capped.count, 'all kernel frames are back');
  await v.search('');
  await v.redrawAfter(() => v.el('chip').getByRole('button', { name: 'Remove Hidden: aeMain, beforeSleep' }).click());
  assert.deepEqual(await v.chips(), []);
  assert.equal(await v.status(), plainStatus, 'original status');
  await v.pointerAway();
  assert.equal((await v.waitForCanvasStable()).hash, plainPicture.hash, 'original picture');
  assert.equal(parseSummary(await v.search('aeMain')).count, 1);
  await v.search('');

  // "Clear all" removes several steps at once.
  await v.addNoise('unresolved');
  await v.addNoise('kernel0');
  await v.el('hide-pattern').fill('main');
  await v.el('hide-pattern').press('Enter');
  assert.deepEqual(await v.chips(), ['Unresolved collapsed', 'Kernel hidden', 'Hidden: main']);
  // "Focus on selected function" needs a selection.
  assert.ok(await v.el('noise-add').locator('option[value=focus]').isDisabled());
  await v.redrawAfter(() => v.el('chips').getByRole('button', { name: 'Clear all' }).click());
  assert.deepEqual(await v.chips(), []);
  assert.equal(await v.status(), plainStatus);
  assert.equal((await v.waitForCanvasStable()).hash, plainPicture.hash);
  assert.doesNotMatch(v.page.url(), /transforms=/);

  // Focus on the selected function keeps only the stacks through it.
  const bar = await v.findBar(6, { label: /^readQueryFromClient/ });
  await v.clickBar(bar);
  await v.el('reset-zoom').click();
  assert.ok(await v.el('noise-add').locator('option[value=focus]').isEnabled());
  await v.redrawAfter(() => v.addNoise('focus'));
  assert.deepEqual(await v.chips(), ['Only through: readQueryFromClient']);
  const threads = (await v.bars()).filter((b) => b.depth === 1 && b.label).map((b) => b.label);
  assert.ok(threads.some((l) => l.startsWith('[t] redis-server')), `threads ${threads}`);
  assert.ok(!threads.some((l) => l.startsWith('[t] bio')), `no background threads: ${threads}`);
  assert.equal(await v.search('fsync'), 'No matches', 'the bio_aof_fsync stacks are gone');
  v.assertNoErrors();
});

test('A6. keyboard: arrows move the focus, Enter zooms, Esc resets, / and ? work', async (t) => {
  const { v } = await redis(t);
  const canvas = v.el('flame-canvas');
  assert.equal(await canvas.getAttribute('tabindex'), '0');
  // The graph is reachable with Tab from the search box.
  await v.el('search').focus();
  for (let i = 0; i < 25 && (await v.activeTestid()) !== 'flame-canvas'; i++) await v.page.keyboard.press('Tab');
  assert.equal(await v.activeTestid(), 'flame-canvas', 'Tab reaches the graph');
  assert.equal(await v.announcer(), '', 'nothing announced before a key');

  await v.page.keyboard.press('ArrowDown');
  const a1 = await v.poll(() => v.announcer(), (t) => t !== '', { what: 'announcement' });
  assert.match(a1, /^\[t\] redis-server, thread frame, total [\d.]+ \w+ \([\d.]+%\), self .+, depth 1$/);
  await v.page.keyboard.press('ArrowDown');
  const a2 = await v.poll(() => v.announcer(), (t) => t !== a1, { what: 'second announcement' });
  assert.match(a2, /^\[l\] __libc_start_main, library frame, .*depth 2$/);
  // The focused frame is outlined where its bar is.
  await v.waitForCanvasStable();
  const focusBar = await v.findBar(2, { label: /^\[l\] __libc_start_main/ });
  const outline = await v.hoverOutline();
  assert.ok(outline && Math.abs(outline.x - focusBar.x) < 2 && Math.abs(outline.y - focusBar.y) < 2,
    `focus outline ${JSON.stringify(outline)} on ${JSON.stringify(focusBar)}`);
  // Right: the last frame of its row stays; left moves to the neighbour.
  await v.page.keyboard.press('ArrowRight');
  await v.stays(() => v.announcer(), a2, 200, { what: 'the announcement (nothing right of the last frame)' });
  await v.page.keyboard.press('ArrowLeft');
  const a3 = await v.poll(() => v.announcer(), (t) => t !== a2, { what: 'left neighbour' });
  assert.match(a3, /^\[l\] start_thread, library frame, .*depth 2$/);
  await v.page.keyboard.press('ArrowUp');
  const a4 = await v.poll(() => v.announcer(), (t) => t !== a3, { what: 'parent' });
  assert.match(a4, /^\[t\] io_thd_1, thread frame, .*depth 1$/);
  await v.page.keyboard.press('ArrowDown');
  await v.poll(() => v.announcer(), (t) => t === a3, { what: 'back down' });

  // Enter zooms into the focused frame; Home focuses the zoomed frame.
  await v.page.keyboard.press('Enter');
  assert.deepEqual(await v.waitForCrumbs(3), ['redis-server', '[t] io_thd_1', '[l] start_thread']);
  await v.page.keyboard.press('ArrowDown');
  const a5 = await v.poll(() => v.announcer(), (t) => t !== a3, { what: 'child' });
  assert.match(a5, /^IOThreadMain, application frame, .*depth 3$/);
  await v.page.keyboard.press('Home');
  await v.poll(() => v.announcer(), (t) => t === a3, { what: 'Home' });
  // Moving sideways stays inside the zoomed subtree.
  await v.page.keyboard.press('ArrowRight');
  await v.stays(() => v.announcer(), a3, 200, { what: 'the announcement (no step out of the zoomed frame)' });

  // Esc resets zoom and focus.
  await v.page.keyboard.press('Escape');
  assert.deepEqual(await v.waitForCrumbs(1), ['redis-server']);
  assert.equal(await v.poll(() => v.announcer(), (t) => t === '', { what: 'announcer cleared' }), '');

  // "/" focuses the search box (and is not typed into it).
  await v.page.keyboard.press('/');
  assert.equal(await v.activeTestid(), 'search');
  assert.equal(await v.el('search').inputValue(), '');
  // "?" typed in the search box is text, not the shortcut.
  await v.page.keyboard.type('?');
  assert.equal(await v.el('search').inputValue(), '?');
  assert.equal(await v.el('shortcuts').count(), 0);
  await v.search('');
  // From the graph, "?" opens the sheet and Esc closes it (without resetting anything).
  await canvas.focus();
  await v.page.keyboard.press('ArrowDown');
  await v.page.keyboard.press('Enter');
  await v.waitForCrumbs(2);
  await v.page.keyboard.press('?');
  await v.el('shortcuts').waitFor({ state: 'visible' });
  assert.equal(await v.el('shortcuts').getAttribute('role'), 'dialog');
  assert.match(await v.el('shortcuts').textContent(), /zoom into the focused frame/);
  await v.page.keyboard.press('Escape');
  await v.el('shortcuts').waitFor({ state: 'detached' });
  assert.equal((await v.breadcrumbs()).length, 2, 'Esc closed the sheet only');
  // The help button toggles the sheet too; its Close button closes it.
  await v.el('help-toggle').click();
  await v.el('shortcuts').waitFor({ state: 'visible' });
  await v.el('shortcuts').getByRole('button', { name: 'Close' }).click();
  await v.el('shortcuts').waitFor({ state: 'detached' });
  v.assertNoErrors();
});

// Regression test for a fixed bug (viewer, src/app.rs `Viewer`: `<StatusLine load=view.load />`, and
// src/components/toolbar.rs `loaded_status`): the status line always describes the raw
// response, not the graph on screen. After search filter, inverted view, folded threads or
// hidden kernel frames it still shows the unfiltered node count and depth, e.g. the per-host
// Total graph with threads folded is drawn 2 rows deep but the status says "depth 2".
// Reproduce: query whole host, Noise control → "Fold [t] thread layer": the status line does
// not change. Fix: derive the status from `view.shown` (keeping "decoded in" from the load).
// The expected figures come from the folded-stacks export, which exports the displayed graph.
test('A7. the status line describes the displayed graph', async (t) => {
  const { v, s: plain } = await redis(t);
  const mismatches = [];
  const check = async (what) => {
    const folded = await v.download('export-folded');
    await v.el('export-menu').locator('summary').click();
    const want = foldedStats(folded.text);
    const got = parseStatus(await v.status());
    if (got.nodes !== want.nodes || got.depth !== want.depth) {
      mismatches.push(`${what}: status says ${got.nodes} nodes, depth ${got.depth}; the graph has ${want.nodes} nodes, depth ${want.depth}`);
    }
  };
  await check('plain');
  assert.deepEqual(mismatches, [], 'the oracle agrees with the status for the plain graph');
  assert.equal(foldedStats((await v.download('export-folded')).text).nodes, plain.nodes);
  await v.el('export-menu').locator('summary').click();

  await v.el('search-regex').check();
  await v.search('^dictFind$');
  await v.redrawAfter(() => v.el('search-filter').check());
  await check('search filter ^dictFind$');
  await v.el('search-filter').uncheck();
  await v.search('');

  await v.redrawAfter(() => v.el('inverted-toggle').click());
  await check('inverted');
  await v.redrawAfter(() => v.el('inverted-toggle').click());

  await v.redrawAfter(() => v.addNoise('kernel0'));
  await check('kernel hidden');
  await v.el('chips').getByRole('button', { name: 'Clear all' }).click();

  await v.query({ wholeHost: true });
  await v.waitForGraph();
  await v.redrawAfter(() => v.addNoise('threads'));
  await check('Total with threads folded');
  if (!/ · depth 1 · /.test(await v.status())) mismatches.push(`threads folded: status "${await v.status()}" lacks "depth 1"`);
  assert.deepEqual(mismatches, []);
  v.assertNoErrors();
});
