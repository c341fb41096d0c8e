#!/usr/bin/env node
// The Embers browser benchmark: loads Embers and its peers in headless Chromium on 127.0.0.1 and
// prints one table (render, zoom, reset, hover, search, memory, and the JSON.parse baseline) per
// profile size. Normally started by bench/run.sh, which first generates the data.
//
//   node bench/harness.mjs [--sizes 10000,100000,1000000] [--seed 1] [--smoke]
//                          [--viewers embers,speedscope,grafana] [--no-shape-a]
//                          [--reps N] [--interactions N] [--no-timeline] [--dist DIR] [--out FILE]
//
// Exit status: 0 when Embers painted at every size; 1 when it did not (peers failing is recorded
// in the results but does not fail the run); 2 on bad arguments.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

import { APPS, BROWSER_ARGS, VIEWPORT, embersScroll, measureMemory, profileEmbers } from './lib/apps.mjs';
import { waitQuiet } from './lib/page.mjs';
import { parseArgs } from './lib/args.mjs';
import { bundleSize } from './lib/bundle.mjs';
import { firstViewRows, gitInfo, quietTable, renderTable, targetChecks } from './lib/report.mjs';
import { BENCH_DIR, ROOT_DIR, startServer } from './lib/server.mjs';
import { fmtCount, fmtMB, fmtMs, fmtPair, log, median, round1, summarize } from './lib/stats.mjs';
import { timelineLine, timelineStep } from './lib/timeline.mjs';

// ---------------------------------------------------------------------------------------------
// Runs

async function withPage(app, browser, server, opts, fn) {
  const r = await app.render(browser, server, opts);
  try {
    return await fn(r);
  } finally {
    await r.context.close().catch(() => {});
  }
}

/** Render `reps` times (fresh context each); the first page also gives memory + interactions. */
async function runViewer(app, browser, server, { reps, interactions, timeoutMs, dataUrl, baseline, firstView = false }) {
  const renders = [];
  const out = { renders, errors: [] };
  for (let i = 0; i < reps; i++) {
    try {
      await withPage(app, browser, server, { timeoutMs, dataUrl }, async ({ page, errors, result }) => {
        result.quietMs = await waitQuiet(page, timeoutMs).catch(() => null);
        renders.push(result);
        log(`  ${app.name} render ${i + 1}/${reps}: ${fmtMs(result.renderMs)}, quiet ${fmtMs(result.quietMs)}${result.decodeMs != null ? ` (decoded in ${result.decodeMs} ms)` : ''}${result.settledMs != null ? ` (settled ${fmtMs(result.settledMs)})` : ''}${result.marks ? ` [ms since navigation: bytes ${Math.round(result.bytesAtMs)}, ${(result.markList ?? Object.entries(result.marks)).map(([k, v]) => `${k} ${Math.round(v)}`).join(', ')}, painted ${Math.round(result.paintedAtMs)}]` : ''}`);
        if (i === 0) {
          out.memory = await measureMemory(page);
          log(`  ${app.name} memory: JS ${fmtMB(out.memory.jsHeapUsedMB)} + wasm ${fmtMB(out.memory.wasmMB)}`);
          if (baseline) out.baseline = await baseline(page);
          // Zoom until quiet, the explore requests it makes answered 404 (a bare querier).
          if (app.zoomQuiet && interactions > 0) out.zoomQuiet404 = summarize(await app.zoomQuiet(page, interactions));
        }
        if (errors.length) out.errors.push(...errors);
      });
    } catch (e) {
      out.errors.push(String(e.message ?? e));
      log(`  ${app.name} FAILED: ${e.message ?? e}`);
      break;
    }
  }
  // Interactions on a page of their own, with the explore endpoints answering when the app
  // uses them (Embers' timeline strip, and the selected function's timeline a click opens).
  if (interactions > 0 && app.interactions) {
    server.setExplore(!!app.usesExplore);
    try {
      await withPage(app, browser, server, { timeoutMs, dataUrl }, async ({ page, errors }) => {
        const t = await app.interactions(page, interactions);
        out.interactions = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, summarize(v)]));
        log(`  ${app.name} interactions: ${Object.entries(out.interactions).map(([k, v]) => `${k} ${fmtPair(v)}${v.failures ? ` (${v.failures} failed: ${v.failureReasons.join('; ')})` : ''}`).join(', ')}`);
        if (errors.length) out.errors.push(...errors);
      });
    } catch (e) {
      out.errors.push(String(e.message ?? e));
    } finally {
      server.setExplore(false);
    }
  }
  // "Until quiet" with the explore endpoints answered as Embers' service answers them (the
  // renders above got 404s for them, as from a bare querier).
  if (app.usesExplore && renders.length > 0) out.quietService = await quietWithService(app, browser, server, { reps: Math.min(reps, 5), timeoutMs, dataUrl });
  const times = renders.map((r) => r.renderMs);
  out.render = { median: median(times), min: times.length ? Math.min(...times) : null, samples: times.map(round1) };
  if (renders.some((r) => r.decodeMs != null)) out.decode = { median: median(renders.map((r) => r.decodeMs)), samples: renders.map((r) => r.decodeMs) };
  if (renders.some((r) => r.settledMs != null)) out.settled = { median: median(renders.map((r) => r.settledMs)), samples: renders.map((r) => round1(r.settledMs)) };
  if (renders.some((r) => r.quietMs != null)) out.quiet = { median: median(renders.map((r) => r.quietMs).filter((v) => v != null)), samples: renders.map((r) => round1(r.quietMs)) };
  out.ok = renders.length > 0;
  if (firstView && out.ok) await measureFirstView(app, browser, server, out, { reps, timeoutMs, dataUrl });
  return out;
}

