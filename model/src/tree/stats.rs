//! Per-function totals: what the function table and the tooltip's "in all places" figures show.
//!
//! A function's total counts every sample once even when the function is on the stack several
//! times (recursion), unlike the server's `function_values`, which adds up every node.

use crate::tree::diff::{DiffValues, SideValues};
use crate::tree::order::sort_by_dyn;
use crate::tree::profile::{NodeId, Profile};
use crate::tree::symbol::package_of;
use rustc_hash::FxHashMap;

/// Self and total of one function, summed over every node where it appears.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FunctionStats {
    /// Interned function id.
    pub func: u32,
    /// Sum of self values of all its nodes.
    pub self_value: u64,
    /// Sum of totals of its outermost nodes (no double counting under recursion).
    pub total: u64,
    /// How many nodes the function has.
    pub nodes: u32,
}

/// Computes [`FunctionStats`] for every function, indexed by function id. One preorder pass
/// with an ancestor stack; no recursion.
pub fn function_stats(profile: &Profile) -> Vec<FunctionStats> {
    function_stats_of(
        profile,
        |n| profile.self_value(n),
        |n| profile.total(n),
        false,
    )
}

/// [`function_stats`] of the stacks' frames only: the root (the process a ProfileTracing
/// answer is rooted at) counts for nothing, so each function's figures are the sums of the
/// samples' own frames, as the service's functions endpoint keeps them.
pub fn frame_stats(profile: &Profile) -> Vec<FunctionStats> {
    function_stats_of(
        profile,
        |n| profile.self_value(n),
        |n| profile.total(n),
        true,
    )
}

/// Per function: each side of a diff (the union tree's structure, each side's values).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiffStats {
    /// Interned function id of the union tree.
    pub func: u32,
    /// The baseline's figures.
    pub baseline: FunctionStats,
    /// The comparison's figures.
    pub comparison: FunctionStats,
}

/// [`FunctionStats`] of both sides of a diff, indexed by the union's function ids.
pub fn diff_stats(profile: &Profile, diff: &DiffValues) -> Vec<DiffStats> {
    side_stats(profile, &diff.baseline)
        .into_iter()
        .zip(side_stats(profile, &diff.comparison))
        .map(|(baseline, comparison)| DiffStats {
            func: baseline.func,
            baseline,
            comparison,
        })
        .collect()
}

/// The packages ([`crate::tree::symbol::package_of`]) with the most self time, busiest first,
/// at most `n`: (package, self time). What the colour legend names when frames are coloured by
/// package.
pub fn top_packages(profile: &Profile, n: usize) -> Vec<(&str, u64)> {
    let mut by_func = vec![0u64; profile.function_count()];
    for node in profile.nodes().skip(1) {
        by_func[profile.func(node) as usize] += profile.self_value(node);
    }
    let mut sums: FxHashMap<&str, u64> = FxHashMap::default();
    for (f, &v) in by_func.iter().enumerate().filter(|(_, v)| **v > 0) {
        if let Some(package) = package_of(profile.function_name(f as u32)) {
            *sums.entry(package).or_insert(0) += v;
        }
    }
    let mut list: Vec<(&str, u64)> = sums.into_iter().collect();
    sort_by_dyn(&mut list, &|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    list.truncate(n);
    list
}

/// [`FunctionStats`] of one side's values on a tree of two sides (a diff's or a wall view's).
pub fn side_stats(profile: &Profile, side: &SideValues) -> Vec<FunctionStats> {
    function_stats_of(
        profile,
        |n| side.self_value[n as usize],
        |n| side.total[n as usize],
        false,
    )
}

/// [`FunctionStats`] over `profile`'s structure with the values `self_of` and `total_of` give
/// each node; with `skip_root`, the root node counts for nothing.
fn function_stats_of(
    profile: &Profile,
    self_of: impl Fn(NodeId) -> u64,
    total_of: impl Fn(NodeId) -> u64,
    skip_root: bool,
) -> Vec<FunctionStats> {
    let mut stats: Vec<FunctionStats> = (0..profile.function_count() as u32)
        .map(|func| FunctionStats {
            func,
            ..FunctionStats::default()
        })
        .collect();
    // How many times each function is on the current root→node path.
    let mut on_path = vec![0u32; profile.function_count()];
    let mut path: Vec<u32> = Vec::new();
    for node in profile.nodes() {
        let depth = profile.depth(node) as usize;
        while path.len() > depth {
            if let Some(left) = path.pop() {
                if !(skip_root && profile.depth(left) == 0) {
                    on_path[profile.func(left) as usize] -= 1;
                }
            }
        }
        if skip_root && depth == 0 {
            path.push(node);
            continue;
        }
        let f = profile.func(node) as usize;
        let s = &mut stats[f];
        s.self_value += self_of(node);
        s.nodes += 1;
        if on_path[f] == 0 {
            s.total += total_of(node);
        }
        on_path[f] += 1;
        path.push(node);
    }
    stats
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::build::TreeBuilder;

    #[test]
    fn recursion_is_counted_once() {
        let mut b = TreeBuilder::new("app");
        b.add_stack(["fib", "fib", "fib"], 3);
        b.add_stack(["fib"], 1);
        b.add_stack(["eval", "apply", "eval"], 2);
        let p = b.finish();
        let stats = function_stats(&p);
        let by_name = |n: &str| {
            stats
                .iter()
                .find(|s| p.function_name(s.func) == n)
                .copied()
                .unwrap()
        };
        assert_eq!(by_name("fib").total, 4);
        assert_eq!(by_name("fib").self_value, 4);
        assert_eq!(by_name("fib").nodes, 3);
        assert_eq!(by_name("eval").total, 2);
        assert_eq!(by_name("apply").total, 2);
        assert_eq!(by_name("app").total, 6);
    }

    #[test]
    fn frame_stats_leave_the_root_out() {
        let mut b = TreeBuilder::new("app");
        b.add_stack(["app", "f", "app"], 3);
        b.add_stack(["g"], 2);
        let p = b.finish();
        let stats = frame_stats(&p);
        let of = |n: &str| stats[p.function_id(n).unwrap() as usize];
        assert_eq!(
            (of("app").total, of("app").self_value),
            (3, 3),
            "frames only"
        );
        assert_eq!((of("f").total, of("g").total), (3, 2));
    }

    #[test]
    fn diff_stats_count_recursion_once_on_each_side() {
        use crate::tree::diff::{Diff, DiffMode};
        use crate::wire::folded::parse_folded;
        let b = parse_folded("f;f;g 2\nf 1\n", "app").unwrap();
        let c = parse_folded("f;f;g 5\nh 1\n", "app").unwrap();
        let d = Diff::new(&b, &c, DiffMode::Absolute);
        let stats = diff_stats(&d.profile, &d.values);
        let of = |n: &str| stats[d.profile.function_id(n).unwrap() as usize];
        assert_eq!((of("f").baseline.total, of("f").comparison.total), (3, 5));
        assert_eq!(
            (of("g").baseline.self_value, of("g").comparison.self_value),
            (2, 5)
        );
        assert_eq!((of("h").baseline.total, of("h").comparison.total), (0, 1));
    }

    #[test]
    fn packages_are_ranked_by_their_self_time() {
        let p = crate::wire::folded::parse_folded(
            "main;java.util.HashMap.get 5\nmain;java.util.ArrayList.add 2\nmain;tokio::park 4\nmain;epoll_wait 9\n",
            "app",
        )
        .unwrap();
        assert_eq!(super::top_packages(&p, 5), [("java.util", 7), ("tokio", 4)]);
        assert_eq!(super::top_packages(&p, 1).len(), 1);
    }
}
