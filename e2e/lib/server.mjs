// Starting and stopping embers-server for the end-to-end tests, and a closed loopback port.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const E2E_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const REPO_DIR = path.resolve(E2E_DIR, '..');
// The built viewer: $EMBERS_DIST when set (a build of one's own beside others' in a shared
// checkout: `trunk build --dist DIR`), else dist/.
export const DIST_DIR = process.env.EMBERS_DIST?.trim() || path.join(REPO_DIR, 'dist');
export const FIXTURES_DIR = path.join(REPO_DIR, 'model', 'tests', 'data', 'fixtures');

const RUNNING_RE = /Embers is running at (http:\/\/127\.0\.0\.1:(\d+))\//;
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;

/** The server binary: $EMBERS_SERVER when set, else the release build in target/. */
export function serverBinary() {
  const fromEnv = process.env.EMBERS_SERVER;
  const bin = fromEnv && fromEnv.trim() ? fromEnv.trim() : path.join(REPO_DIR, 'target', 'release', 'embers-server');
  if (!existsSync(bin)) {
    throw new Error(`embers-server not found at ${bin}; build it (cargo build --release -p embers-server) or set EMBERS_SERVER`);
  }
  if (!existsSync(path.join(DIST_DIR, 'index.html'))) {
    throw new Error(`the viewer is not built (${DIST_DIR}/index.html missing); run: source scripts/env.sh && embers_build_viewer`);
  }
  return bin;
}

/**
 * Starts `embers-server serve --demo` (without `--demo` when `demo` is false: an empty store) on
 * a free loopback port with a fresh database.
 * Returns { url, port, startedAt (Unix s), stop() }.
 */
export async function startServer({ resultShape, extraArgs = [], demo = true } = {}) {
  const bin = serverBinary();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'embers-e2e-'));
  const args = [
    'serve', ...(demo ? ['--demo'] : []),
    '--db', path.join(dir, 'e2e.db'),
    '--static-dir', DIST_DIR,
    '--listen', '127.0.0.1:0',
    ...(resultShape ? ['--result-shape', resultShape] : []),
    ...extraArgs,
  ];
  const startedAt = Math.floor(Date.now() / 1000);
  const child = spawn(bin, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', RUST_LOG: process.env.RUST_LOG ?? 'warn' },
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => { stderr = (stderr + d).slice(-8000); });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

  const url = await new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => {
      reject(new Error(`embers-server did not report its address within ${START_TIMEOUT_MS} ms\nstderr:\n${stderr}`));
    }, START_TIMEOUT_MS);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      stdout += d;
      const m = RUNNING_RE.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`embers-server exited early (code ${code}, signal ${signal})\nstderr:\n${stderr}`));
    });
    child.once('error', (e) => { clearTimeout(timer); reject(e); });
  }).catch(async (e) => {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw e;
  });
  // Keep draining stdout so the pipe never fills.
  child.stdout.resume();

  let stopped = false;
  return {
    url,
    port: Number(new URL(url).port),
    startedAt,
    pid: child.pid,
    stderr: () => stderr,
    async stop() {
      if (stopped) return;
      stopped = true;
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort() {
  const srv = net.createServer();
  await new Promise((resolve, reject) => srv.listen(0, '127.0.0.1', resolve).once('error', reject));
  const { port } = srv.address();
  await new Promise((resolve) => srv.close(resolve));
  return port;
}
