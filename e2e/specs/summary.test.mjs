// Export → Summary over the demo data: the text copied for the profile on screen is the one the
// MCP tools write for the same question (summarize_profile, compare_profiles, over POST /mcp of
// the same server), names the profile's hottest function (computed here from the ProfileTracing
// answer), and is downloaded as a .txt file when the clipboard is refused.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { openViewer, useServerAndBrowser } from '../lib/fixture.mjs';

const env = useServerAndBrowser();

/** The demo's regressing function (see server/src/demo/mod.rs). */
const REGRESSION = 'github.com/example/gateway/render.jsonEncodeResponse';

/** The last 20 minutes of the demo, and the 20 before. */
function ranges(server) {
  const end = server.startedAt;
  return { time_start: end - 1200 + 1, time_end: end, before: [end - 2400 + 1, end - 1200] };
}

async function post(server, path, body, headers = {}) {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200, `${path}: ${res.status}`);
  return res.json();
}

/** A tool's text from the server's MCP endpoint (fails on a tool error). */
async function mcp(server, name, args) {
  const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } };
  const answer = await post(server, '/mcp', body, { accept: 'application/json, text/event-stream' });
  assert.notEqual(answer.result?.isError, true, JSON.stringify(answer));
  return answer.result.content[0].text;
}

/** The function with the largest summed self value in a ProfileTracing answer (ties by name). */
async function hottestBySelf(server, request) {
  const nodes = (await post(server, '/v1/profile/ProfileTracing', { ...request, result_shape: 'A' })).result;
  const self = new Map();
  for (const n of nodes) {
    if (n.parent_node_id === '-1') continue;
    self.set(n.profile_location_str, (self.get(n.profile_location_str) ?? 0) + n.self_value);
  }
  return [...self].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0][0];
}

async function openGateway(t, r) {
  const v = await openViewer(t, env, { params: null });
  const done = v.completed;
  await v.goto({ app_service: 'api-gateway', time_start: r.time_start, time_end: r.time_end });
  await v.waitForRequestsCompleted(done + 1);
  await v.waitForGraph();
  return v;
}

/** Clicks Export → Summary and returns what the clipboard then holds. */
async function copySummary(v, server) {
  await v.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  await v.openExportMenu();
  await v.el('export-summary').click();
  await v.el('export-notice').filter({ hasText: 'copied to the clipboard' }).waitFor();
  return v.page.evaluate(() => navigator.clipboard.readText());
}

test('S1. the summary copied is summarize_profile\'s text for the same query and names the hottest function', async (t) => {
  const r = ranges(env.server);
  const v = await openGateway(t, r);
  const copied = await copySummary(v, env.server);
  const request = v.requests.at(-1).body;
  const expected = await mcp(env.server, 'summarize_profile', {
    app_service: 'api-gateway', time_start: r.time_start, time_end: r.time_end,
    event_type: request.profile_event_type, language: request.profile_language_type,
  });
  assert.equal(copied, expected);
  assert.ok(copied.startsWith('api-gateway, on-cpu (eBPF), '), copied.slice(0, 200));
  const hottest = await hottestBySelf(env.server, request);
  const first = copied.split('Hottest functions by self')[1]?.split('\n')[1] ?? '';
  assert.ok(first.startsWith('  1. ') && first.endsWith(`  ${hottest}`), `${hottest} vs ${first}`);
  const lines = copied.split('\n').length - 1;
  await v.el('export-notice').filter({ hasText: `(${lines} lines)` }).waitFor();
  v.assertNoErrors();
});

test('S2. comparing, the summary is compare_profiles\' text: the planted regression grew first', async (t) => {
  const r = ranges(env.server);
  const v = await openGateway(t, r);
  const done = v.completed;
  await v.el('compare-menu').locator('summary').click();
  await v.el('compare-previous').click();
  await v.waitForRequestsCompleted(done + 1);
  await v.el('diff-legend').waitFor();
  const copied = await copySummary(v, env.server);
  const expected = await mcp(env.server, 'compare_profiles', {
    app_service: 'api-gateway', time_start: r.time_start, time_end: r.time_end,
    baseline_time_start: r.before[0], baseline_time_end: r.before[1],
  });
  assert.equal(copied, expected);
  assert.ok(copied.startsWith('Comparing api-gateway, on-cpu (eBPF), '), copied.slice(0, 200));
  const grew = copied.split('\nGrew')[1]?.split('\n')[1] ?? '';
  assert.match(grew, /^\s+1\.\s+\+/);
  assert.ok(grew.includes(`  ${REGRESSION}`), grew);
  v.assertNoErrors();
});

test('S3. a refused clipboard downloads the summary as a .txt file instead, and says so', async (t) => {
  const r = ranges(env.server);
  const v = await openViewer(t, env, { params: null });
  await v.page.addInitScript(() => {
    navigator.clipboard.writeText = () => Promise.reject(new DOMException('refused', 'NotAllowedError'));
  });
  const done = v.completed;
  await v.goto({ app_service: 'api-gateway', time_start: r.time_start, time_end: r.time_end });
  await v.waitForRequestsCompleted(done + 1);
  await v.waitForGraph();
  const file = await v.download('export-summary');
  assert.equal(file.name, 'embers-api-gateway-summary.txt');
  const expected = await mcp(env.server, 'summarize_profile', {
    app_service: 'api-gateway', time_start: r.time_start, time_end: r.time_end,
  });
  assert.equal(file.text, expected);
  await v.el('export-notice').filter({ hasText: 'The clipboard was refused: the summary was downloaded as embers-api-gateway-summary.txt.' }).waitFor();
  v.assertNoErrors();
});
