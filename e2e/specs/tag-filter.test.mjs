// Tag filters: narrowing a result, quoting, and the condition builder.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { demoRange, openViewer, useServerAndBrowser } from '../lib/fixture.mjs';

const env = useServerAndBrowser();

/** The absolute range, as the datetime-local inputs want it (browser local time). */
async function absoluteFields(v) {
  const { time_start, time_end } = demoRange(env.server);
  const fmt = (secs) => v.page.evaluate((ms) => {
    const d = new Date(ms);
    const p = (n) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
  }, secs * 1000);
  return { preset: 'absolute', start: await fmt(time_start), end: await fmt(time_end) };
}

test('5a. a tag filter narrows the result', async (t) => {
  const v = await openViewer(t, env);
  const range = await absoluteFields(v);

  // nginx runs on node-a and node-b.
  await v.query({ app: 'nginx', tagFilter: '', ...range });
  const all = await v.waitForGraph();
  const body = v.requests.at(-1).body;
  assert.equal(body.time_start, demoRange(env.server).time_start, 'absolute start is sent as given');

  await v.query({ tagFilter: "host='node-a'" });
  const nodeA = await v.waitForGraph();
  assert.equal(v.requests.at(-1).body.tag_filter, "host='node-a'");
  await v.query({ tagFilter: "host='node-b'" });
  const nodeB = await v.waitForGraph();
  await v.query({ tagFilter: "host='node-c'" });
  assert.equal(await v.waitForSettled(), 'No samples in this range.', 'no nginx on node-c');
  assert.match(await v.el('empty-state').textContent(), /No samples in this range/);
  assert.equal(await v.errorText(), null);

  for (const [name, part] of [['node-a', nodeA], ['node-b', nodeB]]) {
    assert.equal(part.root, 'nginx');
    assert.ok(part.value < all.value * 0.8, `${name}: ${part.valueText} is not smaller than ${all.valueText}`);
    assert.ok(part.nodes <= all.nodes, `${name}: ${part.nodes} nodes > ${all.nodes}`);
  }
  // The two hosts make up the whole (3 significant digits in the status line).
  const sum = nodeA.value + nodeB.value;
  assert.ok(Math.abs(sum - all.value) / all.value < 0.01, `${nodeA.valueText} + ${nodeB.valueText} ≠ ${all.valueText}`);

  // Negation and AND work too.
  await v.query({ tagFilter: "host!='node-a' AND pod_ns='ingress-nginx'" });
  const notA = await v.waitForGraph();
  assert.equal(notA.valueText, nodeB.valueText);
  v.assertNoErrors();
});

test('5b. a filter value with a single quote works', async (t) => {
  const v = await openViewer(t, env);
  const range = await absoluteFields(v);

  // The java pod lives in namespace team-o'brien (and is the only java process).
  await v.query({ app: 'java', tagFilter: '', ...range });
  const all = await v.waitForGraph();

  const quoted = "pod_ns='team-o\\'brien'";
  await v.query({ tagFilter: quoted }, { submit: 'enter' });
  const filtered = await v.waitForGraph();
  assert.equal(v.requests.at(-1).body.tag_filter, quoted);
  assert.equal(await v.errorText(), null);
  assert.equal(filtered.root, 'java');
  assert.equal(filtered.valueText, all.valueText, 'every java sample is in team-o\'brien');
  assert.equal(filtered.nodes, all.nodes);

  // Without the quote nothing matches (the quote really is part of the value).
  await v.query({ tagFilter: "pod_ns='team-obrien'" });
  assert.equal(await v.waitForSettled(), 'No samples in this range.');

  // The condition builder quotes for us: name pod_ns, value team-o'brien.
  await v.el('tag-filter').fill('');
  await v.el('add-tag').click();
  const row = v.page.getByTestId('tag-row');
  await row.getByTestId('tag-name').fill('pod_ns');
  await row.getByTestId('tag-value').fill("team-o'brien");
  assert.equal(await v.el('tag-filter').inputValue(), quoted);
  await v.query({});
  const built = await v.waitForGraph();
  assert.equal(v.requests.at(-1).body.tag_filter, quoted);
  assert.equal(built.valueText, all.valueText);

  // ≠ in the builder excludes the namespace: nothing left.
  await row.getByTestId('tag-op').selectOption('!=');
  assert.equal(await v.el('tag-filter').inputValue(), "pod_ns!='team-o\\'brien'");
  await v.query({});
  assert.equal(await v.waitForSettled(), 'No samples in this range.');

  // A backslash is escaped too (matches nothing, but must not be a syntax error).
  await row.getByTestId('tag-op').selectOption('=');
  await row.getByTestId('tag-value').fill('a\\b');
  assert.equal(await v.el('tag-filter').inputValue(), "pod_ns='a\\\\b'");
  await v.query({});
  assert.equal(await v.waitForSettled(), 'No samples in this range.');
  assert.equal(await v.errorText(), null);
  v.assertNoErrors();
});
