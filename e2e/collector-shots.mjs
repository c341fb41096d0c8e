#!/usr/bin/env node
// Screenshots of this host profiled by the built-in collector (docs/collector.md), from the real
// page and a real service running `serve --demo --profile-host`:
//   docs/collector-total.png    this host's Total graph: [p] process → [t] thread
//   docs/collector-process.png  a real program's on-CPU flame graph: embers-nofp, the C test
//                               workload built without frame pointers, unwound from .eh_frame
// Needs root (eBPF), cc, dist/ and a release server built with the collector:
//   cargo build --release -p embers-server --features profile-host
//   cd e2e && node collector-shots.mjs

import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { REPO_DIR, startServer } from './lib/server.mjs';
import { launchBrowser, Viewer } from './lib/viewer.mjs';

const VIEWPORT = { width: 1400, height: 800 };
const out = (name) => path.join(REPO_DIR, 'docs', name);
const HOST = os.hostname();

/** Builds and starts the workload: main → run → hot_a / hot_b / in_syscalls, and a sleeper. */
async function startWorkload() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'embers-shots-'));
  const bin = path.join(dir, 'embers-nofp');
  execFileSync('cc', ['-O2', '-g', '-fomit-frame-pointer', '-pthread', '-o', bin,
    path.join(REPO_DIR, 'agent', 'tests', 'workloads', 'hot.c')]);
  return spawn(bin, ['120', '1000'], { stdio: 'ignore' });
}

/** Polls ProfileTracing until `app` has samples of this host. */
async function waitForSamples(server, app) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const now = Math.floor(Date.now() / 1000);
    const response = await fetch(`${server.url}/v1/profile/ProfileTracing`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ app_service: app, profile_language_type: 'eBPF', profile_event_type: 'on-cpu',
        tag_filter: `host='${HOST}'`, time_start: now - 600, time_end: now + 60 }),
    });
    const body = await response.json();
    if (body.result && body.result.functions && body.result.functions.length > 5) return;
    if (Date.now() > deadline) throw new Error(`no samples of ${app} on ${HOST} after 60 s: ${JSON.stringify(body).slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function shot(browser, server, params, file) {
  const v = await Viewer.open(browser, server, { viewport: VIEWPORT, params });
  try {
    await v.waitForGraph();
    await v.settle();
    await v.page.screenshot({ path: out(file) });
    v.assertNoErrors();
  } finally {
    await v.close();
  }
}

const workload = await startWorkload();
const [server, browser] = await Promise.all([
  startServer({ extraArgs: ['--profile-host', '--profile-host-interval', '2s'] }),
  launchBrowser(),
]);
try {
  await waitForSamples(server, 'embers-nofp');
  // A few more windows, so the graphs hold more than the first seconds.
  await new Promise((r) => setTimeout(r, 10_000));
  await shot(browser, server, { app_service: 'Total', tag_filter: `host='${HOST}'` }, 'collector-total.png');
  await shot(browser, server, { app_service: 'embers-nofp', tag_filter: `host='${HOST}'` }, 'collector-process.png');
  console.log(`wrote ${out('collector-total.png')} and ${out('collector-process.png')}`);
} finally {
  workload.kill();
  await browser.close();
  await server.stop();
}
