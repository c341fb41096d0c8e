// Embedding in a portal: the portal is a page of another origin (a second web site on loopback)
// listed with --embed-origin; it drives the viewer with postMessage and hears back. A page of an
// origin not on the list gets nothing: the service's frame-ancestors keeps the viewer out of its
// frames, and a static deployment (no such header) ignores it and posts nothing to it.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { demoRange } from '../lib/fixture.mjs';
import { startSite } from '../lib/host.mjs';
import { DIST_DIR, startServer } from '../lib/server.mjs';
import { launchBrowser, Viewer } from '../lib/viewer.mjs';

const env = { server: null, browser: null, portal: null, stranger: null };

before(async () => {
  [env.portal, env.stranger, env.browser] = await Promise.all([startSite(), startSite(), launchBrowser()]);
  env.server = await startServer({ extraArgs: ['--embed-origin', env.portal.origin] });
});
after(async () => {
  await env.browser?.close();
  await env.server?.stop();
  await env.portal?.close();
  await env.stranger?.close();
});

async function embedded(t, host, options) {
  const v = await Viewer.openEmbedded(env.browser, env.server, host, options);
  t.after(() => v.close());
  return v;
}

test('A9. embedded in a listed portal: no form; the portal drives it with postMessage and hears back', async (t) => {
  const page = await fetch(`${env.server.url}/`);
  assert.match(page.headers.get('content-security-policy'), new RegExp(`frame-ancestors 'self' ${env.portal.origin}$`));
  const config = await (await fetch(`${env.server.url}/embers-config.json`)).json();
  assert.deepEqual(config, { embed_origins: [env.portal.origin] });

  const v = await embedded(t, env.portal);
  const ready = await v.waitForHostMessage('embers:ready');
  assert.ok(ready.fromFrame);
  assert.equal(ready.origin, env.server.url, 'the portal hears the viewer, another origin');
  assert.notEqual(new URL(v.page.url()).origin, env.server.url);
  assert.equal(await v.el('query-form').count(), 0, 'no query form when embedded');
  assert.equal(await v.frame.locator('.app.embedded').count(), 1);
  assert.equal(await v.status(), 'Ready.');

  // A query from the portal runs in the frame and is reported back.
  let n = (await v.hostMessages()).length;
  const request = { app_service: 'nginx', profile_language_type: 'eBPF', profile_event_type: 'on-cpu', ...demoRange(env.server) };
  await v.hostPost({ type: 'embers:query', request });
  const loaded = await v.waitForHostMessage('embers:loaded', { after: n });
  assert.ok(loaded.fromFrame);
  assert.equal(loaded.data.app_service, 'nginx');
  assert.ok(loaded.data.nodes > 0 && loaded.data.root_total > 0, JSON.stringify(loaded.data));
  const s = await v.waitForGraph();
  assert.equal(s.root, 'nginx');
  assert.equal(s.nodes, loaded.data.nodes, 'the frame shows what it reported');
  assert.equal(v.requests.length, 1);
  assert.equal(v.requests[0].body.app_service, 'nginx');
  const frameUrl = new URL(v.frame.url());
  assert.equal(frameUrl.searchParams.get('embed'), '1', 'the frame URL keeps embed=1');
  assert.equal(frameUrl.searchParams.get('app_service'), 'nginx');
  assert.ok((await v.el('analysis-bar').count()) === 1, 'the analysis bar is there');
  await v.screenshot('embed');

  // A result the portal already has: folded stacks.
  n = (await v.hostMessages()).length;
  await v.hostPost({ type: 'embers:load', body: 'main;a 1\nmain;b 2' });
  const folded = await v.waitForHostMessage('embers:loaded', { after: n });
  assert.deepEqual(folded.data, { type: 'embers:loaded', app_service: 'embedded', nodes: 4, root_total: 3 });
  const f = await v.waitForGraph();
  assert.equal(f.nodes, 4);
  assert.equal(f.depth, 2);
  assert.deepEqual(await v.labels(), ['embedded (100%)', 'main (100%)', 'a (33.3%)', 'b (66.7%)']);

  // Clicking a bar tells the portal which frame was picked.
  n = (await v.hostMessages()).length;
  await v.clickBar(await v.findBar(2, { label: /^b / }));
  const select = await v.waitForHostMessage('embers:select', { after: n });
  assert.deepEqual(select.data, { type: 'embers:select', name: 'b', path: ['main', 'b'], total: 2, self: 2, depth: 2 });

  // A name for the root of folded stacks.
  n = (await v.hostMessages()).length;
  await v.hostPost({ type: 'embers:load', body: 'x;y 5\n', name: 'my-app.folded' });
  assert.equal((await v.waitForHostMessage('embers:loaded', { after: n })).data.app_service, 'my-app');
  assert.equal((await v.waitForGraph()).root, 'my-app');

  // Messages that are not from the parent, or not for us, are ignored: each is followed by a
  // command that is answered, and the answers come in order.
  const before = await v.statusCore();
  n = (await v.hostMessages()).length;
  await v.frame.evaluate(() => window.postMessage({ type: 'embers:load', body: 'evil;z 9' }, '*'));
  await v.hostPost({ type: 'something-else', body: 'q;r 1' });
  await v.hostPost('just a string');
  await v.hostPost({ type: 'embers:load', body: 'x;y 5\n', name: 'my-app.folded' });
  const again = await v.waitForHostMessage('embers:loaded', { after: n });
  assert.equal(again.data.app_service, 'my-app');
  assert.equal((await v.hostMessages()).length, n + 1, 'only the last command was answered');
  assert.equal(await v.statusCore(), before, 'the same graph: the others were ignored');
  assert.ok(!(await v.labels()).some((l) => /^(evil|q)\b/.test(l)), 'nothing of the ignored bodies');

  // A bad body is an error for the portal, and the frame stays usable.
  n = (await v.hostMessages()).length;
  await v.hostPost({ type: 'embers:load', body: '{"OPT_STATUS":' });
  const error = await v.waitForHostMessage('embers:error', { after: n });
  assert.match(error.data.message, /^Could not import embedded\.json: /);
  assert.match(await v.errorText(), /Could not import embedded\.json/);
  n = (await v.hostMessages()).length;
  await v.hostPost({ type: 'embers:query', request });
  await v.waitForHostMessage('embers:loaded', { after: n });
  assert.equal((await v.waitForGraph()).root, 'nginx');
  assert.equal(await v.errorText(), null);
  const types = (await v.hostMessages()).map((m) => m.data.type);
  assert.equal(types.filter((x) => x === 'embers:ready').length, 1, `messages: ${types}`);
  assert.ok((await v.hostMessages()).every((m) => m.fromFrame && m.origin === env.server.url));
  v.assertNoErrors();
});

