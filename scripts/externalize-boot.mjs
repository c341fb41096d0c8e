#!/usr/bin/env node
// Trunk post_build hook (see Trunk.toml): moves the inline module script Trunk writes into
// index.html (the few lines that load the page's wasm), preceded by boot-worker.js (which
// starts the decode worker before that wasm loads), into a content-hashed file next to it,
// so the page runs under a Content-Security-Policy without 'unsafe-inline'
// (`script-src 'self' 'wasm-unsafe-eval'`, sent by embers-server). The file is named
// `embers-boot-<16 hex>.js`, so the server caches it like Trunk's own hashed files.
//
// It also writes the two workers' loaders (index.html builds them without Trunk's loader
// shim): each asks for its wasm before its script, so both download at once (Trunk's shim
// fetched the wasm only after the script had run), and a wasm that fails to load fails the
// worker at once (an error the page sees) instead of leaving it silent until the page's start
// timeout. And it renames the file reader's global (`wasm_bindgen` in wasm-bindgen's
// no-modules output, as the answer decoder's is) to `embers_file_reader`, so that where no
// worker can run both modules can be loaded into the page side by side.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

function fail(message) {
  console.error(`externalize-boot: ${message}`);
  process.exit(1);
}

const staging = process.env.TRUNK_STAGING_DIR;
if (!staging) fail('TRUNK_STAGING_DIR is not set: this runs as a Trunk post_build hook');
const base = (process.env.TRUNK_PUBLIC_URL || '/').replace(/\/?$/, '/');
const htmlPath = path.join(staging, 'index.html');
let html;
try {
  html = readFileSync(htmlPath, 'utf8');
} catch (e) {
  fail(`cannot read ${htmlPath}: ${e.message}`);
}

// Starts the decode worker first thing (see boot-worker.js).
// Its whole-line comments are for readers of this repository, not bytes every page load fetches.
const bootWorker = readFileSync(new URL('./boot-worker.js', import.meta.url), 'utf8')
  .replace(/^[ \t]*\/\/.*\n/gm, '');

let moved = 0;
html = html.replace(/<script type="module"([^>]*)>([\s\S]*?)<\/script>/g, (whole, attrs, inline) => {
  if (/\bsrc\s*=/.test(attrs)) return whole;
  const code = `${bootWorker}\n${inline}`;
  const name = `embers-boot-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.js`;
  writeFileSync(path.join(staging, name), code);
  const integrity = `sha384-${createHash('sha384').update(code).digest('base64')}`;
  moved += 1;
  return `<script type="module"${attrs} src="${base}${name}" integrity="${integrity}" crossorigin="anonymous"></script>`;
});
// Trunk always writes one; none means its output changed and the page would not boot.
if (moved === 0) fail(`no inline module script in ${htmlPath}: has Trunk's output changed?`);
writeFileSync(htmlPath, html);
console.log(`externalize-boot: moved ${moved} inline module script(s) out of index.html`);

// The file reader's global, renamed (see the header); src/net/decode_worker/page.rs looks it up.
const FILE_READER_GLOBAL = 'embers_file_reader';
const fileReader = path.join(staging, 'file_worker.js');
let readerJs;
try {
  readerJs = readFileSync(fileReader, 'utf8');
} catch (e) {
  fail(`cannot read ${fileReader}: ${e.message}`);
}
const declaration = /^let wasm_bindgen = /;
if (!declaration.test(readerJs)) fail(`${fileReader} does not start with \`let wasm_bindgen = \`: has wasm-bindgen's output changed?`);
writeFileSync(fileReader, readerJs.replace(declaration, `let ${FILE_READER_GLOBAL} = `));

const loader = (bin, global) => [
  `const wasm = fetch('./${bin}_bg.wasm');`,
  `importScripts('./${bin}.js');`,
  // Thrown from a task, a failure reaches the page's worker.onerror.
  `${global}({ module_or_path: wasm }).catch((e) => setTimeout(() => { throw e; }));`,
  '',
].join('\n');
writeFileSync(path.join(staging, 'decode_worker_loader.js'), loader('decode_worker', 'wasm_bindgen'));
writeFileSync(path.join(staging, 'file_worker_loader.js'), loader('file_worker', FILE_READER_GLOBAL));
console.log('externalize-boot: wrote the two workers\' loaders');
