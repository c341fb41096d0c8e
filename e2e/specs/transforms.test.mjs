// Transforms on the real page against the demo service (issue #26): drop samples with a
// function, merge it, collapse its recursion, collapse a library, focus on it, keep only the
// stacks through it, and the idle-wait presets — each applied by mouse (the noise-control menu)
// and by keyboard (the shortcut keys on the focused frame), shown as a chip, carried by the URL
// (a reload reproduces it), and removed again; in a comparison, the table and the sandwich too.
//
// The oracle of every step is the displayed graph's folded-stacks export checked against the
// step's rule applied to the stacks one by one here (no shared code with the viewer).
//
// Data: a profile ingested over HTTP with recursion (direct and through `helper`), glibc's and
// libstdc++'s library runs, idle waits (a condition variable, epoll) and the CPU idle loop; the
// demo's api-gateway and redis-server for comparisons and the sandwich.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { openViewer, useServerAndBrowser } from '../lib/fixture.mjs';
import { foldedStacks } from '../lib/folded.mjs';
import { parseStatus } from '../lib/viewer.mjs';

const env = useServerAndBrowser();
const APP = 'reading-fixture';

/** The fixture's stacks (root excluded): its widest path is [t] main → two libc frames → main
 * → fib (depth 5). */
const STACKS = {
  '[t] main;[l] __libc_start_main;[l] __libc_start_call_main;main;fib;fib;fib;leaf': 9,
  '[t] main;[l] __libc_start_main;[l] __libc_start_call_main;main;fib;helper;fib;leaf': 3,
  '[t] main;[l] __libc_start_main;[l] __libc_start_call_main;main;work;[l] std::sort;[l] std::__introsort;[l] std::swap': 4,
  '[t] main;[l] __libc_start_main;[l] __libc_start_call_main;main;work;compute': 6,
  '[t] pool;[l] start_thread;worker;[l] pthread_cond_wait;[k] futex_wait': 7,
  '[t] pool;[l] start_thread;worker;process': 2,
  '[t] io;[l] start_thread;poller;[l] epoll_wait;[k] do_epoll_wait': 4,
  '[t] swapper;[k] cpu_startup_entry;[k] do_idle;[k] default_idle_call': 5,
};

let ingested = null;
/** Ingests the fixture once, ten minutes before the demo server started (in "Last 1 h"). */
function withFixture() {
  ingested ??= (async () => {
    const folded = Object.entries(STACKS).map(([s, v]) => `${s} ${v}`).join('\n');
    const params = new URLSearchParams({ app_service: APP, profile_event_type: 'on-cpu', time: String(env.server.startedAt - 600) });
    const res = await fetch(`${env.server.url}/v1/profile/ingest?${params}`, {
      method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: folded,
    });
    assert.equal(res.status, 200, await res.text());
  })();
  return ingested;
}

// --- The steps' rules, stack by stack (frames root→leaf, without the root). ---

const frames = (s) => s.split(';');
const rules = {
  drop: (f) => (s) => (frames(s).includes(f) ? null : s),
  focus: (f) => (s) => (frames(s).includes(f) ? s : null),
  root: (f) => (s) => { const i = frames(s).indexOf(f); return i < 0 ? null : frames(s).slice(i + 1).join(';'); },
  merge: (f) => (s) => frames(s).filter((x) => x !== f).join(';'),
  recursion: (f) => (s) => {
    const fr = frames(s);
    const first = fr.indexOf(f);
    const last = fr.lastIndexOf(f);
    return first < 0 ? s : [...fr.slice(0, first + 1), ...fr.slice(last + 1)].join(';');
  },
  // A run of `[l]` frames of one library keeps its first frame (C symbols are one library).
  library: (key) => (s) => {
    const lib = (x) => (x.startsWith('[l] ') ? (/^\[l\] ([a-z_]\w*)::/.exec(x)?.[1] ?? 'C') : null);
    return frames(s).filter((x, i, fr) => !(lib(x) === key && i > 0 && lib(fr[i - 1]) === key)).join(';');
  },
  idle: () => (s) => (/\[l\] (pthread_cond_wait|epoll_wait)(;|$)/.test(s) ? null : s),
  spin: () => (s) => (/\[k\] (do_idle|default_idle_call)(;|$)/.test(s) ? null : s),
};

