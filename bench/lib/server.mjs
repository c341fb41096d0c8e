// The benchmark's one HTTP server, on 127.0.0.1 (node's http module, nothing else):
//   /                            Embers' release build (dist/)
//   POST /v1/profile/ProfileTracing   the response body chosen with setProfile() (shape B or A)
//   POST /v1/profile/timeline, /tags, /function_timeline  generated answers (lib/explore.mjs),
//                                     only after setExplore(true)
//   /data/<dir>/<file>           the generated files (bench/data/), for baselines and peers
//   /speedscope/...              speedscope's prebuilt app (node_modules/speedscope/dist/release)
//   /grafana/...                 the esbuild-bundled Grafana flame-graph page (bench/grafana/dist)
// Files are read once and kept in memory, so disk speed never enters a timing.

import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { envelope, functionTimelineAnswer, tagsAnswer, timelineAnswer } from './explore.mjs';

export const BENCH_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const ROOT_DIR = path.resolve(BENCH_DIR, '..');

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.folded': 'text/plain; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.map': 'application/json',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
};

function mounts(distDir) {
  return [
    ['/data/', path.join(BENCH_DIR, 'data')],
    ['/speedscope/', path.join(BENCH_DIR, 'node_modules', 'speedscope', 'dist', 'release')],
    ['/grafana/', path.join(BENCH_DIR, 'grafana', 'dist')],
    ['/', path.resolve(distDir)],
  ];
}

export const PROFILE_PATH = '/v1/profile/ProfileTracing';
const EXPLORE = {
  '/v1/profile/timeline': timelineAnswer,
  '/v1/profile/tags': tagsAnswer,
  '/v1/profile/function_timeline': functionTimelineAnswer,
};

export async function startServer({ port = 0, distDir = path.join(ROOT_DIR, 'dist') } = {}) {
  const MOUNTS = mounts(distDir);
  const cache = new Map();
  let profile = null; // { file, body }
  const requests = [];
  // When held, ProfileTracing answers wait for release() (lets the harness start a profiler
  // after the page booted and before the bytes arrive).
  let held = null;
  // Off: the explore endpoints are not found, as before the timeline step existed, so the
  // render and interaction pages do not draw a strip.
  let explore = false;

  async function load(file) {
    let body = cache.get(file);
    if (!body) {
      body = await readFile(file);
      cache.set(file, body);
    }
    return body;
  }

  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://127.0.0.1');
      if (url.pathname === PROFILE_PATH) {
        if (req.method !== 'POST') {
          res.writeHead(405).end();
          return;
        }
        let reqBody = '';
        for await (const chunk of req) reqBody += chunk;
        requests.push({ url: req.url, body: reqBody });
        if (held) await held.promise;
        if (!profile) {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end('{"OPT_STATUS":"FAIL","DESCRIPTION":"bench server: no profile selected"}');
          return;
        }
        res.writeHead(200, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': profile.body.length,
          'cache-control': 'no-store',
        });
        res.end(profile.body);
        return;
      }
      if (explore && EXPLORE[url.pathname] && req.method === 'POST') {
        let reqBody = '';
        for await (const chunk of req) reqBody += chunk;
        const body = envelope(EXPLORE[url.pathname](JSON.parse(reqBody)));
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
        res.end(body);
        return;
      }
      const mount = MOUNTS.find(([prefix]) => url.pathname.startsWith(prefix));
      let rel = decodeURIComponent(url.pathname.slice(mount[0].length));
      if (rel === '' || rel.endsWith('/')) rel += 'index.html';
      const file = path.resolve(mount[1], rel);
      if (!file.startsWith(mount[1] + path.sep) && file !== mount[1]) {
        res.writeHead(403).end();
        return;
      }
      let st;
      try {
        st = await stat(file);
      } catch {
        if (url.pathname.endsWith('.svg')) {
          // Grafana's UI asks for icon sprites from its own server; an empty icon will do.
          res.writeHead(200, { 'content-type': 'image/svg+xml' }).end('<svg xmlns="http://www.w3.org/2000/svg"/>');
          return;
        }
        res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: ${url.pathname}`);
        return;
      }
      if (!st.isFile()) {
        res.writeHead(404).end();
        return;
      }
      // Embers' own files are served as embers-server serves them (no-cache + Last-Modified,
      // so a page's preloads are reused by its workers after a 304), the rest never cached.
      const lastModified = new Date(Math.floor(st.mtimeMs / 1000) * 1000);
      const embersFile = mount[0] === '/';
      const since = Date.parse(req.headers['if-modified-since'] ?? '');
      if (embersFile && since >= lastModified.getTime()) {
        res.writeHead(304, { 'cache-control': 'no-cache', 'last-modified': lastModified.toUTCString() }).end();
        return;
      }
      const body = await load(file);
      res.writeHead(200, {
        'content-type': MIME[path.extname(file)] ?? 'application/octet-stream',
        'content-length': body.length,
        ...(embersFile ? { 'cache-control': 'no-cache', 'last-modified': lastModified.toUTCString() } : { 'cache-control': 'no-store' }),
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err?.stack ?? err));
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const { port: actual } = server.address();
  return {
    url: `http://127.0.0.1:${actual}`,
    requests,
    /** Chooses the body POST /v1/profile/ProfileTracing answers with (read into memory now). */
    async setProfile(file) {
      profile = { file, body: await load(file) };
    },
    /** Answers the timeline and tags endpoints (with generated data) or not. */
    setExplore(on) {
      explore = on;
    },
    /** Makes the next ProfileTracing answers wait until release(). */
    hold() {
      let release;
      const promise = new Promise((r) => { release = r; });
      held = { promise, release };
    },
    release() {
      held?.release();
      held = null;
    },
    /** Drops cached files (call between sizes so 1M bodies do not pile up). */
    forget() {
      cache.clear();
      profile = null;
    },
    close() {
      server.closeAllConnections?.();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
