#!/usr/bin/env node
// Checks the release bundle's size against a budget: prints every file's brotli size, the first
// view's parts (page / answer worker / styles) and the on-demand modules (the file reader, the
// secondary views) apart, and exits 1 when the first view is over the budget (so a change that grows it fails scripts/test.sh
// instead of being noticed in a benchmark run later).
//
//   node bench/bundle-size.mjs [--dist DIR] [--max-kb N]
//
// --max-kb defaults to the ceiling in bench/bundle-budget.txt (the bundle as last measured plus a
// little room, ratcheted down as it shrinks); the target is BUDGET_KB in lib/bundle.mjs.

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { BUDGET_KB, bundleSize } from './lib/bundle.mjs';
import { BENCH_DIR, ROOT_DIR } from './lib/server.mjs';

function parseArgs(argv) {
  const a = { dist: path.join(ROOT_DIR, 'dist'), maxKB: null };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    if (argv[i] === '--dist' && v) (a.dist = v), i++;
    else if (argv[i] === '--max-kb' && Number(v) > 0) (a.maxKB = Number(v)), i++;
    else throw new Error(`unknown or incomplete argument ${argv[i]} (usage: --dist DIR --max-kb N)`);
  }
  if (a.maxKB == null) {
    const text = readFileSync(path.join(BENCH_DIR, 'bundle-budget.txt'), 'utf8');
    const line = text.split('\n').find((l) => /^\s*\d+(\.\d+)?\s*$/.test(l));
    if (!line) throw new Error('bench/bundle-budget.txt holds no number');
    a.maxKB = Number(line);
  }
  return a;
}

let args;
try {
  args = parseArgs(process.argv.slice(2));
} catch (e) {
  console.error(`bundle-size: ${e.message}`);
  process.exit(2);
}
if (!existsSync(path.join(args.dist, 'index.html'))) {
  console.error(`bundle-size: no build in ${args.dist} (run: source scripts/env.sh && embers_build_viewer)`);
  process.exit(2);
}
const b = bundleSize(args.dist);
for (const [f, s] of Object.entries(b.files)) {
  console.log(`${f.padEnd(56)} ${String(s.bytes).padStart(9)} B ${(s.brotli / 1024).toFixed(1).padStart(7)} KB brotli  ${s.part}`);
}
const p = b.partsKB;
console.log(`first view: page ${p.page.toFixed(1)} KB + answer worker ${p.worker.toFixed(1)} KB + styles ${p.styles.toFixed(1)} KB`);
// Each on-demand module apart (the file reader worker, each view): its script(s) and wasm.
const groups = {};
for (const [f, s] of Object.entries(b.files)) {
  if (s.part !== 'onDemand') continue;
  const stem = path.basename(f).replace(/(_bg\.wasm|_loader\.js|\.js)$/, '');
  groups[stem] = (groups[stem] || 0) + s.brotli / 1024;
}
const named = Object.entries(groups).map(([k, v]) => `${k} ${v.toFixed(1)} KB`).join(', ');
console.log(`on demand: ${p.onDemand.toFixed(1)} KB (${named}; the file reader when a file is opened or exported, a view when it opens)`);
const verdict = b.brotliKB <= args.maxKB ? 'within' : 'OVER';
console.log(`first view ${b.brotliKB.toFixed(1)} KB brotli: ${verdict} the ceiling of ${args.maxKB} KB (target ${BUDGET_KB} KB${b.brotliKB <= BUDGET_KB ? ', met' : ', not met'}); with the on-demand parts ${b.allKB.toFixed(1)} KB`);
process.exit(verdict === 'OVER' ? 1 : 0);
