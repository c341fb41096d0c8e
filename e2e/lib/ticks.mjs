// A workload with a clock in it, for the time views' specs (issue 37): one thread that runs
// `tick_first` in the first half of every wall-clock second and `tick_second` in the second
// half, sampled every 10 ms, ingested with its event times (the ingest body's `details`).

import assert from 'node:assert/strict';

/** What the workload is and how it was sampled. */
export const TICK = {
  app: 'tick-tock',
  first: 'tick_first',
  second: 'tick_second',
  tid: 4711,
  everyMs: 10,
  /** One sample's value: 10 ms of CPU in µs. */
  weightUs: 10_000,
  /** Samples in a 20 ms heatmap slot (50 slots a second). */
  eventsPerSlot: 2,
  seconds: 8,
};

/** One second of the workload as an ingest batch, its events timed to the millisecond. */
function second(time) {
  const events = (from, to) => {
    const out = [];
    for (let ms = from; ms < to; ms += TICK.everyMs) out.push({ offset_ms: ms, tid: TICK.tid, weight: TICK.weightUs });
    return out;
  };
  const half = (500 / TICK.everyMs) * TICK.weightUs;
  return {
    app_service: TICK.app, profile_language_type: 'eBPF', profile_event_type: 'on-cpu', time, tags: { host: 'node-t' },
    folded: `main;loop;${TICK.first} ${half}\nmain;loop;${TICK.second} ${half}\n`,
    details: [{ sample: 0, events: events(0, 500) }, { sample: 1, events: events(500, 1000) }],
  };
}

/**
 * Ingests the workload's seconds into `server` (ending a minute before it started); returns the
 * request of a range with two empty seconds either side, and the heatmap column of its first
 * second of data.
 */
export async function ingestTicks(server) {
  const first = server.startedAt - 60;
  const batches = Array.from({ length: TICK.seconds }, (_, i) => second(first + i));
  const res = await fetch(`${server.url}/v1/profile/ingest`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ batches }),
  });
  assert.equal(res.status, 200, await res.text());
  const request = {
    app_service: TICK.app, profile_language_type: 'eBPF', profile_event_type: 'on-cpu',
    time_start: first - 2, time_end: first + TICK.seconds + 1,
  };
  return { request, firstColumn: 2, firstSecond: first };
}
