// Per-file test fixture: one embers-server and one browser per spec file, a fresh browser
// context per test.

import assert from 'node:assert/strict';
import { after, before } from 'node:test';

import { startServer } from './server.mjs';
import { launchBrowser, Viewer } from './viewer.mjs';

/**
 * Registers before/after hooks that start a demo server (options as for startServer) and a
 * browser; returns an object whose `server` and `browser` are set once `before` ran.
 */
export function useServerAndBrowser(serverOptions) {
  const env = { server: null, browser: null };
  before(async () => {
    [env.server, env.browser] = await Promise.all([startServer(serverOptions), launchBrowser()]);
  });
  after(async () => {
    await env.browser?.close();
    await env.server?.stop();
  });
  return env;
}

/** Opens a Viewer for one test; it is closed when the test ends. */
export async function openViewer(t, env, options) {
  const v = await Viewer.open(env.browser, env.server, options);
  t.after(() => v.close());
  return v;
}

/**
 * An absolute time range (Unix s) that covers all the demo data of `server` with a margin:
 * the demo spans the hour before the server started. Using fixed ends makes repeated queries
 * identical.
 */
export function demoRange(server) {
  return { time_start: server.startedAt - 3600 - 120, time_end: server.startedAt + 120 };
}

/** Opens a Viewer on the demo's redis-server profile; returns { v, s } (s: the parsed status). */
export async function openRedis(t, env, options) {
  const v = await openViewer(t, env, options);
  await v.query({ app: 'redis-server' });
  const s = await v.waitForGraph();
  assert.equal(s.root, 'redis-server');
  return { v, s };
}
