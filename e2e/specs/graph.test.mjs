// The main flow: query a process, read the graph, hover, zoom, switch metric, and run a
// query named in the page URL.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { demoRange, openViewer, useServerAndBrowser } from '../lib/fixture.mjs';
import { labelShows, ROW_H } from '../lib/viewer.mjs';

const env = useServerAndBrowser();

// "62.6 s · 76.6% of all · 98.7% of parent"
const VALUE_LINE = /^[\d.]+ (µs|ms|s|min|h) · (<0\.01|[\d.]+)% of all · (<0\.01|[\d.]+)% of parent$/u;

test('1. querying a process draws its flame graph', async (t) => {
  const v = await openViewer(t, env);
  // The page opens on every service (the home view), not on a graph.
  await v.el('service-list').waitFor();
  assert.equal(await v.el('flame-canvas').count(), 0, 'no canvas before the first query');

  // Enter in the form submits.
  await v.query({ app: 'redis-server' }, { submit: 'enter' });
  const s = await v.waitForGraph();

  assert.equal(v.requests.length, 1);
  const body = v.requests[0].body;
  assert.equal(body.app_service, 'redis-server');
  assert.equal(body.profile_event_type, 'on-cpu');
  assert.equal(body.profile_language_type, 'eBPF');
  assert.equal(body.time_end - body.time_start, 3600, 'default preset is the last hour');

  assert.equal(s.root, 'redis-server');
  assert.ok(s.nodes > 20, `node count ${s.nodes}`);
  assert.ok(s.functions > 10 && s.functions <= s.nodes, `functions ${s.functions}`);
  assert.ok(s.depth >= 10, `depth ${s.depth}`);
  assert.equal(s.measure, 'CPU time');
  assert.equal(s.shape, 'B');
  assert.ok(s.value > 1e6, `root total ${s.valueText}`);
  assert.equal(await v.el('empty-state').count(), 0);
  assert.equal(await v.errorText(), null);

  // Pixels: a good part of the canvas is painted, the root spans the width at the top, and
  // nothing is painted below the deepest row.
  const snap = await v.canvasSnapshot();
  assert.ok(snap.painted / snap.total > 0.1, `only ${snap.painted} of ${snap.total} pixels painted`);
  const rootRow = await v.el('flame-canvas').evaluate((c, y) => {
    const d = c.getContext('2d').getImageData(0, y, c.width, 1).data;
    let white = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] === 255 && d[i + 1] === 255 && d[i + 2] === 255) white++;
    return { white, width: c.width };
  }, ROW_H / 2);
  assert.ok(rootRow.white <= 2, `root row has ${rootRow.white} background pixels`);
  const belowY = (s.depth + 1) * ROW_H + 2;
  if (belowY < snap.height) {
    const below = await v.el('flame-canvas').evaluate((c, y) => {
      const d = c.getContext('2d').getImageData(0, y, c.width, c.height - y).data;
      let painted = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i] !== 255 || d[i + 1] !== 255 || d[i + 2] !== 255) painted++;
      return painted;
    }, belowY);
    assert.equal(below, 0, `painted pixels below depth ${s.depth}`);
  }

  // The drawn bars agree with the status line.
  const bars = await v.bars();
  assert.equal(Math.max(...bars.map((b) => b.depth)), s.depth);
  const root = bars.find((b) => b.depth === 0);
  assert.equal(root.label, 'redis-server (100%)');
  assert.ok(root.x === 0 && root.w >= snap.width - 1, `root bar ${JSON.stringify(root)}`);
  assert.ok(bars.some((b) => b.label?.startsWith('[t] redis-server')), 'thread bar [t] redis-server');

  await v.screenshot('graph');
  v.assertNoErrors();
});

