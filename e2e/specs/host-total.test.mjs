// The per-host `Total` graph: Total → [p] process → [t] thread.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { openViewer, useServerAndBrowser } from '../lib/fixture.mjs';

const env = useServerAndBrowser();

test('4. the whole-host query draws Total / [p] process / [t] thread', async (t) => {
  const v = await openViewer(t, env);
  const wholeHost = v.el('whole-host');
  assert.ok(await wholeHost.isEnabled(), 'whole host is offered for on-cpu');

  // Whole host is on-CPU only: other events disable (and clear) the checkbox.
  await wholeHost.check();
  assert.ok(await v.el('app-service').isDisabled(), 'the process field is disabled for whole host');
  await v.el('event-type').selectOption('off-cpu');
  await v.page.waitForFunction(() => document.querySelector('[data-testid=whole-host]').disabled);
  assert.equal(await wholeHost.isChecked(), false, 'switching to off-cpu unchecks whole host');
  assert.ok(await v.el('app-service').isEnabled());
  await v.el('event-type').selectOption('on-cpu');
  assert.ok(await wholeHost.isEnabled());

  await v.query({ wholeHost: true });
  const s = await v.waitForGraph();
  assert.equal(v.requests.at(-1).body.app_service, 'Total', 'whole host sends app_service=Total');
  assert.equal(s.root, 'Total');
  assert.equal(s.depth, 2, 'three layers: Total, [p] process, [t] thread');
  assert.equal(s.measure, 'CPU time');

  const bars = await v.bars();
  assert.deepEqual([...new Set(bars.map((b) => b.depth))].sort(), [0, 1, 2]);
  const labelled = (d) => bars.filter((b) => b.depth === d && b.label).map((b) => b.label);
  assert.ok(labelled(1).length >= 3, `process row labels: ${labelled(1)}`);
  assert.ok(labelled(1).every((l) => l.startsWith('[p] ')), `process row labels: ${labelled(1)}`);
  assert.ok(labelled(2).every((l) => l.startsWith('[t] ')), `thread row labels: ${labelled(2)}`);
  for (const proc of ['java', 'redis-server', 'nginx', 'python3', 'postgres']) {
    assert.ok(labelled(1).some((l) => l.startsWith(`[p] ${proc}`)), `[p] ${proc} is drawn`);
  }

  // Hover: row 1 is a process, row 2 a thread.
  const { tip: procTip } = await v.hoverRow(1);
  assert.match(procTip.name, /^\[p\] \S/);
  assert.match(procTip.kind, /depth 1$/);
  const { tip: threadTip } = await v.hoverRow(2);
  assert.match(threadTip.name, /^\[t\] \S/);
  assert.match(threadTip.kind, /depth 2$/);
  assert.deepEqual(threadTip.rows.map((r) => r[0]), ['Total', 'Self']);
  await v.screenshot('host-total');
  v.assertNoErrors();
});
