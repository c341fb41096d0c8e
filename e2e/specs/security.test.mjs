// The page under its Content-Security-Policy: served with the policy and the other security
// headers, every script a file of the service (Trunk's boot snippet externalised by
// scripts/externalize-boot.mjs), and a session that queries, draws and opens the table causes
// no CSP violation, while an injected inline script is refused (the policy is enforced). And the
// query token: taken from the address, sent to the service, needed there.

import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { openViewer, useServerAndBrowser } from '../lib/fixture.mjs';
import { startServer } from '../lib/server.mjs';
import { Viewer } from '../lib/viewer.mjs';

const env = useServerAndBrowser();

test('S1. the page runs under a CSP without inline script; nothing it does violates it', async (t) => {
  const v = await openViewer(t, env, { params: null });
  await v.context.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__violations.push(`${e.effectiveDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`);
    });
  });
  const response = await v.page.goto(`${env.server.url}/`);
  const headers = response.headers();
  const csp = headers['content-security-policy'];
  assert.match(csp, /(^|; )script-src 'self' 'wasm-unsafe-eval'(;|$)/);
  assert.doesNotMatch(csp, /'unsafe-inline'|'unsafe-eval'/);
  assert.match(csp, /frame-ancestors 'self'$/);
  assert.equal(headers['x-content-type-options'], 'nosniff');
  assert.equal(headers['referrer-policy'], 'same-origin');
  await v.el('query-form').waitFor({ state: 'visible' });

  // Every script element names a file of the service, which is served as JavaScript.
  const scripts = await v.page.evaluate(() => [...document.scripts].map((s) => ({ src: s.src, inline: s.textContent.trim().length })));
  assert.ok(scripts.length >= 1, JSON.stringify(scripts));
  for (const s of scripts) {
    assert.equal(s.inline, 0, `an inline script: ${JSON.stringify(s)}`);
    assert.equal(new URL(s.src).origin, env.server.url);
    const file = await fetch(s.src);
    assert.equal(file.status, 200, s.src);
    assert.match(file.headers.get('content-type'), /javascript/);
    assert.match(new URL(s.src).pathname, /^\/embers-boot-[0-9a-f]{16}\.js$/);
  }

  // A session: a query, the graph, the table, the worker's decode.
  await v.query({ app: 'redis-server' });
  await v.waitForGraph();
  await v.openTable();
  assert.deepEqual(await v.page.evaluate(() => window.__violations), []);

  // The policy is enforced: an inline script the page did not ship does not run.
  await v.page.evaluate(() => {
    const s = document.createElement('script');
    s.textContent = 'window.__ran = true';
    document.body.append(s);
  });
  await v.poll(() => v.page.evaluate(() => window.__violations.length), (n) => n === 1, { what: 'the violation report' });
  assert.equal(await v.page.evaluate(() => window.__ran), undefined, 'the inline script did not run');
  assert.match((await v.page.evaluate(() => window.__violations))[0], /^script-src-elem inline /);
  v.assertNoErrors({ allow: [/Executing inline script violates/] });
});

test('S2. with --query-token-file, the page sends the token from #token= and only then gets answers', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'embers-token-'));
  await writeFile(path.join(dir, 'token'), 'q-s3cret\n');
  const server = await startServer({ extraArgs: ['--query-token-file', path.join(dir, 'token')] });
  t.after(async () => { await server.stop(); await rm(dir, { recursive: true, force: true }); });

  // Without the token: the query is a 401 and the page says what to do.
  const anon = await Viewer.open(env.browser, server);
  t.after(() => anon.close());
  await anon.query({ app: 'redis-server' });
  assert.match(await anon.errorText(), /needs an access token .*#token=<token>/);
  anon.assertNoErrors({ allow: [/status of 401/] });

  // With it: the fragment leaves the address at once, the tab keeps the token, queries carry it.
  const v = await Viewer.open(env.browser, server, { params: null });
  t.after(() => v.close());
  const sent = [];
  v.page.on('request', (r) => { if (r.url().startsWith(server.url)) sent.push({ url: r.url(), auth: r.headers().authorization }); });
  await v.page.goto(`${server.url}/#token=q-s3cret`);
  await v.el('query-form').waitFor({ state: 'visible' });
  assert.equal(new URL(v.page.url()).hash, '', 'the token left the address');
  assert.equal(await v.page.evaluate(() => sessionStorage.getItem('embers.token')), 'q-s3cret');
  await v.query({ app: 'redis-server' });
  assert.equal((await v.waitForGraph()).root, 'redis-server');
  const queries = sent.filter((r) => r.url.includes('/v1/'));
  assert.ok(queries.some((r) => r.url.endsWith('/v1/profile/ProfileTracing')), JSON.stringify(queries));
  assert.ok(queries.every((r) => r.auth === 'Bearer q-s3cret'), JSON.stringify(queries));
  assert.ok(sent.filter((r) => !r.url.includes('/v1/')).every((r) => r.auth === undefined), 'page files go without it');
  v.assertNoErrors();
});
