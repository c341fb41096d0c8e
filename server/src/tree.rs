//! From stored stacks to a call tree, reusing the web-free `embers-model` crate: each stack is
//! trimmed by the contract's `max_kernel_stack_depth` rule, and [`TreeBuilder`] merges the
//! stacks into the canonical tree that `embers_model::export::encode` writes as shape A or B.
//! A tree over the answer's node limit is cut to its heaviest part ([`limit_nodes`]).

use embers_model::contract::kernel;
use embers_model::tree::build::TreeBuilder;
use embers_model::tree::truncate::{keep_heaviest, Truncation};
use embers_model::Profile;

use crate::store::budget::Budget;
use crate::store::StoreError;

/// Stacks added between two looks at the budget.
const STACKS_PER_CHECK: usize = 1024;

/// Build the call tree named `root` from `(profile_location_str, value)` rows.
///
/// Each stack is split on `;`, trimmed by `max_kernel_stack_depth` (negative keeps all), and
/// added below the root. Returns `None` when there are no rows (an empty match), and
/// `StoreError::Interrupted` when `budget` runs out first.
pub fn build_profile<'a, I>(
    root: &str,
    rows: I,
    max_kernel_depth: i64,
    budget: &Budget,
) -> Result<Option<Profile>, StoreError>
where
    I: IntoIterator<Item = (&'a str, u64)>,
{
    let mut builder = TreeBuilder::new(root);
    let mut any = false;
    let mut frames: Vec<&str> = Vec::new();
    for (i, (stack, value)) in rows.into_iter().enumerate() {
        if i % STACKS_PER_CHECK == 0 {
            budget.check()?;
        }
        any = true;
        frames.clear();
        frames.extend(stack.split(';').filter(|f| !f.is_empty()));
        let kept = kernel::trim(&frames, max_kernel_depth);
        builder.add_stack(kept.iter().copied(), value);
    }
    Ok(any.then(|| builder.finish()))
}

/// `profile` cut to at most `max_nodes` nodes, and the cut's notice when it was cut.
pub fn limit_nodes(profile: Profile, max_nodes: usize) -> (Profile, Option<Truncation>) {
    match keep_heaviest(&profile, max_nodes) {
        Some((cut, truncation)) => (cut, Some(truncation)),
        None => (profile, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use embers_model::export::folded::to_folded;

    #[test]
    fn builds_merges_and_trims() {
        let rows = [
            ("[t] w;main;[k] a;[k] b", 5u64),
            ("[t] w;main;[k] a;[k] c", 3),
            ("[t] w;main", 2),
        ];
        let b = Budget::new(None);
        let p = build_profile("app", rows, -1, &b)
            .expect("ok")
            .expect("non-empty");
        assert_eq!(
            to_folded(&p),
            "app;[t] w;main 2\napp;[t] w;main;[k] a;[k] b 5\napp;[t] w;main;[k] a;[k] c 3\n"
        );
        let p = build_profile("app", rows, 1, &b)
            .expect("ok")
            .expect("non-empty");
        assert_eq!(to_folded(&p), "app;[t] w;main 2\napp;[t] w;main;[k] a 8\n");
        let p = build_profile("app", rows, 0, &b)
            .expect("ok")
            .expect("non-empty");
        assert_eq!(to_folded(&p), "app;[t] w;main 10\n");
    }

    #[test]
    fn no_rows_is_an_empty_match() {
        let b = Budget::new(None);
        assert!(build_profile("app", std::iter::empty(), -1, &b)
            .expect("ok")
            .is_none());
    }

    #[test]
    fn a_spent_budget_stops_the_build() {
        let b = Budget::new(None);
        b.cancel();
        let rows = [("a;b", 1u64)];
        assert!(matches!(
            build_profile("app", rows, -1, &b),
            Err(StoreError::Interrupted)
        ));
    }

    #[test]
    fn big_trees_are_cut_with_a_notice() {
        let rows = [("a;b", 1u64), ("a;c", 2), ("d", 3)];
        let p = build_profile("app", rows, -1, &Budget::new(None))
            .expect("ok")
            .expect("non-empty");
        let (same, none) = limit_nodes(p.clone(), 5);
        assert!(none.is_none());
        assert_eq!(same.node_count(), 5);
        let (cut, notice) = limit_nodes(p, 4);
        assert_eq!(
            notice.map(|t| t.notice()).as_deref(),
            Some("truncated: 4 of 5 nodes")
        );
        assert_eq!(to_folded(&cut), "app;a;[truncated] 3\napp;d 3\n");
    }
}
