//! The immutable call-tree model every view is drawn from.
//!
//! Nodes are stored struct-of-arrays in **preorder**, children sorted by function name, so:
//! - node 0 is the root, and the subtree of node `i` is exactly the index range `i..end(i)`;
//! - every per-node value is computed once here (depth, total, horizontal start offset);
//! - the same profile sent as shape A or shape B yields identical arrays (the decoders' row order
//!   and duplicate sibling rows do not leak into the model).
//!
//! Building never recurses over depth, so thousands-deep stacks are fine, and never trusts the
//! table: unreachable rows (orphans, cycles), negative values and totals below their parts are
//! repaired and counted in [`Warnings`].

use crate::kind::FrameKind;
use crate::table::{NodeTable, NO_PARENT};

/// Index of a node in a [`Profile`] (preorder position; the root is 0).
pub type NodeId = u32;

/// What had to be repaired while building a profile. All zero for a sound response.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Warnings {
    /// Rows not reachable from the root: unknown parents, orphans, cycles.
    pub unreachable_rows: u32,
    /// Rows that claimed to be a root after the first one.
    pub extra_roots: u32,
    /// Rows repeating an earlier row's id (shape A).
    pub duplicate_ids: u32,
    /// Rows whose function id is not in `functions` (shape B).
    pub bad_function_ids: u32,
    /// Negative self or total values (read as 0).
    pub negative_values: u32,
    /// Nodes whose total was below self plus the children's totals (raised to that sum).
    pub inconsistent_totals: u32,
    /// Sibling rows with the same function, merged into one node.
    pub merged_siblings: u32,
}

impl Warnings {
    /// The number of repaired problems of every kind.
    pub fn total(&self) -> u32 {
        self.lines().iter().map(|(n, _)| n).sum()
    }

    /// One `(count, explanation)` per non-zero kind of problem, for display.
    pub fn lines(&self) -> Vec<(u32, &'static str)> {
        [
            (self.unreachable_rows, "rows not reachable from the root (orphans, unknown parents or cycles) were left out"),
            (self.extra_roots, "extra root rows were left out (only the first root is drawn)"),
            (self.duplicate_ids, "rows repeated an earlier node id and were left out"),
            (self.bad_function_ids, "rows named a function id outside `functions` and were left out"),
            (self.negative_values, "negative values were read as 0"),
            (self.inconsistent_totals, "totals were below self plus children and were raised to that sum"),
            (self.merged_siblings, "sibling rows with the same function were merged"),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .collect()
    }
}

/// The immutable call tree. See the module docs for the invariants.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    names: Vec<Box<str>>,
    kinds: Vec<FrameKind>,
    func: Vec<u32>,
    parent: Vec<u32>,
    depth: Vec<u32>,
    self_value: Vec<u64>,
    total: Vec<u64>,
    start: Vec<u64>,
    end: Vec<u32>,
    /// Node ids grouped by depth (CSR): row `d` is `row_nodes[row_offsets[d]..row_offsets[d+1]]`,
    /// in preorder, so both node ids and start offsets increase along a row.
    row_offsets: Vec<u32>,
    row_nodes: Vec<u32>,
    server_function_values: Option<Vec<(i64, i64)>>,
    warnings: Warnings,
}

impl Profile {
    /// Builds the canonical tree from a decoded table. An empty table gives an empty profile.
    pub fn from_table(table: NodeTable) -> Profile {
        Builder::new(table).build()
    }

    /// Builds directly from columns that already satisfy the invariants (used by the
    /// [`crate::build::TreeBuilder`]); computes depth, start, end and rows.
    pub(crate) fn from_preorder(
        names: Vec<Box<str>>,
        kinds: Vec<FrameKind>,
        func: Vec<u32>,
        parent: Vec<u32>,
        self_value: Vec<u64>,
        total: Vec<u64>,
        warnings: Warnings,
    ) -> Profile {
        let mut p = Profile {
            names,
            kinds,
            func,
            parent,
            self_value,
            total,
            warnings,
            ..Profile::default()
        };
        p.derive_geometry();
        p
    }

