//! One event type's call tree as a recording's stacks are added to it: each stack walked from
//! the root, equal frames merged, bounded in nodes.

use rustc_hash::FxHashMap;

use super::JfrError;
use crate::tree::table::{NodeTable, NO_PARENT};
use crate::wire::pprof::fold::max_nodes;

/// The nodes a recording of a given size may fold into, in all its trees (one per event type,
/// or per event type and second): [`max_nodes`] of its size. More means a few bytes of
/// repeated stacks or forged times expanding without bound.
pub struct Nodes {
    left: usize,
    max: usize,
}

impl Nodes {
    pub fn for_input(len: usize) -> Self {
        let max = max_nodes(len);
        Nodes { left: max, max }
    }

    pub fn take(&mut self) -> Result<(), JfrError> {
        self.left = self.left.checked_sub(1).ok_or_else(|| {
            JfrError::TooLarge(format!(
                "the recording folds into more than {} nodes",
                self.max
            ))
        })?;
        Ok(())
    }
}

pub struct Tree {
    /// Its event type's index in [`super::events::EVENT_TYPES`].
    pub event: usize,
    /// Its time bucket, when read in buckets.
    pub time: Option<i64>,
    pub table: NodeTable,
    children: FxHashMap<(u32, u32), u32>,
}

impl Tree {
    pub fn new(root: &str, event: usize, time: Option<i64>) -> Self {
        let mut table = NodeTable {
            derive_totals: true,
            ..NodeTable::default()
        };
        let f = table.functions.intern(root);
        table.push(f, NO_PARENT, 0, 0);
        Tree {
            event,
            time,
            table,
            children: FxHashMap::default(),
        }
    }

    /// Adds `value` at the stack of `names` (outermost first) below the root.
    /// `nodes` is what the whole recording may still add, across its trees.
    pub fn add<'n>(
        &mut self,
        names: impl Iterator<Item = &'n str>,
        value: u64,
        nodes: &mut Nodes,
    ) -> Result<(), JfrError> {
        let mut at = 0u32;
        for name in names {
            let f = self.table.functions.intern(name);
            at = match self.children.get(&(at, f)) {
                Some(&child) => child,
                None => {
                    nodes.take()?;
                    let row = self.table.len() as u32;
                    self.table.push(f, at, 0, 0);
                    self.children.insert((at, f), row);
                    row
                }
            };
        }
        let cell = &mut self.table.self_value[at as usize];
        *cell = i64::try_from(value)
            .ok()
            .and_then(|v| cell.checked_add(v))
            .ok_or_else(|| JfrError::Invalid("values add up past i64::MAX".to_owned()))?;
        Ok(())
    }
}
