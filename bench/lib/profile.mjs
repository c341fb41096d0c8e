// Where Embers spends its render time: one extra load under the CDP sampling profiler, its
// samples cut to "bytes in the page → first painted frame" and grouped into categories.

import { otherRequestsOpen, waitBooted } from './embers.mjs';
import { newPage, waitPainted } from './page.mjs';

// ------------------------------------------------------------------------------------------------
// Where Embers spends its render time: one extra load under the CDP sampling profiler. The server
// holds the ProfileTracing answer until the page has booted and the profiler runs, so the samples
// cover "bytes → first painted frame" (plus the loopback transfer) and nothing of the boot.

const CANVAS_GLUE = /^__wbg_(fillRect|fillText|strokeRect|strokeText|measureText|clearRect|setTransform|setLineDash|getContext|scale|save|restore|beginPath|rect|fill|stroke|set(Font|FillStyle|StrokeStyle|GlobalAlpha|LineWidth|TextBaseline|TextAlign)|font|fillStyle|strokeStyle|globalAlpha|lineWidth|textBaseline|textAlign)_/;
const STRING_GLUE = /passStringToWasm|getStringFromWasm|getArrayU8FromWasm|cachedText|decodeText|encodeString|__wbg_text_|TextDecoder|TextEncoder/;

export function categorize(callFrame, jsGlueUrl) {
  const { functionName: fn, url } = callFrame;
  if (fn === '(idle)') return 'idle';
  if (fn === '(program)') return 'browser (style, layout, paint, raster, …)';
  if (fn === '(garbage collector)') return 'garbage collection';
  if (fn === '(root)') return null;
  if (/\.wasm$|^wasm:/.test(url) || /^(wasm-function|\$)/.test(fn)) return 'wasm (decode, model, layout, UI)';
  if (url && url.includes(jsGlueUrl)) {
    if (CANVAS_GLUE.test(fn)) return 'canvas 2D calls';
    if (STRING_GLUE.test(fn)) return 'strings across the JS↔wasm boundary';
    return 'JS glue (DOM, events, other imports)';
  }
  if (!url && /^(text|json|arrayBuffer)$/.test(fn)) return 'reading the Response body (text/json/arrayBuffer)';
  if (fn === 'instrument' || /__bench|lineInked|poll/.test(fn) || url === '') return 'harness instrumentation / native';
  return 'other JS';
}

export async function profileEmbers(browser, server, { timeoutMs }) {
  const { context, page, errors } = await newPage(browser, 'embers', 'ProfileTracing', { markers: true });
  try {
    // The page's other requests (timeline, tag lists) are answered while it boots.
    const open = otherRequestsOpen(page);
    server.hold();
    const n0 = server.requests.length;
    await page.goto(`${server.url}/?app_service=synthetic-service&time_start=1&time_end=2`);
    // Booted, the query held at the server, nothing else open, the page idle: the profile starts
    // from a quiet page rather than after a guessed pause.
    await waitBooted(page, server, n0 + 1, 30_000, open);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
    await cdp.send('Profiler.start');
    server.release();
    const s = await waitPainted(page, errors, timeoutMs);
    const { profile } = await cdp.send('Profiler.stop');
    await cdp.detach();
    const glue = await page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name).find((n) => /\/embers-[0-9a-f]+\.js$/.test(n)) ?? 'embers-');
    const glueName = glue.slice(glue.lastIndexOf('/') + 1);
    return { renderMs: s.tPainted - s.tBytes, status: s.info.status, ...summarizeProfile(profile, glueName) };
  } finally {
    server.release();
    await context.close().catch(() => {});
  }
}

function summarizeProfile(profile, glueName) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n);
  // Sample times, and the window between the two markers (see instrument.mjs).
  const times = [];
  let t = profile.startTime;
  for (const d of profile.timeDeltas) times.push((t += d));
  const isMarker = (i, name) => byId.get(profile.samples[i])?.callFrame.functionName === name;
  let from = 0;
  let to = profile.samples.length;
  const lastBytes = profile.samples.findLastIndex((_, i) => isMarker(i, '__benchMarkBytes'));
  const firstPainted = profile.samples.findIndex((_, i) => isMarker(i, '__benchMarkPainted'));
  const windowed = lastBytes >= 0 && firstPainted > lastBytes;
  if (windowed) {
    from = lastBytes + 1;
    to = firstPainted;
  }
  const selfUs = new Map();
  for (let i = from; i < to; i++) {
    const dt = i + 1 < times.length ? times[i + 1] - times[i] : 0;
    selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + dt);
  }
  const cats = {};
  const fns = {};
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    const cat = categorize(node.callFrame, glueName);
    if (!cat) continue;
    cats[cat] = (cats[cat] ?? 0) + us / 1000;
    const f = node.callFrame;
    // Native functions (no URL) are named with their caller, e.g. `decode ← getStringFromWasm0`.
    const caller = !f.url && parentOf.get(id)?.callFrame.functionName;
    const key = `${f.functionName || '(anonymous)'}${f.url ? ` ${f.url.slice(f.url.lastIndexOf('/') + 1)}` : ''}${caller ? ` ← ${caller}` : ''}`;
    fns[key] = (fns[key] ?? 0) + us / 1000;
  }
  const round = (o) => Object.fromEntries(Object.entries(o).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Math.round(v * 10) / 10]));
  return {
    windowed,
    profiledMs: windowed ? (times[to] - times[from]) / 1000 : (profile.endTime - profile.startTime) / 1000,
    categoriesMs: round(cats),
    topFunctionsMs: Object.fromEntries(Object.entries(round(fns)).slice(0, 15)),
  };
}
