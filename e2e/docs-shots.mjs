#!/usr/bin/env node
// Regenerates screenshots of README.md and docs/guide.md from the real page and the demo service:
//   docs/screenshot.png  redis-server's on-CPU profile: timeline strip, flame graph, a tooltip
//   docs/timeline.png    nginx's profile with its timeline grouped by pod, a bucket read out
//   docs/home.png        the home view: every service ranked, its share of the whole host, sparklines
//   docs/functions.png   the home view's Functions tab: the fleet's hottest functions by self
//   docs/grew.png        What grew: the regression first, red, against the previous period
//   docs/function-timeline.png  api-gateway compared, the regressing function selected, its
//                        timeline in the strip above the graph
//   docs/analysis.png    nginx: a search highlighting two terms, the function table, a selected function
//   docs/compare.png     api-gateway's last 20 minutes against the 20 before, the regression hovered
// scripts/screenshots.sh runs this and, where eBPF is allowed, collector-shots.mjs.
// Both use the form's default range (the last hour, which the demo's data fills). Needs what the
// e2e suite needs (EMBERS_SERVER or target/release/embers-server, and dist/).
//   cd e2e && EMBERS_SERVER=… node docs-shots.mjs

import path from 'node:path';

import { REPO_DIR, startServer } from './lib/server.mjs';
import { launchBrowser, ROW_H, Viewer } from './lib/viewer.mjs';

const VIEWPORT = { width: 1400, height: 800 };
const out = (name) => path.join(REPO_DIR, 'docs', name);

async function flameShot(browser, server) {
  const v = await Viewer.open(browser, server, { viewport: VIEWPORT, params: { app_service: 'redis-server' } });
  try {
    await v.waitForGraph();
    // Once more, so the status line's "decoded in" is a warm decode's, not the worker's first.
    await v.query({});
    await v.waitForGraph();
    await v.el('timeline').waitFor();
    await v.hoverRow(7, { label: /epoll_wait/ });
    await v.page.screenshot({ path: out('screenshot.png') });
    v.assertNoErrors();
  } finally {
    await v.close();
  }
}

async function timelineShot(browser, server) {
  const v = await Viewer.open(browser, server, { viewport: VIEWPORT, params: { app_service: 'nginx' } });
  try {
    await v.waitForGraph();
    await v.el('group-by').selectOption('pod');
    await v.poll(() => v.frame.locator('[data-testid="legend-item"]').count(), (n) => n >= 3, { what: 'a legend entry per pod' });
    const box = await v.el('timeline').boundingBox();
    await v.page.mouse.move(box.x + box.width * 0.55, box.y + 30);
    await v.el('timeline-tooltip').waitFor();
    await v.settle();
    // The form, the strip and its legend, and the graph's top rows (cut at a row's edge).
    const canvas = await v.el('flame-canvas').boundingBox();
    const height = Math.round(canvas.y + 6 * ROW_H);
    await v.page.screenshot({ path: out('timeline.png'), clip: { x: 0, y: 0, width: VIEWPORT.width, height } });
    v.assertNoErrors();
  } finally {
    await v.close();
  }
}

async function homeShot(browser, server) {
  const v = await Viewer.open(browser, server, { viewport: { width: 1440, height: 830 } });
  try {
    await v.poll(() => v.frame.locator('[data-testid="service-row"]').count(), (n) => n >= 10, { what: 'the ranked services' });
    await v.poll(() => v.frame.locator('[data-testid="service-row"] svg polyline').count(), (n) => n >= 10, { what: 'their sparklines' });
    await v.poll(() => v.frame.locator('[data-testid="legend-item"]').count(), (n) => n >= 3, { what: 'the chart legend' });
    await v.settle();
    await v.page.screenshot({ path: out('home.png') });
    v.assertNoErrors();
  } finally {
    await v.close();
  }
}

/** The Functions tab, What grew, then a click on its first row: the comparison and the strip. */
async function functionShots(browser, server) {
  const v = await Viewer.open(browser, server, { viewport: { width: 1440, height: 830 }, params: { home: 'functions' } });
  try {
    const rows = (list) => v.frame.locator(`[data-testid="${list}"] [data-testid="function-row"]`);
    await v.poll(() => rows('function-list').count(), (n) => n >= 10, { what: 'the hottest functions' });
    await v.settle();
    await v.page.screenshot({ path: out('functions.png') });
    await v.el('home-tab-grew').click();
    await v.poll(() => rows('grew-list').count(), (n) => n >= 10, { what: 'what grew' });
    await v.settle();
    await v.page.screenshot({ path: out('grew.png') });
    await rows('grew-list').first().click();
    await v.waitForGraph();
    await v.el('function-readout').waitFor();
    const strip = await v.el('function-timeline').boundingBox();
    await v.page.mouse.move(strip.x + strip.width * 0.8, strip.y + 50);
    await v.el('timeline-tooltip').last().waitFor();
    await v.settle();
    await v.page.screenshot({ path: out('function-timeline.png') });
    v.assertNoErrors();
  } finally {
    await v.close();
  }
}

/** nginx with a search ("ngx_http, read"), the function table open and one function selected. */
async function analysisShot(browser, server) {
  const v = await Viewer.open(browser, server, { viewport: VIEWPORT, params: { app_service: 'nginx' } });
  try {
    await v.waitForGraph();
    await v.openTable();
    await v.search('ngx_http, read');
    await v.el('function-table').locator('[data-testid=table-row]').nth(3).click();
    // The selection opens the function's timeline in the strip: wait until it is drawn.
    await v.el('function-readout').waitFor();
    await v.settle();
    await v.page.screenshot({ path: out('analysis.png') });
    v.assertNoErrors();
  } finally {
    await v.close();
  }
}

/** api-gateway's last 20 minutes against the 20 before, the planted regression hovered. */
async function compareShot(browser, server) {
  const end = server.startedAt;
  const v = await Viewer.open(browser, server, {
    viewport: VIEWPORT, params: { app_service: 'api-gateway', time_start: end - 1200 + 1, time_end: end },
  });
  try {
    await v.waitForGraph();
    await v.openTable();
    await v.el('compare-menu').locator('summary').click();
    await v.el('compare-previous').click();
    await v.el('diff-legend').waitFor();
    await v.el('function-table').locator('table.diff-table').waitFor();
    await v.settle();
    const bar = (await v.bars()).find((b) => b.label !== null && /jsonEncodeRes/u.test(b.label));
    if (bar) await v.hoverBar(bar);
    await v.settle();
    await v.page.screenshot({ path: out('compare.png') });
    v.assertNoErrors();
  } finally {
    await v.close();
  }
}

const SHOTS = ['screenshot', 'timeline', 'home', 'functions', 'grew', 'function-timeline', 'analysis', 'compare'];
const [server, browser] = await Promise.all([startServer(), launchBrowser()]);
try {
  await flameShot(browser, server);
  await timelineShot(browser, server);
  await homeShot(browser, server);
  await functionShots(browser, server);
  await analysisShot(browser, server);
  await compareShot(browser, server);
  console.log(`wrote ${SHOTS.map((n) => out(`${n}.png`)).join(', ')}`);
} finally {
  await browser.close();
  await server.stop();
}