/** `stacks` (stack → value) with `rule` applied to each, equal stacks summed. */
function applied(stacks, rule) {
  const out = {};
  for (const [s, v] of Object.entries(stacks)) {
    const t = rule(s);
    if (t !== null) out[t] = (out[t] ?? 0) + v;
  }
  return out;
}

/** The displayed graph's stacks, from its folded export (stacks without the root, self values). */
async function shownStacks(v) {
  const { text } = await v.download('export-folded');
  await v.el('export-menu').locator('summary').click();
  return foldedStacks(text);
}

/** The stacks the demo stores for the fixture, in the unit the export uses (µs per sample). */
async function openFixture(t) {
  await withFixture();
  const v = await openViewer(t, env);
  await v.query({ app: APP });
  await v.waitForGraph();
  const plain = await shownStacks(v);
  const unit = plain['[t] io;[l] start_thread;poller;[l] epoll_wait;[k] do_epoll_wait'] / 4;
  assert.ok(unit > 0, `the fixture is shown: ${JSON.stringify(plain)}`);
  const scaled = Object.fromEntries(Object.entries(STACKS).map(([s, n]) => [s, n * unit]));
  assert.deepEqual(plain, scaled, 'the export is the ingested profile');
  return { v, stacks: scaled };
}

/** Selects function `name` by clicking its row in the table. */
async function select(v, name) {
  await v.openTable();
  await v.el('function-table').locator(`[data-testid=table-row][data-function="${name}"]`).click();
  await v.poll(() => v.el('noise-add').locator('optgroup').nth(1).getAttribute('label'), (l) => l === `Selected: ${name}`, { what: 'the selection in the menu' });
}

const STEPS = [
  { menu: 'drop', fn: 'fib', chip: 'Dropped: fib', param: 'drop:fib', rule: rules.drop('fib') },
  { menu: 'merge', fn: 'fib', chip: 'Merged: fib', param: 'merge:fib', rule: rules.merge('fib') },
  { menu: 'recursion', fn: 'fib', chip: 'Recursion collapsed: fib', param: 'rec:fib', rule: rules.recursion('fib') },
  { menu: 'library', fn: '[l] __libc_start_main', chip: 'Library collapsed: C symbols', param: 'lib:C', rule: rules.library('C') },
  { menu: 'library', fn: '[l] std::sort', chip: 'Library collapsed: std', param: 'lib:std', rule: rules.library('std') },
  { menu: 'root', fn: 'work', chip: 'Focus: work', param: 'root:work', rule: rules.root('work') },
  { menu: 'focus', fn: 'worker', chip: 'Only through: worker', param: 'focus:worker', rule: rules.focus('worker') },
  { menu: 'idle', chip: 'Idle waits dropped', param: 'idle', rule: rules.idle() },
  { menu: 'spin', chip: 'Idle spinning dropped', param: 'spin', rule: rules.spin() },
];

