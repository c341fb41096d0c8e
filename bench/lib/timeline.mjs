// The timeline step: Embers' strip over a generated 300-bucket timeline (bench/lib/explore.mjs)
// grouped by pod (12 pods: the 10 largest + "other"), on the real page against the bench server.
// Timed as input → next frame painted (B.toFrame in lib/instrument.mjs):
// - hover: mousemoves sweeping across the strip, each onto another bucket (highlight + read-out);
// - brush: the selection overlay following the pointer during drags (5 moves a drag; each drag
//   is then taken back to under 4 px before release, which the strip treats as a click, so it
//   queries nothing);
// - release: a brush's mouseup → the strip redrawn for the new range (the new profile query and
//   one timeline query to the bench server included); Back restores the range between samples.

import { MOUSE_JS, newPage, rectOf, repeat, waitPainted } from './page.mjs';
import { fmtPair } from './stats.mjs';

const T0 = 1_700_000_000;
const BUCKETS = 300;
/** A 300 s range: interval 1 s, 300 buckets (the service's automatic maximum). */
export const TIMELINE_QUERY = `app_service=synthetic-service&time_start=${T0}&time_end=${T0 + BUCKETS - 1}`;
const MOVES_PER_DRAG = 5;

/** Runs the step; `server` must answer ProfileTracing already. */
export async function timelineStep(browser, server, { n, releases, timeoutMs }) {
  server.setExplore(true);
  const { context, page, errors } = await newPage(browser, 'embers', 'ProfileTracing');
  // Which part failed and where the page was, for the error message.
  let stage = 'opening the page';
  const urls = [];
  page.on('framenavigated', (f) => { if (f === page.mainFrame()) urls.push(f.url()); });
  try {
    await page.goto(`${server.url}/?${TIMELINE_QUERY}`);
    await waitPainted(page, errors, timeoutMs);
    stage = 'grouping the strip by pod';
    await groupedStrip(page, timeoutMs);
    await page.evaluate(MOUSE_JS);
    const rect = await rectOf(page, '[data-testid=timeline] svg');
    // Inside the bars (64 px high), clear of the tick labels below.
    const y = rect.y + 30;
    const shape = await page.evaluate(() => ({
      buckets: Number(document.querySelector('[data-testid=timeline]').dataset.buckets),
      groups: document.querySelectorAll('[data-testid=legend-item]').length,
    }));
    const out = { ...shape, width: rect.w };
    stage = 'hovering';
    out.hover = await hovers(page, rect, y, n);
    stage = 'moving brushes';
    out.brush = await brushMoves(page, rect, y, n);
    stage = 'releasing brushes';
    out.release = await brushReleases(page, rect, y, releases, timeoutMs);
    out.errors = errors;
    return out;
  } catch (e) {
    throw new Error(`${e.message ?? e} (while ${stage}; last URLs ${urls.slice(-3).join(' , ')}; ${errors.join(' | ')})`);
  } finally {
    server.setExplore(false);
    await context.close().catch(() => {});
  }
}

/** Waits for the 300-bucket strip and groups it by pod (untimed): ≥ 10 legend entries. */
async function groupedStrip(page, timeoutMs) {
  await page.waitForSelector(`[data-testid=timeline][data-buckets="${BUCKETS}"]`, { timeout: timeoutMs });
  await page.evaluate(() => {
    const select = document.querySelector('[data-testid=group-by]');
    select.value = 'pod';
    select.dispatchEvent(new Event('change', { bubbles: true }));
  });
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=legend-item]').length >= 10, null, { timeout: timeoutMs });
}

/** Sweeps the strip left to right: every move lands on the next bucket along. */
function hovers(page, rect, y, n) {
  return repeat(n, (i) => page.evaluate(([x, y]) => {
    const head = () => document.querySelector('[data-testid=timeline-tooltip]')?.firstElementChild?.textContent ?? null;
    const before = head();
    return window.__bench.toFrame(() => window.__benchMouse('mousemove', x, y), () => head() !== null && head() !== before);
  }, [rect.x + ((i % BUCKETS) + 0.5) * (rect.w / Math.min(n, BUCKETS)), y]));
}

/** Drags from a quarter of the way along, timing each move of the overlay; releases each drag
 *  back at its start (a click: nothing is queried). */
