//! Building a profile from stacks (folded lines, stored samples) rather than a node table.
//!
//! The builder is a trie keyed by (parent, function); [`TreeBuilder::finish`] hands the trie to
//! the same [`Profile::from_table`] path the wire decoders use, so children order, totals and
//! geometry are computed by exactly one piece of code.

use crate::tree::profile::{NodeId, Profile};
use crate::tree::table::{NodeTable, NO_PARENT};
use rustc_hash::FxHashMap;

/// Accumulates stacks into a call tree.
#[derive(Debug)]
pub struct TreeBuilder {
    table: NodeTable,
    children: FxHashMap<(u32, u32), u32>,
}

impl TreeBuilder {
    /// Starts a tree whose root is named `root_name` (the app_service, or `Total`).
    pub fn new(root_name: &str) -> TreeBuilder {
        let mut table = NodeTable {
            derive_totals: true,
            ..NodeTable::default()
        };
        let root = table.functions.intern(root_name);
        table.push(root, NO_PARENT, 0, 0);
        TreeBuilder {
            table,
            children: FxHashMap::default(),
        }
    }

    /// Adds one stack, frames root→leaf *without* the root: `value` becomes self time of the
    /// leaf and total time of every frame on the path. An empty stack adds to the root's self.
    pub fn add_stack<'a, I>(&mut self, frames: I, value: u64)
    where
        I: IntoIterator<Item = &'a str>,
    {
        self.add_stack_row(frames, value);
    }

    /// [`TreeBuilder::add_stack`], returning the stack's leaf row for
    /// [`TreeBuilder::finish_mapped`] (a view that keeps samples in time order, such as the
    /// stack chart, finds each sample's node through it).
    pub fn add_stack_row<'a, I>(&mut self, frames: I, value: u64) -> u32
    where
        I: IntoIterator<Item = &'a str>,
    {
        let value = i64::try_from(value).unwrap_or(i64::MAX);
        let mut node = 0u32;
        for frame in frames {
            let func = self.table.functions.intern(frame);
            let next_row = self.table.len() as u32;
            let child = *self.children.entry((node, func)).or_insert(next_row);
            if child == next_row {
                self.table.push(func, node, 0, 0);
            }
            node = child;
        }
        let slot = &mut self.table.self_value[node as usize];
        *slot = slot.saturating_add(value);
        node
    }

    /// Whether no stack was added yet.
    pub fn is_empty(&self) -> bool {
        self.table.len() == 1 && self.table.self_value[0] == 0
    }

    /// Finishes the canonical profile.
    pub fn finish(self) -> Profile {
        Profile::from_table(self.table)
    }

    /// Finishes the canonical profile, and the node each row of [`TreeBuilder::add_stack_row`]
    /// became.
    pub fn finish_mapped(self) -> (Profile, Vec<NodeId>) {
        Profile::from_table_mapped(self.table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_merge_into_a_sorted_tree() {
        let mut b = TreeBuilder::new("app");
        b.add_stack(["main", "b"], 3);
        b.add_stack(["main", "a"], 2);
        b.add_stack(["main"], 1);
        b.add_stack(["main", "b"], 4);
        let p = b.finish();
        let rows: Vec<_> = p
            .nodes()
            .map(|n| (p.name(n), p.self_value(n), p.total(n)))
            .collect();
        assert_eq!(
            rows,
            [("app", 0, 10), ("main", 1, 10), ("a", 2, 2), ("b", 7, 7)]
        );
        assert_eq!(p.warnings().total(), 0);
    }
}
