//! Per-function totals: what the function table and the tooltip's "in all places" figures show.
//!
//! A function's total counts every sample once even when the function is on the stack several
//! times (recursion), unlike the server's `function_values`, which adds up every node.

use crate::tree::profile::Profile;

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
                on_path[profile.func(left) as usize] -= 1;
            }
        }
        let f = profile.func(node) as usize;
        let s = &mut stats[f];
        s.self_value += profile.self_value(node);
        s.nodes += 1;
        if on_path[f] == 0 {
            s.total += profile.total(node);
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
}
