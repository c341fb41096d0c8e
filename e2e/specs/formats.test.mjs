// Other profilers' files in the viewer: a real Go CPU profile (runtime/pprof, gzipped) opened
// with the file picker, a real `perf script` capture dropped on the page and a real JFR
// recording (OpenJDK 17) are read by the file reader worker and drawn; Export → pprof of the
// profile on screen (a noise-control step applied) reads back to the same graph. The file reader
// is fetched only when a file is opened (never by a page that only queries).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { openViewer, useServerAndBrowser } from '../lib/fixture.mjs';
import { parseStatus } from '../lib/viewer.mjs';

const env = useServerAndBrowser();
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const GO_CPU = readFileSync(path.join(ROOT, 'model/tests/data/pprof/go-cpu.pb.gz'));
const PERF = readFileSync(path.join(ROOT, 'server/tests/data/perf/workload-g.txt'));
const JFR = readFileSync(path.join(ROOT, 'model/tests/data/jfr/workload.jfr.gz'));

/** The status fields a round trip keeps (not the decode time). */
const essentials = (s) => ({ nodes: s.nodes, functions: s.functions, depth: s.depth, valueText: s.valueText });

/** Drops a file on the page, as a user dragging it from their desktop. */
async function dropFile(v, name, buffer) {
  const transfer = await v.page.evaluateHandle(({ name, bytes }) => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(bytes)], name));
    return dt;
  }, { name, bytes: [...buffer] });
  await v.page.dispatchEvent('body', 'drop', { dataTransfer: transfer });
}

/** Waits for a graph rooted at `root` and returns its parsed status. */
async function graphOf(v, root) {
  const s = await v.poll(async () => parseStatus(await v.status()), (x) => x?.root === root, { what: `${root} drawn`, timeout: 20_000 });
  await v.waitForCanvasStable();
  return s;
}

test('F1. a Go pprof file and a perf script capture open as graphs; Export → pprof reads back', async (t) => {
  const v = await openViewer(t, env);

  // The picker: a gzipped pprof, gunzipped in the worker by the browser's DecompressionStream.
  await v.importFile('go-cpu.pb.gz', GO_CPU, 'application/octet-stream');
  const go = await graphOf(v, 'go-cpu');
  assert.match(go.valueText, /^[\d,]+ samples$/, 'Go CPU is counted in samples, as DeepFlow stores cpu');
  assert.equal((await v.el('server-notice').textContent()).trim(), 'pprof sample type samples/count');
  assert.ok((await v.labels()).some((l) => l.startsWith('main.hotLoop')), 'the hot function is drawn');
  assert.equal(v.requests.length, 0, 'opening a file sends no query');

  // A drop: perf script of a real workload, processes under Total, threads, kernel frames.
  await dropFile(v, 'workload.perf', PERF);
  const perf = await graphOf(v, 'Total');
  assert.ok(perf.nodes > 100, `${perf.nodes} nodes`);
  const labels = await v.labels();
  for (const layer of ['[p] gzip', '[p] python3']) {
    assert.ok(labels.some((l) => l.startsWith(layer)), `${layer} drawn: ${labels.slice(0, 20)}`);
  }

  // Export → pprof of what is on screen (threads folded away), and back.
  await v.redrawAfter(() => v.addNoise('threads'));
  const shown = parseStatus(await v.status());
  assert.ok(shown.nodes < perf.nodes, 'the step removed the thread layer');
  const file = await v.download('export-pprof');
  assert.equal(file.name, 'embers-Total.pprof');
  assert.equal(file.buffer[0], 0x0a, 'a profile.proto message');
  await v.importFile('exported.pprof', file.buffer, 'application/octet-stream');
  const back = await v.poll(async () => parseStatus(await v.status()), (x) => x?.root === 'Total' && x.nodes === shown.nodes,
    { what: 'the pprof export read back' });
  assert.deepEqual(essentials(back), essentials(shown));
  assert.ok(!(await v.labels()).some((l) => l.startsWith('[t] ')), 'no thread layer in the export');
  v.assertNoErrors();
});

test('F2. a broken pprof file is a named error, and the page keeps working', async (t) => {
  const v = await openViewer(t, env);
  await v.importFile('cut.pb.gz', GO_CPU.subarray(0, 60), 'application/octet-stream');
  await v.el('error').waitFor({ state: 'visible' });
  assert.match(await v.errorText(), /Could not import cut\.pb\.gz: the file is not valid gzip/);
  await v.importFile('go-cpu.pb.gz', GO_CPU, 'application/octet-stream');
  await graphOf(v, 'go-cpu');
  v.assertNoErrors({ allow: [/not valid gzip/] });
});

test('F3. a JFR recording opens as its CPU samples, threads and Java frames drawn', async (t) => {
  const v = await openViewer(t, env);
  await v.importFile('workload.jfr.gz', JFR, 'application/octet-stream');
  const jfr = await graphOf(v, 'workload');
  // The JDK's own reader counts 369 execution samples in this file (workload.expected.tsv).
  assert.equal(jfr.valueText, '369 samples');
  const notice = (await v.el('server-notice').textContent()).trim();
  // cpu, alloc_in_new_tlab_{objects,bytes}, alloc_outside_tlab_{objects,bytes}, alloc_space, lock_{count,duration}.
  assert.equal(notice, 'JFR cpu, one of 8 event types in the file');
  const labels = await v.labels();
  for (const name of ['[t] main', 'Workload.hot', 'Workload.warm']) {
    assert.ok(labels.some((l) => l.startsWith(name)), `${name} drawn: ${labels.slice(0, 30)}`);
  }
  await v.screenshot('formats-jfr');
  v.assertNoErrors();
});

test('F4. the file reader loads only when a file is opened: a query page never asks for it; the first file shows a note while it loads', async (t) => {
  const v = await openViewer(t, env, { params: null });
  const fileReader = [];
  v.page.context().on('request', (r) => {
    if (/file_worker/.test(r.url())) fileReader.push(new URL(r.url()).pathname);
  });
  // The file reader's loader is held until the page has said it waits for it.
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  await v.page.context().route('**/file_worker_loader.js', async (route) => {
    await held;
    await route.continue();
  });
  await v.goto({ app_service: 'redis-server' });
  const s = await v.waitForGraph();
  assert.equal(s.root, 'redis-server');
  const workers = () => v.page.workers().map((w) => new URL(w.url()).pathname);
  assert.deepEqual(workers(), ['/decode_worker_loader.js'], 'the answer decoder alone runs on a query page');
  assert.deepEqual(fileReader, [], 'a query page never asks for the file reader');

  await v.importFile('go-cpu.pb.gz', GO_CPU, 'application/octet-stream');
  await v.waitForStatus(/^Loading the file reader \(pprof, JFR, perf script\)… /u);
  release();
  const go = await graphOf(v, 'go-cpu');
  assert.match(go.valueText, /samples$/);
  assert.ok(fileReader.includes('/file_worker_loader.js'), `the loader was fetched: ${fileReader}`);
  assert.ok(workers().includes('/file_worker_loader.js'), `the file reader runs: ${workers()}`);

  // Kept for the next file: no second load, and no note about loading.
  const fetched = fileReader.length;
  await dropFile(v, 'workload.perf', PERF);
  await graphOf(v, 'Total');
  assert.equal(fileReader.length, fetched, `nothing fetched again: ${fileReader}`);
  assert.equal(workers().filter((w) => w === '/file_worker_loader.js').length, 1, 'one file reader');
  v.assertNoErrors();
});
