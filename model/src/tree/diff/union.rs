//! The union of two profiles' trees, built by walking both trees at once.
//!
//! Both trees list every node's children sorted by name, so the children of two matching
//! nodes merge like two sorted lists: one pass over both trees, without hashing (keying nodes
//! by (parent, function) in a hash map cost ~250 ns a node at a million nodes, most of a
//! comparison's time). Should a tree ever list children out of order, the same function
//! appears twice under one parent and [`Profile::from_table_mapped`] merges the two rows, so
//! the union stays right.

use crate::tree::profile::{NodeId, Profile};
use crate::tree::table::{NodeTable, NO_PARENT};

/// The union tree and, for each side, the union node of each of its nodes.
pub(super) struct Union {
    pub profile: Profile,
    /// Per side (baseline, comparison): its nodes' union nodes (`NodeId::MAX` when a node's
    /// union row was not reached, which does not happen for well-formed sides).
    pub nodes: [Vec<NodeId>; 2],
}

/// A union node's counterparts on the baseline and the comparison side.
type Pair = [Option<NodeId>; 2];

/// Builds the union of `sides` (baseline, comparison) under a root named `root_name`; each
/// side's self values are multiplied by its scale and stored rounded.
pub(super) fn union(sides: [&Profile; 2], scales: [f64; 2], root_name: &str) -> Union {
    let mut walk = Walk {
        sides,
        scales,
        funcs: sides.map(|p| vec![u32::MAX; p.function_count()]),
        rows: sides.map(|p| vec![u32::MAX; p.node_count()]),
        table: NodeTable::default(),
        root_func: 0,
    };
    walk.table.derive_totals = true;
    walk.table
        .reserve(sides[0].node_count().max(sides[1].node_count()));
    walk.root_func = walk.table.functions.intern(root_name);
    let roots: Pair = sides.map(|p| (!p.is_empty()).then_some(0));
    let mut stack: Vec<(Pair, u32)> = vec![(roots, NO_PARENT)];
    let mut children = Vec::new();
    while let Some((pair, parent)) = stack.pop() {
        let func = walk.union_func(pair, parent);
        let row = walk.push(pair, parent, func);
        children.clear();
        merge_children(sides, pair, &mut children);
        // Reversed, so the rows come out in preorder with children in name order.
        stack.extend(children.drain(..).rev().map(|c| (c, row)));
    }
    let Walk { table, rows, .. } = walk;
    let (profile, node_of_row) = Profile::from_table_mapped(table);
    let nodes = rows.map(|side| {
        side.iter()
            .map(|&row| {
                node_of_row
                    .get(row as usize)
                    .copied()
                    .unwrap_or(NodeId::MAX)
            })
            .collect()
    });
    Union { profile, nodes }
}

struct Walk<'a> {
    sides: [&'a Profile; 2],
    scales: [f64; 2],
    /// Per side: the union function of each of its functions (`u32::MAX` until first seen).
    funcs: [Vec<u32>; 2],
    /// Per side: the union table row of each of its nodes.
    rows: [Vec<u32>; 2],
    table: NodeTable,
    /// The union root's function (the roots merge whatever their names).
    root_func: u32,
}

/// Width units per unit of the comparison: averaging two sides halves values, and the integer
/// tree needs enough resolution for frames that are tiny on one side.
pub(super) const RESOLUTION: f64 = 2.0;

impl Walk<'_> {
    /// The union function of `pair` under `parent` (named by whichever side has the node).
    fn union_func(&mut self, pair: Pair, parent: u32) -> u32 {
        let (side, node) = match pair {
            _ if parent == NO_PARENT => return self.root_func,
            [_, Some(c)] => (1, c),
            [Some(b), None] => (0, b),
            [None, None] => return self.root_func,
        };
        let p = self.sides[side];
        let f = p.func(node);
        let slot = &mut self.funcs[side][f as usize];
        if *slot == u32::MAX {
            *slot = self.table.functions.intern(p.function_name(f));
            self.table.functions.set_kind(*slot, p.function_kind(f));
        }
        *slot
    }

    /// Appends the union row of `pair`: each side's self value on the common scale, halved
    /// (the average of the two sides), rounded.
    fn push(&mut self, pair: Pair, parent: u32, func: u32) -> u32 {
        let row = self.table.len() as u32;
        let mut value = 0i64;
        for (side, node) in pair.into_iter().enumerate() {
            if let Some(node) = node {
                self.rows[side][node as usize] = row;
                let scaled = self.sides[side].self_value(node) as f64 * self.scales[side];
                value = value.saturating_add((scaled * RESOLUTION / 2.0).round() as i64);
            }
        }
        self.table.push(func, parent, value, 0);
        row
    }
}

/// The children of `pair`'s nodes, matched by name, in name order.
fn merge_children(sides: [&Profile; 2], pair: Pair, out: &mut Vec<Pair>) {
    let mut b = pair[0]
        .map(|n| sides[0].children(n))
        .into_iter()
        .flatten()
        .peekable();
    let mut c = pair[1]
        .map(|n| sides[1].children(n))
        .into_iter()
        .flatten()
        .peekable();
    loop {
        let next = match (b.peek(), c.peek()) {
            (Some(&x), Some(&y)) => match sides[0].name(x).cmp(sides[1].name(y)) {
                std::cmp::Ordering::Less => [b.next(), None],
                std::cmp::Ordering::Greater => [None, c.next()],
                std::cmp::Ordering::Equal => [b.next(), c.next()],
            },
            (Some(_), None) => [b.next(), None],
            (None, Some(_)) => [None, c.next()],
            (None, None) => return,
        };
        out.push(next);
    }
}

#[cfg(test)]
mod tests {
    use crate::synth::{SynthOptions, SynthProfile};
    use crate::tree::diff::{Diff, DiffMode};
    use crate::tree::profile::{NodeId, Profile};
    use crate::wire::folded::parse_folded;

    fn synth(seed: u64) -> Profile {
        let text = SynthProfile::generate(SynthOptions {
            nodes: 3_000,
            functions: Some(40),
            max_depth: 12,
            seed,
        })
        .to_folded();
        parse_folded(&text, "app").expect("synthetic folded stacks parse")
    }

    /// The node at `path` below the root of `p`, if it has it.
    fn find(p: &Profile, path: &[String]) -> Option<NodeId> {
        let mut at = 0;
        for name in path {
            at = p.children(at).find(|&c| p.name(c) == name)?;
        }
        Some(at)
    }

    /// Against a direct definition: every union node is on one side or both, with exactly that
    /// side's values, and every node of either side is in the union.
    #[test]
    fn the_walk_matches_looking_every_path_up() {
        let (b, c) = (synth(7), synth(8));
        let d = Diff::new(&b, &c, DiffMode::Absolute);
        for n in d.profile.nodes().skip(1) {
            let path = &d.profile.name_path(n);
            for (side, values) in [(&b, &d.values.baseline), (&c, &d.values.comparison)] {
                let (s, t) =
                    find(side, path).map_or((0, 0), |x| (side.self_value(x), side.total(x)));
                assert_eq!(
                    (values.self_value[n as usize], values.total[n as usize]),
                    (s, t),
                    "{path:?}"
                );
            }
        }
        for side in [&b, &c] {
            for n in side.nodes().skip(1) {
                let path = &side.name_path(n);
                assert!(find(&d.profile, path).is_some(), "{path:?} is in the union");
            }
        }
        assert!(d.profile.node_count() > b.node_count().max(c.node_count()));
    }
}