    /// Whether the profile has no nodes at all (an empty match).
    pub fn is_empty(&self) -> bool {
        self.func.is_empty()
    }

    /// The number of nodes, root included.
    pub fn node_count(&self) -> usize {
        self.func.len()
    }

    /// The root's total (0 for an empty profile).
    pub fn root_total(&self) -> u64 {
        self.total.first().copied().unwrap_or(0)
    }

    /// The deepest node's depth (root = 0).
    pub fn max_depth(&self) -> u32 {
        (self.row_offsets.len() as u32).saturating_sub(2)
    }

    /// The number of distinct function names.
    pub fn function_count(&self) -> usize {
        self.names.len()
    }

    /// The function (interned name id) of a node.
    pub fn func(&self, node: NodeId) -> u32 {
        self.func[node as usize]
    }

    /// The name of a function id.
    pub fn function_name(&self, func: u32) -> &str {
        &self.names[func as usize]
    }

    /// The kind of a function id.
    pub fn function_kind(&self, func: u32) -> FrameKind {
        self.kinds[func as usize]
    }

    /// The name of a node's function.
    pub fn name(&self, node: NodeId) -> &str {
        self.function_name(self.func(node))
    }

    /// The kind of a node; the root is always [`FrameKind::Root`].
    pub fn kind(&self, node: NodeId) -> FrameKind {
        if node == 0 {
            FrameKind::Root
        } else {
            self.function_kind(self.func(node))
        }
    }

    /// The parent of a node, `None` for the root.
    pub fn parent(&self, node: NodeId) -> Option<NodeId> {
        let p = self.parent[node as usize];
        (p != NO_PARENT).then_some(p)
    }

    /// Depth of a node (root = 0).
    pub fn depth(&self, node: NodeId) -> u32 {
        self.depth[node as usize]
    }

    /// Value of the stacks ending at this node.
    pub fn self_value(&self, node: NodeId) -> u64 {
        self.self_value[node as usize]
    }

    /// Value of the stacks through this node.
    pub fn total(&self, node: NodeId) -> u64 {
        self.total[node as usize]
    }

    /// Horizontal offset of the node from the root's left edge, in value units.
    pub fn start(&self, node: NodeId) -> u64 {
        self.start[node as usize]
    }

    /// One past the last node of this node's subtree (preorder).
    pub fn subtree_end(&self, node: NodeId) -> NodeId {
        self.end[node as usize]
    }

    /// Whether `node` lies in the subtree of `ancestor` (a node is in its own subtree).
    pub fn is_in_subtree(&self, node: NodeId, ancestor: NodeId) -> bool {
        node >= ancestor && node < self.subtree_end(ancestor)
    }