/** Renders timed until the page is quiet, with the explore endpoints answering. */
async function quietWithService(app, browser, server, { reps, timeoutMs, dataUrl }) {
  const samples = [];
  server.setExplore(true);
  try {
    for (let i = 0; i < reps; i++) {
      await withPage(app, browser, server, { timeoutMs, dataUrl }, async ({ page }) => {
        samples.push(await waitQuiet(page, timeoutMs));
      });
    }
  } catch (e) {
    log(`  ${app.name} quiet with the service FAILED: ${e.message ?? e}`);
  } finally {
    server.setExplore(false);
  }
  log(`  ${app.name} quiet with the service's explore answers: ${samples.map(fmtMs).join(', ')}`);
  return { median: median(samples), samples: samples.map(round1) };
}

/** The first view, in ms since navigation: the graph painted after navigating to a URL that
 *  names the profile (Embers' and speedscope's renders already start that way; Grafana's page is
 *  opened again with `&load=`), and for Embers the query form in the page (navigating to `/`). */
async function measureFirstView(app, browser, server, out, { reps, timeoutMs, dataUrl }) {
  const fv = {};
  try {
    if (app.firstView) {
      const samples = [];
      const marks = [];
      for (let i = 0; i < reps; i++) {
        const r = await app.firstView(browser, server, { dataUrl, timeoutMs });
        samples.push(r.paintedAtMs);
        if (r.result?.markList) marks.push([r.result.bytesAtMs, r.result.markList]);
      }
      fv.graph = samples;
      // Where each load's time went (ms since navigation): when the bytes were in, the page's marks.
      if (marks.length) {
        out.firstViewMarks = marks.map(([bytes, list]) => ({ bytes: round1(bytes), marks: list }));
        const [bytes, list] = marks.at(-1);
        log(`  ${app.name} first view, last load [ms since navigation]: bytes ${Math.round(bytes)}, ${list.map(([k, v]) => `${k} ${Math.round(v)}`).join(', ')}`);
      }
    } else if (out.renders.every((r) => r.paintedAtMs != null)) {
      fv.graph = out.renders.map((r) => r.paintedAtMs);
    }
    if (app.formView) {
      const samples = [];
      for (let i = 0; i < reps; i++) samples.push((await app.formView(browser, server, { timeoutMs })).formAtMs);
      fv.form = samples;
    }
  } catch (e) {
    fv.error = String(e.message ?? e);
  }
  out.firstView = Object.fromEntries(Object.entries(fv).map(([k, v]) => [k, Array.isArray(v) ? { median: median(v), samples: v.map(round1) } : v]));
  log(`  ${app.name} first view (ms since navigation): ${Object.entries(out.firstView).map(([k, v]) => `${k} ${v.median != null ? fmtMs(v.median) : v}`).join(', ')}`);
}

