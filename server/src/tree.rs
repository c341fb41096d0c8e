//! From stored stacks to a call tree, reusing the web-free `embers-model` crate: each stack is
//! trimmed by the contract's `max_kernel_stack_depth` rule, and [`TreeBuilder`] merges the
//! stacks into the canonical tree that `embers_model::export::encode` writes as shape A or B.

use embers_model::contract::kernel;
use embers_model::tree::build::TreeBuilder;
use embers_model::Profile;

/// Build the call tree named `root` from `(profile_location_str, value)` rows.
///
/// Each stack is split on `;`, trimmed by `max_kernel_stack_depth` (negative keeps all), and
/// added below the root. Returns `None` when there are no rows (an empty match).
pub fn build_profile<'a, I>(root: &str, rows: I, max_kernel_depth: i64) -> Option<Profile>
where
    I: IntoIterator<Item = (&'a str, u64)>,
{
    let mut builder = TreeBuilder::new(root);
    let mut any = false;
    let mut frames: Vec<&str> = Vec::new();
    for (stack, value) in rows {
        any = true;
        frames.clear();
        frames.extend(stack.split(';').filter(|f| !f.is_empty()));
        let kept = kernel::trim(&frames, max_kernel_depth);
        builder.add_stack(kept.iter().copied(), value);
    }
    any.then(|| builder.finish())
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
        let p = build_profile("app", rows, -1).expect("non-empty");
        assert_eq!(
            to_folded(&p),
            "app;[t] w;main 2\napp;[t] w;main;[k] a;[k] b 5\napp;[t] w;main;[k] a;[k] c 3\n"
        );
        let p = build_profile("app", rows, 1).expect("non-empty");
        assert_eq!(to_folded(&p), "app;[t] w;main 2\napp;[t] w;main;[k] a 8\n");
        let p = build_profile("app", rows, 0).expect("non-empty");
        assert_eq!(to_folded(&p), "app;[t] w;main 10\n");
    }

    #[test]
    fn no_rows_is_an_empty_match() {
        assert!(build_profile("app", std::iter::empty(), -1).is_none());
    }
}
