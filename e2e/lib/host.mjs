// A second web site on loopback for the embedding tests: a portal page that frames the viewer
// (at /host.html?src=<viewer address>), and, when given a directory, a static deployment of the
// viewer (its files plus an embers-config.json), served without any security headers.

import { readFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.json': 'application/json' };

/** The portal page: frames `src` and records every message posted to it in `window.got`. */
function hostPage(src) {
  const attr = src.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
  return `<!doctype html><html><head><link rel="icon" href="data:,"></head><body style="margin:0;font:14px sans-serif">
  <h1 style="font-size:16px;margin:4px 8px">Host page</h1>
  <iframe data-testid="host-iframe" src="${attr}" style="width:1200px;height:640px;border:1px solid #888"></iframe>
  <script>
    window.got = [];
    window.addEventListener('message', (e) => {
      const f = document.querySelector('iframe');
      window.got.push({ data: e.data, origin: e.origin, fromFrame: e.source === f.contentWindow });
    });
  </script></body></html>`;
}

async function answer(req, res, { staticDir, embedConfig }) {
  const url = new URL(req.url, 'http://x');
  if (url.pathname === '/host.html') {
    res.writeHead(200, { 'content-type': 'text/html' }).end(hostPage(url.searchParams.get('src') ?? ''));
    return;
  }
  if (staticDir && url.pathname === '/embers-config.json') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(embedConfig ?? {}));
    return;
  }
  if (staticDir && !url.pathname.includes('..')) {
    const file = path.join(staticDir, url.pathname === '/' ? 'index.html' : url.pathname);
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' }).end(body);
      return;
    } catch {
      // Falls through to the 404.
    }
  }
  res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
}

/**
 * Starts a site on 127.0.0.1 (a port of its own, so an origin of its own). Options: `staticDir`
 * (serve the viewer from there) and `embedConfig` (its embers-config.json). Returns
 * { origin, hostUrl(src), close() }.
 */
export async function startSite({ staticDir, embedConfig } = {}) {
  const server = http.createServer((req, res) => {
    answer(req, res, { staticDir, embedConfig }).catch(() => res.destroy());
  });
  await new Promise((resolve, reject) => server.listen(0, '127.0.0.1', resolve).once('error', reject));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    origin,
    hostUrl: (src) => `${origin}/host.html?src=${encodeURIComponent(src)}`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}
