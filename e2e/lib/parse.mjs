// Reading the viewer's formatted text: values with units, the status line, bar labels.

export const UNIT_SCALE = { ns: 1e-3, µs: 1, ms: 1e3, s: 1e6, min: 6e7, h: 3.6e9, B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, TiB: 1024 ** 4, PiB: 1024 ** 5 };

/** Parses a formatted value ("62.6 s", "812 µs", "3.1 MiB") into µs or bytes; NaN if it is none. */
export function parseValue(text) {
  const m = /^([\d.]+) (ns|µs|ms|s|min|h|B|KiB|MiB|GiB|TiB|PiB)$/u.exec(String(text).trim());
  return m ? Number(m[1]) * UNIT_SCALE[m[2]] : NaN;
}

/** Parses the footer line of a drawn graph. */
export function parseStatus(text) {
  const m = /^(.*): ([\d,]+) nodes · ([\d,]+) functions · depth (\d+) · ([\d.,]+) (ns|µs|ms|s|min|h|B|KiB|MiB|GiB|TiB|PiB|samples?|objects?|goroutines?|events?)(?: (.+?))?(?: · shape ([AB]))? · decoded in (\d+) ms$/u
    .exec(text.trim());
  if (!m) return null;
  const scale = UNIT_SCALE;
  return {
    root: m[1],
    nodes: Number(m[2].replaceAll(',', '')),
    functions: Number(m[3].replaceAll(',', '')),
    depth: Number(m[4]),
    value: Number(m[5].replaceAll(',', '')) * (scale[m[6]] ?? 1),
    valueText: `${m[5]} ${m[6]}`,
    measure: m[7] ?? m[6],
    shape: m[8] ?? null,
    decodeMs: Number(m[9]),
  };
}

/**
 * Whether a bar label shows function `name`: the name itself, the name with its share
 * ("name (12.3%)", "name (self 1%)"), or the name shortened (model/src/view/names.rs): cut at
 * its end ("nam…"), or with its front or middle left out ("[l] …Executor.getTask",
 * "std::vector<…>::push_back(…)") — the pieces between the ellipses appear in the name in order,
 * the first at its start unless the label starts with one (after a kind prefix).
 */
export function labelShows(label, name) {
  if (label == null || !name) return false;
  if (label === name || label.startsWith(`${name} (`)) return true;
  if (!label.includes('…')) return false;
  const pieces = label.split('…');
  const front = /^(\[.\] )?…/.test(label);
  let at = 0;
  for (const [i, piece] of pieces.entries()) {
    const found = name.indexOf(piece, at);
    if (found < 0 || (i === 0 && !front && found !== 0)) return false;
    at = found + piece.length;
  }
  return true;
}

/** A search summary ("3 matches · 23.6% of total") as { count, pct }; null for anything else. */
export function parseSummary(text) {
  const m = /^(\d+) match(?:es)? · (<0\.01|[\d.]+)% of total$/u.exec(text);
  return m ? { count: Number(m[1]), pct: m[2] === '<0.01' ? 0 : Number(m[2]) } : null;
}
