// The size of Embers' release bundle as a browser downloads it: brotli (quality 11) of every file
// in dist/. The first view is what every page load fetches — the page (index.html, its boot
// script, the wasm-bindgen JS, snippets, the page wasm), the answer decoder worker (loader, JS,
// wasm) and the styles; on demand is what only some pages fetch — the file reader worker
// (pprof, JFR, perf script, pprof export), loaded when a user opens or exports such a file,
// and the secondary views' modules (`*_view.js`, `*_view_bg.wasm`), loaded when one opens.
// Shared by the benchmark (bench/harness.mjs) and the budget check (bench/bundle-size.mjs).

import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants as zlibConstants } from 'node:zlib';

// The target for the first view (page, answer worker, styles), brotli.
export const BUDGET_KB = 300;

// Which part of the bundle a dist/ file belongs to (the workers' files are named by their binaries).
export function partOf(file) {
  if (/\.css$/.test(file)) return 'styles';
  if (/(^|\/)decode_worker/.test(file)) return 'worker';
  if (/(^|\/)file_worker/.test(file)) return 'onDemand';
  // On-demand views (src/on_demand): `<stem>_view.js` and `<stem>_view_bg.wasm`.
  if (isView(file)) return 'onDemand';
  return 'page';
}

// An on-demand view's module file (its bin is named `<name>_view`).
export function isView(file) {
  return /(^|\/)[a-z0-9_]+_view(_bg)?\.(js|wasm)$/.test(file);
}

// The parts every page load fetches.
const FIRST_VIEW = ['page', 'worker', 'styles'];

export function bundleSize(distDir) {
  // Recursive: wasm-bindgen's inline JS lands in snippets/.
  const files = readdirSync(distDir, { recursive: true })
    // Not Trunk's staging directory (.stage/, left behind when a build fails).
    .filter((f) => /\.(wasm|js|css|html)$/.test(f) && !f.startsWith('.'))
    .sort();
  let raw = 0;
  let br = 0;
  const perFile = {};
  const parts = { page: 0, worker: 0, styles: 0, onDemand: 0 };
  for (const f of files) {
    const body = readFileSync(path.join(distDir, f));
    const c = brotliCompressSync(body, {
      params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 11, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: body.length },
    });
    const part = partOf(f);
    perFile[f] = { bytes: body.length, brotli: c.length, part };
    parts[part] += c.length;
    raw += body.length;
    br += c.length;
  }
  const partsKB = Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, v / 1024]));
  const firstView = FIRST_VIEW.reduce((s, k) => s + parts[k], 0);
  // brotliKB is the first view (what the budget and the target are about); allKB adds the
  // on-demand parts.
  return { files: perFile, bytes: raw, brotliBytes: firstView, brotliKB: firstView / 1024, allKB: br / 1024, partsKB };
}
