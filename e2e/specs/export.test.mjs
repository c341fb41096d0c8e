// Export (SVG, folded stacks, ProfileTracing JSON, PNG) and import (round trips, hostile
// names, malformed files); theme and palette.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { openViewer, useServerAndBrowser } from '../lib/fixture.mjs';
import { foldedStats } from '../lib/folded.mjs';
import { parseStatus } from '../lib/viewer.mjs';

const env = useServerAndBrowser();
const EVIL = '<img src=x onerror=alert(1)>';

/** Node count, depth and total of the profile that folded stacks (without root) describe. */

/** The status fields that must survive a round trip (not the decode time). */
const essentials = (s) => ({ root: s.root, nodes: s.nodes, functions: s.functions, depth: s.depth, valueText: s.valueText, measure: s.measure });

/**
 * Parses SVG text in a blank page of the viewer's browser: { error, frames, images, scripts,
 * names }. Not in the viewer's page: the exported file has its own inline styles, which the
 * viewer's CSP (rightly) refuses to apply in the viewer's document.
 */
async function parseSvgInPage(v, text) {
  const blank = await v.context.newPage();
  const parsed = await blank.evaluate((text) => {
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    const error = doc.querySelector('parsererror')?.textContent ?? null;
    return {
      error,
      root: doc.documentElement.localName,
      frames: doc.querySelectorAll('g.f').length,
      images: doc.getElementsByTagNameNS('*', 'img').length + doc.getElementsByTagNameNS('*', 'image').length,
      scripts: doc.getElementsByTagNameNS('*', 'script').length,
      names: [...doc.querySelectorAll('g.f')].map((g) => g.getAttribute('data-n')),
      title: doc.getElementById('title')?.textContent ?? null,
    };
  }, text);
  await blank.close();
  return parsed;
}

