// Generated explore answers for the timeline step (the bench server answers them only while
// `setExplore(true)`, so the other steps' pages stay as they were): a timeline of PODS groups
// whose values move over time, laid out like embers-server's answer (the interval from the same
// ladder, at most `group_limit` groups by total and the rest summed into "other"), and a tags
// list. Deterministic, so every run draws the same chart.

/** Groups in a grouped timeline: more than the default limit of 10, so "other" appears too. */
export const PODS = 12;
const INTERVAL_LADDER = [1, 5, 10, 30, 60, 300, 600, 1800, 3600];
const MAX_AUTO_BUCKETS = 300;
const DEFAULT_GROUP_LIMIT = 10;
const OTHER_GROUP = 'other';

const bucketStart = (t, interval) => Math.floor(t / interval) * interval;
const bucketCount = (a, b, interval) => (bucketStart(b, interval) - bucketStart(a, interval)) / interval + 1;

/** The smallest ladder interval giving at most 300 buckets (as the service picks it). */
export function pickInterval(timeStart, timeEnd) {
  return INTERVAL_LADDER.find((i) => bucketCount(timeStart, timeEnd, i) <= MAX_AUTO_BUCKETS) ?? 3600;
}

/** CPU µs of group `k` in the second starting at `t`: busier groups first, two slow waves. */
function groupValue(k, t) {
  const base = 40_000 * (PODS - k);
  return Math.round(base * (1 + 0.6 * Math.sin(t / 23 + k) * Math.cos(t / 71 + 2 * k)));
}

/** The `result` of POST /v1/profile/timeline for request body `req`. */
export function timelineAnswer(req) {
  const interval = req.interval ?? pickInterval(req.time_start, req.time_end);
  const first = bucketStart(req.time_start, interval);
  const n = bucketCount(req.time_start, req.time_end, interval);
  const group = req.group_by || null;
  const limit = Math.min(req.group_limit ?? DEFAULT_GROUP_LIMIT, PODS);
  const times = Array.from({ length: n }, (_, i) => first + i * interval);
  const per = times.map((t) => Array.from({ length: PODS }, (_, k) => groupValue(k, t) * interval));
  const values = [];
  if (!group) {
    times.forEach((t, i) => values.push([t, per[i].reduce((a, b) => a + b, 0)]));
  } else {
    // The groups with the largest totals are kept, the rest summed into "other" (as the service does).
    const totals = Array.from({ length: PODS }, (_, k) => per.reduce((s, row) => s + row[k], 0));
    const kept = new Set([...totals.keys()].sort((a, b) => totals[b] - totals[a]).slice(0, limit));
    const name = (k) => `${group}-${String(k + 1).padStart(2, '0')}`;
    times.forEach((t, i) => {
      let rest = 0;
      per[i].forEach((v, k) => {
        if (kept.has(k)) values.push([t, name(k), v]);
        else rest += v;
      });
      if (rest > 0) values.push([t, OTHER_GROUP, rest]);
    });
  }
  return { interval, columns: group ? ['time', group, 'value'] : ['time', 'value'], values };
}

/** The `result` of POST /v1/profile/function_timeline: a third of the busiest group's time in
 *  the function, half of it its own. */
export function functionTimelineAnswer(req) {
  const interval = req.interval ?? pickInterval(req.time_start, req.time_end);
  const first = bucketStart(req.time_start, interval);
  const n = bucketCount(req.time_start, req.time_end, interval);
  const values = Array.from({ length: n }, (_, i) => {
    const t = first + i * interval;
    const total = Math.round((groupValue(0, t) * interval) / 3);
    return [t, null, Math.round(total / 2), total];
  });
  return { interval, columns: ['time', 'group', 'self', 'total'], values };
}

/** The `result` of POST /v1/profile/tags: the tag names present. */
export function tagsAnswer() {
  return { columns: ['value', 'count'], values: [['pod', 1000], ['host', 1000], ['k8s.label.app', 500]] };
}

/** A successful envelope around `result`. */
export function envelope(result) {
  return JSON.stringify({ OPT_STATUS: 'SUCCESS', DESCRIPTION: '', result, debug: null });
}