    /// The children of a node, in display order.
    pub fn children(&self, node: NodeId) -> Children<'_> {
        Children {
            profile: self,
            next: node + 1,
            end: self.subtree_end(node),
        }
    }

    /// The path from the root to `node`, both included (empty for a node the profile lacks).
    pub fn path_to(&self, node: NodeId) -> Vec<NodeId> {
        if node as usize >= self.node_count() {
            return Vec::new();
        }
        let mut path = vec![node];
        let mut cur = node;
        while let Some(p) = self.parent(cur) {
            path.push(p);
            cur = p;
        }
        path.reverse();
        path
    }

    /// Follows `names` from the root's children down and returns the deepest node reached
    /// (the root when the first name is not found), so a zoom survives transforms and reloads.
    pub fn find_path<S: AsRef<str>>(&self, names: &[S]) -> NodeId {
        let mut cur = 0;
        if self.is_empty() {
            return cur;
        }
        for name in names {
            match self.children(cur).find(|&c| self.name(c) == name.as_ref()) {
                Some(c) => cur = c,
                None => break,
            }
        }
        cur
    }

    /// The names on the path to `node`, without the root (the inverse of [`Profile::find_path`]).
    pub fn name_path(&self, node: NodeId) -> Vec<String> {
        self.path_to(node)
            .into_iter()
            .skip(1)
            .map(|n| self.name(n).to_string())
            .collect()
    }

    /// The id of the function with this exact name, if the profile has it.
    pub fn function_id(&self, name: &str) -> Option<u32> {
        self.names
            .iter()
            .position(|n| &**n == name)
            .map(|i| i as u32)
    }

    /// The nodes at `depth`, in left-to-right order (empty past the deepest row).
    pub fn row(&self, depth: u32) -> &[NodeId] {
        let d = depth as usize;
        match (self.row_offsets.get(d), self.row_offsets.get(d + 1)) {
            (Some(&a), Some(&b)) => &self.row_nodes[a as usize..b as usize],
            _ => &[],
        }
    }

    /// The server's per-function `(self, total)` sums when the response carried them (shape B).
    pub fn server_function_values(&self) -> Option<&[(i64, i64)]> {
        self.server_function_values.as_deref()
    }

    /// What was repaired while building.
    pub fn warnings(&self) -> &Warnings {
        &self.warnings
    }

    /// All node ids, in preorder.
    pub fn nodes(&self) -> std::ops::Range<NodeId> {
        0..self.node_count() as NodeId
    }

    /// Computes depth, subtree end, start offsets and the per-depth rows from
    /// func/parent/total, which must already be in preorder.
    fn derive_geometry(&mut self) {
        let n = self.func.len();
        self.depth = vec![0; n];
        self.start = vec![0; n];
        self.end = (1..=n as u32).collect();
        // Forward pass: a child's depth and start follow from its parent, which precedes it.
        let mut cursor = vec![0u64; n];
        for i in 1..n {
            let p = self.parent[i] as usize;
            self.depth[i] = self.depth[p] + 1;
            self.start[i] = cursor[p];
            cursor[p] += self.total[i];
            cursor[i] = self.start[i];
        }
        // Backward pass: a subtree ends where its last descendant's subtree ends.
        for i in (1..n).rev() {
            let p = self.parent[i] as usize;
            self.end[p] = self.end[p].max(self.end[i]);
        }
        let max_depth = self
            .depth
            .iter()
            .copied()
            .max()
            .map_or(0, |d| d as usize + 1);
        let mut counts = vec![0u32; max_depth + 1];
        for &d in &self.depth {
            counts[d as usize + 1] += 1;
        }
        for d in 1..counts.len() {
            counts[d] += counts[d - 1];
        }
        self.row_offsets = counts.clone();
        self.row_nodes = vec![0; n];
        for (i, &d) in self.depth.iter().enumerate() {
            let slot = &mut counts[d as usize];
            self.row_nodes[*slot as usize] = i as u32;
            *slot += 1;
        }
        if n == 0 {
            self.row_offsets.clear();
        }
    }
}

/// Iterator over a node's children (see [`Profile::children`]).
pub struct Children<'a> {
    profile: &'a Profile,
    next: NodeId,
    end: NodeId,
}

impl Iterator for Children<'_> {
    type Item = NodeId;

    fn next(&mut self) -> Option<NodeId> {
        if self.next >= self.end {
            return None;
        }
        let child = self.next;
        self.next = self.profile.subtree_end(child);
        Some(child)
    }
}

/// A node waiting to be emitted by [`Builder::build`].
enum Pending {
    /// One table row.
    Row(u32),
    /// Several sibling rows with the same function: `groups[start..start + len]`.
    Group(u32, u32),
}

/// Reads a wire value; negative ones count as a warning and read as 0.
fn read_value(warnings: &mut Warnings, v: i64) -> u64 {
    if v < 0 {
        warnings.negative_values += 1;
        0
    } else {
        v as u64
    }
}

/// Turns a [`NodeTable`] into a [`Profile`]: a depth-first walk from the root over groups of
/// rows, where a group is every row that lands on one canonical node (normally one row; more
/// when the table repeats a sibling).
struct Builder {
    table: NodeTable,
    /// Children of each row (CSR over rows), built once.
    child_offsets: Vec<u32>,
    child_rows: Vec<u32>,
    /// Sort key per function: the rank of its name, so children order by name without
    /// comparing strings in the hot loop.
    name_rank: Vec<u32>,
    warnings: Warnings,
    derive_totals: bool,
}

