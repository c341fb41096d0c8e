//! Shaping the synthetic tree for the benchmark: a deep call chain added to it, and the
//! preorder walk the nested-set formats (Grafana, speedscope) are written in.

use embers_model::synth::SynthProfile;

/// Appends one call chain reaching depth `depth` under the first thread (a side leaf every 250
/// levels, self time on the chain's leaf equal to the rest of the profile's), for the "thousands of levels deep" case, which the
/// generator's random walk never reaches (it stays near its 230-level default). Parents still
/// precede children, and every ancestor's total grows by the added self time.
pub fn add_deep_chain(p: &mut SynthProfile, depth: u32) {
    const SAMPLE_US: u64 = 10_101;
    if depth < 2 || p.len() < 2 {
        return;
    }
    let f_count = p.functions.len() as u32;
    let pick = |k: u32| 9 + (k.wrapping_mul(2_654_435_761) % (f_count - 9));
    // The first thread node (depth 1).
    let thread = (1..p.len())
        .find(|&i| p.parent[i] == 0)
        .expect("a thread node");
    fn push(p: &mut SynthProfile, parent: usize, func: u32, self_value: u64) -> usize {
        p.func.push(func);
        p.parent.push(parent as i64);
        p.self_value.push(self_value);
        p.total.push(self_value);
        p.len() - 1
    }
    // The chain's leaf carries as much self time as the rest of the profile, so the chain is
    // about half the graph's width and drawn at every level.
    let leaf_self = p.total[0].max(SAMPLE_US);
    let start = p.len();
    let mut added = 0u64;
    let mut cur = thread;
    for level in 2..=depth {
        let leaf = level == depth;
        let self_value = if leaf { leaf_self } else { 0 };
        cur = push(p, cur, pick(level), self_value);
        added += self_value;
        if level % 250 == 0 && !leaf {
            push(p, cur, pick(level + 7), SAMPLE_US);
            added += SAMPLE_US;
        }
    }
    // Totals bottom-up within the new nodes, then the added self time up the thread's ancestors.
    for i in (start..p.len()).rev() {
        let par = p.parent[i] as usize;
        if par >= start {
            p.total[par] += p.total[i];
        }
    }
    let mut a = thread as i64;
    while a >= 0 {
        p.total[a as usize] += added;
        a = p.parent[a as usize];
    }
}

/// Preorder (nested-set) walk of the synthetic tree: `(node, depth)` pairs, children in creation
/// order. The synthetic arrays have parents before children but are not in preorder, so this
/// builds child lists (CSR) and walks them with an explicit stack (stacks can be thousands deep).
pub fn preorder(p: &SynthProfile) -> Vec<(u32, u32)> {
    let n = p.len();
    let mut first = vec![0u32; n + 1];
    for &par in &p.parent[1..] {
        first[par as usize + 1] += 1;
    }
    for i in 0..n {
        first[i + 1] += first[i];
    }
    let mut fill = first.clone();
    let mut kids = vec![0u32; n.saturating_sub(1)];
    for node in 1..n {
        let par = p.parent[node] as usize;
        kids[fill[par] as usize] = node as u32;
        fill[par] += 1;
    }
    let mut out = Vec::with_capacity(n);
    let mut stack: Vec<(u32, u32)> = vec![(0, 0)];
    while let Some((node, depth)) = stack.pop() {
        out.push((node, depth));
        let (a, b) = (
            first[node as usize] as usize,
            first[node as usize + 1] as usize,
        );
        // Push in reverse so the first child is visited first.
        for &c in kids[a..b].iter().rev() {
            stack.push((c, depth + 1));
        }
    }
    out
}
