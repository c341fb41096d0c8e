// Failures: service down, HTTP 400 / 500, malformed bodies; form validation; cancelling.
// After every failure the page must stay usable: a good query draws a graph again.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { openViewer, useServerAndBrowser } from '../lib/fixture.mjs';
import { closedPort, FIXTURES_DIR } from '../lib/server.mjs';

const env = useServerAndBrowser();
const ROUTE = '**/v1/profile/ProfileTracing';
/** Chromium logs every non-2xx answer as "Failed to load resource: ... status of N". */
const failedLoad = (status) => new RegExp(`Failed to load resource: the server responded with a status of ${status}`);

/** Runs a good query and checks that a graph replaces the error. */
async function recovers(v, fields = {}) {
  await v.query({ app: 'redis-server', tagFilter: '', ...fields });
  const s = await v.waitForGraph();
  assert.equal(s.root, 'redis-server');
  assert.equal(await v.errorText(), null, 'the error is gone after a good query');
  assert.equal(await v.el('empty-state').count(), 0);
}

/** Common checks of a failed query; returns the error text. */
async function failed(v) {
  assert.equal(await v.waitForSettled(), 'The last query failed.');
  await v.el('error').waitFor({ state: 'visible' });
  assert.equal(await v.el('error').getAttribute('role'), 'alert');
  assert.match(await v.el('empty-state').textContent(), /No profile to show/);
  assert.equal(await v.el('flame-canvas').count(), 0);
  assert.ok(await v.el('submit').isEnabled());
  assert.ok(await v.el('cancel').isDisabled());
  const text = await v.errorText();
  assert.match(text, /^Query failed\. /);
  return text;
}

test('7a. service down: the error says it could not reach the service', async (t) => {
  const port = await closedPort();
  const base = `http://127.0.0.1:${port}`;
  const v = await openViewer(t, env, { params: { app_service: 'redis-server', base_url: base } });
  await v.waitForRequestsCompleted(1);
  const text = await failed(v);
  assert.ok(text.includes(`Could not reach ${base}/v1/profile/ProfileTracing`), text);
  assert.equal(await v.el('base-url').inputValue(), base);
  await v.screenshot('error-service-down');

  // Back to the page's own origin: the same page works.
  await recovers(v, { baseUrl: '' });
  v.assertNoErrors({ allow: [/ERR_CONNECTION_REFUSED/] });
});

test('7b. HTTP 400 from a bad filter shows the status, OPT_STATUS and position', async (t) => {
  const v = await openViewer(t, env);
  await v.query({ app: 'redis-server', tagFilter: "pod='redis-0' AND nosuchtag='x'" });
  const text = await failed(v);
  assert.match(text, /HTTP 400 INVALID_POST_DATA/);
  assert.match(text, /at character 19 \(byte 18\)/);
  assert.match(text, /unknown tag 'nosuchtag'/);
  await v.screenshot('error-400');

  await recovers(v, { tagFilter: "pod='redis-0'" });
  v.assertNoErrors({ allow: [failedLoad(400)] });
});

test('7c. HTTP 500 from the service shows HTTP 500 FAIL and its description', async (t) => {
  const v = await openViewer(t, env);
  const body = readFileSync(path.join(FIXTURES_DIR, 'error-500-fail', 'response.json'), 'utf8');
  await v.page.route(ROUTE, (route) => route.fulfill({ status: 500, contentType: 'application/json; charset=utf-8', body }));
  await v.query({ app: 'redis-server' });
  const text = await failed(v);
  assert.match(text, /HTTP 500 FAIL/);
  assert.match(text, /Timeout exceeded: elapsed 60\.000412 seconds/);
  await v.screenshot('error-500');

  await v.page.unroute(ROUTE);
  await recovers(v);
  v.assertNoErrors({ allow: [failedLoad(500)] });
});

