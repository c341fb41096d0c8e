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

use crate::contract::kind::FrameKind;
mod builder;
mod child_index;
mod level_order;
pub(crate) mod parts;

pub use parts::{PartsError, ProfileParts, WARNING_ORDER};

use crate::tree::table::{NodeTable, NO_PARENT};

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
        builder::build(table, false).0
    }

    /// [`Profile::from_table`], and the node each table row became (`NodeId::MAX` for a row
    /// the root does not reach; merged sibling rows share their node).
    pub fn from_table_mapped(table: NodeTable) -> (Profile, Vec<NodeId>) {
        let (profile, node_of_row) = builder::build(table, true);
        (profile, node_of_row.unwrap_or_default())
    }

    /// Whether the profile has no nodes at all (an empty match).
    pub fn is_empty(&self) -> bool {
        self.func.is_empty()
    }

    /// Whether there is anything to draw: some node has a value (totals cover their subtree,
    /// so the root's says). False for an empty match and for an answer of all-zero values.
    pub fn has_value(&self) -> bool {
        self.total.first().is_some_and(|&t| t > 0)
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

    /// The frame kinds that occur in the tree, in legend order ([`FrameKind::ALL`]).
    pub fn kinds_present(&self) -> Vec<FrameKind> {
        let Some(rest) = self.func.get(1..) else {
            return Vec::new();
        };
        // Which functions occur (a tight pass over one column: the kind of each function is
        // then looked up once, not once per node; 1M nodes share ~55k functions).
        let mut used = vec![false; self.names.len()];
        for &f in rest {
            used[f as usize] = true;
        }
        let mut present = [false; FrameKind::ALL.len()];
        present[0] = true;
        for (func, _) in used.iter().enumerate().filter(|(_, &u)| u) {
            let kind = self.kinds[func];
            if let Some(i) = FrameKind::ALL.iter().position(|k| *k == kind) {
                present[i] = true;
            }
        }
        FrameKind::ALL
            .into_iter()
            .zip(present)
            .filter_map(|(k, p)| p.then_some(k))
            .collect()
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

#[cfg(test)]
mod tests {
    use crate::wire::folded::parse_folded;
    use crate::FrameKind;

    #[test]
    fn kinds_present_lists_the_kinds_of_the_frames_in_legend_order() {
        let p = parse_folded("main;[k] sys_read 3\n[l] libc.so;memcpy 1\n", "app").unwrap();
        // Equal to asking every node (the definition), in legend order.
        let per_node: Vec<FrameKind> = FrameKind::ALL
            .into_iter()
            .filter(|k| p.nodes().any(|n| p.kind(n) == *k))
            .collect();
        assert_eq!(p.kinds_present(), per_node);
        assert_eq!(
            per_node,
            [
                FrameKind::Root,
                FrameKind::App,
                FrameKind::Library,
                FrameKind::Kernel
            ]
        );
        assert_eq!(crate::Profile::default().kinds_present(), []);
    }
}
