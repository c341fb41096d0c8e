// The Source panel (issue 36 item 5) on a real Go CPU profile (runtime/pprof of
// server/tests/data/go/hot, with Line records): opened as a file, without a service question,
// clicking the hot function's frame and opening the panel lists its lines hottest first — the
// loop body, main.go:26, on top — with heat bars; the panel is in the URL, reachable by the
// keyboard (o, arrows), and explains a frame without lines in words. Imported into the service
// (started with --source-dir and --source-url), the same lines come from function_lines and the
// code shows beside them, the heat in the gutter of line 26, scrolled to it, with a link to the
// line where the code is hosted. Screenshots in light and dark (e2e/screenshots/source-*.png).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { openViewer, useServerAndBrowser } from '../lib/fixture.mjs';
import { parseStatus } from '../lib/viewer.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// The program's source is where the service may read it; the profile names it by the path it
// was built at (/work/wt/formats/server/tests/data/go/hot/main.go), which the link strips.
const LINK = 'https://git.example/embers/blob/main/{path}#L{line}';
const env = useServerAndBrowser({
  extraArgs: [
    '--source-dir', path.join(ROOT, 'server/tests/data/go/hot'),
    '--source-url', LINK, '--source-url-strip', '/work/wt/formats/',
  ],
});
const GO_CPU = readFileSync(path.join(ROOT, 'model/tests/data/pprof/go-cpu.pb.gz'));

/** Clicks the widest drawn frame whose label starts with `name` (it zooms and selects). */
async function clickFrame(v, name) {
  const bars = (await v.bars()).filter((b) => b.alpha === 1 && b.label?.startsWith(name));
  assert.ok(bars.length > 0, `a frame labelled ${name}`);
  await v.clickBar(bars.reduce((a, b) => (b.w > a.w ? b : a)));
}

/** The panel's rows: [{ file, line, text, current }]. */
function panelRows(v) {
  return v.el('source-lines').locator('[data-testid=source-line]').evaluateAll((lis) => lis.map((li) => ({
    file: li.dataset.file,
    line: Number(li.dataset.line),
    text: li.textContent.trim(),
    current: li.classList.contains('current'),
  })));
}

/** Opens the Go profile as a file and waits for its graph. */
async function openGoFile(v) {
  await v.importFile('go-cpu.pb.gz', GO_CPU, 'application/octet-stream');
  await v.poll(async () => parseStatus(await v.status()), (s) => s?.root === 'go-cpu', { what: 'go-cpu drawn', timeout: 20_000 });
  await v.waitForCanvasStable();
}

test('S1. an opened Go pprof file: the hot function\'s lines, hottest (the loop body) first', async (t) => {
  const v = await openViewer(t, env);
  // The panel is an on-demand module: fetched when it first opens, not with the page.
  const asked = v.recordViewModules();
  await openGoFile(v);
  await clickFrame(v, 'main.hotLoop');
  assert.deepEqual(asked, [], 'no view module before the panel opens');
  await v.el('source-toggle').click();
  await v.el('source-panel').waitFor({ state: 'visible' });
  assert.deepEqual([...asked].sort(), ['/source_view.js', '/source_view_bg.wasm']);
  assert.equal((await v.el('source-panel').locator('.source-function').textContent()).trim(), 'main.hotLoop');
  const rows = await v.poll(() => panelRows(v), (r) => r.length > 0, { what: 'the lines listed' });
  assert.deepEqual(rows.map((r) => r.line), [26, 25], 'the loop body burns most, then the loop header');
  assert.match(rows[0].file, /go\/hot\/main\.go$/);
  assert.match(rows[0].text, /^main\.go:26/);
  assert.ok(rows[0].current, 'the hottest line is the one shown');
  // The bars: go tool pprof -lines -top has main.go:26 at 490 ms of hotLoop's 650 ms (75%),
  // 340 ms of it its own.
  const widths = await v.el('source-lines').locator('[data-testid=source-line]').first().evaluate((li) => ({
    total: parseFloat(li.querySelector('.total').style.width),
    self: parseFloat(li.querySelector('.self').style.width),
  }));
  assert.ok(Math.abs(widths.total - 75.4) < 0.2 && Math.abs(widths.self - 52.3) < 0.2, JSON.stringify(widths));
  assert.match(await v.el('source-no-code').textContent(), /opened file/);
  assert.equal(v.requests.length, 0, 'an opened file asks no service');
  // In the URL: the selection and the panel.
  const params = new URL(v.page.url()).searchParams;
  assert.equal(params.get('source'), '1');
  assert.equal(params.get('select'), 'main.hotLoop');

  // Keyboard: ↓ moves to the next line, Enter shows it; o closes and opens the panel.
  await v.el('source-lines').locator('button').first().focus();
  await v.page.keyboard.press('ArrowDown');
  await v.page.keyboard.press('Enter');
  await v.poll(() => panelRows(v), (r) => r[1]?.current, { what: 'line 25 chosen' });
  await v.page.keyboard.press('Escape');
  await v.el('source-panel').waitFor({ state: 'detached' });
  assert.equal(new URL(v.page.url()).searchParams.get('source'), null);
  await v.page.keyboard.press('o');
  await v.el('source-panel').waitFor({ state: 'visible' });
  await v.poll(() => panelRows(v), (r) => r[0]?.line === 26, { what: 'lines again' });
  assert.equal(asked.length, 2, `opened again without a second fetch: ${asked.join(' ')}`);
  await v.screenshot('source-file-light');
  v.assertNoErrors();
});

