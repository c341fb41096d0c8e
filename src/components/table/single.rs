//! The table of one profile: self and total per function (recursion counted once).

use std::cmp::Ordering;
use std::sync::Arc;

use embers_model::tree::order::sort_by_dyn;
use embers_model::tree::stats::{function_stats, side_stats, FunctionStats};
use embers_model::view::format::{format_percent, format_value};
use leptos::prelude::*;

use super::{
    count_line, effective, function_row, header, matches_filter, Shared, SortBy, MAX_ROWS,
};
use crate::state::loaded::Loaded;
use crate::state::view_state::ViewState;

/// The sorts this table offers, its default first.
const OFFERED: [SortBy; 3] = [SortBy::Self_, SortBy::Total, SortBy::Name];

/// Per-function figures of a displayed profile, computed once per profile.
struct TableData {
    loaded: Arc<Loaded>,
    stats: Vec<FunctionStats>,
    /// In a wall-clock view: each function's waiting (off-CPU) part, by function id.
    waiting: Option<Vec<FunctionStats>>,
}

impl TableData {
    /// The rows whose name contains `filter` (case-insensitively), sorted, at most
    /// [`MAX_ROWS`]; and how many matched.
    fn rows(&self, filter: &str, sort: SortBy) -> (Vec<FunctionStats>, usize) {
        let needle = filter.to_lowercase();
        let p = &self.loaded.profile;
        let mut rows: Vec<FunctionStats> = self
            .stats
            .iter()
            .filter(|s| s.nodes > 0 && s.func != p.func(0))
            .filter(|s| matches_filter(p.function_name(s.func), &needle))
            .copied()
            .collect();
        // One sort behind a `dyn` order, and the one the page's other cold sorts share
        // (`sort_by_dyn`): each `sort_by` closure and element type is its own copy of the sort
        // in the wasm (~4 KB each), and a call through a pointer costs nothing next to it.
        let by_name = |a: &FunctionStats, b: &FunctionStats| {
            p.function_name(a.func).cmp(p.function_name(b.func))
        };
        let by_total = |a: &FunctionStats, b: &FunctionStats| {
            b.total.cmp(&a.total).then(b.self_value.cmp(&a.self_value))
        };
        let by_self = |a: &FunctionStats, b: &FunctionStats| {
            b.self_value.cmp(&a.self_value).then(b.total.cmp(&a.total))
        };
        let order: &dyn Fn(&FunctionStats, &FunctionStats) -> Ordering = match sort {
            SortBy::Name => &by_name,
            SortBy::Total => &by_total,
            _ => &by_self,
        };
        sort_by_dyn(&mut rows, order);
        let matched = rows.len();
        rows.truncate(MAX_ROWS);
        (rows, matched)
    }
}

/// Where the server's per-function totals (shape B `function_values`) differ from ours: they
/// count recursion repeatedly.
pub(super) fn recursion_note(l: &Loaded) -> String {
    let Some(server) = l.profile.server_function_values() else {
        return String::new();
    };
    let stats = function_stats(&l.profile);
    let n = stats
        .iter()
        .filter(|s| {
            server
                .get(s.func as usize)
                .is_some_and(|&(_, t)| t as u64 != s.total)
        })
        .count();
    if n == 0 {
        return String::new();
    }
    format!(
        "Totals count recursion once; the server's function_values count it repeatedly for {n} function{}.",
        if n == 1 { "" } else { "s" }
    )
}

/// The table.
#[component]
pub(super) fn SingleTable(
    view: ViewState,
    filter: RwSignal<String>,
    sort: RwSignal<Option<SortBy>>,
) -> impl IntoView {
    let active = Signal::derive(move || effective(sort.get(), &OFFERED));
    let data = Memo::new(move |_| {
        view.shown.get().map(|loaded| {
            let stats = function_stats(&loaded.profile);
            let waiting = loaded
                .wall
                .as_deref()
                .map(|w| side_stats(&loaded.profile, &w.waiting));
            Shared(Arc::new(TableData {
                loaded,
                stats,
                waiting,
            }))
        })
    });
    let rows = Memo::new(move |_| {
        data.get().map(|Shared(d)| {
            let (rows, matched) = d.rows(&filter.get(), active.get());
            (Shared(d), rows, matched)
        })
    });
    view! {
        <table>
            <thead><tr>
                {header(active, sort, "Function", "sort-function", SortBy::Name)}
                {header(active, sort, "Self", "sort-self", SortBy::Self_)}
                {header(active, sort, "Total", "sort-total", SortBy::Total)}
                {move || data.with(|d| d.as_ref().is_some_and(|Shared(d)| d.waiting.is_some())).then(|| view! {
                    <th scope="col" class="num" title="Of the total: time waiting off the CPU"><span class="th">"Waiting"</span></th>
                })}
            </tr></thead>
            <tbody>
                {move || rows.get().map(|(Shared(d), rows, _)| {
                    rows.into_iter().map(|s| single_row(view, &d, s)).collect_view()
                })}
            </tbody>
        </table>
        <p class="table-count">{move || rows.get().map(|(_, r, m)| count_line(r.len(), m))}</p>
    }
}

fn single_row(view: ViewState, d: &TableData, s: FunctionStats) -> impl IntoView {
    let p = &d.loaded.profile;
    let (root, unit) = (p.root_total(), d.loaded.unit);
    let waiting = d
        .waiting
        .as_ref()
        .and_then(|w| w.get(s.func as usize))
        .map(|w| view! {
            <td class="num" data-testid="waiting">{format_value(w.total, unit)}<span class="pct">{format_percent(w.total, s.total)}</span></td>
        });
    let cells = view! {
        <td class="num">{format_value(s.self_value, unit)}<span class="pct">{format_percent(s.self_value, root)}</span></td>
        <td class="num">{format_value(s.total, unit)}<span class="pct">{format_percent(s.total, root)}</span></td>
        {waiting}
    };
    function_row(view, p.function_name(s.func).to_string(), cells)
}