test('A9d. the portal opens a trace\'s profile by its trace_id, without naming the process', async (t) => {
  const at = env.server.startedAt - 90;
  for (const [trace, folded] of [['a1b2c3d4e5f60718', 'main;checkout.flow;price 400\n'], ['ffeeddccbbaa9988', 'main;other 900\n']]) {
    const q = new URLSearchParams({ app_service: 'traced-svc', profile_event_type: 'on-cpu', time: String(at), trace_id: trace });
    const res = await fetch(`${env.server.url}/v1/profile/ingest?${q}`, { method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: folded });
    assert.equal(res.status, 200, await res.text());
  }
  const v = await embedded(t, env.portal);
  await v.waitForHostMessage('embers:ready');
  const n = (await v.hostMessages()).length;
  const request = { profile_language_type: 'eBPF', profile_event_type: 'on-cpu', time_start: at - 30, time_end: at + 30 };
  await v.hostPost({ type: 'embers:query', request, trace_id: 'a1b2c3d4e5f60718' });
  const loaded = await v.waitForHostMessage('embers:loaded', { after: n });
  assert.equal(loaded.data.app_service, 'traced-svc');
  assert.equal(loaded.data.root_total, 400, 'that trace\'s samples only');
  assert.equal(v.requests.at(-1).body.tag_filter, "trace_id='a1b2c3d4e5f60718'");
  v.assertNoErrors();
});

test('A9b. a page not on the list gets nothing: the service refuses the frame', async (t) => {
  const v = await embedded(t, env.stranger);
  const refusal = await v.poll(async () => v.errors.find((e) => /frame-ancestors/.test(e)), Boolean,
    { what: 'a frame-ancestors refusal' });
  assert.match(refusal, new RegExp(`frame-ancestors 'self' ${env.portal.origin}`));
  await v.hostPost({ type: 'embers:load', body: 'main;a 1' });
  assert.equal(await v.el('status').count(), 0, 'no viewer in the frame');
  assert.deepEqual(await v.hostMessages(), [], 'nothing posted to the page');
  v.assertNoErrors({ allow: [/frame-ancestors/] });
});

test('A9c. a static deployment (no frame-ancestors) ignores a page not in its embers-config.json', async (t) => {
  const viewer = await startSite({ staticDir: DIST_DIR, embedConfig: { embed_origins: [env.portal.origin] } });
  t.after(() => viewer.close());
  const src = `${viewer.origin}/?embed=1`;
  const body = 'main;a 1\nmain;b 2';

  // The listed portal drives it, as from the service.
  const ok = await embedded(t, env.portal, { src });
  await ok.waitForHostMessage('embers:ready');
  await ok.hostPost({ type: 'embers:load', body });
  assert.equal((await ok.waitForHostMessage('embers:loaded')).data.nodes, 4);

  // Another page frames the same viewer: the viewer says why on the console and never listens.
  const v = await embedded(t, env.stranger, { src });
  const ignored = await v.poll(async () => v.warnings.find((w) => w.includes('is not in embed_origins')), Boolean,
    { timeout: 20_000, what: 'the viewer ignoring its host' });
  assert.ok(ignored.includes(`(${env.stranger.origin})`), ignored);
  assert.equal(await v.status(), 'Ready.');
  // A command reaches the frame (a listener of the test's own sees it) and changes nothing.
  await v.frame.evaluate(() => {
    window.seen = 0;
    window.addEventListener('message', () => { window.seen += 1; });
  });
  await v.hostPost({ type: 'embers:load', body });
  await v.poll(() => v.frame.evaluate(() => window.seen), (x) => x === 1, { what: 'the command delivered' });
  await v.settle();
  assert.equal(await v.status(), 'Ready.', 'nothing loaded');
  assert.equal(await v.el('flame-canvas').count(), 0);
  assert.deepEqual(await v.hostMessages(), [], 'nothing posted to the page');
  v.assertNoErrors();
});