impl Builder {
    fn new(table: NodeTable) -> Builder {
        let warnings = Warnings {
            duplicate_ids: table.issues.duplicate_ids,
            bad_function_ids: table.issues.bad_function_ids,
            ..Warnings::default()
        };
        let derive_totals = table.derive_totals;
        let mut b = Builder {
            derive_totals,
            table,
            child_offsets: Vec::new(),
            child_rows: Vec::new(),
            name_rank: Vec::new(),
            warnings,
        };
        b.index_children();
        b.rank_names();
        b.sort_children();
        b
    }

    /// Orders every row's children by name (row index breaking ties), once, so that the walk
    /// below only needs to merge when two adjacent siblings share a function.
    fn sort_children(&mut self) {
        let (rank, fns) = (&self.name_rank, &self.table.func);
        for w in self.child_offsets.windows(2) {
            let segment = &mut self.child_rows[w[0] as usize..w[1] as usize];
            if segment.len() > 1 {
                segment.sort_unstable_by_key(|&r| (rank[fns[r as usize] as usize], r));
            }
        }
    }

    fn index_children(&mut self) {
        let n = self.table.len();
        let mut counts = vec![0u32; n + 1];
        for &p in &self.table.parent {
            if (p as usize) < n {
                counts[p as usize + 1] += 1;
            }
        }
        for i in 1..counts.len() {
            counts[i] += counts[i - 1];
        }
        self.child_offsets = counts.clone();
        self.child_rows = vec![0; counts[n] as usize];
        for (row, &p) in self.table.parent.iter().enumerate() {
            if (p as usize) < n {
                let slot = &mut counts[p as usize];
                self.child_rows[*slot as usize] = row as u32;
                *slot += 1;
            }
        }
    }

    fn rank_names(&mut self) {
        let functions = &self.table.functions;
        let mut order: Vec<u32> = (0..functions.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| functions.name(a).cmp(functions.name(b)));
        let mut rank = vec![0u32; order.len()];
        for (r, &id) in order.iter().enumerate() {
            rank[id as usize] = r as u32;
        }
        self.name_rank = rank;
    }

    fn children_of(&self, row: u32) -> &[u32] {
        let a = self.child_offsets[row as usize] as usize;
        let b = self.child_offsets[row as usize + 1] as usize;
        &self.child_rows[a..b]
    }

    fn find_root(&mut self) -> Option<u32> {
        let mut roots = self
            .table
            .parent
            .iter()
            .enumerate()
            .filter(|(_, &p)| p == NO_PARENT)
            .map(|(i, _)| i as u32);
        let first = roots.next();
        self.warnings.extra_roots = roots.count() as u32;
        first
    }