test('2. hover shows a tooltip; click zooms with breadcrumbs; Esc resets', async (t) => {
  const v = await openViewer(t, env);
  await v.query({ app: 'redis-server' });
  const s = await v.waitForGraph();
  const before = await v.canvasSnapshot('before');
  assert.deepEqual(await v.breadcrumbs(), ['redis-server']);
  assert.ok(await v.el('reset-zoom').isDisabled(), 'reset is disabled without a zoom');

  // Hover: name, kind, Total and Self lines (Total leads by default), and an outline.
  const target = await v.findBar(6);
  const tip = await v.hoverBar(target);
  assert.ok(labelShows(target.label, tip.name), `tooltip ${tip.name} for bar ${target.label}`);
  assert.match(tip.kind, /frame · depth 6$/);
  assert.deepEqual(tip.rows.map((r) => r[0]), ['Total', 'Self']);
  assert.equal(tip.lead, 'Total');
  for (const [, value] of tip.rows) assert.match(value, VALUE_LINE);
  await v.waitForCanvasStable();
  const outline = await v.hoverOutline();
  assert.ok(outline && Math.abs(outline.x - target.x) < 1 && Math.abs(outline.y - target.y) < 1,
    `hover outline ${JSON.stringify(outline)} on bar ${JSON.stringify(target)}`);
  await v.canvasSnapshot('hover');
  assert.ok((await v.canvasDiff('before', 'hover')) > 0, 'the hovered bar is outlined');
  const tipBox = await v.el('tooltip').boundingBox();
  const viewport = v.page.viewportSize();
  assert.ok(tipBox.x >= 0 && tipBox.x + tipBox.width <= viewport.width, `tooltip clipped: ${JSON.stringify(tipBox)}`);
  await v.screenshot('hover-tooltip');

  // The root's tooltip says 100% of all.
  const rootTip = await v.hoverBar(await v.findBar(0));
  assert.equal(rootTip.name, 'redis-server');
  assert.match(rootTip.rows[0][1], new RegExp(`^${s.valueText.replace('.', '\\.')} · 100% of all`));

  // Click: zoom into the bar; breadcrumbs show the path root → bar.
  await v.clickBar(target);
  await v.page.waitForFunction(() => document.querySelectorAll('[data-testid=breadcrumbs] button').length === 7);
  const crumbs = await v.breadcrumbs();
  assert.equal(crumbs.length, 7, `breadcrumbs ${JSON.stringify(crumbs)}`);
  assert.equal(crumbs[0], 'redis-server');
  assert.equal(crumbs[6], tip.name);
  assert.ok(await v.el('reset-zoom').isEnabled());
  await v.pointerAway();
  await v.waitForCanvasStable();
  const zoomed = await v.findBar(6);
  assert.ok(labelShows(zoomed.label, tip.name), `zoomed bar ${zoomed.label}`);
  const canvasWidth = await v.page.$eval('[data-testid=flame-canvas]', (c) => c.clientWidth);
  assert.ok(zoomed.x <= 0.5 && zoomed.w >= canvasWidth - 2, `zoomed bar spans the canvas width (${canvasWidth}): ${JSON.stringify(zoomed)}`);
  const ancestors = (await v.bars()).filter((b) => b.depth < 6);
  assert.equal(ancestors.length, 6, 'one (dimmed) ancestor per row above the zoomed bar');
  assert.ok(ancestors.every((b) => b.alpha < 1), 'ancestors are dimmed');
  await v.canvasSnapshot('zoomed');
  assert.ok((await v.canvasDiff('before', 'zoomed')) > 1000, 'the picture changes on zoom');
  await v.screenshot('zoomed');

  // A breadcrumb zooms out to that frame (from the "…" menu when it is folded there).
  const crumb = v.el('breadcrumbs').locator('button').nth(3);
  if (!(await crumb.isVisible())) await v.el('crumb-more').locator('summary').click();
  await crumb.click();
  await v.page.waitForFunction(() => document.querySelectorAll('[data-testid=breadcrumbs] button').length === 4);
  assert.deepEqual(await v.breadcrumbs(), crumbs.slice(0, 4));

  // Esc resets to the root; the picture is the original one again.
  await v.pointerAway();
  await v.page.keyboard.press('Escape');
  await v.page.waitForFunction(() => document.querySelectorAll('[data-testid=breadcrumbs] button').length === 1);
  assert.deepEqual(await v.breadcrumbs(), ['redis-server']);
  assert.ok(await v.el('reset-zoom').isDisabled());
  const after = await v.waitForCanvasStable();
  assert.equal(after.hash, before.hash, 'after Esc the graph is drawn as before the zoom');

  // The Reset button does the same as Esc.
  await v.clickBar(await v.findBar(4));
  await v.page.waitForFunction(() => document.querySelectorAll('[data-testid=breadcrumbs] button').length === 5);
  await v.el('reset-zoom').click();
  await v.page.waitForFunction(() => document.querySelectorAll('[data-testid=breadcrumbs] button').length === 1);
  v.assertNoErrors();
});