test('T1. each transform by mouse: chip, URL, the graph its rule gives, reload, removal', async (t) => {
  const { v, stacks } = await openFixture(t);
  const plainStatus = await v.statusCore();
  for (const step of STEPS) {
    if (step.fn) await select(v, step.fn);
    await v.redrawAfter(() => v.addNoise(step.menu));
    assert.deepEqual(await v.chips(), [step.chip], step.menu);
    assert.equal(new URL(v.page.url()).searchParams.get('transforms'), step.param);
    const want = applied(stacks, step.rule);
    assert.deepEqual(await shownStacks(v), want, `${step.param}: the graph is the rule's`);
    // The status line describes the transformed graph; dropping steps say what they removed.
    const total = Object.values(want).reduce((a, b) => a + b, 0);
    const all = Object.values(stacks).reduce((a, b) => a + b, 0);
    if (['drop', 'idle', 'spin'].includes(step.menu)) {
      assert.match(await v.el('view-note').textContent(), /^dropped [\d.]+ \S+ \([\d.]+%\) of [\d.]+ \S+$/);
    }
    if (step.menu !== 'root') assert.ok(Math.abs(parseStatus(await v.status()).value - total) <= total * 0.01 + 1, `${step.param} status total`);
    assert.ok(total <= all);
    // A reload reproduces the step from the URL alone.
    await v.page.reload();
    await v.waitForGraph();
    assert.deepEqual(await v.chips(), [step.chip], `${step.param} after a reload`);
    assert.deepEqual(await shownStacks(v), want, `${step.param} after a reload`);
    // Removing the chip brings the whole profile back.
    await v.redrawAfter(() => v.el('chip').getByRole('button', { name: `Remove ${step.chip}` }).click());
    assert.deepEqual(await v.chips(), []);
    assert.equal(await v.statusCore(), plainStatus);
    assert.deepEqual(await shownStacks(v), stacks);
  }
  v.assertNoErrors();
});

test('T2. each transform by keyboard on the focused frame, removed with the keyboard', async (t) => {
  const { v, stacks } = await openFixture(t);
  const canvas = v.el('flame-canvas');
  /** Focuses the frame at `depth` along the widest path (↓ from the root) and checks its name. */
  const focusDepth = async (depth, name) => {
    await canvas.focus();
    await v.page.keyboard.press('Escape');
    for (let i = 0; i < depth; i++) await v.page.keyboard.press('ArrowDown');
    await v.poll(() => v.announcer(), (a) => a.startsWith(`${name}, `), { what: `focus on ${name}` });
  };
  const keys = [
    { key: 'd', depth: 5, fn: 'fib', chip: 'Dropped: fib', rule: rules.drop('fib') },
    { key: 'm', depth: 5, fn: 'fib', chip: 'Merged: fib', rule: rules.merge('fib') },
    { key: 'r', depth: 5, fn: 'fib', chip: 'Recursion collapsed: fib', rule: rules.recursion('fib') },
    { key: 'l', depth: 2, fn: '[l] __libc_start_main', chip: 'Library collapsed: C symbols', rule: rules.library('C') },
    { key: 'f', depth: 5, fn: 'fib', chip: 'Focus: fib', rule: rules.root('fib') },
    { key: 't', depth: 5, fn: 'fib', chip: 'Only through: fib', rule: rules.focus('fib') },
    { key: 'i', chip: 'Idle waits dropped', rule: rules.idle() },
    { key: 's', chip: 'Idle spinning dropped', rule: rules.spin() },
  ];
  for (const k of keys) {
    if (k.fn) await focusDepth(k.depth, k.fn);
    else await canvas.focus();
    await v.redrawAfter(() => v.page.keyboard.press(k.key));
    assert.deepEqual(await v.chips(), [k.chip], `key ${k.key}`);
    assert.deepEqual(await shownStacks(v), applied(stacks, k.rule), `key ${k.key}`);
    // The chip's remove button by keyboard: focus it and press Enter.
    await v.el('chip').getByRole('button').focus();
    await v.redrawAfter(() => v.page.keyboard.press('Enter'));
    assert.deepEqual(await v.chips(), [], `key ${k.key} removed`);
  }
  // Keys typed into a text field are text, not steps.
  await v.el('search').focus();
  await v.page.keyboard.type('d');
  assert.deepEqual(await v.chips(), []);
  await v.search('');
  // Steps combine in order, and the URL carries them in that order.
  await focusDepth(5, 'fib');
  await v.page.keyboard.press('r');
  await v.page.keyboard.press('i');
  await v.poll(() => v.chips(), (c) => c.length === 2, { what: 'two chips' });
  assert.equal(new URL(v.page.url()).searchParams.get('transforms'), 'rec:fib,idle');
  assert.deepEqual(await shownStacks(v), applied(applied(stacks, rules.recursion('fib')), rules.idle()));
  v.assertNoErrors();
});

