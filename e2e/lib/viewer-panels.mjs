// The Viewer's actions on the panels around the graph: search, function table, noise control,
// export/import, keyboard focus, and the host page of an embedded viewer. Mixed into Viewer
// (lib/viewer.mjs); `this` is the Viewer.

import { parseValue } from './parse.mjs';

export class PanelActions {
  /** The search summary text. */
  async searchSummary() {
    return (await this.el('search-summary').textContent()).trim();
  }

  /**
   * Replaces the search text and waits until the summary reacts (non-empty for a non-empty
   * search); returns the summary.
   */
  async search(text) {
    await this.el('search').fill(text);
    await this.settle();
    const summary = !text.trim()
      ? await this.poll(() => this.searchSummary(), (t) => t === '', { what: 'empty search summary' })
      : await this.poll(() => this.searchSummary(), (t) => t !== '', { what: 'search summary' });
    // The address follows the search box once typing pauses (src/session/history.rs).
    if (await this.el('flame-canvas').count()) {
      const want = text.trim() ? text : null;
      await this.poll(() => new URL(this.frame.url()).searchParams.get('search'), (s) => s === want, { what: 'the address to carry the search' });
    }
    return summary;
  }

  /** Opens the function table (closed by default below 1500 px). */
  async openTable() {
    const toggle = this.el('table-toggle');
    if ((await toggle.getAttribute('aria-pressed')) !== 'true') await toggle.click();
    await this.el('function-table').waitFor({ state: 'visible' });
  }

  /**
   * The table's rows: [{ name, shown, selfText, totalText, self, total, selected }] (µs/bytes);
   * `name` is the full name (the row's data-function), `shown` what the cell shows (long names
   * are shortened to fit).
   */
  async tableRows() {
    const rows = await this.el('function-table').locator('[data-testid=table-row]').evaluateAll((trs) => trs.map((tr) => {
      const cells = tr.querySelectorAll('td');
      const value = (td) => td.firstChild?.nodeType === Node.TEXT_NODE ? td.firstChild.textContent.trim() : td.textContent.trim();
      return {
        name: tr.dataset.function,
        shown: cells[0].querySelector('[aria-hidden]')?.textContent ?? cells[0].textContent,
        title: cells[0].title,
        selfText: value(cells[1]),
        totalText: value(cells[2]),
        selfPct: cells[1].querySelector('.pct')?.textContent ?? null,
        selected: tr.classList.contains('selected'),
      };
    }));
    return rows.map((r) => ({ ...r, self: parseValue(r.selfText), total: parseValue(r.totalText) }));
  }

  /**
   * Picks a step in the noise-control menu: threads, kernel0, kernel2, unresolved, idle, spin,
   * rec, libs, or a step on the selected function (focus, root, drop, merge, recursion,
   * library; src/components/noise.rs).
   */
  async addNoise(value) {
    await this.el('noise-add').selectOption(value);
    await this.settle();
  }

  /** The noise-control chips' texts (without the remove button). */
  async chips() {
    await this.settle();
    if (!(await this.el('chips').isVisible())) return [];
    return this.el('chip').evaluateAll((els) => els.map((el) => el.firstChild.textContent.trim()));
  }

  /** Opens the Export menu (a <details>). */
  async openExportMenu() {
    const menu = this.el('export-menu');
    if (!(await menu.evaluate((d) => d.open))) await menu.locator('summary').click();
  }

  /** Clicks an export item and returns the download as { name, buffer, text }. */
  async download(testid) {
    await this.openExportMenu();
    const [dl] = await Promise.all([this.page.waitForEvent('download'), this.el(testid).click()]);
    const file = await dl.path();
    const { readFile } = await import('node:fs/promises');
    const buffer = await readFile(file);
    return { name: dl.suggestedFilename(), buffer, text: buffer.toString('utf8') };
  }

  /** Imports a file through the Export menu's file input. */
  async importFile(name, content, mimeType = 'text/plain') {
    await this.el('import-file').setInputFiles({ name, mimeType, buffer: Buffer.from(content) });
  }

  /** Text of the frame the announcer (aria-live) reads out. */
  async announcer() {
    return (await this.el('announcer').textContent()).trim();
  }

  /** data-testid of the focused element (in the viewer's frame), or its tag name. */
  activeTestid() {
    return this.frame.evaluate(() => document.activeElement?.dataset?.testid ?? document.activeElement?.tagName ?? null);
  }

  // ---- Host page of an embedded viewer (openEmbedded) ----

  /** Messages the iframe posted to the host so far: [{ data, fromFrame }]. */
  hostMessages() {
    return this.page.evaluate(() => window.got);
  }

  /** Waits until the host has received a message of `type` (the n-th one, default the first). */
  async waitForHostMessage(type, { after = 0, timeout = 20_000 } = {}) {
    const msgs = await this.poll(async () => (await this.hostMessages()).slice(after), (m) => m.some((x) => x.data?.type === type),
      { timeout, what: `host message ${type}` });
    return msgs.find((x) => x.data?.type === type);
  }

  /** Posts `message` from the host page to the iframe. */
  hostPost(message) {
    return this.page.evaluate((m) => document.querySelector('iframe').contentWindow.postMessage(m, '*'), message);
  }
}