// Regression test for a fixed bug (viewer layout, style/main.css `.toggle`): the toolbar is a flex row and the metric
// toggle has `overflow: hidden`, so its automatic minimum width is 0 and it shrinks when the
// breadcrumbs get long: zoomed 6 frames deep at 1280 px the toggle reads "Total | Sel", at
// 760 px only "To". Fix: `.toggle { flex-shrink: 0; }` (and let the legend, not the
// controls, give way). This test fails until then.
test('2b. zoomed deep, the toolbar controls are not clipped (fails: known layout bug)', async (t) => {
  const v = await openViewer(t, env);
  await v.query({ app: 'redis-server' });
  await v.waitForGraph();
  const clipped = () => v.page.evaluate(() => ['metric-toggle', 'reset-zoom'].flatMap((id) => {
    const el = document.querySelector(`[data-testid=${id}]`);
    return el.scrollWidth > el.clientWidth + 1 ? [`${id}: ${el.clientWidth}px wide shows ${el.scrollWidth}px of content`] : [];
  }));
  assert.deepEqual(await clipped(), [], 'controls before zooming');
  await v.clickBar(await v.findBar(6));
  await v.page.waitForFunction(() => document.querySelectorAll('[data-testid=breadcrumbs] button').length === 7);
  await v.pointerAway();
  await v.screenshot('zoomed-toolbar');
  assert.deepEqual(await clipped(), [], 'controls after zooming 6 frames deep');
  v.assertNoErrors();
});

// Regression test for a fixed bug (viewer, src/components/flame_graph.rs tooltip placement): the tooltip is always put
// 14 px below the pointer (`top = y + 14`); only the horizontal position flips. Hovering a bar
// near the bottom of the graph area puts most of the tooltip (Total/Self lines) below the
// window edge. It should flip above the pointer when there is no room below. This test fails
// until then.
test('2c. a tooltip near the bottom of the graph stays inside the window', async (t) => {
  const v = await openViewer(t, env, { viewport: { width: 1280, height: 600 } });
  await v.query({ app: 'java' });
  await v.waitForGraph();
  const { height } = await v.canvasSnapshot();
  const bars = (await v.bars()).filter((b) => b.y + b.h <= height && b.w > 40);
  const lowest = bars.reduce((a, b) => (b.y > a.y ? b : a));
  assert.ok(lowest.y > height - 3 * ROW_H, `a bar in the last visible rows (y ${lowest.y} of ${height})`);
  const tip = await v.hoverBar(lowest);
  assert.ok(tip.name, 'tooltip shown');
  const box = await v.el('tooltip').boundingBox();
  await v.screenshot('tooltip-bottom');
  const viewport = v.page.viewportSize();
  assert.ok(box.y >= 0 && box.y + box.height <= viewport.height,
    `tooltip spans y ${Math.round(box.y)}..${Math.round(box.y + box.height)}, window height ${viewport.height}`);
  v.assertNoErrors();
});

