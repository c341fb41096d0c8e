//! The tooltip of the hovered bar: where it goes (flipped near the edges) and what it says
//! (name, kind, both metrics with the active one first).

use std::sync::Arc;

use embers_model::tree::diff::wall::WallValues;
use embers_model::tree::diff::DiffValues;
use embers_model::view::format::{
    format_change, format_percent, format_ratio, format_value, ValueUnit,
};
use embers_model::view::layout::Bar;
use embers_model::view::paint::Metric;
use embers_model::NodeId;
use leptos::prelude::*;

use crate::state::loaded::Loaded;

/// The pointer's offset from the tooltip, CSS px.
const TOOLTIP_OFFSET_CSS: f64 = 14.0;
/// Tooltip width (its CSS max-width) for deciding to flip it left of the pointer, CSS px.
const TOOLTIP_FLIP_WIDTH_CSS: f64 = 360.0;
/// Typical tooltip height for deciding to flip it above the pointer, CSS px.
const TOOLTIP_FLIP_HEIGHT_CSS: f64 = 110.0;

/// The tooltip for `bar` at pointer `(x, y)` in a graph of `size` (CSS px).
#[component]
pub fn Tooltip(
    loaded: Arc<Loaded>,
    bar: Bar,
    metric: Metric,
    at: (f64, f64),
    size: (f64, f64),
) -> impl IntoView {
    let ((x, y), (width, height)) = (at, size);
    // Flip to the pointer's other side near the right or bottom edge; translating by -100%
    // uses the tooltip's real size, so there is no gap to guess.
    let flip_x = x + TOOLTIP_OFFSET_CSS + TOOLTIP_FLIP_WIDTH_CSS > width;
    let flip_y = y + TOOLTIP_OFFSET_CSS + TOOLTIP_FLIP_HEIGHT_CSS > height && y > height / 2.0;
    let left = if flip_x {
        x - TOOLTIP_OFFSET_CSS
    } else {
        x + TOOLTIP_OFFSET_CSS
    };
    let top = if flip_y {
        y - TOOLTIP_OFFSET_CSS
    } else {
        y + TOOLTIP_OFFSET_CSS
    };
    let shift = format!(
        "translate({}, {})",
        if flip_x { "-100%" } else { "0" },
        if flip_y { "-100%" } else { "0" }
    );
    view! {
        <div class="tooltip" data-testid="tooltip" role="tooltip"
            style:left=format!("{left}px") style:top=format!("{top}px") style:transform=shift>
            <TooltipBody loaded=loaded bar=bar metric=metric />
        </div>
    }
}

/// The tooltip's content: name, kind, and both metrics (the active one first).
#[component]
fn TooltipBody(loaded: Arc<Loaded>, bar: Bar, metric: Metric) -> impl IntoView {
    let p = &loaded.profile;
    if !bar.is_frame() {
        return view! {
            <div class="tip-name">{format!("{} frames too narrow to draw", bar.merged)}</div>
            <div class="tip-kind">"Each is under a pixel wide at this zoom: the hatched band is not a frame. Click a wider frame above to zoom in, or find them in the table."</div>
        }
        .into_any();
    }
    let node = bar.node;
    // The row to read first: the active metric's value, or in a diff its change.
    let (rows, lead) = match (&loaded.diff, &loaded.wall) {
        (Some(d), _) => (diff_rows(d, node, loaded.unit, metric), 2),
        (None, Some(w)) => (wall_rows(&loaded, w, node, metric), 0),
        (None, None) => (value_rows(&loaded, node, metric), 0),
    };
    view! {
        <div class="tip-name">{p.name(node).to_string()}</div>
        <div class="tip-kind">{format!("{} frame · depth {}", p.kind(node).label(), p.depth(node))}</div>
        <dl class="tip-values">
            {rows.into_iter().enumerate().map(|(i, (k, v))| view! {
                <dt class:lead=i == lead>{k}</dt><dd class:lead=i == lead>{v}</dd>
            }).collect_view()}
        </dl>
    }
    .into_any()
}

/// Total and self: value, share of all, share of the parent (the active metric first).
fn value_rows(loaded: &Loaded, node: NodeId, metric: Metric) -> Vec<(&'static str, String)> {
    let p = &loaded.profile;
    let root = p.root_total();
    let parent_total = p.parent(node).map_or(root, |q| p.total(q));
    let unit = loaded.unit;
    let total_line = format!(
        "{} · {} of all · {} of parent",
        format_value(p.total(node), unit),
        format_percent(p.total(node), root),
        format_percent(p.total(node), parent_total)
    );
    let self_line = format!(
        "{} · {} of all · {} of parent",
        format_value(p.self_value(node), unit),
        format_percent(p.self_value(node), root),
        format_percent(p.self_value(node), parent_total)
    );
    match metric {
        Metric::Total => vec![("Total", total_line), ("Self", self_line)],
        Metric::Self_ => vec![("Self", self_line), ("Total", total_line)],
    }
}

/// For a wall-clock view: total and self, and how much of the frame's time ran (on-CPU) and
/// waited (off-CPU).
fn wall_rows(
    loaded: &Loaded,
    w: &WallValues,
    node: NodeId,
    metric: Metric,
) -> Vec<(&'static str, String)> {
    let mut rows = value_rows(loaded, node, metric);
    let (running, waiting) = w.split(node, false);
    let line = |v: u64| {
        format!(
            "{} · {} of this frame",
            format_value(v, loaded.unit),
            format_percent(v, running + waiting)
        )
    };
    rows.insert(1, ("Running", line(running)));
    rows.insert(2, ("Waiting", line(waiting)));
    rows
}

/// For a diff: each side's total and self with their shares, and the change.
fn diff_rows(
    d: &DiffValues,
    node: NodeId,
    unit: ValueUnit,
    metric: Metric,
) -> Vec<(&'static str, String)> {
    let i = node as usize;
    let (b, c) = (&d.baseline, &d.comparison);
    let side =
        |v: u64, whole: u64| format!("{} ({})", format_value(v, unit), format_percent(v, whole));
    let change =
        |old: u64, new: u64, pp: f64| format!("{} · {}", format_change(pp), format_ratio(old, new));
    let totals = [
        ("Baseline", side(b.total[i], b.root_total())),
        ("Comparison", side(c.total[i], c.root_total())),
        ("Change", change(b.total[i], c.total[i], d.change(node))),
    ];
    let selfs = [
        ("Self, baseline", side(b.self_value[i], b.root_total())),
        ("Self, comparison", side(c.self_value[i], c.root_total())),
        (
            "Self change",
            change(b.self_value[i], c.self_value[i], d.self_change(node)),
        ),
    ];
    match metric {
        Metric::Total => totals.into_iter().chain(selfs).collect(),
        Metric::Self_ => selfs.into_iter().chain(totals).collect(),
    }
}
