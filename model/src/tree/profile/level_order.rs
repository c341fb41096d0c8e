//! Level-order construction of the preorder tree from a node table.
//!
//! A depth-first walk visits table rows in an order unrelated to how they are stored, and each
//! step waits on the previous step's loads; for a million rows that is ~100 ns a node, nearly
//! all of it cache misses. Here every pass is a loop whose iterations are independent or touch
//! neighbours, so the CPU keeps many misses in flight:
//! 1. breadth-first order of the rows reachable from the root (children come pre-sorted);
//! 2. gather each row's function and values into that order;
//! 3. one backward pass: subtree sizes and settled totals (children follow their parents);
//! 4. one forward pass: preorder position and start offset of each node from its parent's;
//! 5. scatter the columns to preorder. The breadth-first levels, in order, are the profile's
//!    rows (a level lists nodes in ascending preorder), so rows come for free.
//!
//! Sibling rows that share a function (the table repeated a sibling) become one node whose
//! children are the union of theirs, merged again level by level. Big temporaries are dropped
//! as soon as their pass is over, to keep the peak memory low.

use super::child_index::ChildIndex;
use super::{Profile, Warnings};
use crate::tree::table::{NodeTable, NO_PARENT};

/// A node made of several sibling rows sharing a function (the table repeated a sibling).
#[derive(Clone, Copy)]
struct Group {
    /// The node's level-order index.
    node: u32,
    /// Its rows: `group_rows[start..start + len]`.
    start: u32,
    len: u32,
}

/// The reachable nodes in breadth-first order ("level order"), identified by their index `b`
/// in that order.
struct LevelOrder {
    /// The (first) table row of each node.
    rows: Vec<u32>,
    /// Nodes of several rows, in ascending node order (rare: only for repeated siblings).
    groups: Vec<Group>,
    group_rows: Vec<u32>,
    /// Level-order index of each node's parent (0 for the root, unused).
    parent: Vec<u32>,
    /// The children of node `b` are the nodes `first_child[b]..first_child[b + 1]`.
    first_child: Vec<u32>,
    /// Level `d` (the nodes at depth `d`) is `level_offsets[d]..level_offsets[d + 1]`.
    level_offsets: Vec<u32>,
}

impl LevelOrder {
    fn new(children: &ChildIndex, func: &[u32], root: u32) -> LevelOrder {
        let capacity = func.len();
        let mut order = LevelOrder {
            rows: Vec::with_capacity(capacity),
            groups: Vec::new(),
            group_rows: Vec::new(),
            parent: Vec::with_capacity(capacity),
            first_child: Vec::with_capacity(capacity + 1),
            level_offsets: vec![0],
        };
        order.rows.push(root);
        order.parent.push(0);
        // Every row has one parent, so it is appended at most once: cycles are never reached
        // from the root and the loop ends.
        let mut merged_children = Vec::new();
        let mut next_group = 0;
        let mut level_end = 1;
        let mut b = 0;
        while b < order.rows.len() {
            if b == level_end {
                order.level_offsets.push(b as u32);
                level_end = order.rows.len();
            }
            order.first_child.push(order.rows.len() as u32);
            let group = order
                .groups
                .get(next_group)
                .filter(|g| g.node == b as u32)
                .copied();
            if let Some(g) = group {
                next_group += 1;
                // A merged node's children are the union of its rows' children.
                merged_children.clear();
                for i in g.start..g.start + g.len {
                    merged_children.extend_from_slice(children.of(order.group_rows[i as usize]));
                }
                children.sort_rows(&mut merged_children, func);
                order.push_merging(b, &merged_children, func);
            } else if children.repeats_under(order.rows[b]) {
                order.push_merging(b, children.of(order.rows[b]), func);
            } else {
                let kids = children.of(order.rows[b]);
                order.rows.extend_from_slice(kids);
                order
                    .parent
                    .extend(std::iter::repeat_n(b as u32, kids.len()));
            }
            b += 1;
        }
        order.first_child.push(order.rows.len() as u32);
        order.level_offsets.push(order.rows.len() as u32);
        order
    }

