//! Cutting a profile down to a node budget, keeping the heaviest part of the picture.
//!
//! The kept nodes are the root and then, heaviest total first, children of kept nodes, until one
//! more would overrun the budget; so every kept node is at least as heavy as every cut one. What
//! is cut is not lost: under each kept node that lost children, one `[truncated]` child carries
//! their summed totals. Widths, the root total and every kept node's self value therefore stay
//! exactly as in the full tree. The markers count towards the budget.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::tree::profile::{NodeId, Profile};
use crate::tree::transform::{rebuild, FrameRule};

/// The name of the node standing for the cut children of its parent (an unresolved-kind frame).
pub const TRUNCATED_FRAME: &str = "[truncated]";

/// Fewest nodes a budget may allow: the root and one `[truncated]` marker.
pub const MIN_NODES: usize = 2;

/// How much of a tree an answer kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Truncation {
    /// Nodes of the answer, `[truncated]` markers included.
    pub kept: usize,
    /// Nodes of the full tree.
    pub total: usize,
}

impl Truncation {
    /// The answer's notice: `truncated: N of M nodes`.
    pub fn notice(&self) -> String {
        format!("truncated: {} of {} nodes", self.kept, self.total)
    }
}

/// `profile` with at most `max_nodes` nodes (never fewer than [`MIN_NODES`]), and what was cut;
/// `None` when it already fits.
pub fn keep_heaviest(profile: &Profile, max_nodes: usize) -> Option<(Profile, Truncation)> {
    let total = profile.node_count();
    if total <= max_nodes {
        return None;
    }
    let keep = choose(profile, max_nodes.max(MIN_NODES));
    let root = profile.name(0).to_owned();
    let cut = rebuild(
        profile,
        &root,
        |n| {
            let parent_kept = profile.parent(n).is_some_and(|p| keep[p as usize]);
            match (keep[n as usize], parent_kept) {
                (true, _) => FrameRule::Keep,
                (false, true) => FrameRule::Rename(TRUNCATED_FRAME.to_owned()),
                (false, false) => FrameRule::Skip,
            }
        },
        |n| {
            if keep[n as usize] {
                profile.self_value(n)
            } else {
                // The first cut node of a branch brings its whole subtree; the rest are skipped.
                profile.total(n)
            }
        },
    );
    let kept = cut.node_count();
    Some((cut, Truncation { kept, total }))
}

/// Which nodes to keep: greedily by total, while kept nodes plus markers fit in `budget`.
fn choose(profile: &Profile, budget: usize) -> Vec<bool> {
    let n = profile.node_count();
    let mut keep = vec![false; n];
    // Per kept node: how many of its children are not kept (it needs a marker while > 0).
    let mut cut_children = vec![0u32; n];
    let mut heap: BinaryHeap<(u64, Reverse<NodeId>)> = BinaryHeap::new();
    let (mut kept, mut markers) = (0usize, 0usize);
    let mut next = Some(0);
    while let Some(node) = next.take() {
        keep[node as usize] = true;
        kept += 1;
        for child in profile.children(node) {
            heap.push((profile.total(child), Reverse(child)));
            cut_children[node as usize] += 1;
        }
        markers += usize::from(cut_children[node as usize] > 0);
        let Some((_, Reverse(candidate))) = heap.pop() else {
            break;
        };
        let parent = profile.parent(candidate).unwrap_or(0) as usize;
        let parent_loses_marker = usize::from(cut_children[parent] == 1);
        let gains_marker = usize::from(profile.children(candidate).next().is_some());
        if kept + 1 + markers + gains_marker - parent_loses_marker > budget {
            break;
        }
        cut_children[parent] -= 1;
        markers -= parent_loses_marker;
        next = Some(candidate);
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::folded::to_folded;
    use crate::tree::build::TreeBuilder;

    fn profile(stacks: &[(&str, u64)]) -> Profile {
        let mut b = TreeBuilder::new("app");
        for (stack, value) in stacks {
            b.add_stack(stack.split(';'), *value);
        }
        b.finish()
    }

    #[test]
    fn fitting_profiles_are_left_alone() {
        let p = profile(&[("a;b", 1), ("a;c", 2)]);
        assert_eq!(p.node_count(), 4);
        assert!(keep_heaviest(&p, 4).is_none());
    }

    #[test]
    fn keeps_the_heaviest_subtrees_and_accounts_for_the_rest() {
        let p = profile(&[
            ("main;hot;x", 50),
            ("main;hot;y", 30),
            ("main;warm", 15),
            ("main;cold;z", 4),
            ("main;cold;w", 1),
        ]);
        assert_eq!(p.node_count(), 9);
        let (cut, t) = keep_heaviest(&p, 7).expect("cut");
        assert_eq!(t, Truncation { kept: 7, total: 9 });
        assert_eq!(t.notice(), "truncated: 7 of 9 nodes");
        assert_eq!(cut.node_count(), 7);
        assert_eq!(cut.root_total(), p.root_total());
        assert_eq!(
            to_folded(&cut),
            "app;main;[truncated] 5\napp;main;hot;x 50\napp;main;hot;y 30\napp;main;warm 15\n"
        );
    }

    #[test]
    fn a_deep_chain_is_cut_below_its_heaviest_part() {
        let chain: Vec<String> = (0..1000).map(|i| format!("f{i}")).collect();
        let p = profile(&[(chain.join(";").as_str(), 7)]);
        let (cut, t) = keep_heaviest(&p, 10).expect("cut");
        assert_eq!(
            t,
            Truncation {
                kept: 10,
                total: 1001
            }
        );
        let folded = to_folded(&cut);
        assert_eq!(folded, "app;f0;f1;f2;f3;f4;f5;f6;f7;[truncated] 7\n");
    }

    #[test]
    fn tiny_budgets_keep_the_root_and_one_marker() {
        let p = profile(&[("a", 3), ("b", 4)]);
        for budget in [0, 1, 2] {
            let (cut, t) = keep_heaviest(&p, budget).expect("cut");
            assert_eq!(t.kept, 2, "{budget}");
            assert_eq!(to_folded(&cut), "app;[truncated] 7\n");
        }
    }

    #[test]
    fn self_values_of_kept_nodes_are_kept() {
        let p = profile(&[("a", 10), ("a;b", 5), ("a;c", 1), ("a;d", 1)]);
        let (cut, _) = keep_heaviest(&p, 4).expect("cut");
        assert_eq!(
            to_folded(&cut),
            "app;a 10\napp;a;[truncated] 2\napp;a;b 5\n"
        );
    }
}
