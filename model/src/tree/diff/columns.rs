//! The union of two profiles' trees, written straight into the union profile's columns.
//!
//! Both sides are canonical (preorder, children sorted by name, one node per name under a
//! parent), so a walk that merges the children of matching nodes like two sorted lists visits
//! the union in preorder with children in name order: each node's columns are final when it is
//! visited, and totals, subtree ends, start offsets and rows follow in one pass each. Building
//! a table and sorting it into a tree again (what [`super::union`] does) took most of a 1M
//! comparison's time: string comparisons while merging and again while sorting, and a second
//! set of temporaries. Here two children are compared by their union function first (an
//! integer: equal ids are equal names), and by name only when they differ.

use crate::contract::kind::FrameKind;
use crate::tree::diff::union::RESOLUTION;
use crate::tree::diff::SideValues;
use crate::tree::profile::parts::pack_names;
use crate::tree::profile::{NodeId, Profile, ProfileParts};
use crate::tree::table::NO_PARENT;
use rustc_hash::FxHashMap;

/// A union node's counterparts on the baseline and the comparison side.
type Pair = [Option<NodeId>; 2];

/// A node waiting to be visited: its counterparts, union function, parent and depth.
type Pending = (Pair, u32, u32, u32);

/// The union profile of `sides` (baseline, comparison) under a root named `root_name`, and
/// each side's values on its nodes; `None` if a side is not canonical (two children with the
/// same name under one parent) or the columns fail the profile's checks: the table-building
/// union repairs what it can.
pub(super) fn union_columns<'a>(
    sides: [&'a Profile; 2],
    scales: [f64; 2],
    root_name: &'a str,
) -> Option<(Profile, [SideValues; 2])> {
    let mut walk = Walk::new(sides, scales);
    let root_func = walk.intern(root_name, FrameKind::from_name(root_name));
    let roots: Pair = sides.map(|p| (!p.is_empty()).then_some(0));
    let mut stack: Vec<Pending> = vec![(roots, root_func, NO_PARENT, 0)];
    let mut children: Vec<(Pair, u32)> = Vec::new();
    while let Some((pair, func, parent, depth)) = stack.pop() {
        let id = walk.visit(pair, func, parent, depth);
        children.clear();
        walk.merge_children(pair, id, &mut children)?;
        // Reversed, so the nodes come off the stack in preorder with children in name order.
        stack.extend(children.drain(..).rev().map(|(c, f)| (c, f, id, depth + 1)));
    }
    walk.finish()
}

struct Walk<'a> {
    sides: [&'a Profile; 2],
    scales: [f64; 2],
    /// Per side: the union function of each of its functions (`u32::MAX` until first seen).
    funcs: [Vec<u32>; 2],
    /// The union's functions, borrowed from the sides (nothing is allocated per name).
    ids: FxHashMap<&'a str, u32>,
    names: Vec<&'a str>,
    kinds: Vec<FrameKind>,
    /// Per union function: the last node whose children listed it (catches duplicates).
    listed_under: Vec<u32>,
    func: Vec<u32>,
    parent: Vec<u32>,
    depth: Vec<u32>,
    self_value: Vec<u64>,
    /// Per side: self and total values on the union's nodes.
    values: [SideValues; 2],
}