test('7d. a malformed 200 body is reported as not JSON', async (t) => {
  const v = await openViewer(t, env);
  const body = '{"OPT_STATUS":"SUCCESS","result":';
  await v.page.route(ROUTE, (route) => route.fulfill({ status: 200, contentType: 'application/json', body }));
  await v.query({ app: 'redis-server' });
  const text = await failed(v);
  assert.match(text, /The response \(HTTP 200\) is not JSON/);
  // The start of the body is quoted back (Rust debug quoting).
  assert.ok(text.endsWith(`it starts with: ${JSON.stringify(body)}`), text);

  await v.page.unroute(ROUTE);
  await recovers(v);
  v.assertNoErrors();
});

test('9. validation: start after end is reported next to the field, nothing is sent', async (t) => {
  const v = await openViewer(t, env);
  await v.fillForm({ app: 'redis-server', start: '2026-01-02T10:00:00', end: '2026-01-01T10:00:00' });
  assert.equal(await v.el('time-preset').inputValue(), 'absolute', 'typing a time selects Absolute');
  await v.submit();
  const timeField = v.page.locator('.field', { has: v.el('time-end') });
  const message = timeField.locator('.field-error');
  await message.waitFor({ state: 'visible' });
  assert.equal((await message.textContent()).trim(), 'The end must not be before the start.');
  assert.equal(await message.getAttribute('role'), 'alert');
  // The message sits under the time inputs.
  const [msgBox, endBox] = [await message.boundingBox(), await v.el('time-end').boundingBox()];
  assert.ok(msgBox.y >= endBox.y + endBox.height - 1 && msgBox.y < endBox.y + endBox.height + 30,
    `message at ${JSON.stringify(msgBox)}, end input at ${JSON.stringify(endBox)}`);
  await v.stays(() => v.requests.length, 0, 300, { what: 'the number of requests sent' });
  assert.equal(await v.el('service-list').count(), 1, 'the page stays on every service');
  assert.equal(await v.errorText(), null);
  await v.screenshot('validation');

  // Without a process name the form asks for every service (the home view), not a profile.
  await v.fillForm({ app: '', preset: '3600' });
  await v.submit();
  await v.el('service-list').waitFor();
  assert.equal(v.requests.length, 0, 'no ProfileTracing request');

  // Fixing the fields clears the messages and runs the query.
  await recovers(v, { preset: '3600' });
  assert.equal(await v.page.locator('.field-error').count(), 0);
  v.assertNoErrors();
});

test('10. cancelling a slow query says Cancelled, without an error', async (t) => {
  const v = await openViewer(t, env);
  // The route holds the query until the test has cancelled it, then lets the answer through.
  let release;
  let cancelled;
  const handled = new Promise((resolve) => { release = resolve; });
  const afterCancel = new Promise((resolve) => { cancelled = resolve; });
  await v.page.route(ROUTE, async (route) => {
    await afterCancel;
    // The browser has aborted the request by now; continuing it may fail, which is fine.
    await route.continue().catch(() => {});
    release();
  });
  await v.fillForm({ app: 'redis-server' });
  await v.submit();
  await v.waitForStatus(/^Querying… \d+\.\d s$/u);
  assert.equal(await v.el('status').getAttribute('aria-busy'), 'true');
  assert.ok(await v.el('cancel').isEnabled(), 'cancel is enabled while querying');
  // The request is out (held by the route) before it is cancelled.
  await v.poll(() => v.requests.length, (n) => n === 1, { what: 'the query sent' });
  await v.el('cancel').click();
  assert.equal(await v.waitForStatus(/^Cancelled\.$/), 'Cancelled.');
  assert.equal(await v.errorText(), null);
  assert.match(await v.el('empty-state').textContent(), /Cancelled/);
  assert.ok(await v.el('cancel').isDisabled());
  assert.equal(await v.el('status').getAttribute('aria-busy'), 'false');

  // When the held answer is let through, nothing changes.
  cancelled();
  await handled;
  await v.stays(async () => [await v.status(), await v.errorText()], ['Cancelled.', null], 300,
    { what: 'status and error after the late answer' });

  await v.page.unroute(ROUTE);
  await recovers(v);
  v.assertNoErrors();
});
