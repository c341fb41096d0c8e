//! The function table: one row per function with self and total (recursion counted once),
//! sortable and filterable, linked both ways with the graph.

use std::sync::Arc;

use embers_model::tree::stats::{function_stats, FunctionStats};
use embers_model::view::format::{format_percent, format_value};
use leptos::prelude::*;

use crate::state::loaded::Loaded;
use crate::state::view_state::ViewState;

/// Rows rendered at most; the filter narrows the rest down.
const MAX_ROWS: usize = 300;

/// Sort column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SortBy {
    Name,
    Self_,
    Total,
}

/// Per-function figures of a displayed profile, computed once per profile.
struct TableData {
    loaded: Arc<Loaded>,
    stats: Vec<FunctionStats>,
    /// Functions whose server total (shape B `function_values`) differs from ours: recursion.
    recursive_mismatches: usize,
}

impl TableData {
    fn new(loaded: Arc<Loaded>) -> TableData {
        let stats = function_stats(&loaded.profile);
        let recursive_mismatches = loaded.profile.server_function_values().map_or(0, |server| {
            stats
                .iter()
                .filter(|s| {
                    server
                        .get(s.func as usize)
                        .is_some_and(|&(_, t)| t as u64 != s.total)
                })
                .count()
        });
        TableData {
            loaded,
            stats,
            recursive_mismatches,
        }
    }
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
            .filter(|s| {
                needle.is_empty() || p.function_name(s.func).to_lowercase().contains(&needle)
            })
            .copied()
            .collect();
        match sort {
            SortBy::Name => {
                rows.sort_by(|a, b| p.function_name(a.func).cmp(p.function_name(b.func)))
            }
            SortBy::Self_ => {
                rows.sort_by(|a, b| b.self_value.cmp(&a.self_value).then(b.total.cmp(&a.total)))
            }
            SortBy::Total => {
                rows.sort_by(|a, b| b.total.cmp(&a.total).then(b.self_value.cmp(&a.self_value)))
            }
        }
        let matched = rows.len();
        rows.truncate(MAX_ROWS);
        (rows, matched)
    }
}

/// The table panel.
#[component]
pub fn FunctionTable(view: ViewState) -> impl IntoView {
    let sort = RwSignal::new(SortBy::Self_);
    let filter = RwSignal::new(String::new());
    let data = Memo::new(move |_| {
        view.shown
            .get()
            .map(|l| ArcTable(Arc::new(TableData::new(l))))
    });
    let rows = move || {
        let Some(ArcTable(d)) = data.get() else {
            return (Vec::new(), 0, None);
        };
        let (rows, matched) = d.rows(&filter.get(), sort.get());
        (rows, matched, Some(d))
    };
    let header = move |label: &'static str, by: SortBy, numeric: bool| {
        view! {
            <th scope="col" class:num=numeric aria-sort=move || match (sort.get() == by, by) {
                (false, _) => "none",
                (true, SortBy::Name) => "ascending",
                (true, _) => "descending",
            }>
                <button type="button" class="th" data-testid=format!("sort-{}", label.to_lowercase())
                    on:click=move |_| sort.set(by)>
                    {label}{move || if sort.get() == by { " ▾" } else { "" }}
                </button>
            </th>
        }
    };
    view! {
        <section class="table-panel" data-testid="function-table" aria-label="Functions">
            <div class="table-tools">
                <input type="search" data-testid="table-filter" placeholder="Filter functions" aria-label="Filter functions"
                    prop:value=move || filter.get() on:input=move |e| filter.set(event_target_value(&e)) />
            </div>
            <div class="table-scroll">
                <table>
                    <thead><tr>
                        {header("Function", SortBy::Name, false)}
                        {header("Self", SortBy::Self_, true)}
                        {header("Total", SortBy::Total, true)}
                    </tr></thead>
                    <tbody>
                        {move || {
                            let (rows, _, data) = rows();
                            let Some(d) = data else { return ().into_any() };
                            rows.into_iter().map(|s| table_row(view, &d, s)).collect_view().into_any()
                        }}
                    </tbody>
                </table>
            </div>
            <div class="table-foot">
                {move || {
                    let (rows, matched, data) = rows();
                    let mut text = if matched > rows.len() {
                        format!("Showing {} of {} functions; filter to see more.", rows.len(), matched)
                    } else {
                        format!("{matched} functions.")
                    };
                    if let Some(d) = data.filter(|d| d.recursive_mismatches > 0) {
                        text.push_str(&format!(
                            " Totals count recursion once; the server's function_values count it repeatedly for {} function{}.",
                            d.recursive_mismatches,
                            if d.recursive_mismatches == 1 { "" } else { "s" }
                        ));
                    }
                    text
                }}
            </div>
        </section>
    }
}

fn table_row(view: ViewState, d: &TableData, s: FunctionStats) -> impl IntoView {
    let p = &d.loaded.profile;
    let root = p.root_total();
    let unit = d.loaded.unit;
    let name = p.function_name(s.func).to_string();
    let (n1, n2, n3) = (name.clone(), name.clone(), name.clone());
    view! {
        <tr data-testid="table-row" class:selected=move || view.selected.get().as_deref() == Some(n1.as_str())
            on:mouseenter=move |_| view.highlighted.set(Some(n2.clone()))
            on:mouseleave=move |_| view.highlighted.set(None)
            on:click=move |_| view.selected.set(Some(n3.clone()))>
            <td class="fn" title=name.clone()>{name.clone()}</td>
            <td class="num">{format_value(s.self_value, unit)}<span class="pct">{format_percent(s.self_value, root)}</span></td>
            <td class="num">{format_value(s.total, unit)}<span class="pct">{format_percent(s.total, root)}</span></td>
        </tr>
    }
}

/// `Arc<TableData>` compared by identity, so the memo only notifies on a new profile.
#[derive(Clone)]
struct ArcTable(Arc<TableData>);

impl PartialEq for ArcTable {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
