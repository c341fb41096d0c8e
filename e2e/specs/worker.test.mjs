// The decode worker: big answers decode off the page's thread (so Cancel works while they
// decode), and without a worker the page still decodes them itself (and reads files itself).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { openViewer, useServerAndBrowser } from '../lib/fixture.mjs';
import { parseStatus } from '../lib/viewer.mjs';

const env = useServerAndBrowser();
const ROUTE = '**/v1/profile/ProfileTracing';

/**
 * A shape-B answer of about `nodes` nodes (~24 bytes each): a root, 64 threads, and chains of
 * 40 frames under them, each ending in one sample.
 */
function bigShapeB(nodes) {
  const F = 3000;
  const THREADS = 64;
  const CHAIN = 40;
  const SAMPLE = 10101;
  const functions = ['big-service'];
  for (let i = 1; i < F; i++) functions.push(i <= THREADS ? `[t] worker-${i}` : `pkg${i % 50}::fn_${i}`);
  const rows = [[0, -1, 0, 0]];
  for (let t = 1; t <= THREADS; t++) rows.push([t, 0, 0, 0]);
  for (let c = 0; rows.length + CHAIN <= nodes; c++) {
    const thread = 1 + (c % THREADS);
    const j = Math.floor(c / THREADS); // chain number within its thread: distinct heads
    let parent = thread;
    for (let k = 0; k < CHAIN; k++) {
      const f = THREADS + 1 + ((j + k * 7) % (F - THREADS - 1));
      const leaf = k === CHAIN - 1;
      rows.push([f, parent, leaf ? SAMPLE : 0, SAMPLE]);
      parent = rows.length - 1;
    }
    rows[thread][3] += SAMPLE;
    rows[0][3] += SAMPLE;
  }
  const values = rows.map((r) => `[${r.join(',')}]`).join(',');
  return `{"OPT_STATUS":"SUCCESS","DESCRIPTION":"","result":{"functions":${JSON.stringify(functions)},`
    + `"node_values":{"columns":["function_id","parent_node_id","self_value","total_value"],"values":[${values}]}}}`;
}

test('W1. a big answer decodes in the worker: Cancel works while it decodes', async (t) => {
  const body = bigShapeB(1_000_000);
  const v = await openViewer(t, env);
  const worker = v.page.workers()[0] ?? (await v.page.waitForEvent('worker'));
  assert.match(worker.url(), /decode_worker_loader\.js$/, 'the decode worker runs');
  await v.page.route(ROUTE, (route) => route.fulfill({ status: 200, contentType: 'application/json', body }));
  await v.fillForm({ app: 'big-service' });
  await v.submit();
  await v.waitForStatus(/^Decoding 2\d\.\d MB… /u);
  const stopped = new Promise((resolve) => worker.once('close', resolve));
  // The page's thread is free: the click lands while the worker decodes.
  await v.el('cancel').click();
  assert.equal(await v.waitForStatus(/^Cancelled\.$/), 'Cancelled.');
  // The busy worker is terminated, so its answer can never arrive; two frames later the page
  // has handled everything the termination caused.
  await stopped;
  await v.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  assert.equal(await v.status(), 'Cancelled.', 'the abandoned answer never shows');

  // The worker that was busy is replaced; the same answer decodes fully next time.
  const s = await v.query({ app: 'big-service' }, { timeout: 60_000 }).then(() => v.waitForGraph({ timeout: 60_000 }));
  assert.equal(s.root, 'big-service');
  assert.ok(s.nodes > 990_000, `nodes ${s.nodes}`);
  await v.screenshot('million-nodes');
  v.assertNoErrors();
});

test('W2. without a worker, the page decodes answers itself', async (t) => {
  const v = await openViewer(t, env, { params: null });
  await v.page.route('**/decode_worker_loader.js', (route) => route.abort());
  await v.goto({ app_service: 'redis-server' });
  const s = await v.waitForGraph();
  assert.equal(s.root, 'redis-server');
  assert.ok(s.nodes > 10, `nodes ${s.nodes}`);
  v.assertNoErrors({ allow: [/decode_worker_loader|Failed to load resource|net::ERR_FAILED/] });
});

test('W3. a comparison of two big answers decodes them in two workers side by side; stopping the comparison ends the second', async (t) => {
  // The comparison's answer is big (it decodes for a while); the baseline's, worth a second
  // worker, arrives while it does.
  const [big, medium] = [bigShapeB(1_000_000), bigShapeB(100_000)];
  const v = await openViewer(t, env, { params: null });
  const held = [];
  await v.page.route(ROUTE, (route) => { held.push(route); });
  await v.goto({ app_service: 'big-service', time_start: 2000, time_end: 3000, baseline_time_start: 1000, baseline_time_end: 2000 });
  // The second worker starts with the comparison's queries, before any answer is here.
  const decodeWorkers = () => v.page.workers().filter((w) => /decode_worker_loader\.js$/.test(w.url()));
  await v.poll(() => [held.length, decodeWorkers().length], ([q, w]) => q >= 2 && w >= 2,
    { timeout: 30_000, what: 'both queries held and two decode workers running' });
  // Each worker counts the messages it is sent from now on: a decode request each.
  for (const w of decodeWorkers()) {
    await w.evaluate(() => {
      self.__received = 0;
      self.addEventListener('message', () => { self.__received += 1; });
    });
  }
  const comparison = held.find((r) => JSON.parse(r.request().postData()).time_start === 2000);
  const baseline = held.find((r) => r !== comparison);
  await comparison.fulfill({ status: 200, contentType: 'application/json', body: big });
  await baseline.fulfill({ status: 200, contentType: 'application/json', body: medium });
  await v.el('diff-legend').waitFor({ timeout: 60_000 });
  const s = await v.waitForGraph({ timeout: 60_000 });
  assert.equal(s.root, 'big-service');
  assert.ok(s.nodes > 990_000, `nodes ${s.nodes}`);
  const received = await Promise.all(decodeWorkers().map((w) => w.evaluate(() => self.__received)));
  assert.equal(received.length, 2, 'two decode workers');
  assert.ok(received.every((n) => n >= 1), `each worker was sent an answer (messages: ${received})`);
  // Back to one profile: the second worker (and its warm-up heap) goes.
  await v.el('stop-comparing').click();
  await v.poll(() => decodeWorkers().length, (n) => n === 1, { what: 'one decode worker after Stop comparing' });
  v.assertNoErrors();
});