test('S2. a frame without lines says why; the panel follows search matches', async (t) => {
  const v = await openViewer(t, env);
  await openGoFile(v);
  await v.page.keyboard.press('o');
  await v.el('source-panel').waitFor({ state: 'visible' });
  assert.match(await v.el('source-empty').textContent(), /Select a frame/);
  // The root (the file's name) is no function of the program: no lines, in words.
  await clickFrame(v, 'main.warmLoop');
  await v.poll(() => panelRows(v), (r) => r[0]?.line === 37, { what: 'warmLoop\'s lines' });
  // A search match selects what it lands on while the panel is open.
  await v.el('search').fill('runtime.main');
  await v.el('search').press('Enter');
  await v.poll(async () => (await v.el('source-panel').locator('.source-function').textContent()).trim(),
    (name) => name === 'runtime.main', { what: 'the match selected' });
  await v.poll(() => panelRows(v), (r) => r[0]?.line === 250, { what: 'runtime.main\'s line' });
  await v.el('search').fill('go-cpu');
  await v.el('search').press('Enter');
  await v.poll(async () => (await v.el('source-empty').textContent().catch(() => '')),
    (text) => /none for this one/.test(text), { what: 'the root explained' });
  // Dark theme: Auto → Light → Dark (the search cleared, so no frame is dimmed).
  await v.el('search').fill('');
  await v.waitForCanvasStable();
  await clickFrame(v, 'main.hotLoop');
  await v.poll(() => panelRows(v), (r) => r[0]?.line === 26, { what: 'hotLoop again' });
  const theme = v.el('theme-toggle');
  await theme.click();
  await theme.click();
  await v.poll(() => v.page.evaluate(() => document.documentElement.getAttribute('data-theme')), (d) => d === 'dark', { what: 'dark' });
  await v.waitForCanvasStable();
  await v.screenshot('source-file-dark');
  v.assertNoErrors();
});

test('S3. imported into the service: lines from function_lines, the code with the heat in its gutter, a link', async (t) => {
  const at = env.server.startedAt - 120;
  const q = new URLSearchParams({ name: 'go-hot', format: 'pprof', spyName: 'gospy', from: String(at) });
  const res = await fetch(`${env.server.url}/ingest?${q}`, { method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: GO_CPU });
  assert.equal(res.status, 200, await res.text());
  // The URL opens the profile with the function selected and the panel open.
  const v = await openViewer(t, env, {
    params: {
      app_service: 'go-hot', profile_language_type: 'Golang', profile_event_type: 'cpu',
      time_start: at - 60, time_end: at + 60, select: 'main.hotLoop', source: '1',
    },
  });
  await v.waitForGraph();
  const rows = await v.poll(() => panelRows(v), (r) => r.length > 0, { what: 'the lines listed', timeout: 20_000 });
  assert.deepEqual(rows.map((r) => r.line), [26, 25], 'the loop body first, as in the file');
  const code = v.el('source-code');
  const hot = code.locator('.code-line[data-line="26"]');
  await hot.waitFor({ state: 'visible' });
  assert.match(await hot.textContent(), /x = x\*6364136223846793005/, 'the text of the hot line');
  assert.equal(await hot.getAttribute('data-heat'), '5', 'the hottest heat in its gutter');
  assert.equal(await code.locator('.code-line[data-line="25"]').getAttribute('data-heat'), '2');
  assert.equal(await code.locator('.code-line[data-line="24"]').getAttribute('data-heat'), '0');
  // Scrolled to it: the hot line is inside the code box.
  await v.poll(() => code.evaluate((box) => {
    const line = box.querySelector('[data-line="26"]').getBoundingClientRect();
    const b = box.getBoundingClientRect();
    return line.top >= b.top && line.bottom <= b.bottom;
  }), (inside) => inside, { what: 'line 26 scrolled into view' });
  const link = v.el('source-link').first();
  assert.equal(await link.getAttribute('href'), 'https://git.example/embers/blob/main/server/tests/data/go/hot/main.go#L26');
  assert.equal(await link.getAttribute('target'), '_blank');
  await v.screenshot('source-service-light');
  const theme = v.el('theme-toggle');
  await theme.click();
  await theme.click();
  await v.poll(() => v.page.evaluate(() => document.documentElement.getAttribute('data-theme')), (d) => d === 'dark', { what: 'dark' });
  await v.waitForCanvasStable();
  await v.screenshot('source-service-dark');
  v.assertNoErrors();
});
