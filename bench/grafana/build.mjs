// Bundles the Grafana flame-graph page (main.jsx → dist/main.js, index.html → dist/) with esbuild.
import { build } from 'esbuild';
import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.join(here, 'dist');
await mkdir(out, { recursive: true });
const result = await build({
  entryPoints: [path.join(here, 'main.jsx')],
  bundle: true,
  minify: process.env.GRAFANA_DEV ? false : true,
  format: 'iife',
  target: 'chrome120',
  outfile: path.join(out, 'main.js'),
  jsx: 'automatic',
  define: { 'process.env.NODE_ENV': process.env.GRAFANA_DEV ? '"development"' : '"production"', global: 'globalThis' },
  alias: { '@grafana/assistant': path.join(here, 'assistant-stub.js') },
  loader: { '.svg': 'text', '.png': 'dataurl', '.woff': 'dataurl', '.woff2': 'dataurl', '.ttf': 'dataurl' },
  logLevel: 'warning',
  metafile: true,
});
await copyFile(path.join(here, 'index.html'), path.join(out, 'index.html'));
const bytes = Object.values(result.metafile.outputs).reduce((s, o) => s + o.bytes, 0);
console.log(`grafana page bundled: ${(bytes / 1024).toFixed(0)} KiB → ${path.relative(process.cwd(), out)}`);