test('3. the Self/Total toggle changes labels, tooltip order and shading', async (t) => {
  const v = await openViewer(t, env);
  await v.query({ app: 'java' });
  await v.waitForGraph();
  const toggle = v.el('metric-toggle');
  assert.equal(await toggle.getAttribute('data-metric'), 'total');
  assert.equal(await toggle.getAttribute('aria-pressed'), 'false');
  const total = await v.canvasSnapshot('total');
  const totalBars = await v.bars();
  const totalLabels = totalBars.map((b) => b.label).filter(Boolean);
  assert.ok(totalLabels.every((l) => !l.includes('(self ')), 'no self labels in total mode');
  assert.ok(totalLabels.some((l) => /\(\d[\d.]*%\)$/.test(l)), 'total labels end in (N%)');

  await toggle.click();
  assert.equal(await toggle.getAttribute('data-metric'), 'self');
  assert.equal(await toggle.getAttribute('aria-pressed'), 'true');
  await v.page.waitForFunction(() => window.__embersDraw?.bars.some((b) => b.label?.includes('(self ')));
  const self = await v.waitForCanvasStable();
  await v.canvasSnapshot('self');
  const changed = await v.canvasDiff('total', 'self');
  assert.ok(changed > total.painted * 0.2, `only ${changed} pixels changed on toggle`);
  const selfBars = await v.bars();
  assert.equal(selfBars.length, totalBars.length, 'same bars, only shading and labels differ');
  assert.deepEqual(selfBars.map((b) => [b.x, b.w, b.depth]), totalBars.map((b) => [b.x, b.w, b.depth]));
  assert.ok(new Set(selfBars.map((b) => b.fill)).size > 3, 'self shading uses several heat colours');
  assert.notDeepEqual(selfBars.map((b) => b.fill), totalBars.map((b) => b.fill));
  assert.equal(selfBars.find((b) => b.depth === 0).label, 'java (self 0%)');
  assert.ok(self.painted > 0);

  const { tip } = await v.hoverRow(2);
  assert.deepEqual(tip.rows.map((r) => r[0]), ['Self', 'Total']);
  assert.equal(tip.lead, 'Self');
  await v.screenshot('self-mode');

  await toggle.click();
  assert.equal(await toggle.getAttribute('data-metric'), 'total');
  await v.pointerAway();
  const back = await v.waitForCanvasStable();
  assert.equal(back.hash, total.hash, 'toggling back restores the total picture');
  v.assertNoErrors();
});

test('8. a URL with query parameters runs the query on load', async (t) => {
  const range = demoRange(env.server);
  const filter = "pod_ns='team-o\\'brien'";
  // A non-UTC browser zone: the absolute times must survive the local-time form fields.
  const v = await openViewer(t, env, {
    params: { app_service: 'java', profile_event_type: 'off-cpu', tag_filter: filter, ...range },
    timezoneId: 'Asia/Kolkata',
  });
  const s = await v.waitForGraph();
  // Measured once the layout is final: a size read while the page was still being built used
  // to paint the whole graph a second time a frame later.
  assert.equal(await v.page.evaluate(() => window.__embersDraws), 1, 'the first view paints the graph once');
  assert.equal(v.requests.length, 1, 'exactly one request, without pressing Query');
  const body = v.requests[0].body;
  assert.equal(body.app_service, 'java');
  assert.equal(body.profile_event_type, 'off-cpu');
  assert.equal(body.tag_filter, filter);
  assert.equal(body.time_start, range.time_start);
  assert.equal(body.time_end, range.time_end);

  assert.equal(s.root, 'java');
  assert.equal(s.measure, 'waiting time');
  // The form shows the query it ran.
  assert.equal(await v.el('app-service').inputValue(), 'java');
  assert.equal(await v.el('event-type').inputValue(), 'off-cpu');
  assert.equal(await v.el('tag-filter').inputValue(), filter);
  assert.equal(await v.el('time-preset').inputValue(), 'absolute');
  const shown = await v.el('time-start').inputValue();
  const shownSecs = await v.page.evaluate((x) => new Date(x).getTime() / 1000, shown);
  assert.equal(shownSecs, range.time_start, `time-start shows ${shown}`);
  // The address bar names the question once the answer's first frame is out (it is written
  // after that frame), with the range as asked.
  const url = new URL(v.page.url()).searchParams;
  assert.equal(url.get('app_service'), 'java');
  assert.equal(url.get('profile_event_type'), 'off-cpu');
  assert.equal(url.get('tag_filter'), filter);
  assert.equal(Number(url.get('time_start')), range.time_start);

  // Submitting the form again sends the same request.
  await v.query({});
  await v.waitForGraph();
  assert.equal(v.requests.length, 2);
  assert.deepEqual(v.requests[1].body, body);
  v.assertNoErrors();
});
