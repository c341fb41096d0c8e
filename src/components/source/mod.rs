//! The Source panel: the selected function's source lines below the graph — each line with
//! its self and total as a heat bar, hottest first (by the graph's metric) — and, when the
//! service has the file's text (`serve --source-dir`), the code with the heat in its gutter,
//! scrolled to the hottest line; with a `--source-url` template, a link that opens the file
//! at that line in the browser (never fetched here). A frame without lines is explained in
//! words. Works on opened pprof files without a service (their lines come summed from the file
//! reader).
//!
//! An on-demand view (`crate::on_demand`): the page carries only its host ([`page`]: input
//! from the view state, events into it); [`SourcePanel`] is built into its own module
//! (`src/bin/source_view.rs`, [`module`]), loaded the first time the panel opens. It takes its
//! input as one serde value and sends [`interface::SourceEvent`]s. Pure decisions are
//! `embers_model::view::source`.

pub mod code;
pub mod fetch;
pub mod interface;
pub mod module;
pub mod page;
pub mod rows;

use embers_model::view::format::ValueUnit;
use embers_model::view::paint::Metric;
use embers_model::view::source::{line_bars, LineBar};
use leptos::prelude::*;

use code::CodeBox;
use fetch::{find, Found, Lines};
use interface::{SourceEvent, SourceInput};
use rows::LineList;

use crate::state::fetched::fetched;

/// The panel for `input`; its close button and Esc send [`SourceEvent::Close`].
#[component]
pub fn SourcePanel(
    #[prop(into)] input: Signal<SourceInput>,
    on_event: Callback<SourceEvent>,
) -> impl IntoView {
    // Only what the lines depend on asks again: the metric re-ranks what is there.
    let question = Memo::new(move |_| {
        input.with(|i| SourceInput {
            by_self: false,
            ..i.clone()
        })
    });
    // Each answer names the question it answers: one for another function is not shown.
    let found = fetched(move || {
        let q = question.get();
        async move { (q.clone(), find(q).await) }
    });
    let shown = move || match found.get() {
        Some((asked, f)) if asked == question.get() => f,
        _ if question.with(|q| q.function.is_none()) => Found::Nothing,
        _ => Found::Waiting,
    };
    let title = move || input.with(|i| i.function.clone().unwrap_or_default());
    let on_key = move |e: leptos::ev::KeyboardEvent| {
        if e.key() == "Escape" {
            // The panel's Esc closes it, not the page's reset.
            e.stop_propagation();
            on_event.run(SourceEvent::Close);
        }
    };
    view! {
        <section class="source-panel" data-testid="source-panel" aria-label="Source lines" on:keydown=on_key>
            <header class="source-head">
                <span class="source-label">"Lines of"</span>
                <code class="source-function" title=title>{title}</code>
                <button type="button" class="icon source-close" data-testid="source-close"
                    title="Close the Source panel (o)" aria-label="Close the Source panel"
                    on:click=move |_| on_event.run(SourceEvent::Close)>"×"</button>
            </header>
            {move || match shown() {
                Found::Nothing => view! { <p class="source-note" data-testid="source-empty">
                    "Select a frame (click it, a table row or a search match) to see its lines."</p> }.into_any(),
                Found::Waiting => view! { <p class="source-note">"Asking for the function's lines…"</p> }.into_any(),
                Found::Absent(why) => view! { <p class="source-note" data-testid="source-empty">{why}</p> }.into_any(),
                Found::Failed(why) => view! { <p class="source-note bad" role="alert" data-testid="source-error">{why}</p> }.into_any(),
                Found::Lines(lines) => view! { <Body lines=lines input=input /> }.into_any(),
            }}
        </section>
    }
}

/// The lines and the code of one function.
#[component]
fn Body(lines: Lines, input: Signal<SourceInput>) -> impl IntoView {
    let unit = input.with_untracked(|i| match i.samples {
        true => ValueUnit::Samples,
        false => ValueUnit::for_event_type(&i.event_type),
    });
    let metric = Memo::new(move |_| match input.with(|i| i.by_self) {
        true => Metric::Self_,
        false => Metric::Total,
    });
    let rows = lines.rows.clone();
    let whole = lines.whole;
    let bars = Memo::new(move |_| line_bars(&rows, metric.get(), whole));
    // The line picked in the list (else the hottest): the code shows its file, scrolled to it.
    let chosen = RwSignal::new(None::<(String, u32)>);
    let target = Memo::new(move |_| {
        chosen
            .get()
            .or_else(|| bars.with(|b| b.first().map(|b: &LineBar| (b.file.clone(), b.line))))
    });
    view! {
        <div class="source-body">
            <LineList bars=bars unit=unit chosen=chosen target=target config=lines.config.clone() />
            <CodeBox lines=lines bars=bars target=target />
        </div>
    }
}