    fn build(mut self) -> Profile {
        let Some(root) = self.find_root() else {
            let unreachable = self.table.len() as u32;
            let mut empty = Profile {
                warnings: self.warnings,
                ..Profile::default()
            };
            empty.warnings.unreachable_rows = unreachable;
            return empty;
        };
        let n = self.table.len();
        let mut func = Vec::with_capacity(n);
        let mut parent = Vec::with_capacity(n);
        let mut self_value = Vec::with_capacity(n);
        let mut given_total = Vec::with_capacity(n);

        // Pending canonical nodes. Most are a single row; rows that repeat a sibling's function
        // form a group (in the `groups` arena) whose children are merged.
        let mut groups: Vec<u32> = Vec::new();
        let mut stack: Vec<(Pending, u32)> = vec![(Pending::Row(root), NO_PARENT)];
        let mut scratch: Vec<u32> = Vec::new();
        let mut visited_rows: u32 = 0;

        while let Some((pending, canon_parent)) = stack.pop() {
            let id = func.len() as u32;
            let rows: &[u32] = match &pending {
                Pending::Row(r) => std::slice::from_ref(r),
                Pending::Group(start, len) => &groups[*start as usize..(*start + *len) as usize],
            };
            let (mut s, mut t) = (0u64, 0u64);
            for &row in rows {
                s = s.saturating_add(read_value(
                    &mut self.warnings,
                    self.table.self_value[row as usize],
                ));
                t = t.saturating_add(read_value(
                    &mut self.warnings,
                    self.table.total_value[row as usize],
                ));
            }
            visited_rows += rows.len() as u32;
            self.warnings.merged_siblings += rows.len() as u32 - 1;
            func.push(self.table.func[rows[0] as usize]);
            parent.push(canon_parent);
            self_value.push(s);
            given_total.push(t);

            // The children, sorted by name: a single row's are pre-sorted; a group's are
            // gathered and sorted here.
            let children: &[u32] = if rows.len() == 1 {
                self.children_of(rows[0])
            } else {
                scratch.clear();
                for &row in rows {
                    scratch.extend_from_slice(self.children_of(row));
                }
                let (rank, fns) = (&self.name_rank, &self.table.func);
                scratch.sort_unstable_by_key(|&r| (rank[fns[r as usize] as usize], r));
                &scratch
            };
            // Push runs of equal functions in reverse, so the first child pops first.
            let fns = &self.table.func;
            let mut runs_end = children.len();
            while runs_end > 0 {
                let f = fns[children[runs_end - 1] as usize];
                let mut run_start = runs_end - 1;
                while run_start > 0 && fns[children[run_start - 1] as usize] == f {
                    run_start -= 1;
                }
                let run = &children[run_start..runs_end];
                let next = if run.len() == 1 {
                    Pending::Row(run[0])
                } else {
                    let g = groups.len() as u32;
                    groups.extend_from_slice(run);
                    Pending::Group(g, run.len() as u32)
                };
                stack.push((next, id));
                runs_end = run_start;
            }
        }
        // Placeholder rows for bad function ids are already counted as such.
        self.warnings.unreachable_rows = (n as u32)
            .saturating_sub(visited_rows)
            .saturating_sub(self.warnings.extra_roots)
            .saturating_sub(self.warnings.bad_function_ids);

        let total = self.settle_totals(&parent, &self_value, given_total);
        let table = std::mem::take(&mut self.table);
        let server_function_values = table.server_function_values;
        let (names, kinds) = table.functions.into_columns();
        let mut profile =
            Profile::from_preorder(names, kinds, func, parent, self_value, total, self.warnings);
        profile.server_function_values = server_function_values;
        profile
    }

