//! Writing folded stacks (`frame;frame;frame value`): for export, golden tests and the service's
//! fixtures. Reading them is [`crate::wire::folded`].

use crate::tree::diff::DiffValues;
use crate::tree::order::sort_by_dyn;
use crate::tree::profile::{NodeId, Profile};

/// Writes `root;a;b self` for every node with self > 0, sorted, one per line (the fixtures'
/// canonical form). Names containing `;` would be ambiguous, so they are written with `:`, as
/// DeepFlow stores them.
pub fn to_folded(profile: &Profile) -> String {
    folded_lines(profile, true)
}

/// Like [`to_folded`] but without the root frame: what `perf` collapsers write, and what
/// [`crate::wire::folded::parse_folded`] reads back under a root of the caller's choosing.
pub fn to_folded_stacks(profile: &Profile) -> String {
    folded_lines(profile, false)
}

fn folded_lines(profile: &Profile, with_root: bool) -> String {
    let mut lines = Vec::new();
    let mut path: Vec<String> = Vec::new();
    for node in profile.nodes() {
        let depth = profile.depth(node) as usize;
        path.truncate(depth);
        path.push(profile.name(node).replace(';', ":"));
        if profile.self_value(node) > 0 {
            let frames = if with_root { &path[..] } else { &path[1..] };
            if frames.is_empty() {
                continue;
            }
            lines.push(format!("{} {}", frames.join(";"), profile.self_value(node)));
        }
    }
    sort_by_dyn(&mut lines, &|a, b| a.cmp(b));
    let mut out = lines.join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// Two-column folded stacks of a diff (`frame;frame baseline comparison` per line, root frame
/// left out, sorted): flamegraph.pl's `difffolded.pl` format, with each side's own values.
pub fn to_diff_folded(p: &Profile, diff: &DiffValues) -> String {
    let mut lines = Vec::new();
    let mut path: Vec<String> = Vec::new();
    for node in p.nodes() {
        let depth = p.depth(node) as usize;
        path.truncate(depth);
        path.push(p.name(node).replace(';', ":"));
        let (b, c) = (
            diff.baseline.self_value[node as usize],
            diff.comparison.self_value[node as usize],
        );
        if (b > 0 || c > 0) && path.len() > 1 {
            lines.push(format!("{} {b} {c}", path[1..].join(";")));
        }
    }
    sort_by_dyn(&mut lines, &|a, b| a.cmp(b));
    let mut out = lines.join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// The folded stack of one node (its path from the root, `;`-joined).
pub fn stack_of(profile: &Profile, node: NodeId) -> String {
    profile
        .path_to(node)
        .iter()
        .map(|&n| profile.name(n))
        .collect::<Vec<_>>()
        .join(";")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::folded::parse_folded;

    #[test]
    fn folded_round_trips() {
        let text = "main;a 2\nmain;b;c 5\nmain 1\n";
        let p = parse_folded(text, "app").unwrap();
        assert_eq!(to_folded(&p), "app;main 1\napp;main;a 2\napp;main;b;c 5\n");
        assert_eq!(stack_of(&p, p.node_count() as u32 - 1), "app;main;b;c");
        assert_eq!(to_folded_stacks(&p), "main 1\nmain;a 2\nmain;b;c 5\n");
        let again = parse_folded(&to_folded_stacks(&p), "app").unwrap();
        assert_eq!(to_folded(&again), to_folded(&p));
    }

    #[test]
    fn two_column_stacks_round_trip_through_a_diff() {
        use crate::tree::diff::{Diff, DiffMode};
        use crate::wire::folded::parse_diff_folded;
        let text = "main;a 6 6\nmain;gone 4 0\nmain;new 0 14\nmain;x;y 1 2\n";
        let (b, c) = parse_diff_folded(text, "app").unwrap();
        let d = Diff::new(&b, &c, DiffMode::Normalized);
        assert_eq!(to_diff_folded(&d.profile, &d.values), text);
    }
}