    /// Appends the children of node `b` (sorted rows), one node per run of rows that share a
    /// function.
    fn push_merging(&mut self, b: usize, kids: &[u32], func: &[u32]) {
        for run in kids.chunk_by(|&x, &y| func[x as usize] == func[y as usize]) {
            if run.len() > 1 {
                self.groups.push(Group {
                    node: self.rows.len() as u32,
                    start: self.group_rows.len() as u32,
                    len: run.len() as u32,
                });
                self.group_rows.extend_from_slice(run);
            }
            self.rows.push(run[0]);
            self.parent.push(b as u32);
        }
    }

    fn len(&self) -> usize {
        self.rows.len()
    }

    fn children(&self, b: usize) -> std::ops::Range<usize> {
        self.first_child[b] as usize..self.first_child[b + 1] as usize
    }

    /// The table rows of node `b`, given the index of the next group not yet passed.
    fn rows_of(&self, b: usize, next_group: &mut usize) -> &[u32] {
        match self.groups.get(*next_group) {
            Some(g) if g.node as usize == b => {
                *next_group += 1;
                &self.group_rows[g.start as usize..(g.start + g.len) as usize]
            }
            _ => std::slice::from_ref(&self.rows[b]),
        }
    }
}

/// Builds the profile from `table` (whose names stay with the caller) and its sorted child
/// index, starting at `root`. Returns the profile without names, kinds or server values, and
/// how many rows it reached.
pub(super) fn build(
    table: NodeTable,
    children: ChildIndex,
    root: u32,
    warnings: &mut Warnings,
    map_rows: bool,
) -> (Profile, usize, Option<Vec<u32>>) {
    let order = LevelOrder::new(&children, &table.func, root);
    let table_rows = table.len();
    drop(children);
    let values = Values::gather(&order, &table, warnings);
    drop(table);
    let (values, size) = values.settle(&order, warnings);
    let (pos, start) = place(&order, &size, &values.total);
    let node_of_row = map_rows.then(|| node_of_row(&order, &pos, table_rows));
    let end: Vec<u32> = pos.iter().zip(&size).map(|(&p, &s)| p + s).collect();
    drop(size);
    let reached = values.reached;
    let profile = Profile {
        parent: preorder_parents(&order, &pos),
        depth: preorder_depths(&order, &pos),
        func: scatter(&pos, values.func),
        self_value: scatter(&pos, values.self_value),
        total: scatter(&pos, values.total),
        start: scatter(&pos, start),
        end: scatter(&pos, end),
        row_offsets: order.level_offsets,
        // Each level lists its nodes in ascending preorder: exactly a profile row.
        row_nodes: pos,
        ..Profile::default()
    };
    (profile, reached, node_of_row)
}

/// The node (preorder id) each table row became; `u32::MAX` for rows the root does not reach.
fn node_of_row(order: &LevelOrder, pos: &[u32], table_rows: usize) -> Vec<u32> {
    let mut node_of_row = vec![u32::MAX; table_rows];
    let mut next_group = 0;
    for (b, &node) in pos.iter().enumerate() {
        for &row in order.rows_of(b, &mut next_group) {
            node_of_row[row as usize] = node;
        }
    }
    node_of_row
}

/// Per-node function and values, in level order.
struct Values {
    func: Vec<u32>,
    self_value: Vec<u64>,
    total: Vec<u64>,
    derive_totals: bool,
    /// Table rows behind the nodes (more than nodes when siblings merged).
    reached: usize,
}

impl Values {
    /// Reads each node's rows from the table, summing the rows of merged nodes. Negative
    /// values read as 0, counted.
    fn gather(order: &LevelOrder, table: &NodeTable, warnings: &mut Warnings) -> Values {
        let m = order.len();
        let mut v = Values {
            func: Vec::with_capacity(m),
            self_value: Vec::with_capacity(m),
            total: Vec::with_capacity(m),
            derive_totals: table.derive_totals,
            reached: 0,
        };
        let mut next_group = 0;
        for b in 0..m {
            let rows = order.rows_of(b, &mut next_group);
            let (mut s, mut t) = (0u64, 0u64);
            for &r in rows {
                s = s.saturating_add(non_negative(warnings, table.self_value[r as usize]));
                t = t.saturating_add(non_negative(warnings, table.total_value[r as usize]));
            }
            v.reached += rows.len();
            warnings.merged_siblings += rows.len() as u32 - 1;
            v.func.push(table.func[rows[0] as usize]);
            v.self_value.push(s);
            v.total.push(t);
        }
        v
    }

