//! The difference of two profiles: the union of both trees, with each side's values per node.
//!
//! A diff is a tree too, so layout, search, zoom, focus and keyboard navigation work on it
//! unchanged. A frame's width is the average of its two shares — each side scaled to the
//! comparison's total when normalised (the default, so a 1-hour and a 2-hour range compare
//! fairly), or taken as they are in absolute mode — so a frame present on either side is
//! drawn, including frames only the baseline has. Its colour comes from [`Diff::change`]: the
//! change of its share of its own profile's total (normalised) or of its value relative to the
//! larger total (absolute). Transforms apply to each side before diffing.

mod columns;
mod union;
pub mod wall;

use crate::tree::profile::{NodeId, Profile};

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

impl Diff {
    /// The diff of `baseline` and `comparison`.
    pub fn new(baseline: &Profile, comparison: &Profile, mode: DiffMode) -> Diff {
        let scale = baseline_scale(baseline, comparison, mode);
        let root_name = if comparison.is_empty() {
            baseline_root_name(baseline)
        } else {
            comparison.name(0)
        };
        let sides = [baseline, comparison];
        let (profile, [baseline, comparison]) =
            columns::union_columns(sides, [scale, 1.0], root_name)
                .unwrap_or_else(|| table_union(sides, scale, root_name));
        let values = DiffValues {
            baseline,
            comparison,
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

/// The union through a node table, which repairs sides that are not canonical.
fn table_union(sides: [&Profile; 2], scale: f64, root_name: &str) -> (Profile, [SideValues; 2]) {
    let union = union::union(sides, [scale, 1.0], root_name);
    let side = |i: usize| side_values(&union.profile, sides[i], &union.nodes[i]);
    let values = [side(0), side(1)];
    (union.profile, values)
}

/// One side's values on the union tree, from the union node of each of its nodes.
fn side_values(union: &Profile, p: &Profile, nodes: &[NodeId]) -> SideValues {
    let n_union = union.node_count();
    let mut out = SideValues {
        self_value: vec![0; n_union],
        total: vec![0; n_union],
    };
    for n in p.nodes() {
        let u = nodes[n as usize];
        if u == NodeId::MAX {
            continue;
        }
        out.self_value[u as usize] += p.self_value(n);
        out.total[u as usize] += p.total(n);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::union::RESOLUTION;
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