    /// total = max(given total, self + Σ children totals), bottom-up (reverse preorder visits
    /// every child before its parent). Raising is counted: the server's numbers disagreed.
    fn settle_totals(&mut self, parent: &[u32], self_value: &[u64], given: Vec<u64>) -> Vec<u64> {
        let n = parent.len();
        let mut children_sum = vec![0u64; n];
        let mut total = given;
        for i in (0..n).rev() {
            let needed = self_value[i].saturating_add(children_sum[i]);
            if self.derive_totals {
                total[i] = needed;
            } else if total[i] < needed {
                self.warnings.inconsistent_totals += 1;
                total[i] = needed;
            }
            if let Some(&p) = parent.get(i).filter(|&&p| p != NO_PARENT) {
                children_sum[p as usize] = children_sum[p as usize].saturating_add(total[i]);
            }
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::NodeTable;

    /// Builds a table from `(name, parent_row, self, total)` rows.
    fn table(rows: &[(&str, i64, i64, i64)]) -> NodeTable {
        let mut t = NodeTable::default();
        for &(name, parent, s, total) in rows {
            let f = t.functions.intern(name);
            let p = if parent < 0 { NO_PARENT } else { parent as u32 };
            t.push(f, p, s, total);
        }
        t
    }

    fn names(p: &Profile) -> Vec<&str> {
        p.nodes().map(|n| p.name(n)).collect()
    }

    #[test]
    fn children_before_parents_build_a_sorted_preorder_tree() {
        // Rows leaf-first, as shape B sends them.
        let p = Profile::from_table(table(&[
            ("root", -1, 0, 30),
            ("b-leaf", 3, 10, 10),
            ("a", 0, 20, 20),
            ("b", 0, 0, 10),
        ]));
        assert_eq!(names(&p), ["root", "a", "b", "b-leaf"]);
        assert_eq!(p.root_total(), 30);
        assert_eq!(p.depth(3), 2);
        assert_eq!(p.start(2), 20);
        assert_eq!(p.start(3), 20);
        assert_eq!(p.subtree_end(0), 4);
        assert_eq!(p.subtree_end(1), 2);
        assert_eq!(p.children(0).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(p.row(1), [1, 2]);
        assert_eq!(p.row(2), [3]);
        assert_eq!(p.max_depth(), 2);
        assert_eq!(p.warnings().total(), 0);
        assert_eq!(p.path_to(3), [0, 2, 3]);
        assert_eq!(p.name_path(3), ["b", "b-leaf"]);
        assert_eq!(p.find_path(&["b", "b-leaf"]), 3);
        assert_eq!(p.find_path(&["b", "nope"]), 2);
        assert_eq!(p.find_path(&["nope"]), 0);
        assert_eq!(p.function_id("a"), Some(2));
        assert_eq!(p.function_id("zz"), None);
    }

    #[test]
    fn cycles_orphans_and_unknown_parents_are_dropped_not_followed() {
        let p = Profile::from_table(table(&[
            ("root", -1, 0, 5),
            ("a", 0, 5, 5),
            ("cycle1", 3, 1, 1),
            ("cycle2", 2, 1, 1),
            ("self-loop", 4, 1, 1),
            ("unknown-parent", 99, 1, 1),
        ]));
        assert_eq!(names(&p), ["root", "a"]);
        assert_eq!(p.warnings().unreachable_rows, 4);
    }

    #[test]
    fn duplicate_siblings_merge_with_their_subtrees() {
        let p = Profile::from_table(table(&[
            ("root", -1, 0, 6),
            ("a", 0, 1, 3),
            ("a", 0, 1, 3),
            ("x", 1, 2, 2),
            ("x", 2, 2, 2),
        ]));
        assert_eq!(names(&p), ["root", "a", "x"]);
        assert_eq!(p.self_value(1), 2);
        assert_eq!(p.total(1), 6);
        assert_eq!(p.total(2), 4);
        assert_eq!(p.warnings().merged_siblings, 2);
    }

    #[test]
    fn negative_and_inconsistent_values_are_repaired_and_counted() {
        let p = Profile::from_table(table(&[
            ("root", -1, 0, 1),
            ("a", 0, -5, 3),
            ("b", 0, 4, 2),
        ]));
        assert_eq!(p.self_value(1), 0);
        assert_eq!(p.total(2), 4);
        assert_eq!(p.root_total(), 7);
        assert_eq!(p.warnings().negative_values, 1);
        assert_eq!(p.warnings().inconsistent_totals, 2);
    }

    #[test]
    fn no_root_means_empty_profile_with_a_warning() {
        let p = Profile::from_table(table(&[("a", 1, 0, 1), ("b", 0, 0, 1)]));
        assert!(p.is_empty());
        assert!(p.path_to(0).is_empty());
        assert!(p.name_path(0).is_empty());
        assert_eq!(p.find_path(&["a"]), 0);
        assert_eq!(p.warnings().unreachable_rows, 2);
        assert_eq!(p.max_depth(), 0);
        assert!(p.row(0).is_empty());
    }

    #[test]
    fn very_deep_chains_do_not_overflow_the_stack() {
        let mut rows = vec![("root".to_string(), -1i64, 0i64, 1i64)];
        for d in 1..20_000i64 {
            rows.push((format!("f{d}"), d - 1, if d == 19_999 { 1 } else { 0 }, 1));
        }
        let borrowed: Vec<(&str, i64, i64, i64)> = rows
            .iter()
            .map(|(n, p, s, t)| (n.as_str(), *p, *s, *t))
            .collect();
        let p = Profile::from_table(table(&borrowed));
        assert_eq!(p.max_depth(), 19_999);
        assert_eq!(p.path_to(19_999).len(), 20_000);
    }
}
