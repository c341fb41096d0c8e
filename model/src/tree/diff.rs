//! The difference of two profiles: the union of both trees, with each side's values per node.
//!
//! A diff is a tree too, so layout, search, zoom, focus and keyboard navigation work on it
//! unchanged. A frame's width is the average of its two shares — each side scaled to the
//! comparison's total when normalised (the default, so a 1-hour and a 2-hour range compare
//! fairly), or taken as they are in absolute mode — so a frame present on either side is
//! drawn, including frames only the baseline has. Its colour comes from [`Diff::change`]: the
//! change of its share of its own profile's total (normalised) or of its value relative to the
//! larger total (absolute). Transforms apply to each side before diffing.

use rustc_hash::FxHashMap;

use crate::tree::profile::{NodeId, Profile};
use crate::tree::table::{NodeTable, NO_PARENT};

/// How the two sides are put on one scale.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DiffMode {
    /// Shares of each side's own total (ranges of different length compare fairly).
    #[default]
    Normalized,
    /// The values as they are.
    Absolute,
}

/// One side's values, indexed by the diff's node ids (0 where the side lacks the frame).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SideValues {
    /// Self value per node.
    pub self_value: Vec<u64>,
    /// Total value per node.
    pub total: Vec<u64>,
}

impl SideValues {
    /// The side's root total.
    pub fn root_total(&self) -> u64 {
        self.total.first().copied().unwrap_or(0)
    }
}

/// The union tree of a baseline and a comparison.
#[derive(Clone, Debug)]
pub struct Diff {
    /// The union tree; a node's values are the average of the two sides on the common scale.
    pub profile: Profile,
    /// Each side's values on the union tree's nodes.
    pub values: DiffValues,
}

/// Each side's values per node of a diff's union tree, and the questions asked of them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DiffValues {
    /// The baseline's values.
    pub baseline: SideValues,
    /// The comparison's values.
    pub comparison: SideValues,
    /// How the sides are compared.
    pub mode: DiffMode,
}

/// Width units per unit of the comparison: averaging two sides halves values, and the integer
/// tree needs enough resolution for frames that are tiny on one side.
const RESOLUTION: f64 = 2.0;

impl Diff {
    /// The diff of `baseline` and `comparison`.
    pub fn new(baseline: &Profile, comparison: &Profile, mode: DiffMode) -> Diff {
        let scale = baseline_scale(baseline, comparison, mode);
        let mut builder = UnionBuilder::default();
        let root_name = if comparison.is_empty() {
            baseline_root_name(baseline)
        } else {
            comparison.name(0)
        };
        builder.start(root_name);
        builder.add_side(baseline, scale);
        builder.add_side(comparison, 1.0);
        let profile = Profile::from_table(builder.table);
        let index = UnionIndex::new(&profile);
        let side = |p: &Profile| index.side_values(&profile, p);
        let values = DiffValues {
            baseline: side(baseline),
            comparison: side(comparison),
            mode,
        };
        Diff { profile, values }
    }
}

impl DiffValues {
    /// How much a node's total changed, in shares of its own profile's total (normalised) or of
    /// the larger root total (absolute): from −1 (gone) to +1; 0 when unchanged.
    pub fn change(&self, node: NodeId) -> f64 {
        let i = node as usize;
        self.change_of(self.baseline.total[i], self.comparison.total[i])
    }

    /// The same change for a node's self value.
    pub fn self_change(&self, node: NodeId) -> f64 {
        let i = node as usize;
        self.change_of(self.baseline.self_value[i], self.comparison.self_value[i])
    }

    /// The change from a baseline value `b` to a comparison value `c` in this diff's mode.
    fn change_of(&self, b: u64, c: u64) -> f64 {
        match self.mode {
            DiffMode::Normalized => {
                share(c, self.comparison.root_total()) - share(b, self.baseline.root_total())
            }
            DiffMode::Absolute => {
                let whole = self.baseline.root_total().max(self.comparison.root_total());
                (c as f64 - b as f64) / whole.max(1) as f64
            }
        }
    }

