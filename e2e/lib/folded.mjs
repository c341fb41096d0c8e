// Shared helper: what a folded-stacks export describes (node count incl. root, depth, total).
// Comment lines (`# ...`) are skipped, as Embers' own importer does.
export function foldedStats(text) {
  const prefixes = new Set();
  let depth = 0;
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    const frames = line.slice(0, cut).split(';');
    total += Number(line.slice(cut + 1));
    depth = Math.max(depth, frames.length);
    for (let i = 1; i <= frames.length; i++) prefixes.add(frames.slice(0, i).join(';'));
  }
  return { nodes: prefixes.size + 1, depth, total };
}

/** The stacks of a folded-stacks export as { stack: value } (equal stacks summed). */
export function foldedStacks(text) {
  const out = {};
  for (const line of text.split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    const stack = line.slice(0, cut);
    out[stack] = (out[stack] ?? 0) + Number(line.slice(cut + 1));
  }
  return out;
}
