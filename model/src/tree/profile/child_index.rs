//! The children of every table row, sorted by name once, before the tree is built.

use crate::tree::table::{Interner, NodeTable};

/// Children of every table row (CSR over rows), each list sorted by function name with the
/// row index breaking ties, so repeated siblings (same function) end up adjacent.
pub(super) struct ChildIndex {
    offsets: Vec<u32>,
    rows: Vec<u32>,
    /// Sort key per function: the rank of its name, so sorting never compares strings.
    name_rank: Vec<u32>,
    /// Per row, whether two of its children share a function; empty when no row has that.
    repeats: Vec<bool>,
}

impl ChildIndex {
    /// Indexes and sorts the children of every row of `table`. Rows whose parent is not a row
    /// (the root, unknown parents) are nobody's children.
    pub fn new(table: &NodeTable, functions: &Interner) -> ChildIndex {
        let n = table.len();
        let mut counts = vec![0u32; n + 1];
        for &p in &table.parent {
            if (p as usize) < n {
                counts[p as usize + 1] += 1;
            }
        }
        for i in 1..counts.len() {
            counts[i] += counts[i - 1];
        }
        let offsets = counts.clone();
        let mut rows = vec![0; counts[n] as usize];
        for (row, &p) in table.parent.iter().enumerate() {
            if (p as usize) < n {
                let slot = &mut counts[p as usize];
                rows[*slot as usize] = row as u32;
                *slot += 1;
            }
        }
        let mut index = ChildIndex {
            offsets,
            rows,
            name_rank: rank_names(functions),
            repeats: Vec::new(),
        };
        index.sort(&table.func);
        index
    }

    fn sort(&mut self, func: &[u32]) {
        let rank = &self.name_rank;
        for (parent, w) in self.offsets.windows(2).enumerate() {
            let segment = &mut self.rows[w[0] as usize..w[1] as usize];
            if segment.len() < 2 {
                continue;
            }
            sort_by_name(rank, func, segment);
            if segment
                .windows(2)
                .any(|pair| func[pair[0] as usize] == func[pair[1] as usize])
            {
                if self.repeats.is_empty() {
                    self.repeats = vec![false; self.offsets.len() - 1];
                }
                self.repeats[parent] = true;
            }
        }
    }

    /// The children of `row`, sorted.
    pub fn of(&self, row: u32) -> &[u32] {
        let a = self.offsets[row as usize] as usize;
        let b = self.offsets[row as usize + 1] as usize;
        &self.rows[a..b]
    }

    /// Whether two children of `row` share a function.
    pub fn repeats_under(&self, row: u32) -> bool {
        self.repeats.get(row as usize).copied().unwrap_or(false)
    }

    /// Sorts rows the way [`ChildIndex::of`] lists them (for children gathered from several
    /// merged rows).
    pub fn sort_rows(&self, rows: &mut [u32], func: &[u32]) {
        sort_by_name(&self.name_rank, func, rows);
    }
}

/// Sorts rows by the name rank of their function, then by row index.
fn sort_by_name(rank: &[u32], func: &[u32], rows: &mut [u32]) {
    rows.sort_unstable_by_key(|&r| (rank[func[r as usize] as usize], r));
}

/// The rank of every function's name in byte order.
fn rank_names(functions: &Interner) -> Vec<u32> {
    let mut order: Vec<u32> = (0..functions.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| functions.name(a).cmp(functions.name(b)));
    let mut rank = vec![0u32; order.len()];
    for (r, &id) in order.iter().enumerate() {
        rank[id as usize] = r as u32;
    }
    rank
}