    /// Whether only the baseline has this frame.
    pub fn is_gone(&self, node: NodeId) -> bool {
        self.comparison.total[node as usize] == 0 && self.baseline.total[node as usize] > 0
    }

    /// Whether only the comparison has this frame.
    pub fn is_new(&self, node: NodeId) -> bool {
        self.baseline.total[node as usize] == 0 && self.comparison.total[node as usize] > 0
    }

    /// The largest change of any frame below the root (the colour scale's end), at least 1 %.
    pub fn max_change(&self) -> f64 {
        (1..self.comparison.total.len() as NodeId)
            .map(|n| self.change(n).abs())
            .fold(0.01, f64::max)
    }
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

fn baseline_root_name(baseline: &Profile) -> &str {
    if baseline.is_empty() {
        "(empty)"
    } else {
        baseline.name(0)
    }
}

/// What baseline values are multiplied by to share the comparison's scale.
fn baseline_scale(baseline: &Profile, comparison: &Profile, mode: DiffMode) -> f64 {
    let (b, c) = (baseline.root_total(), comparison.root_total());
    match mode {
        DiffMode::Normalized if b > 0 && c > 0 => c as f64 / b as f64,
        _ => 1.0,
    }
}

/// Builds the union table: nodes keyed by (parent row, function), self values on the common
/// scale, averaged (each side contributes half).
#[derive(Default)]
struct UnionBuilder {
    table: NodeTable,
    children: FxHashMap<(u32, u32), u32>,
}

impl UnionBuilder {
    fn start(&mut self, root_name: &str) {
        self.table.derive_totals = true;
        let root = self.table.functions.intern(root_name);
        self.table.push(root, NO_PARENT, 0, 0);
    }

    fn add_side(&mut self, p: &Profile, scale: f64) {
        let mut rows = vec![0u32; p.node_count()];
        let mut func_map = vec![u32::MAX; p.function_count()];
        for n in p.nodes() {
            let row = match p.parent(n) {
                None => 0,
                Some(parent) => {
                    let f = p.func(n) as usize;
                    if func_map[f] == u32::MAX {
                        let id = self.table.functions.intern(p.function_name(f as u32));
                        self.table.functions.set_kind(id, p.function_kind(f as u32));
                        func_map[f] = id;
                    }
                    self.child(rows[parent as usize], func_map[f])
                }
            };
            rows[n as usize] = row;
            let value = (p.self_value(n) as f64 * scale * RESOLUTION / 2.0).round() as i64;
            let slot = &mut self.table.self_value[row as usize];
            *slot = slot.saturating_add(value);
        }
    }

