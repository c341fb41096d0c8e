//! The table of a comparison: each function's total on both sides and how its share changed
//! (total and self), sorted by the change — what grew most first; frames only one side has are
//! listed too.

use std::cmp::Ordering;
use std::sync::Arc;

use embers_model::tree::diff::DiffValues;
use embers_model::tree::order::sort_by_dyn;
use embers_model::tree::stats::{diff_stats, DiffStats};
use embers_model::view::color::diff_color;
use embers_model::view::format::{format_change, format_percent, format_value};
use embers_model::view::paint::color_scale;
use embers_model::Profile;
use leptos::prelude::*;

use super::{
    count_line, effective, function_row, header, matches_filter, Shared, SortBy, MAX_ROWS,
};
use crate::components::theme::theme_state;
use crate::state::loaded::Loaded;
use crate::state::view_state::ViewState;

/// The sorts this table offers, its default first.
const OFFERED: [SortBy; 5] = [
    SortBy::Change,
    SortBy::SelfChange,
    SortBy::Baseline,
    SortBy::Comparison,
    SortBy::Name,
];

/// One function's row.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Row {
    stats: DiffStats,
    /// Change of the total's share (percentage points / 100).
    change: f64,
    /// Change of the self value's share.
    self_change: f64,
    /// The shallowest depth it occurs at (among equal changes, callers come first).
    depth: u32,
}

struct DiffData {
    loaded: Arc<Loaded>,
    rows: Vec<Row>,
    scale: f64,
}

impl DiffData {
    fn new(loaded: Arc<Loaded>, diff: &DiffValues) -> DiffData {
        let p = &loaded.profile;
        let mut depth = vec![u32::MAX; p.function_count()];
        for n in p.nodes() {
            let f = p.func(n) as usize;
            depth[f] = depth[f].min(p.depth(n));
        }
        let (b, c) = (diff.baseline.root_total(), diff.comparison.root_total());
        let rows = diff_stats(p, diff)
            .into_iter()
            .filter(|s| (s.baseline.nodes > 0 || s.comparison.nodes > 0) && s.func != p.func(0))
            .map(|stats| Row {
                change: share_change(stats.baseline.total, b, stats.comparison.total, c, diff),
                self_change: share_change(
                    stats.baseline.self_value,
                    b,
                    stats.comparison.self_value,
                    c,
                    diff,
                ),
                depth: depth[stats.func as usize],
                stats,
            })
            .collect();
        DiffData {
            scale: color_scale(diff),
            loaded,
            rows,
        }
    }

    fn rows(&self, filter: &str, sort: SortBy) -> (Vec<Row>, usize) {
        let needle = filter.to_lowercase();
        let p: &Profile = &self.loaded.profile;
        let mut rows: Vec<Row> = self
            .rows
            .iter()
            .filter(|r| matches_filter(p.function_name(r.stats.func), &needle))
            .copied()
            .collect();
        let by_depth = |a: &Row, b: &Row| a.depth.cmp(&b.depth);
        let by_name = |a: &Row, b: &Row| {
            p.function_name(a.stats.func)
                .cmp(p.function_name(b.stats.func))
        };
        let by_self_change =
            |a: &Row, b: &Row| b.self_change.total_cmp(&a.self_change).then(by_depth(a, b));
        let by_baseline = |a: &Row, b: &Row| b.stats.baseline.total.cmp(&a.stats.baseline.total);
        let by_comparison =
            |a: &Row, b: &Row| b.stats.comparison.total.cmp(&a.stats.comparison.total);
        let by_change = |a: &Row, b: &Row| b.change.total_cmp(&a.change).then(by_depth(a, b));
        // One sort behind a `dyn` order (see the single profile's table).
        let order: &dyn Fn(&Row, &Row) -> Ordering = match sort {
            SortBy::Name => &by_name,
            SortBy::SelfChange => &by_self_change,
            SortBy::Baseline => &by_baseline,
            SortBy::Comparison => &by_comparison,
            _ => &by_change,
        };
        sort_by_dyn(&mut rows, order);
        let matched = rows.len();
        rows.truncate(MAX_ROWS);
        (rows, matched)
    }
}

/// A change as the diff measures it: of shares (normalised) or of the values against the
/// larger total (absolute).
fn share_change(b: u64, b_root: u64, c: u64, c_root: u64, diff: &DiffValues) -> f64 {
    let share = |v: u64, whole: u64| {
        if whole == 0 {
            0.0
        } else {
            v as f64 / whole as f64
        }
    };
    match diff.mode {
        embers_model::tree::diff::DiffMode::Normalized => share(c, c_root) - share(b, b_root),
        embers_model::tree::diff::DiffMode::Absolute => {
            (c as f64 - b as f64) / b_root.max(c_root).max(1) as f64
        }
    }
}

/// The table.
#[component]
pub(super) fn DiffTable(
    view: ViewState,
    filter: RwSignal<String>,
    sort: RwSignal<Option<SortBy>>,
) -> impl IntoView {
    let active = Signal::derive(move || effective(sort.get(), &OFFERED));
    let data = Memo::new(move |_| {
        let loaded = view.shown.get()?;
        let diff = loaded.diff.clone()?;
        Some(Shared(Arc::new(DiffData::new(loaded, &diff))))
    });
    let rows = Memo::new(move |_| {
        data.get().map(|Shared(d)| {
            let (rows, matched) = d.rows(&filter.get(), active.get());
            (Shared(d), rows, matched)
        })
    });
    view! {
        <table class="diff-table">
            <thead><tr>
                {header(active, sort, "Function", "sort-function", SortBy::Name)}
                {header(active, sort, "Baseline", "sort-baseline", SortBy::Baseline)}
                {header(active, sort, "Comparison", "sort-comparison", SortBy::Comparison)}
                {header(active, sort, "Change", "sort-change", SortBy::Change)}
                {header(active, sort, "Self Δ", "sort-self-change", SortBy::SelfChange)}
            </tr></thead>
            <tbody>
                {move || rows.get().map(|(Shared(d), rows, _)| {
                    rows.into_iter().map(|r| diff_row(view, &d, r)).collect_view()
                })}
            </tbody>
        </table>
        <p class="table-count">{move || rows.get().map(|(_, r, m)| count_line(r.len(), m))}</p>
    }
}

fn diff_row(view: ViewState, d: &DiffData, r: Row) -> impl IntoView {
    let p = &d.loaded.profile;
    let unit = d.loaded.unit;
    let diff = d.loaded.diff.as_deref();
    let (b_root, c_root) = diff.map_or((0, 0), |x| {
        (x.baseline.root_total(), x.comparison.root_total())
    });
    let (b, c) = (r.stats.baseline.total, r.stats.comparison.total);
    let theme = theme_state();
    let scale = d.scale;
    let swatch = move || diff_color(r.change / scale, theme.palette.get()).css();
    let change = match (b, c) {
        (0, _) => "new".to_owned(),
        (_, 0) => "gone".to_owned(),
        _ => format_change(r.change),
    };
    let cells = view! {
        <td class="num">{format_value(b, unit)}<span class="pct">{format_percent(b, b_root)}</span></td>
        <td class="num">{format_value(c, unit)}<span class="pct">{format_percent(c, c_root)}</span></td>
        <td class="num change" data-change=r.change>
            <span class="swatch" style:background=swatch></span>{change}
        </td>
        <td class="num">{format_change(r.self_change)}</td>
    };
    function_row(view, p.function_name(r.stats.func).to_string(), cells)
}
