//! The decoders' common output: a flat node table, before any tree is trusted.
//!
//! Both wire shapes reduce to the same thing: rows with an interned function, a parent row (or
//! none), and the self/total values the server claims. [`crate::Profile::from_table`] then turns
//! this into a sound tree, counting whatever it had to repair.

use crate::contract::kind::FrameKind;
use rustc_hash::FxHashMap;

/// Marks "no parent" in a [`NodeTable`] (the root) and in a [`crate::Profile`].
pub const NO_PARENT: u32 = u32::MAX;

/// Distinct function names, each stored once; ids are dense `u32`s in insertion order.
#[derive(Clone, Debug, Default)]
pub struct Interner {
    names: Vec<Box<str>>,
    kinds: Vec<FrameKind>,
    ids: FxHashMap<Box<str>, u32>,
}

impl Interner {
    /// Returns the id of `name`, adding it (classified by name) if new.
    pub fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.into());
        self.kinds.push(FrameKind::from_name(name));
        self.ids.insert(name.into(), id);
        id
    }

    /// Overrides the kind of an interned function (from an explicit `function_types` entry).
    pub fn set_kind(&mut self, id: u32, kind: FrameKind) {
        if let Some(slot) = self.kinds.get_mut(id as usize) {
            *slot = kind;
        }
    }

    /// The name of an interned id.
    pub fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }

    /// The number of distinct names.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no name was interned.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Splits into the name and kind columns, dropping the lookup map.
    pub fn into_columns(self) -> (Vec<Box<str>>, Vec<FrameKind>) {
        (self.names, self.kinds)
    }
}

/// Problems the decoders found in the wire data itself (before tree building).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableIssues {
    /// Rows whose id repeats an earlier row's id (shape A); the later row is dropped.
    pub duplicate_ids: u32,
    /// Rows whose function id is outside `functions` (shape B); they are dropped.
    pub bad_function_ids: u32,
}

/// A decoded, not yet validated node table.
#[derive(Clone, Debug, Default)]
pub struct NodeTable {
    /// Interned function names.
    pub functions: Interner,
    /// Per row: interned function id.
    pub func: Vec<u32>,
    /// Per row: parent row index, [`NO_PARENT`] for a root, or a value `>= len` for an unknown parent.
    pub parent: Vec<u32>,
    /// Per row: self value as sent (may be negative in bad data).
    pub self_value: Vec<i64>,
    /// Per row: total value as sent.
    pub total_value: Vec<i64>,
    /// Per function of the *wire* table (shape B only): the server's `(self, total)` sums,
    /// keyed by interned id. Under recursion the server's total double-counts.
    pub server_function_values: Option<Vec<(i64, i64)>>,
    /// Issues found while decoding.
    pub issues: TableIssues,
    /// When set, `total_value` is ignored and every total is derived from self values
    /// (builders and transforms, which only know where samples end).
    pub derive_totals: bool,
}

impl NodeTable {
    /// Appends one row.
    pub fn push(&mut self, func: u32, parent: u32, self_value: i64, total_value: i64) {
        self.func.push(func);
        self.parent.push(parent);
        self.self_value.push(self_value);
        self.total_value.push(total_value);
    }

    /// Makes room for `rows` more rows (saves re-allocating big columns while decoding).
    pub fn reserve(&mut self, rows: usize) {
        self.func.reserve(rows);
        self.parent.reserve(rows);
        self.self_value.reserve(rows);
        self.total_value.reserve(rows);
    }

    /// Removes every row (keeps functions and issues).
    pub fn clear_rows(&mut self) {
        self.func.clear();
        self.parent.clear();
        self.self_value.clear();
        self.total_value.clear();
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.func.len()
    }

    /// Whether the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.func.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interner_dedupes_and_classifies() {
        let mut i = Interner::default();
        assert_eq!(i.intern("main"), 0);
        assert_eq!(i.intern("[k] x"), 1);
        assert_eq!(i.intern("main"), 0);
        i.set_kind(0, FrameKind::Object);
        let (names, kinds) = i.into_columns();
        assert_eq!(names.len(), 2);
        assert_eq!(kinds, vec![FrameKind::Object, FrameKind::Kernel]);
    }
}