/** In the page: fetch the same bytes, then time TextDecoder and JSON.parse on them. */
function jsonParseBaseline(url, runs = 3) {
  return async (page) => {
    const r = await page.evaluate(async ([url, runs]) => {
      const buf = await (await fetch(url)).arrayBuffer();
      const t0 = performance.now();
      let text = new TextDecoder().decode(buf);
      const textMs = performance.now() - t0;
      const parse = [];
      for (let i = 0; i < runs; i++) {
        const t = performance.now();
        let v = JSON.parse(text);
        parse.push(performance.now() - t);
        v = null;
      }
      const chars = text.length;
      text = null;
      // The floor any viewer has from the same starting point as its render: the bytes decoded
      // to text, parsed, and the next animation frame (the issue's "JSON.parse + one frame").
      const framed = [];
      for (let i = 0; i < runs; i++) {
        await new Promise((r) => setTimeout(r, 50));
        const t = performance.now();
        let v = JSON.parse(new TextDecoder().decode(buf));
        await new Promise((r) => requestAnimationFrame(() => r()));
        framed.push(performance.now() - t);
        v = null;
      }
      return { textMs, parse, framed, chars, bytes: buf.byteLength };
    }, [url, runs]);
    return {
      parseMs: median(r.parse),
      parseSamples: r.parse.map(round1),
      framedMs: median(r.framed),
      framedSamples: r.framed.map(round1),
      textDecodeMs: r.textMs,
      bytes: r.bytes,
    };
  };
}

/** The timeline step (lib/timeline.mjs) on the smallest profile: hover, brush overlay, brush
 *  release, each as input → next frame painted. */
async function runTimeline(browser, server, dir, args) {
  await server.setProfile(path.join(dir, 'shape-b.json'));
  const n = args.interactions || 20;
  const tl = {};
  try {
    const r = await timelineStep(browser, server, { n, releases: args.smoke ? 5 : n, timeoutMs: 60_000 });
    Object.assign(tl, { buckets: r.buckets, groups: r.groups, widthPx: r.width, errors: r.errors });
    for (const k of ['hover', 'brush', 'release']) tl[k] = summarize(r[k]);
  } catch (e) {
    tl.error = String(e.message ?? e);
  }
  server.forget();
  log(`  ${timelineLine(tl)}`);
  return tl;
}

function generatedDir(nodes, seed) {
  return path.join(BENCH_DIR, 'data', `n${nodes}-s${seed}`);
}

