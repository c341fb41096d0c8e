#!/usr/bin/env node
// The viewer's pprof decode against shape B: the same synthetic tree (embers-bench-gen's
// `profile.pb` and `shape-b.json`) opened in Embers' release build through its file input, each
// decoded by the decode worker; the time is the page's own marks from `decode-start` (the bytes
// handed to the worker) to `profile-read` (the profile back in the page), the median of --reps
// opens per format, after one unmeasured open of each. Prints a table and PASS/FAIL against the
// issue's target (pprof <= 1.5x shape B).
//
//   node bench/pprof-decode.mjs [--sizes 100k,1M] [--reps 5]
//
// Needs dist/ (embers_build_viewer) and writes missing profiles with the generator
// (cargo build --release -p embers-bench). Run it through `heavy` on a shared machine.

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { chromium } from 'playwright-core';

import { BROWSER_ARGS } from './lib/page.mjs';
import { BENCH_DIR, ROOT_DIR, startServer } from './lib/server.mjs';

function parseArgs(argv) {
  const a = { sizes: ['100k', '1M'], reps: 5 };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    if (argv[i] === '--sizes' && v) (a.sizes = v.split(',')), i++;
    else if (argv[i] === '--reps' && Number(v) > 0) (a.reps = Number(v)), i++;
    else throw new Error(`unknown argument ${argv[i]} (usage: --sizes 100k,1M --reps 5)`);
  }
  return a;
}

const count = (s) => Number(s.replace(/[kKmM]$/, '')) * ({ k: 1e3, K: 1e3, m: 1e6, M: 1e6 }[s.at(-1)] ?? 1);

/** The generator's output for `size` (written when missing). */
function dataDir(size) {
  const dir = path.join(BENCH_DIR, 'data', `n${count(size)}-s1`);
  if (!existsSync(path.join(dir, 'profile.pb')) || !existsSync(path.join(dir, 'shape-b.json'))) {
    execFileSync('cargo', ['run', '--quiet', '--release', '-p', 'embers-bench', '--', '--nodes', size, '--seed', '1',
      '--out', dir, '--no-shape-a', '--no-folded'], { cwd: ROOT_DIR, stdio: 'inherit' });
  }
  return dir;
}

/** Opens `file` through the viewer's file input; the decode time from the page's marks. */
async function open(page, file) {
  await page.evaluate(() => performance.clearMarks());
  await page.setInputFiles('[data-testid="import-file"]', file);
  await page.waitForFunction(() => performance.getEntriesByName('embers:profile-read').length > 0
    && /decoded in/.test(document.querySelector('[data-testid="status"]')?.textContent ?? ''), null, { timeout: 120_000 });
  return page.evaluate(() => {
    const t = (n) => performance.getEntriesByName(`embers:${n}`).at(-1).startTime;
    return t('profile-read') - t('decode-start');
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (!existsSync(path.join(ROOT_DIR, 'dist', 'index.html'))) throw new Error('no dist/: run embers_build_viewer');
  const server = await startServer();
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: BROWSER_ARGS.cpu });
  const rows = [];
  try {
    for (const size of args.sizes) {
      const dir = dataDir(size);
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(`${server.url}/`);
      await page.waitForFunction(() => performance.getEntriesByName('embers:worker-warm').length > 0, null, { timeout: 60_000 });
      const times = { b: [], pprof: [] };
      for (let rep = 0; rep <= args.reps; rep++) {
        const b = await open(page, path.join(dir, 'shape-b.json'));
        const p = await open(page, path.join(dir, 'profile.pb'));
        if (rep > 0) (times.b.push(b), times.pprof.push(p)); // the first open of each warms up
      }
      await page.close();
      const b = median(times.b);
      const p = median(times.pprof);
      rows.push({ size, b, p, ratio: p / b });
    }
  } finally {
    await browser.close();
    await server.close();
  }
  console.log('size    shape B decode   pprof decode   pprof / shape B');
  for (const r of rows) {
    console.log(`${r.size.padEnd(6)} ${r.b.toFixed(0).padStart(11)} ms ${r.p.toFixed(0).padStart(11)} ms ${r.ratio.toFixed(2).padStart(12)}x  ${r.ratio <= 1.5 ? 'PASS' : 'FAIL'} (target <= 1.5x)`);
  }
}

main().catch((e) => {
  console.error(`pprof-decode: ${e.message}`);
  process.exit(1);
});
