// In-use memory in the real page (issue 38): two Go heap uploads of one process, five minutes
// apart, read as the latest snapshot ("live at <time>", not the sum over the range); the event
// list offers a memory event type only when the range has data of it; and comparing the two
// snapshots (the leak hunt) shows what grew.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { openViewer, useServerAndBrowser } from '../lib/fixture.mjs';
import { labelShows } from '../lib/viewer.mjs';

const env = useServerAndBrowser();

const MiB = 1024 * 1024;
const APP = 'heap-demo';
const LEAK = 'main.(*Cache).Fill';

/** The two uploads: the cache grows from 1 to 4 MiB, the buffers stay at 512 KiB. */
function uploads(server) {
  const first = server.startedAt - 600;
  const second = server.startedAt - 300;
  const upload = (time, cache) => ({
    app_service: APP, profile_language_type: 'Golang', profile_event_type: 'inuse_space',
    profile_value_unit: 'bytes', time, tags: { host: 'node-a' },
    folded: `main.main;${LEAK} ${cache}\nmain.main;main.readBuffers ${MiB / 2}\n`,
  });
  return { first, second, batches: [upload(first, MiB), upload(second, 4 * MiB)] };
}

async function ingest(server) {
  const u = uploads(server);
  const res = await fetch(`${server.url}/v1/profile/ingest`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ batches: u.batches }),
  });
  assert.equal(res.status, 200, await res.text());
  return u;
}

/** The page on the heap profile over `[start, end]`. */
async function openHeap(t, start, end) {
  const v = await openViewer(t, env, { params: null });
  const done = v.completed;
  await v.goto({ app_service: APP, profile_language_type: 'Golang', profile_event_type: 'inuse_space', time_start: start, time_end: end });
  await v.waitForRequestsCompleted(done + 1);
  return { v, s: await v.waitForGraph() };
}

let stored;

test('M1. two uploads over a range read as the latest one, live at the range\'s end', async (t) => {
  stored ??= await ingest(env.server);
  const end = env.server.startedAt;
  const { v, s } = await openHeap(t, stored.first - 60, end);
  // 4 MiB + 512 KiB live at the end, not 1 + 4 + 2 × 0.5 MiB summed.
  assert.equal(s.value, 4.5 * MiB, s.valueText);
  const when = new Date(end * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/u, '');
  assert.equal(s.measure, `live at ${when} UTC`);
  assert.doesNotMatch(await v.status(), /over the range|bytes in use/u);

  // The event list: the heap's type and the demo's mem-alloc, no memory type without data.
  const options = () => v.el('event-type').locator('option').evaluateAll((os) => os.map((o) => o.value));
  const listed = await v.poll(options, (o) => o.includes('mem-alloc'), { what: 'the event types in range' });
  assert.ok(listed.includes('inuse_space'), listed.join());
  for (const absent of ['mem-inuse', 'hbm-alloc', 'hbm-inuse']) {
    assert.ok(!listed.includes(absent), `${absent} has no data: ${listed.join()}`);
  }
  assert.equal(await v.el('event-type').inputValue(), 'inuse_space');
  await v.screenshot('in-use');
  v.assertNoErrors();
});

test('M2. the snapshot against the one five minutes before: the growing cache is red and first', async (t) => {
  stored ??= await ingest(env.server);
  // Five minutes ending just after the second upload; the previous five hold only the first.
  const end = stored.second + 150;
  const { v } = await openHeap(t, end - 299, end);
  const done = v.completed;
  await v.el('compare-menu').locator('summary').click();
  await v.el('compare-previous').click();
  await v.waitForRequestsCompleted(done + 1);
  await v.el('diff-legend').waitFor();
  const s = await v.waitForGraph();
  assert.equal(s.value, 4.5 * MiB, 'the comparison is the second snapshot');
  assert.match(await v.status(), /4\.5 MiB live at [^(]+ UTC \(baseline 1\.5 MiB\)/u);
  const bar = (await v.bars()).find((b) => labelShows(b.label, LEAK));
  assert.ok(bar, 'the leak has a labelled bar');
  const tip = await v.hoverBar(bar);
  assert.deepEqual(tip.rows.slice(0, 3).map(([k]) => k), ['Baseline', 'Comparison', 'Change']);
  assert.match(tip.rows[2][1], /^\+[\d.]+ pp · \+\d+%$/u, 'the cache grew');
  await v.screenshot('in-use-compare');
  v.assertNoErrors();
});