impl<'a> Walk<'a> {
    fn new(sides: [&'a Profile; 2], scales: [f64; 2]) -> Walk<'a> {
        let n = sides[0].node_count().max(sides[1].node_count());
        let side = || SideValues {
            self_value: Vec::with_capacity(n),
            total: Vec::with_capacity(n),
        };
        Walk {
            sides,
            scales,
            funcs: sides.map(|p| vec![u32::MAX; p.function_count()]),
            ids: FxHashMap::default(),
            names: Vec::new(),
            kinds: Vec::new(),
            listed_under: Vec::new(),
            func: Vec::with_capacity(n),
            parent: Vec::with_capacity(n),
            depth: Vec::with_capacity(n),
            self_value: Vec::with_capacity(n),
            values: [side(), side()],
        }
    }

    /// Appends the union node of `pair`: each side's self value on the common scale, halved
    /// (the average of the two sides), rounded; and each side's own values.
    fn visit(&mut self, pair: Pair, func: u32, parent: u32, depth: u32) -> u32 {
        let id = self.func.len() as u32;
        let mut value = 0i64;
        for (side, node) in pair.into_iter().enumerate() {
            let (s, t) = node.map_or((0, 0), |n| {
                let p = self.sides[side];
                (p.self_value(n), p.total(n))
            });
            if node.is_some() {
                value = value.saturating_add(half_scaled(s, self.scales[side]));
            }
            self.values[side].self_value.push(s);
            self.values[side].total.push(t);
        }
        self.func.push(func);
        self.parent.push(parent);
        self.depth.push(depth);
        self.self_value.push(value.max(0) as u64);
        id
    }

    /// The union function named `name`, added with `kind` if new.
    fn intern(&mut self, name: &'a str, kind: FrameKind) -> u32 {
        let next = self.names.len() as u32;
        let id = *self.ids.entry(name).or_insert(next);
        if id == next {
            self.names.push(name);
            self.kinds.push(kind);
            self.listed_under.push(u32::MAX);
        }
        id
    }

    /// The union function of `side`'s `node` (looked up the first time its function is seen).
    fn union_func(&mut self, side: usize, node: NodeId) -> u32 {
        let p = self.sides[side];
        let f = p.func(node);
        let known = self.funcs[side][f as usize];
        if known != u32::MAX {
            return known;
        }
        let kind = p.function_kind(f);
        let id = self.intern(p.function_name(f), kind);
        // A name both sides have takes the comparison's kind, as the table union does (the
        // sides may disagree: one answer classified by `function_types`, one by names).
        if side == 1 {
            self.kinds[id as usize] = kind;
        }
        self.funcs[side][f as usize] = id;
        id
    }

    /// The children of `pair`'s nodes (union node `id`), matched by name, in name order, with
    /// their union functions; `None` when a name occurs twice among them.
    fn merge_children(&mut self, pair: Pair, id: u32, out: &mut Vec<(Pair, u32)>) -> Option<()> {
        let [sb, sc] = self.sides;
        let mut b = pair[0].map(|n| sb.children(n)).into_iter().flatten();
        let mut c = pair[1].map(|n| sc.children(n)).into_iter().flatten();
        let (mut nb, mut nc) = (b.next(), c.next());
        let mut fb = nb.map(|x| self.union_func(0, x));
        let mut fc = nc.map(|y| self.union_func(1, y));
        loop {
            let take = match (fb, fc) {
                (Some(x), Some(y)) if x == y => [true, true],
                (Some(_), Some(_)) => {
                    let less = sb.name(nb?) < sc.name(nc?);
                    [less, !less]
                }
                (Some(_), None) => [true, false],
                (None, Some(_)) => [false, true],
                (None, None) => return Some(()),
            };
            let func = if take[1] { fc? } else { fb? };
            let slot = &mut self.listed_under[func as usize];
            if *slot == id {
                return None;
            }
            *slot = id;
            out.push(([nb.filter(|_| take[0]), nc.filter(|_| take[1])], func));
            if take[0] {
                nb = b.next();
                fb = nb.map(|x| self.union_func(0, x));
            }
            if take[1] {
                nc = c.next();
                fc = nc.map(|y| self.union_func(1, y));
            }
        }
    }

    /// The union profile from the visited columns, and each side's values.
    fn finish(self) -> Option<(Profile, [SideValues; 2])> {
        let n = self.func.len();
        let parent = self.parent;
        // Children come after their parents: one backward pass sums totals and subtree ends.
        let mut total = self.self_value.clone();
        let mut end: Vec<u32> = (1..=n as u32).collect();
        for i in (1..n).rev() {
            let p = parent[i] as usize;
            total[p] = total[p].saturating_add(total[i]);
            end[p] = end[p].max(end[i]);
        }
        // Children one after another inside their parent, on the value axis.
        let mut start = vec![0u64; n];
        let mut next = vec![0u64; n];
        for i in 1..n {
            let p = parent[i] as usize;
            start[i] = next[p];
            next[i] = start[i];
            next[p] = next[p].saturating_add(total[i]);
        }
        drop(next);
        let (row_offsets, row_nodes) = rows(&self.depth);
        let (name_bytes, name_ends) = pack_names(&self.names);
        let parts = ProfileParts {
            names: name_bytes,
            name_ends,
            kinds: self.kinds.iter().map(|k| k.index()).collect(),
            func: self.func,
            parent,
            depth: self.depth,
            self_value: self.self_value,
            total,
            start,
            end,
            row_offsets,
            row_nodes,
            server_function_values: None,
            warnings: [0; 7],
        };
        // Checked like a profile from outside: should the columns ever break an invariant, the
        // table-building union is used instead.
        let profile = Profile::from_parts(parts).ok()?;
        Some((profile, self.values))
    }
}

/// Nodes grouped by depth (CSR), each row in preorder.
fn rows(depth: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let levels = depth.iter().max().map_or(0, |&d| d as usize + 1);
    let mut offsets = vec![0u32; levels + 1];
    for &d in depth {
        offsets[d as usize + 1] += 1;
    }
    for d in 0..levels {
        offsets[d + 1] += offsets[d];
    }
    let mut fill = offsets.clone();
    let mut nodes = vec![0u32; depth.len()];
    for (i, &d) in depth.iter().enumerate() {
        nodes[fill[d as usize] as usize] = i as u32;
        fill[d as usize] += 1;
    }
    (offsets, nodes)
}

/// A side's self value on the common scale, halved (the average of two sides), rounded; exact
/// integer arithmetic for the comparison's side (scale 1), where the float gives the same.
fn half_scaled(value: u64, scale: f64) -> i64 {
    const EXACT: u64 = 1 << 53;
    if scale == 1.0 && RESOLUTION == 2.0 && value < EXACT {
        return value as i64;
    }
    (value as f64 * scale * RESOLUTION / 2.0).round() as i64
}

#[cfg(test)]
mod tests {
    use super::union_columns;
    use crate::synth::{SynthOptions, SynthProfile};
    use crate::tree::diff::{table_union, Diff, DiffMode};
    use crate::tree::profile::Profile;
    use crate::wire::folded::parse_folded;

    fn synth(nodes: usize, seed: u64) -> Profile {
        let text = SynthProfile::generate(SynthOptions {
            nodes,
            functions: Some(60),
            max_depth: 14,
            seed,
        })
        .to_folded();
        parse_folded(&text, "app").expect("synthetic folded stacks parse")
    }

    /// Every column of `a` and `b` alike, functions compared by name (ids are interning order).
    fn assert_same(a: &Profile, b: &Profile) {
        assert_eq!(a.node_count(), b.node_count());
        for n in a.nodes() {
            let got = (
                a.name(n),
                a.depth(n),
                a.parent(n),
                a.self_value(n),
                a.total(n),
            );
            let want = (
                b.name(n),
                b.depth(n),
                b.parent(n),
                b.self_value(n),
                b.total(n),
            );
            assert_eq!(got, want, "node {n}");
            assert_eq!(
                (a.start(n), a.subtree_end(n)),
                (b.start(n), b.subtree_end(n))
            );
            let kinds = (a.function_kind(a.func(n)), b.function_kind(b.func(n)));
            assert_eq!(kinds.0, kinds.1, "node {n}");
        }
        for d in 0..=a.max_depth() {
            assert!(a.row(d).eq(b.row(d)), "row {d}");
        }
    }

    /// Against the table-building union it replaces: same tree, same values on both sides.
    #[test]
    fn the_column_walk_builds_what_the_table_union_built() {
        let cases = [
            (synth(4_000, 3), synth(4_000, 3)),
            (synth(3_600, 3), synth(4_000, 3)),
            (synth(4_000, 3), synth(2_000, 4)),
            (Profile::default(), synth(500, 5)),
            (synth(500, 5), Profile::default()),
            (Profile::default(), Profile::default()),
        ];
        for (b, c) in &cases {
            for scale in [1.0, 0.37, 2.5] {
                let (profile, values) =
                    union_columns([b, c], [scale, 1.0], "root").expect("canonical sides");
                let (want, want_values) = table_union([b, c], scale, "root");
                assert_same(&profile, &want);
                assert_eq!(values, want_values);
            }
        }
    }

    /// Sides that classify a function differently (one answer by `function_types`, one by
    /// names): the union takes the comparison's kind, as the table union does.
    #[test]
    fn a_function_both_sides_have_takes_the_comparisons_kind() {
        use crate::contract::kind::FrameKind;
        let base = parse_folded("main;lib_call 1\nmain;only_base 1\n", "app").expect("parses");
        let mut parts = parse_folded("main;lib_call 4\n", "app")
            .expect("parses")
            .into_parts();
        let f = parts.func[2] as usize;
        parts.kinds[f] = FrameKind::Library.index();
        let comp = Profile::from_parts(parts).expect("structurally sound");
        let (profile, _) = union_columns([&base, &comp], [1.0, 1.0], "app").expect("canonical");
        let (want, _) = table_union([&base, &comp], 1.0, "app");
        assert_same(&profile, &want);
        let n = profile.find_path(&["main", "lib_call"]);
        assert_eq!(profile.function_kind(profile.func(n)), FrameKind::Library);
        let only_base = profile.find_path(&["main", "only_base"]);
        assert_eq!(
            profile.function_kind(profile.func(only_base)),
            FrameKind::App
        );
    }

    /// A side with two children of the same name (not canonical) is merged by the table union.
    #[test]
    fn a_side_that_repeats_a_sibling_name_falls_back_to_the_table_union() {
        let mut parts = parse_folded("main;a 1\nmain;b 2\n", "app")
            .expect("folded stacks parse")
            .into_parts();
        // Name "b"'s node after "a"'s function: two "a" children under main.
        let (a, b) = (parts.func[2], parts.func[3]);
        assert_ne!(a, b);
        parts.func[3] = a;
        let broken = Profile::from_parts(parts).expect("structurally sound");
        let other = parse_folded("main;a 4\n", "app").expect("folded stacks parse");
        assert!(union_columns([&broken, &other], [1.0, 1.0], "app").is_none());
        let d = Diff::new(&broken, &other, DiffMode::Absolute);
        let a = d.profile.find_path(&["main", "a"]);
        assert_eq!(d.values.baseline.total[a as usize], 3);
        assert_eq!(d.profile.node_count(), 3);
    }
}