async function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`harness: ${e.message}`);
    process.exit(2);
  }
  const started = new Date();
  const reps = args.reps ?? (args.smoke ? 3 : null);
  if (!existsSync(path.join(args.dist, 'index.html'))) {
    console.error(`harness: no Embers build in ${args.dist} (run: cd ${ROOT_DIR} && source scripts/env.sh && embers_build_viewer)`);
    process.exit(1);
  }
  const bundle = bundleSize(args.dist);
  const server = await startServer({ distDir: args.dist });
  log(`server on ${server.url}; Embers build ${Object.keys(bundle.files).join(', ')}; bundle ${bundle.brotliKB.toFixed(1)} KB brotli`);

  const browsers = {};
  const browserFor = async (kind) => {
    browsers[kind] ??= await chromium.launch({ executablePath: args.chromium, args: BROWSER_ARGS[kind] });
    return browsers[kind];
  };

  const results = {
    date: started.toISOString(),
    smoke: args.smoke,
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memGB: Math.round(os.totalmem() / 2 ** 30), node: process.version, platform: `${os.platform()} ${os.release()}`, loadAvgAtStart: os.loadavg().map(round1) },
    chromium: null,
    chromiumArgs: BROWSER_ARGS,
    viewport: VIEWPORT,
    git: gitInfo(),
    bundle,
    sizes: [],
  };
  let embersFailed = false;
  try {
    results.chromium = (await browserFor('cpu')).version();
    for (const nodes of args.sizes) {
      const dir = generatedDir(nodes, args.seed);
      const meta = JSON.parse(readFileSync(path.join(dir, 'meta.json'), 'utf8'));
      const rel = `/data/${path.basename(dir)}`;
      // The 10k render spreads widely (a frame's wait is a third of it): more renders there.
      const r = reps ?? (nodes >= 1_000_000 ? 3 : nodes >= 100_000 ? 5 : 9);
      const timeoutMs = 60_000 + nodes * 0.25;
      log(`${fmtCount(meta.nodes)} nodes, ${fmtCount(meta.functions)} functions, depth ${meta.max_depth}; shape B ${(meta.files['shape-b.json'] / 2 ** 20).toFixed(1)} MB; ${r} renders per viewer`);
      const entry = { nodes: meta.nodes, meta, viewers: {} };
      results.sizes.push(entry);

      // Embers on shape B (+ memory, interactions, JSON.parse baseline on the same page).
      await server.setProfile(path.join(dir, 'shape-b.json'));
      entry.viewers.embers = await runViewer(APPS.embers, await browserFor('cpu'), server, {
        reps: r, interactions: args.interactions, timeoutMs, baseline: jsonParseBaseline(`${rel}/shape-b.json`),
        firstView: args.firstView,
      });
      if (!entry.viewers.embers.ok) {
        // Nothing else is worth waiting for (each would run into its own timeout).
        embersFailed = true;
        break;
      }
      entry.baseline = entry.viewers.embers.baseline ?? null;
      delete entry.viewers.embers.baseline;
      if (entry.baseline) log(`  JSON.parse baseline (shape B, ${(entry.baseline.bytes / 2 ** 20).toFixed(1)} MB): ${fmtMs(entry.baseline.parseMs)} (TextDecoder ${fmtMs(entry.baseline.textDecodeMs)})`);

      // Where the time goes (one extra load under the sampling profiler), at the largest size.
      if (args.profile && nodes === Math.max(...args.sizes)) {
        try {
          entry.embersProfile = await profileEmbers(await browserFor('cpu'), server, { timeoutMs });
          const c = entry.embersProfile.categoriesMs;
          log(`  embers profile (render ${fmtMs(entry.embersProfile.renderMs)} under the profiler): ${Object.entries(c).map(([k, v]) => `${k} ${fmtMs(v)}`).join(', ')}`);
        } catch (e) {
          entry.embersProfile = { error: String(e.message ?? e) };
          log(`  embers profile failed: ${e.message ?? e}`);
        }
      }

      // Embers comparing two answers of this profile (shape B): renders and interactions.
      if (args.compare) {
        entry.viewers.embersCompare = await runViewer(APPS.embersCompare, await browserFor('cpu'), server, {
          reps: r, interactions: args.interactions, timeoutMs: timeoutMs * 2,
        });
      }

      // Embers on shape A: renders only.
      if (args.shapeA && existsSync(path.join(dir, 'shape-a.json'))) {
        await server.setProfile(path.join(dir, 'shape-a.json'));
        entry.viewers.embersShapeA = await runViewer(APPS.embers, await browserFor('cpu'), server, {
          reps: Math.min(r, 3), interactions: 0, timeoutMs: timeoutMs * 3, baseline: jsonParseBaseline(`${rel}/shape-a.json`, 1),
        });
        entry.baselineShapeA = entry.viewers.embersShapeA.baseline ?? null;
        delete entry.viewers.embersShapeA.baseline;
      }
      server.forget();

      for (const name of args.viewers.filter((v) => v !== 'embers')) {
        const app = APPS[name];
        const file = name === 'speedscope' ? 'speedscope.json' : 'grafana.json';
        if (!existsSync(path.join(dir, file))) {
          entry.viewers[name] = { ok: false, errors: [`${file} not generated`] };
          continue;
        }
        entry.viewers[name] = await runViewer(app, await browserFor(app.browser), server, {
          reps: Math.min(r, 3), interactions: args.interactions, timeoutMs: timeoutMs * 4, dataUrl: `${rel}/${file}`,
          firstView: args.firstView,
        });
        entry.viewers[name].input = { file, bytes: meta.files[file] };
        server.forget();
      }
    }
    // Deep stacks: a 10k-node profile plus one chain `--deep` levels deep; Embers only.
    const deepDir = path.join(BENCH_DIR, 'data', `deep${args.deep}-s${args.seed}`);
    if (!embersFailed && args.deep > 0 && existsSync(path.join(deepDir, 'meta.json'))) {
      const meta = JSON.parse(readFileSync(path.join(deepDir, 'meta.json'), 'utf8'));
      log(`deep stacks: ${fmtCount(meta.nodes)} nodes, depth ${meta.max_depth}`);
      await server.setProfile(path.join(deepDir, 'shape-b.json'));
      const deep = { nodes: meta.nodes, depth: meta.max_depth, renders: [] };
      results.deep = deep;
      try {
        for (let i = 0; i < (reps ?? 3); i++) {
          await withPage(APPS.embers, await browserFor('cpu'), server, { timeoutMs: 60_000 }, async ({ page, result, errors }) => {
            deep.renders.push(result.renderMs);
            deep.status = result.status;
            if (i === 0) {
              const sc = await embersScroll(page, args.interactions || 20);
              deep.scroll = summarize(sc.total);
              deep.scrollFromEvent = summarize(sc.fromEvent);
            }
            if (errors.length) (deep.errors ??= []).push(...errors);
          });
        }
        const shown = /depth (\d+)/.exec(deep.status ?? '');
        deep.depthShown = shown ? Number(shown[1]) : null;
        deep.render = { median: median(deep.renders), samples: deep.renders.map(round1) };
        deep.ok = deep.depthShown === meta.max_depth && deep.scroll?.n > 0 && !deep.scroll.failures;
        log(`  embers deep: render ${fmtMs(deep.render.median)}, depth shown ${deep.depthShown}, scroll ${fmtPair(deep.scroll)} (from the event ${fmtPair(deep.scrollFromEvent)})${deep.scroll?.failures ? ` (${deep.scroll.failures} failed: ${deep.scroll.failureReasons.join('; ')})` : ''}`);
      } catch (e) {
        deep.ok = false;
        deep.error = String(e.message ?? e);
        log(`  embers deep FAILED: ${deep.error}`);
      }
      if (!deep.ok) embersFailed = true;
      server.forget();
    }
    if (!embersFailed && args.timeline) {
      results.timeline = await runTimeline(await browserFor('cpu'), server, generatedDir(Math.min(...args.sizes), args.seed), args);
    }
  } finally {
    for (const b of Object.values(browsers)) await b.close().catch(() => {});
    await server.close();
  }
  results.durationS = (Date.now() - started.getTime()) / 1000;
  results.machine.loadAvgAtEnd = os.loadavg().map(round1);

  const table = renderTable(results);
  const prof = results.sizes.map((s) => s.embersProfile && !s.embersProfile.error && [s.nodes, s.embersProfile]).filter(Boolean).at(-1);
  const checks = targetChecks(results);
  results.targets = checks;
  console.log(table);
  const quiet = quietTable(results);
  if (quiet) console.log(`\n${quiet}`);
  if (results.timeline) console.log(`\n${timelineLine(results.timeline)}`);
  if (results.deep) {
    const d = results.deep;
    console.log(`\nDeep stacks (Embers, ${fmtCount(d.nodes)} nodes, one chain ${d.depth} levels deep): ${d.ok ? 'OK' : 'FAILED'} — render ${fmtMs(d.render?.median)}, status shows depth ${d.depthShown ?? '?'}, scroll top→bottom in ${d.scroll?.n ?? 0} steps p50/p95 ${fmtPair(d.scroll)} from setting scrollTop, ${fmtPair(d.scrollFromEvent)} from the scroll event${d.error ? ` — ${d.error}` : ''}`);
  }
  const fvRows = firstViewRows(results);
  if (fvRows.length) {
    console.log('\nFirst view (ms since navigation, medians; graph = a URL naming the profile → its graph painted, server and boot included; form = Embers\' `/` → the query form in the page):');
    for (const row of fvRows) console.log(`  ${row}`);
  }
  if (prof) {
    const [n, p] = prof;
    console.log(`\nWhere Embers' render time goes (${fmtCount(n)} nodes, shape B; one load under the CDP sampling profiler, render ${fmtMs(p.renderMs)}; ${p.status.replace(/^.*· decoded/, 'decoded')}):`);
    for (const [k, v] of Object.entries(p.categoriesMs)) console.log(`  ${fmtMs(v).padStart(9)}  ${k}`);
  }
  if (checks.length) {
    console.log('\nTargets (largest size measured):');
    for (const c of checks) console.log(`  ${c.pass == null ? '  ?' : c.pass ? 'PASS' : 'FAIL'}  ${c.target}: ${c.value}`);
  }
  const out = args.out ?? path.join(BENCH_DIR, 'results', `${args.smoke ? 'smoke-' : ''}${started.toISOString().replace(/[:]/g, '-').replace(/\.\d+Z$/, 'Z')}.json`);
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nresults: ${path.relative(process.cwd(), out)} (${results.durationS.toFixed(0)} s)`);
  // The smoke run guards the harness itself: every Embers interaction must have worked.
  if (args.smoke) {
    for (const s of results.sizes) {
      for (const [k, v] of Object.entries(s.viewers.embers?.interactions ?? {})) {
        if (!v.n || v.failures) {
          console.error(`harness: Embers ${k} failed ${v.failures} of ${v.n + v.failures} times (${v.failureReasons.join('; ')})`);
          embersFailed = true;
        }
      }
    }
    if (results.timeline?.error) {
      console.error(`harness: the Embers timeline step failed: ${results.timeline.error}`);
      embersFailed = true;
    }
    for (const [k, v] of Object.entries(results.timeline ?? {})) {
      if (v?.samples && (!v.n || v.failures)) {
        console.error(`harness: Embers timeline ${k} failed ${v.failures} of ${v.n + v.failures} times (${v.failureReasons.join('; ')})`);
        embersFailed = true;
      }
    }
  }
  if (embersFailed) {
    console.error('harness: Embers did not paint or an interaction failed; see the errors in the results');
    process.exit(1);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
