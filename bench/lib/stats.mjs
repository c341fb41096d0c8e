// Statistics and formatting shared by the harness and its report.

export function quantile(xs, q) {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  // Nearest rank.
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}
export const median = (xs) => {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
export function summarize(x) {
  if (!x) return null;
  return { p50: quantile(x.samples, 0.5), p95: quantile(x.samples, 0.95), n: x.samples.length, failures: x.failures.length, samples: x.samples.map(round1), failureReasons: [...new Set(x.failures)] };
}
export const round1 = (x) => (x == null ? null : Math.round(x * 10) / 10);
export const fmtMs = (x) => (x == null ? '—' : x >= 1000 ? `${(x / 1000).toFixed(2)} s` : x >= 100 ? `${x.toFixed(0)} ms` : `${x.toFixed(1)} ms`);
export const fmtPair = (s) => (!s || s.p50 == null ? '—' : `${fmtMs(s.p50)} / ${fmtMs(s.p95)}`);
export const fmtMB = (x) => (x == null ? '—' : `${x.toFixed(0)} MB`);
export const fmtCount = (n) => n.toLocaleString('en-US');
// Results written before the styles were counted have no parts.
export const fmtParts = (b) => (b.partsKB ? `page ${b.partsKB.page.toFixed(1)} + worker ${b.partsKB.worker.toFixed(1)} + styles ${b.partsKB.styles.toFixed(1)} KB${b.partsKB.onDemand ? `; on demand ${b.partsKB.onDemand.toFixed(1)} KB` : ''}` : 'wasm + JS');

export const log = (...m) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}]`, ...m);