    fn child(&mut self, parent: u32, func: u32) -> u32 {
        let next = self.table.len() as u32;
        let id = *self.children.entry((parent, func)).or_insert(next);
        if id == next {
            self.table.push(func, parent, 0, 0);
        }
        id
    }
}

/// Finds union nodes by (parent node, function name), to map each side onto the built tree
/// (whose node ids are in preorder, not in table order).
struct UnionIndex<'u> {
    children: FxHashMap<(NodeId, &'u str), NodeId>,
}

impl<'u> UnionIndex<'u> {
    fn new(union: &'u Profile) -> UnionIndex<'u> {
        let mut children = FxHashMap::default();
        for n in union.nodes().skip(1) {
            if let Some(parent) = union.parent(n) {
                children.insert((parent, union.name(n)), n);
            }
        }
        UnionIndex { children }
    }

    fn side_values(&self, union: &Profile, p: &Profile) -> SideValues {
        let n_union = union.node_count();
        let mut out = SideValues {
            self_value: vec![0; n_union],
            total: vec![0; n_union],
        };
        let mut at = vec![0 as NodeId; p.node_count()];
        for n in p.nodes() {
            let u = match p.parent(n) {
                None => Some(0),
                Some(parent) => self
                    .children
                    .get(&(at[parent as usize], p.name(n)))
                    .copied(),
            };
            // Every side node has a union node (the union was built from it); a frame whose
            // self value rounded to 0 is still there, as its total keeps it.
            let Some(u) = u else { continue };
            at[n as usize] = u;
            out.self_value[u as usize] += p.self_value(n);
            out.total[u as usize] += p.total(n);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::folded::parse_folded;

    fn p(text: &str) -> Profile {
        parse_folded(text, "app").unwrap()
    }

    fn node(d: &Diff, path: &[&str]) -> NodeId {
        let n = d.profile.find_path(path);
        assert_eq!(d.profile.name_path(n), path, "{path:?} exists");
        n
    }

    #[test]
    fn the_union_keeps_frames_of_either_side() {
        let base = p("main;a 6\nmain;gone 4\n");
        let comp = p("main;a 6\nmain;new 14\n");
        let d = Diff::new(&base, &comp, DiffMode::Absolute);
        let gone = node(&d, &["main", "gone"]);
        let new = node(&d, &["main", "new"]);
        assert!(d.values.is_gone(gone) && !d.values.is_new(gone));
        assert!(d.values.is_new(new) && !d.values.is_gone(new));
        assert!(
            d.profile.total(gone) > 0,
            "a frame only the baseline has is still drawn"
        );
        assert_eq!(d.values.baseline.total[gone as usize], 4);
        assert_eq!(d.values.comparison.total[new as usize], 14);
        assert_eq!(
            (
                d.values.baseline.root_total(),
                d.values.comparison.root_total()
            ),
            (10, 20)
        );
        // Absolute: changes relative to the larger total.
        assert!((d.values.change(new) - 0.7).abs() < 1e-9);
        assert!((d.values.change(gone) + 0.2).abs() < 1e-9);
        assert_eq!(d.values.change(node(&d, &["main", "a"])), 0.0);
    }

    #[test]
    fn normalised_changes_compare_shares_of_each_total() {
        // The comparison is twice as long with the same mix: nothing changed.
        let base = p("main;a 3\nmain;b 1\n");
        let comp = p("main;a 6\nmain;b 2\n");
        let d = Diff::new(&base, &comp, DiffMode::Normalized);
        for n in d.profile.nodes() {
            assert!(d.values.change(n).abs() < 1e-12, "{}", d.profile.name(n));
        }
        // Same total, another mix: a's share falls from 75 % to 25 %, b's rises to 75 %.
        let comp = p("main;a 2\nmain;b 6\n");
        let d = Diff::new(&base, &comp, DiffMode::Normalized);
        assert!((d.values.change(node(&d, &["main", "b"])) - 0.5).abs() < 1e-12);
        assert!((d.values.change(node(&d, &["main", "a"])) + 0.5).abs() < 1e-12);
        assert!((d.values.max_change() - 0.5).abs() < 1e-12);
        // Widths: the average of both shares on the comparison's scale.
        let a = node(&d, &["main", "a"]);
        assert_eq!(d.profile.total(a), (6 + 2) * RESOLUTION as u64 / 2);
    }

    #[test]
    fn recursion_counts_each_sample_once() {
        let base = p("f;f;f 2\nf 2\n");
        let comp = p("f;f;f 4\n");
        let d = Diff::new(&base, &comp, DiffMode::Absolute);
        let outer = node(&d, &["f"]);
        assert_eq!(d.values.baseline.total[outer as usize], 4);
        assert_eq!(d.values.comparison.total[outer as usize], 4);
        assert_eq!(d.values.change(outer), 0.0);
        let inner = node(&d, &["f", "f", "f"]);
        assert_eq!(d.values.baseline.self_value[inner as usize], 2);
        assert_eq!(d.values.comparison.self_value[inner as usize], 4);
    }

    #[test]
    fn empty_sides_give_zero_totals_not_panics() {
        let empty = Profile::default();
        let comp = p("main 5\n");
        let d = Diff::new(&empty, &comp, DiffMode::Normalized);
        assert_eq!(d.values.baseline.root_total(), 0);
        assert!(d.values.is_new(node(&d, &["main"])));
        let d = Diff::new(&comp, &empty, DiffMode::Normalized);
        assert!(d.values.is_gone(node(&d, &["main"])));
        assert_eq!(d.profile.name(0), "app");
        let d = Diff::new(&empty, &empty, DiffMode::Absolute);
        assert_eq!(d.profile.node_count(), 1);
        assert_eq!(d.values.change(0), 0.0);
    }
}
