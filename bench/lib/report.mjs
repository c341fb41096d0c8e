// The harness' report: the table, first views, target checks (PASS/FAIL lines, never the exit
// status), and the git revision the results describe.

import { execFileSync } from 'node:child_process';

import { BUDGET_KB } from './bundle.mjs';
import { ROOT_DIR } from './server.mjs';
import { fmtCount, fmtMB, fmtMs, fmtPair, fmtParts } from './stats.mjs';

export function gitInfo() {
  try {
    const rev = execFileSync('git', ['-C', ROOT_DIR, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['-C', ROOT_DIR, 'status', '--porcelain', '--', 'src', 'model', 'style', 'index.html'], { encoding: 'utf8' }).trim() !== '';
    return { rev, dirty };
  } catch {
    return null;
  }
}

export function firstViewRows(results) {
  const rows = [];
  for (const s of results.sizes) {
    for (const [name, v] of Object.entries(s.viewers)) {
      const fv = v.firstView;
      if (!fv) continue;
      const parts = [];
      if (fv.form) parts.push(`form ${fmtMs(fv.form.median)}`);
      if (fv.graph) parts.push(`graph ${fmtMs(fv.graph.median)}`);
      if (fv.error) parts.push(`FAILED: ${fv.error.slice(0, 80)}`);
      rows.push(`${fmtCount(s.nodes).padStart(9)}  ${(LABELS[name] ?? name).padEnd(34)} ${parts.join(', ')}`);
    }
  }
  return rows;
}

const LABELS = { embers: 'Embers (shape B)', embersCompare: 'Embers comparing two (shape B)', embersShapeA: 'Embers (shape A)', speedscope: 'speedscope', grafana: 'Grafana flame graph (with table)', grafanaGraph: 'Grafana flame graph (graph only)' };

export function renderTable(results) {
  const head = ['nodes', 'viewer', 'render (median)', 'decode', 'zoom p50/p95', 'reset p50/p95', 'hover p50/p95', 'search p50/p95', 'JS heap', 'wasm', 'JS+wasm'];
  const rows = [];
  for (const s of results.sizes) {
    if (s.baseline) {
      rows.push([fmtCount(s.nodes), `JSON.parse of shape B (${(s.baseline.bytes / 2 ** 20).toFixed(1)} MB)`, fmtMs(s.baseline.parseMs), '', '', '', '', '', '', '', '']);
    }
    if (s.baselineShapeA) {
      rows.push([fmtCount(s.nodes), `JSON.parse of shape A (${(s.baselineShapeA.bytes / 2 ** 20).toFixed(1)} MB)`, fmtMs(s.baselineShapeA.parseMs), '', '', '', '', '', '', '', '']);
    }
    for (const [name, v] of Object.entries(s.viewers)) {
      const i = v.interactions ?? {};
      const failed = !v.ok ? ` FAILED: ${(v.errors ?? [])[0]?.slice(0, 80) ?? ''}` : '';
      rows.push([
        fmtCount(s.nodes),
        `${LABELS[name] ?? name}${failed}`,
        v.render?.median != null ? `${fmtMs(v.render.median)}${v.settled ? ` (settled ${fmtMs(v.settled.median)})` : ''}` : '—',
        v.decode?.median != null ? fmtMs(v.decode.median) : '',
        fmtPair(i.zoom), fmtPair(i.reset), fmtPair(i.hover), fmtPair(i.search),
        v.memory ? fmtMB(v.memory.jsHeapUsedMB) : '—',
        v.memory ? (v.memory.wasmMB ? fmtMB(v.memory.wasmMB) : '—') : '—',
        v.memory ? fmtMB(v.memory.totalMB) : '—',
      ]);
    }
  }
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const line = (r) => r.map((x, c) => (c < 2 ? x.padEnd(widths[c]) : x.padStart(widths[c]))).join('  ');
  const sep = widths.map((w) => '-'.repeat(w)).join('  ');
  return [
    `Embers browser benchmark — ${results.date} — Chromium ${results.chromium}, ${results.machine.cpus} cores, ${results.viewport.width}×${results.viewport.height}`,
    `Embers first view (page + answer worker + styles, brotli -11): ${results.bundle.brotliKB.toFixed(1)} KB (${fmtParts(results.bundle)}); load average ${results.machine.loadAvgAtStart[0]} at start, ${results.machine.loadAvgAtEnd[0]} at end (other work on the machine inflates every number)`,
    '',
    line(head),
    sep,
    ...rows.map(line),
  ].join('\n');
}

/** "Until the page is quiet" (issue 35), beside render: bytes → the first frame after which
 *  nothing is drawn or changed for three frames; Embers' explore requests answered 404 (a bare
 *  querier) and, apart, as its service answers them; zoom from the press, likewise. Peers make
 *  no such requests: one figure each. */
export function quietTable(results) {
  const head = ['nodes', 'viewer', 'render', 'quiet (404)', 'quiet (service)', 'zoom quiet (404)', 'zoom quiet (service)', 'quiet ÷ Grafana graph-only'];
  const rows = [];
  for (const s of results.sizes) {
    const g = s.viewers.grafanaGraph?.quiet?.median;
    for (const [name, v] of Object.entries(s.viewers)) {
      if (!v.ok || v.quiet?.median == null) continue;
      const i = v.interactions ?? {};
      rows.push([
        fmtCount(s.nodes),
        LABELS[name] ?? name,
        fmtMs(v.render?.median),
        fmtMs(v.quiet.median),
        v.quietService?.median != null ? fmtMs(v.quietService.median) : '',
        v.zoomQuiet404?.p50 != null ? fmtMs(v.zoomQuiet404.p50) : '',
        i.zoomQuiet?.p50 != null ? fmtMs(i.zoomQuiet.p50) : (i.zoom?.p50 != null && !name.startsWith('embers') ? `${fmtMs(i.zoom.p50)} (last draw)` : ''),
        g ? `${(v.quiet.median / g).toFixed(2)}×` : '',
      ]);
    }
  }
  if (!rows.length) return '';
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const line = (r) => r.map((x, c) => (c < 2 ? x.padEnd(widths[c]) : x.padStart(widths[c]))).join('  ');
  return ['Until the page is quiet (medians; ms from the bytes, or the press, to the first frame after which nothing changes for three frames)', '', line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function targetChecks(results) {
  const checks = [];
  const s = results.sizes.at(-1);
  if (!s) return checks;
  const e = s.viewers.embers;
  const label = `${fmtCount(s.nodes)} nodes`;
  const peers = ['speedscope', 'grafana'].map((p) => s.viewers[p]).filter((p) => p?.ok && p.render?.median != null);
  if (e?.render?.median != null && peers.length) {
    const fastest = Math.min(...peers.map((p) => p.render.median));
    checks.push({ target: `render ≤ 25 % of the fastest peer (${label})`, value: `${fmtMs(e.render.median)} vs ${fmtMs(fastest)} = ${((e.render.median / fastest) * 100).toFixed(1)} %`, pass: e.render.median <= 0.25 * fastest });
  }
  if (e?.render?.median != null && s.baseline) {
    checks.push({ target: `render ≤ 2× JSON.parse of the same bytes (${label})`, value: `${fmtMs(e.render.median)} vs ${fmtMs(s.baseline.parseMs)} = ${(e.render.median / s.baseline.parseMs).toFixed(2)}×`, pass: e.render.median <= 2 * s.baseline.parseMs });
  }
  for (const k of ['zoom', 'reset', 'hover', 'search']) {
    const x = e?.interactions?.[k];
    if (x?.p95 != null) checks.push({ target: `${k} p95 ≤ 16 ms (${label})`, value: `${fmtMs(x.p95)}${x.failures ? ` (${x.failures} failed)` : ''}`, pass: x.p95 <= 16 && !x.failures });
  }
  const f = e?.interactions?.zoomFollowUp;
  if (f?.p95 != null) checks.push({ target: `selected function's timeline drawn once its answer is in (after a zoom's click) p95 ≤ 16 ms (${label})`, value: fmtMs(f.p95), pass: f.p95 <= 16 });
  for (const [k, x] of Object.entries(e?.interactions ?? {}).filter(([k]) => k.startsWith('transform:'))) {
    const max = x.samples?.length ? Math.max(...x.samples) : null;
    checks.push({ target: `${k.slice(10)} transform ≤ 300 ms (${label})`, value: `${max != null ? `${fmtMs(max)} (slowest of ${x.samples.length})` : '—'}${x.failures ? ` (${x.failures} failed)` : ''}`, pass: max != null && max <= 300 && !x.failures });
  }
  if (e?.memory) checks.push({ target: `memory after render ≤ 120 MB (${label})`, value: `${fmtMB(e.memory.totalMB)} (JS ${fmtMB(e.memory.jsHeapUsedMB)} + wasm ${fmtMB(e.memory.wasmMB)})`, pass: e.memory.totalMB <= 120 });
  const c = s.viewers.embersCompare;
  if (c?.render?.median != null && e?.render?.median != null) {
    checks.push({ target: `compare render ≤ 2× one profile's (${label})`, value: `${fmtMs(c.render.median)} vs ${fmtMs(e.render.median)} = ${(c.render.median / e.render.median).toFixed(2)}×`, pass: c.render.median <= 2 * e.render.median });
  }
  for (const k of ['zoom', 'hover', 'search']) {
    const x = c?.interactions?.[k];
    if (x?.p95 != null) checks.push({ target: `compare ${k} p95 ≤ 16 ms (${label})`, value: `${fmtMs(x.p95)}${x.failures ? ` (${x.failures} failed)` : ''}`, pass: x.p95 <= 16 && !x.failures });
  }
  const a = s.viewers.embersShapeA;
  if (a?.decode?.median != null && e?.decode?.median != null) {
    checks.push({ target: `shape A decode ≤ 3× shape B (${label})`, value: `${fmtMs(a.decode.median)} vs ${fmtMs(e.decode.median)} = ${(a.decode.median / Math.max(1, e.decode.median)).toFixed(2)}×`, pass: a.decode.median <= 3 * Math.max(1, e.decode.median) });
  }
  const tl = results.timeline;
  for (const [k, what] of [['hover', 'timeline hover'], ['brush', 'timeline brush overlay']]) {
    const x = tl?.[k];
    if (x?.p95 != null) checks.push({ target: `${what} p95 ≤ 16 ms (input → next frame painted)`, value: `${fmtMs(x.p95)}${x.failures ? ` (${x.failures} failed)` : ''}`, pass: x.p95 <= 16 && !x.failures });
  }
  for (const size of results.sizes) {
    const [em, gg] = [size.viewers.embers, size.viewers.grafanaGraph];
    const sl = fmtCount(size.nodes);
    if (em?.quiet?.median != null && gg?.quiet?.median != null) {
      checks.push({ target: `until quiet ≤ 0.5× Grafana graph-only (${sl})`, value: `${fmtMs(em.quiet.median)} vs ${fmtMs(gg.quiet.median)} = ${(em.quiet.median / gg.quiet.median).toFixed(2)}×`, pass: em.quiet.median <= 0.5 * gg.quiet.median });
    }
    const [ez, gz] = [em?.interactions?.zoomQuiet?.p50, gg?.interactions?.zoom?.p50];
    if (ez != null && gz != null) {
      checks.push({ target: `zoom until quiet ≤ 0.5× Grafana graph-only's zoom (${sl})`, value: `${fmtMs(ez)} vs ${fmtMs(gz)} = ${(ez / gz).toFixed(2)}×`, pass: ez <= 0.5 * gz });
    }
  }
  checks.push({ target: `first view (page + answer worker + styles, brotli) ≤ ${BUDGET_KB} KB`, value: `${results.bundle.brotliKB.toFixed(1)} KB (${fmtParts(results.bundle)})`, pass: results.bundle.brotliBytes > 0 && results.bundle.brotliKB <= BUDGET_KB });
  return checks;
}