test('T3. the idle presets on real off-CPU data: waiting for work goes, I/O and the busy stay', async (t) => {
  const v = await openViewer(t, env);
  await v.query({ app: 'redis-server', event: 'off-cpu' });
  const plain = await v.waitForGraph();
  const before = await shownStacks(v);
  await v.redrawAfter(() => v.addNoise('idle'));
  const after = await shownStacks(v);
  const kept = Object.keys(after);
  assert.ok(kept.length > 0 && kept.length < Object.keys(before).length);
  for (const s of kept) assert.doesNotMatch(s, /pthread_cond_wait|epoll_wait/, s);
  assert.ok(kept.some((s) => s.includes('[l] fdatasync')), 'the disk syncs stay');
  const removed = Object.values(before).reduce((a, b) => a + b, 0) - Object.values(after).reduce((a, b) => a + b, 0);
  const note = await v.el('view-note').textContent();
  assert.match(note, /^dropped /);
  const pct = Number(/\(([\d.]+)%\)/.exec(note)[1]);
  assert.ok(Math.abs(pct - (100 * removed) / plain.value) < 0.6, `${note} vs ${removed} of ${plain.value}`);
  v.assertNoErrors();
});

test('T4. transforms apply to both sides of a comparison, to its table and to the sandwich', async (t) => {
  const v = await openViewer(t, env);
  await v.query({ app: 'api-gateway' });
  await v.waitForGraph();
  await v.el('compare-menu').locator('summary').click();
  await v.el('compare-previous').click();
  await v.el('diff-bar').waitFor();
  await v.waitForCanvasStable();
  const fn = 'encoding/json.Marshal';
  await v.openTable();
  const names = async () => v.el('function-table').locator('[data-testid=table-row]').evaluateAll((trs) => trs.map((tr) => tr.dataset.function));
  assert.ok((await names()).includes(fn));
  const baseline = (s) => Number(/\(baseline ([\d.]+)/.exec(s)?.[1]);
  const statusBefore = await v.status();
  await select(v, fn);
  await v.redrawAfter(() => v.addNoise('drop'));
  await v.poll(names, (n) => !n.includes(fn), { what: `${fn} gone from the diff table` });
  const statusAfter = await v.status();
  assert.ok(baseline(statusAfter) < baseline(statusBefore) || /ms|µs/.test(statusAfter), `the baseline shrank too: ${statusBefore} → ${statusAfter}`);
  await v.el('chips').getByRole('button', { name: 'Clear all' }).click();

  // The sandwich is built from the transformed profile: a callee dropped is gone from it.
  await v.el('stop-comparing').click();
  await v.query({ app: 'redis-server' });
  await v.waitForGraph();
  await select(v, 'readQueryFromClient');
  await v.el('sandwich-toggle').click();
  await v.el('sandwich').waitFor();
  const whole = await v.waitForCanvasStable({ testid: 'sandwich-callees' });
  await v.el('sandwich').waitFor();
  // Drop a callee through the URL's form of the step (the selection stays on the sandwich's).
  const url = new URL(v.page.url());
  url.searchParams.set('transforms', 'drop:processCommand');
  await v.page.goto(url.toString());
  await v.el('sandwich').waitFor();
  assert.deepEqual(await v.chips(), ['Dropped: processCommand']);
  const without = await v.waitForCanvasStable({ testid: 'sandwich-callees' });
  assert.notEqual(without.hash, whole.hash, 'the callees changed');
  await v.el('chip').getByRole('button').click();
  const back = await v.waitForCanvasStable({ testid: 'sandwich-callees' });
  assert.notEqual(back.hash, without.hash, 'removing the chip brings the callees back');
  url.searchParams.delete('transforms');
  await v.page.goto(url.toString());
  await v.el('sandwich').waitFor();
  assert.equal((await v.waitForCanvasStable({ testid: 'sandwich-callees' })).hash, back.hash, 'as they are without the step');
  v.assertNoErrors();
});
