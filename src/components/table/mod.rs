//! The function table: one row per function, sortable and filterable, linked both ways with the
//! graph (hovering a row outlines its frames; clicking selects it). One profile shows self and
//! total ([`single`]); a comparison shows each side and the change ([`diff`]).

mod diff;
mod single;

use diff::DiffTable;
use single::SingleTable;

use std::sync::Arc;

use embers_model::view::names::shorten;
use leptos::html;
use leptos::prelude::*;

use crate::components::graph::canvas::char_width;
use crate::components::size::observe_size;
use crate::state::view_state::ViewState;

/// The function column's header cell and how many characters of a name fit under it: names are
/// shortened to that ([`shorten`]: the function's own name last), the full name is the cell's
/// title.
#[derive(Clone, Copy)]
struct NameColumn {
    cell: NodeRef<html::Th>,
    chars: Memo<usize>,
}

/// Horizontal padding of a table cell (CSS `.table-panel td`), px.
const CELL_PADDING_CSS: f64 = 16.0;

/// Rows rendered at most; the filter narrows the rest down.
const MAX_ROWS: usize = 300;

/// Sort columns (each table offers its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SortBy {
    Name,
    Self_,
    Total,
    Baseline,
    Comparison,
    Change,
    SelfChange,
}

/// The table panel.
#[component]
pub fn FunctionTable(view: ViewState) -> impl IntoView {
    let filter = RwSignal::new(String::new());
    let cell = NodeRef::<html::Th>::new();
    let size = RwSignal::new((0.0, 0.0));
    observe_size(cell, size);
    let chars = Memo::new(move |_| {
        let room = size.get().0 - CELL_PADDING_CSS;
        // Before the first measurement: a generous width (CSS still clips what overflows).
        if room <= 0.0 {
            64
        } else {
            (room / char_width()).floor().max(4.0) as usize
        }
    });
    provide_context(NameColumn { cell, chars });
    let comparing = Memo::new(move |_| {
        view.shown
            .with(|s| s.as_ref().is_some_and(|l| l.diff.is_some()))
    });
    // The column chosen last; each table falls back to its own default for others.
    let sort = RwSignal::new(None::<SortBy>);
    let (table, foot) = (
        move || match comparing.get() {
            true => view! { <DiffTable view=view filter=filter sort=sort /> }.into_any(),
            false => view! { <SingleTable view=view filter=filter sort=sort /> }.into_any(),
        },
        move || {
            view.shown.with(|s| {
                s.as_ref().map_or_else(String::new, |l| match &l.diff {
                    Some(_) => {
                        "Change: of each function's share of its own profile (percentage points)."
                            .into()
                    }
                    None => single::recursion_note(l),
                })
            })
        },
    );
    view! {
        <section class="table-panel" class:diff=move || comparing.get()
            class:wall=move || view.shown.with(|s| s.as_ref().is_some_and(|l| l.wall.is_some()))
            data-testid="function-table" aria-label="Functions">
            <div class="table-tools">
                <input type="search" data-testid="table-filter" placeholder="Filter functions" aria-label="Filter functions"
                    prop:value=move || filter.get() on:input=move |e| filter.set(event_target_value(&e)) />
            </div>
            <div class="table-scroll">{table}</div>
            <div class="table-foot" data-testid="table-foot">{foot}</div>
        </section>
    }
}

/// The sort a table uses: the one chosen if it offers it, else its default.
fn effective(chosen: Option<SortBy>, offered: &[SortBy]) -> SortBy {
    chosen.filter(|s| offered.contains(s)).unwrap_or(offered[0])
}

/// A sortable column header; `active` is the table's effective sort.
fn header(
    active: Signal<SortBy>,
    choose: RwSignal<Option<SortBy>>,
    label: &'static str,
    testid: &'static str,
    by: SortBy,
) -> impl IntoView {
    let cell = (by == SortBy::Name)
        .then(use_context::<NameColumn>)
        .flatten()
        .map(|c| c.cell)
        .unwrap_or_default();
    view! {
        <th scope="col" node_ref=cell class:num=by != SortBy::Name aria-sort=move || match (active.get() == by, by) {
            (false, _) => "none",
            (true, SortBy::Name) => "ascending",
            (true, _) => "descending",
        }>
            <button type="button" class="th" data-testid=testid on:click=move |_| choose.set(Some(by))>
                {label}{move || if active.get() == by { " ▾" } else { "" }}
            </button>
        </th>
    }
}

/// A row of function `name` (shortened to fit, full in its title): hovering outlines its
/// frames, a click selects it.
fn function_row(view: ViewState, name: String, cells: impl IntoView) -> impl IntoView {
    let (n1, n2, n3) = (name.clone(), name.clone(), name.clone());
    let (title, data_function) = (name.clone(), name.clone());
    let name_for_readers = name.clone();
    let chars = use_context::<NameColumn>().map(|c| c.chars);
    let shown = move || match chars {
        Some(chars) => shorten(&name, chars.get()).map_or_else(String::new, |s| s.into_owned()),
        None => name.clone(),
    };
    view! {
        <tr data-testid="table-row" data-function=data_function
            class:selected=move || view.selected.get().as_deref() == Some(n1.as_str())
            on:mouseenter=move |_| view.highlighted.set(Some(n2.clone()))
            on:mouseleave=move |_| view.highlighted.set(None)
            on:click=move |_| view.selected.set(Some(n3.clone()))>
            // Seen shortened; read out (and found by text) whole.
            <td class="fn" title=title><span aria-hidden="true">{shown}</span><span class="sr-only">{name_for_readers}</span></td>
            {cells}
        </tr>
    }
}

/// Whether `name` contains the (lower-cased) `needle`.
fn matches_filter(name: &str, needle: &str) -> bool {
    needle.is_empty() || name.to_lowercase().contains(needle)
}

/// "Showing 300 of 4,012 functions; filter to see more." or "12 functions."
fn count_line(shown: usize, matched: usize) -> String {
    if matched > shown {
        format!("Showing {shown} of {matched} functions; filter to see more.")
    } else {
        format!("{matched} functions.")
    }
}

/// An `Arc` compared by identity, so a memo notifies only on a new value.
struct Shared<T>(Arc<T>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(self.0.clone())
    }
}

impl<T> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