test('W4. the boot script starts the decode worker before the page\'s wasm runs; the page takes it over', async (t) => {
  const v = await openViewer(t, env, { params: null });
  await v.page.addInitScript(() => {
    // Records when the first worker is created (the prototype is kept, so `instanceof Worker`
    // still holds for the page's own check).
    const Native = window.Worker;
    const Counted = function (...args) {
      window.__workersCreated = (window.__workersCreated ?? []).concat(performance.now());
      return new Native(...args);
    };
    Counted.prototype = Native.prototype;
    window.Worker = Counted;
  });
  await v.goto({ app_service: 'redis-server' });
  const s = await v.waitForGraph();
  assert.equal(s.root, 'redis-server');
  const r = await v.page.evaluate(() => ({
    created: window.__workersCreated ?? [],
    marks: Object.fromEntries(performance.getEntriesByType('mark').map((m) => [m.name, m.startTime])),
  }));
  assert.equal(r.created.length, 1, `one decode worker, the boot script's (created at ${r.created})`);
  const m = r.marks;
  for (const name of ['app-started', 'worker-ready', 'decode-start', 'decode-end', 'profile-read', 'graph-painted']) {
    assert.ok(m[`embers:${name}`] != null, `mark embers:${name} (marks: ${Object.keys(m)})`);
  }
  // The warm-up ends after the worker said it was ready (its message may come before or after
  // the page took the worker over: both paths mark it).
  await v.page.waitForFunction(() => performance.getEntriesByName('embers:worker-warm').length === 1);
  assert.ok(r.created[0] < m['embers:app-started'], `worker created at ${r.created[0]} ms, before the app started at ${m['embers:app-started']} ms`);
  assert.ok(m['embers:decode-start'] <= m['embers:decode-end'] && m['embers:decode-end'] <= m['embers:profile-read']
    && m['embers:profile-read'] <= m['embers:graph-painted'], 'decode, read on the page, then paint');
  v.assertNoErrors();
});

test('W5. while the page waits for its first answer the graph warms up off-screen once, leaves nothing behind and marks no paint', async (t) => {
  const v = await openViewer(t, env, { params: null });
  await v.goto({});
  await v.page.waitForFunction(() => performance.getEntriesByName('embers:graph-warm').length === 1);
  const idle = await v.page.evaluate(() => ({
    leftovers: document.querySelectorAll('.warm-up, [data-testid=graph-warm-up]').length,
    painted: performance.getEntriesByName('embers:graph-painted').length,
  }));
  assert.deepEqual(idle, { leftovers: 0, painted: 0 }, 'the warm-up graph is gone and its paint is not a load\'s');
  // A query after it: its graph is the one painted and marked, once.
  await v.goto({ app_service: 'redis-server' });
  const s = await v.waitForGraph();
  assert.equal(s.root, 'redis-server');
  const after = await v.page.evaluate(() => ({
    leftovers: document.querySelectorAll('.warm-up, [data-testid=graph-warm-up]').length,
    painted: performance.getEntriesByName('embers:graph-painted').length,
  }));
  assert.deepEqual(after, { leftovers: 0, painted: 1 });
  v.assertNoErrors();
});

test('W6. where no worker can start, the page reads both answers and files itself: the answer decoder and the file reader load into the page side by side', async (t) => {
  const goCpu = readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '../../model/tests/data/pprof/go-cpu.pb.gz'));
  const v = await openViewer(t, env, { params: null });
  // A policy that forbids workers: every `new Worker` throws.
  await v.page.addInitScript(() => {
    window.Worker = function () { throw new DOMException('workers are forbidden here', 'SecurityError'); };
  });
  await v.goto({ app_service: 'redis-server' });
  const s = await v.waitForGraph();
  assert.equal(s.root, 'redis-server');
  await v.importFile('go-cpu.pb.gz', goCpu, 'application/octet-stream');
  const go = await v.poll(async () => parseStatus(await v.status()), (x) => x?.root === 'go-cpu', { what: 'the pprof file drawn' });
  assert.ok(go.nodes > 5, `nodes ${go.nodes}`);
  const loaded = await v.page.evaluate(() => [typeof wasm_bindgen, typeof embers_file_reader]);
  assert.deepEqual(loaded, ['function', 'function'], 'both modules on the page, each under its own global');
  assert.deepEqual(v.page.workers(), [], 'no worker ran');
  v.assertNoErrors();
});
