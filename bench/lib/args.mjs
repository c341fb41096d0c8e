// The harness' command line.

import { readFileSync } from 'node:fs';
import path from 'node:path';

import { APPS } from './apps.mjs';
import { ROOT_DIR } from './server.mjs';

export function parseArgs(argv) {
  const a = {
    sizes: null,
    seed: 1,
    smoke: false,
    viewers: null,
    shapeA: true,
    compare: null,
    reps: null,
    interactions: null,
    dist: path.join(ROOT_DIR, 'dist'),
    out: null,
    profile: null,
    firstView: null,
    deep: 5000,
    timeline: true,
    chromium: process.env.CHROMIUM ?? '/usr/bin/chromium',
  };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`${k} needs a value`);
      return argv[++i];
    };
    switch (k) {
      case '--sizes': a.sizes = v().split(',').map(parseCount); break;
      case '--seed': a.seed = Number(v()); break;
      case '--smoke': a.smoke = true; break;
      case '--viewers': case '--peers': a.viewers = v().split(',').map((s) => s.trim()).filter(Boolean); break;
      case '--no-shape-a': a.shapeA = false; break;
      case '--no-compare': a.compare = false; break;
      case '--reps': a.reps = Number(v()); break;
      case '--interactions': a.interactions = Number(v()); break;
      case '--dist': a.dist = path.resolve(v()); break;
      case '--out': a.out = path.resolve(v()); break;
      case '--chromium': a.chromium = v(); break;
      case '--profile': a.profile = true; break;
      case '--deep': a.deep = Number(v()); break;
      case '--no-timeline': a.timeline = false; break;
      case '--no-profile': a.profile = false; break;
      case '--no-first-view': a.firstView = false; break;
      case '-h': case '--help':
        console.log(readFileSync(new URL('../harness.mjs', import.meta.url)).toString().split('\n').slice(1, 12).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
        process.exit(0);
        break;
      default: throw new Error(`unknown argument ${k}`);
    }
  }
  a.compare ??= !a.smoke;
  a.sizes ??= a.smoke ? [10_000] : [10_000, 100_000, 1_000_000];
  a.viewers ??= a.smoke ? ['embers'] : ['embers', 'speedscope', 'grafana', 'grafanaGraph'];
  for (const v of a.viewers) if (!APPS[v]) throw new Error(`unknown viewer ${v} (known: ${Object.keys(APPS).join(', ')})`);
  if (!a.viewers.includes('embers')) a.viewers.unshift('embers');
  a.interactions ??= 20;
  a.profile ??= !a.smoke;
  a.firstView ??= !a.smoke;
  return a;
}

function parseCount(s) {
  const t = s.trim().replaceAll('_', '').replaceAll(',', '');
  const m = /^(\d+)([kKmM]?)$/.exec(t);
  if (!m) throw new Error(`bad size ${s}`);
  return Number(m[1]) * (m[2] ? (/[kK]/.test(m[2]) ? 1e3 : 1e6) : 1);
}