test('A10. export SVG / folded / JSON / PNG; JSON imports back; hostile names stay text', async (t) => {
  const v = await openViewer(t, env);
  const dialogs = [];
  v.page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  await v.query({ app: 'redis-server' });
  const s0 = await v.waitForGraph();

  // SVG: a well-formed document with one <g class="f"> per visible frame.
  const svg = await v.download('export-svg');
  assert.equal(svg.name, 'embers-redis-server.svg');
  assert.ok(svg.text.startsWith('<?xml'), svg.text.slice(0, 40));
  const frames = svg.text.match(/<g class="f"/g)?.length ?? 0;
  assert.ok(frames > 0.9 * s0.nodes && frames <= s0.nodes, `${frames} frames for ${s0.nodes} nodes`);
  assert.ok(svg.text.includes('data-n="redis-server"'), 'the root is in the SVG');
  assert.equal(svg.text.match(/<script/g).length, 1, 'only the viewer script');
  const parsed = await parseSvgInPage(v, svg.text);
  assert.equal(parsed.error, null);
  assert.equal(parsed.root, 'svg');
  assert.equal(parsed.frames, frames);
  assert.equal(parsed.title, 'redis-server — on-cpu');
  assert.equal(parsed.names[0], 'redis-server');

  // Folded stacks of the displayed graph, without the root frame.
  const folded = await v.download('export-folded');
  assert.equal(folded.name, 'embers-redis-server.folded');
  const fs = foldedStats(folded.text);
  assert.equal(fs.nodes, s0.nodes);
  assert.equal(fs.depth, s0.depth);
  assert.ok(Math.abs(fs.total - s0.value) / s0.value < 0.005, `folded total ${fs.total} vs ${s0.valueText}`);
  const [header, ...stackLines] = folded.text.split('\n');
  assert.equal(header, '# Embers folded stacks: profile_event_type=on-cpu', 'a comment says what the values are');
  assert.ok(stackLines.every((l) => !l || /^[^;#].* \d+$/.test(l)), 'every other line is "stack value"');
  assert.ok(!folded.text.includes('redis-server;[t]'), 'no root frame');

  // JSON: the ProfileTracing envelope as received.
  const json = await v.download('export-json');
  assert.equal(json.name, 'embers-redis-server.json');
  const body = JSON.parse(json.text);
  assert.equal(body.OPT_STATUS, 'SUCCESS');
  assert.ok(Array.isArray(body.result.functions) && body.result.functions.includes('readQueryFromClient'));

  // PNG of the visible graph: a real PNG the canvas's size.
  const png = await v.download('export-png');
  assert.equal(png.name, 'embers-redis-server.png');
  assert.deepEqual([...png.buffer.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.ok(png.buffer.length > 5000, `${png.buffer.length} bytes`);
  const canvas = await v.canvasSnapshot();
  assert.deepEqual([png.buffer.readUInt32BE(16), png.buffer.readUInt32BE(20)], [canvas.width, canvas.height]);

  // The JSON imports back to the same graph.
  await v.redrawAfter(() => v.importFile(json.name, json.text, 'application/json'));
  const fromJson = parseStatus(await v.status());
  assert.deepEqual(essentials(fromJson), essentials(s0));
  assert.equal(fromJson.shape, 'B');
  assert.equal(v.requests.length, 1, 'an import sends no query');

  // Folded stacks import (here with a frame named like an HTML tag) and are never parsed as HTML.
  await v.importFile('evil.folded', `main;${EVIL} 5\nmain;ok 1\n# a comment\n`);
  const evil = await v.poll(async () => parseStatus(await v.status()), (x) => x?.root === 'evil', { what: 'evil.folded loaded' });
  assert.equal(evil.nodes, 4);
  assert.equal(evil.shape, null, 'folded stacks have no shape');
  await v.waitForCanvasStable();
  assert.ok((await v.labels()).some((l) => l.startsWith(EVIL)), 'the name is drawn as text on the canvas');
  await v.openTable();
  assert.ok((await v.tableRows()).some((r) => r.name === EVIL), 'the table shows the name as text');
  const { tip } = await v.hoverRow(2, { label: /^<img/ });
  assert.equal(tip.name, EVIL, 'the tooltip shows the name as text');
  await v.pointerAway();
  const evilSvg = await v.download('export-svg');
  assert.equal(evilSvg.name, 'embers-evil.svg');
  assert.ok(evilSvg.text.includes('data-n="&lt;img src=x onerror=alert(1)&gt;"'), 'escaped in the attribute');
  assert.ok(evilSvg.text.includes('<title>&lt;img src=x onerror=alert(1)&gt; ('), 'escaped in the title');
  assert.ok(!evilSvg.text.includes('<img'), 'no raw tag');
  const evilParsed = await parseSvgInPage(v, evilSvg.text);
  assert.equal(evilParsed.error, null);
  assert.equal(evilParsed.images, 0);
  assert.equal(evilParsed.scripts, 1);
  assert.ok(evilParsed.names.includes(EVIL), 'the name round-trips through XML');
  assert.equal(await v.page.evaluate(() => document.querySelectorAll('img, image').length), 0, 'the page made no <img>');

  // The exported SVG works on its own: its script labels frames and nothing fires.
  const svgPage = await v.context.newPage();
  const svgErrors = [];
  svgPage.on('pageerror', (e) => svgErrors.push(e.message));
  svgPage.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  await svgPage.route('http://svg.test/**', (r) => r.fulfill({ contentType: 'image/svg+xml', body: evilSvg.text }));
  await svgPage.goto('http://svg.test/embers-evil.svg');
  const labels = await svgPage.evaluate(() => [...document.querySelectorAll('g.f text')].map((x) => x.textContent));
  assert.ok(labels.includes(EVIL), `labels ${JSON.stringify(labels)}`);
  assert.equal(await svgPage.evaluate(() => document.getElementsByTagNameNS('*', 'img').length), 0);
  await svgPage.close();
  assert.deepEqual(svgErrors, []);
  assert.deepEqual(dialogs, [], 'no alert() ran');

  // A malformed file: an error banner, and the page stays usable.
  await v.importFile('broken.json', '{"OPT_STATUS":"SUCCESS","result":{"functions":[');
  await v.el('error').waitFor({ state: 'visible' });
  assert.match(await v.errorText(), /Could not import broken\.json: /);
  assert.match(await v.errorText(), /^Import failed\. /);
  assert.equal(await v.status(), 'The last import failed.');
  assert.equal(await v.el('flame-canvas').count(), 0);
  await v.query({ app: 'redis-server' });
  // (A new "last hour" window: the total may differ a little.)
  const again = await v.waitForGraph();
  assert.equal(again.root, 'redis-server');
  assert.ok(again.nodes > 0.9 * s0.nodes, `${again.nodes} nodes`);
  assert.equal(await v.errorText(), null);
  await v.importFile('not-folded.txt', 'this is not;folded\n');
  assert.match(await v.poll(() => v.errorText(), (x) => x !== null, { what: 'error banner' }),
    /Could not import not-folded\.txt: it is neither ProfileTracing JSON nor folded stacks \(line 1: /);
  v.assertNoErrors();
});

// Regression test for a fixed bug (viewer, src/components/export.rs `import_text`): a file whose text starts with `[` is
// taken for JSON. Folded stacks exported by Embers itself start with a thread frame
// (`[t] bio_aof_fsync;[l] start_thread 111111`), so Export → Folded stacks → Import fails with
// "Could not import embers-redis-server.folded: The response (HTTP 200) is not JSON (expected
// ident at line 1 column 3)". Any perf/DeepFlow folded file starting with `[k]`, `[t]`, `[p]`,
// `[unknown]` fails the same way. Fix: sniff JSON only for `{`, or for `[` followed by
// whitespace/`{`/`]`, or fall back to folded parsing when JSON decoding fails.
test('A10b. exported folded stacks import back', async (t) => {
  const v = await openViewer(t, env);
  await v.query({ app: 'redis-server' });
  const s0 = await v.waitForGraph();
  const folded = await v.download('export-folded');
  assert.match(folded.text.split('\n')[1], /^\[t\] /, 'the first stack starts with a thread frame');
  await v.importFile(folded.name, folded.text);
  const back = await v.poll(async () => parseStatus(await v.status()), (x) => x && x.shape === null, { what: 'folded import', timeout: 3000 });
  assert.equal(await v.errorText(), null);
  assert.deepEqual(essentials(back), essentials(s0));
  v.assertNoErrors();
});

// Regression test for a fixed bug (viewer, src/app.rs `Viewer` / src/components/toolbar.rs `Toolbar`): the Export menu,
// which holds "Import file…", lives in the toolbar, and the toolbar only exists while a
// non-empty profile is shown. After a failed import (or a failed query, or on a fresh page)
// there is no way to pick a file except drag-and-drop; embedded (no form) the frame is stuck
// until the host sends something. Reproduce: import any malformed file → the Export/Import
// menu, Table, theme and help buttons disappear. Fix: keep the import entry (and theme/help)
// outside the profile-only toolbar.
test('A10c. after a failed import, another file can be imported', async (t) => {
  const v = await openViewer(t, env);
  await v.query({ app: 'redis-server' });
  await v.waitForGraph();
  await v.importFile('broken.json', '{');
  await v.el('error').waitFor({ state: 'visible' });
  assert.equal(await v.el('import-file').count(), 1, 'the import entry is still there');
  await v.importFile('ok.folded', 'main;a 1\n');
  assert.equal((await v.waitForGraph()).root, 'ok');
  v.assertNoErrors();
});

test('A11. theme cycles Auto/Light/Dark on <html>, dark paints a dark canvas; palette recolours', async (t) => {
  const v = await openViewer(t, env);
  await v.query({ app: 'redis-server' });
  await v.waitForGraph();
  const theme = v.el('theme-toggle');
  const dataTheme = () => v.page.evaluate(() => document.documentElement.getAttribute('data-theme'));
  const corner = async () => {
    const { width, height } = await v.canvasSnapshot();
    return v.canvasPixel(width - 1, height - 1);
  };
  const light = await v.canvasSnapshot('light');
  assert.equal((await theme.textContent()).trim(), 'Auto');
  assert.equal(await dataTheme(), null);
  assert.deepEqual(await corner(), [255, 255, 255]);

  await theme.click();
  assert.equal((await theme.textContent()).trim(), 'Light');
  assert.equal(await dataTheme(), 'light');
  assert.deepEqual(await corner(), [255, 255, 255]);

  await v.redrawAfter(() => theme.click());
  assert.equal((await theme.textContent()).trim(), 'Dark');
  assert.equal(await dataTheme(), 'dark');
  const bg = await corner();
  assert.ok(bg.every((c) => c < 60), `dark canvas background ${bg}`);
  await v.canvasSnapshot('dark', { bg });
  assert.ok((await v.canvasDiff('light', 'dark')) > 0.3 * light.total, 'the background changed');
  const bodyBg = await v.page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const rgb = bodyBg.match(/\d+/g).slice(0, 3).map(Number);
  assert.ok(rgb.every((c) => c < 60), `page background ${bodyBg}`);
  assert.equal(await v.page.evaluate(() => localStorage.getItem('embers-theme')), 'dark');
  await v.screenshot('dark-theme');

  // The choice survives a reload.
  await v.page.reload();
  await v.waitForGraph();
  assert.equal((await v.el('theme-toggle').textContent()).trim(), 'Dark');
  assert.equal(await dataTheme(), 'dark');
  assert.deepEqual(await corner(), bg);

  await v.redrawAfter(() => v.el('theme-toggle').click());
  assert.equal((await v.el('theme-toggle').textContent()).trim(), 'Auto');
  assert.equal(await dataTheme(), null);
  assert.deepEqual(await corner(), [255, 255, 255]);
  const classic = await v.canvasSnapshot('classic');
  const classicBars = await v.bars();
  assert.equal(classic.hash, light.hash, 'back to the light picture');

  // Colour-blind palette: the same bars in other colours (the root stays neutral).
  const palette = v.el('palette-toggle');
  assert.equal(await palette.getAttribute('aria-pressed'), 'false');
  const swatches = () => v.page.locator('.legend .swatch').evaluateAll((els) => els.map((e) => e.style.background));
  const classicSwatches = await swatches();
  await v.redrawAfter(() => palette.click());
  assert.equal(await palette.getAttribute('aria-pressed'), 'true');
  const cbBars = await v.bars();
  assert.deepEqual(cbBars.map((b) => [b.x, b.y, b.w]), classicBars.map((b) => [b.x, b.y, b.w]));
  const changed = cbBars.filter((b, i) => b.fill !== classicBars[i].fill).length;
  assert.ok(changed > 0.8 * (cbBars.length - 1), `${changed} of ${cbBars.length} bars recoloured`);
  assert.equal(cbBars[0].fill, classicBars[0].fill, 'root colour unchanged');
  await v.canvasSnapshot('cb');
  assert.ok((await v.canvasDiff('classic', 'cb')) > 10_000);
  assert.notDeepEqual(await swatches(), classicSwatches, 'the legend follows');
  await v.redrawAfter(() => palette.click());
  assert.equal((await v.waitForCanvasStable()).hash, classic.hash, 'classic again');
  v.assertNoErrors();
});