async function brushMoves(page, rect, y, n) {
  const drags = Math.ceil(n / MOVES_PER_DRAG);
  const samples = [];
  const failures = [];
  for (let d = 0; d < drags; d++) {
    const xa = rect.x + rect.w * (0.2 + 0.05 * (d % 4));
    await page.evaluate(([x, y]) => window.__benchMouse('mousedown', x, y, { buttons: 1 }), [xa, y]);
    const moves = await repeat(MOVES_PER_DRAG, (k) => page.evaluate(([xa, x, y]) => {
      const width = () => Number(document.querySelector('[data-testid=timeline-brush]')?.getAttribute('width') ?? NaN);
      return window.__bench.toFrame(
        () => window.__benchMouse('mousemove', x, y, { buttons: 1 }),
        () => Math.abs(width() - (x - xa)) < 1.5,
      );
    }, [xa, xa + (k + 1) * (rect.w * 0.08), y]));
    samples.push(...moves.samples);
    failures.push(...moves.failures);
    await page.evaluate(([x, y]) => {
      window.__benchMouse('mousemove', x, y, { buttons: 1 });
      window.__benchMouse('mouseup', x, y);
    }, [xa + 1, y]);
    await page.waitForFunction(() => !document.querySelector('[data-testid=timeline-brush]'));
  }
  return { samples: samples.slice(0, n), failures };
}

/** Waits until the page shows the 300-bucket range again, its graph loaded and the strip
 *  grouped by pod (regrouping it if the strip was rebuilt without). */
async function backToRange(page, timeoutMs) {
  await page.waitForFunction(([t0, buckets]) => {
    const strip = document.querySelector('[data-testid=timeline]');
    return new URLSearchParams(location.search).get('time_start') === String(t0)
      && / nodes /.test(document.querySelector('[data-testid=status]')?.textContent ?? '')
      && strip?.dataset.buckets === String(buckets);
  }, [T0, BUCKETS], { timeout: timeoutMs });
  const grouped = await page.evaluate(() => document.querySelectorAll('[data-testid=legend-item]').length >= 10);
  if (!grouped) await groupedStrip(page, timeoutMs);
  await page.evaluate(() => window.__bench.frames(3));
}

/** Brushes a quarter of the range and times the release until the strip shows the new range;
 *  Back (untimed) returns to the 300 buckets grouped by pod before the next sample. */
async function brushReleases(page, rect, y, n, timeoutMs) {
  const [xa, xb] = [rect.x + rect.w * 0.25, rect.x + rect.w * 0.5];
  const samples = [];
  const failures = [];
  for (let i = 0; i < n; i++) {
    await backToRange(page, timeoutMs);
    await page.evaluate(([xa, xb, y]) => {
      window.__benchMouse('mousedown', xa, y, { buttons: 1 });
      window.__benchMouse('mousemove', (xa + xb) / 2, y, { buttons: 1 });
      window.__benchMouse('mousemove', xb, y, { buttons: 1 });
    }, [xa, xb, y]);
    await page.evaluate(() => window.__bench.frames(2));
    const r = await page.evaluate(([xb, y, timeoutMs]) => {
      const drawn = () => {
        const strip = document.querySelector('[data-testid=timeline]');
        return !!strip && strip.dataset.buckets !== '300' && strip.querySelectorAll('g.bars rect').length > 0;
      };
      return window.__bench.toFrame(() => window.__benchMouse('mouseup', xb, y), drawn, { aligned: false, timeoutMs });
    }, [xb, y, timeoutMs]);
    if (!r.ok) {
      // No new range, so no history entry to go back from: stop here.
      failures.push(r.error);
      break;
    }
    samples.push(r.ms);
    // The address takes the new range once its profile has loaded, which may be after the strip
    // showed it; Back before that would leave the page.
    await page.waitForFunction((t0) => new URLSearchParams(location.search).get('time_start') !== String(t0), T0, { timeout: timeoutMs });
    await page.evaluate(() => history.back());
  }
  return { samples, failures };
}

/** One line for the log and the report. */
export function timelineLine(tl) {
  if (tl.error) return `Timeline (Embers): FAILED — ${tl.error}`;
  const failed = ['hover', 'brush', 'release'].map((k) => tl[k]?.failures ? ` (${k}: ${tl[k].failures} failed: ${tl[k].failureReasons.join('; ')})` : '').join('');
  return `Timeline (Embers, ${tl.buckets} buckets × ${tl.groups} groups, ${Math.round(tl.widthPx)} px; input → next frame painted, p50 / p95): `
    + `hover ${fmtPair(tl.hover)}, brush overlay ${fmtPair(tl.brush)}, brush release → strip for the new range ${fmtPair(tl.release)} (its profile and timeline queries included)${failed}`;
}