    /// Backward over the levels (every child before its parent): raises each total to at
    /// least self + children (or derives it), and returns the subtree sizes.
    fn settle(mut self, order: &LevelOrder, warnings: &mut Warnings) -> (Values, Vec<u32>) {
        let m = order.len();
        let mut size = vec![1u32; m];
        let mut children_sum = vec![0u64; m];
        for b in (0..m).rev() {
            let needed = self.self_value[b].saturating_add(children_sum[b]);
            if self.derive_totals {
                self.total[b] = needed;
            } else if self.total[b] < needed {
                warnings.inconsistent_totals += 1;
                self.total[b] = needed;
            }
            if b > 0 {
                let p = order.parent[b] as usize;
                children_sum[p] = children_sum[p].saturating_add(self.total[b]);
                size[p] += size[b];
            }
        }
        (self, size)
    }
}

/// Forward over the levels: children are laid out one after another inside their parent,
/// in both the preorder numbering and the value axis. Returns each node's preorder position
/// and start offset (in level order).
fn place(order: &LevelOrder, size: &[u32], total: &[u64]) -> (Vec<u32>, Vec<u64>) {
    let m = order.len();
    let mut pos = vec![0u32; m];
    let mut start = vec![0u64; m];
    for b in 0..m {
        let (mut next_pos, mut next_start) = (pos[b] + 1, start[b]);
        for c in order.children(b) {
            pos[c] = next_pos;
            start[c] = next_start;
            next_pos += size[c];
            // Saturating like the totals themselves: siblings of huge (capped) totals would
            // overflow here, and wrapped starts put children outside their parent.
            next_start = next_start.saturating_add(total[c]);
        }
    }
    (pos, start)
}

/// Parent of every node, both in preorder.
fn preorder_parents(order: &LevelOrder, pos: &[u32]) -> Vec<u32> {
    let mut parent = vec![NO_PARENT; pos.len()];
    for b in 1..pos.len() {
        parent[pos[b] as usize] = pos[order.parent[b] as usize];
    }
    parent
}

/// Depth of every node in preorder: the index of its level.
fn preorder_depths(order: &LevelOrder, pos: &[u32]) -> Vec<u32> {
    let mut depth = vec![0u32; pos.len()];
    for (d, level) in order.level_offsets.windows(2).enumerate() {
        for &p in &pos[level[0] as usize..level[1] as usize] {
            depth[p as usize] = d as u32;
        }
    }
    depth
}

/// Reads a wire value; negative ones count as a warning and read as 0.
fn non_negative(warnings: &mut Warnings, v: i64) -> u64 {
    if v < 0 {
        warnings.negative_values += 1;
        0
    } else {
        v as u64
    }
}

/// `out[pos[b]] = values[b]` for every `b`, consuming `values` (freed on return).
fn scatter<T: Copy + Default>(pos: &[u32], values: Vec<T>) -> Vec<T> {
    let mut out = vec![T::default(); values.len()];
    for (&p, &v) in pos.iter().zip(&values) {
        out[p as usize] = v;
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::tree::table::{NodeTable, NO_PARENT};
    use crate::Profile;

    /// Fuzz regression (target `shape_a`): three siblings of the largest total a wire value
    /// can have overflowed the start offsets (a panic in debug builds; in release, wrapped
    /// starts put children outside their parent and the worker's profile was refused).
    #[test]
    fn huge_sibling_totals_saturate_instead_of_overflowing() {
        let mut t = NodeTable::default();
        let root = t.functions.intern("root");
        t.push(root, NO_PARENT, 0, 0);
        for name in ["a", "b", "c"] {
            let f = t.functions.intern(name);
            t.push(f, 0, i64::MAX, i64::MAX);
        }
        let p = Profile::from_table(t);
        let starts: Vec<u64> = p.children(0).map(|c| p.start(c)).collect();
        assert_eq!(starts, [0, i64::MAX as u64, 2 * i64::MAX as u64]);
        assert_eq!(p.root_total(), u64::MAX);
        assert!(Profile::from_parts(p.into_parts()).is_ok());
    }
}
