//! The function's lines as a list, hottest first: `file:line`, a heat bar (total light, self
//! dark, as shares of the function's total), the value and its share. A row picks its line for
//! the code beside it; ↑ ↓ move between rows. With a `--source-url` template each row links to
//! its line where the code is hosted (the browser opens it; the page never fetches it).

use embers_model::contract::source::SourceConfig;
use embers_model::view::format::{format_value, ValueUnit};
use embers_model::view::source::LineBar;
use leptos::prelude::*;

use crate::components::rows::move_focus;

/// The rows of `bars`; a click (or Enter) on one sets `chosen`; `target` is outlined.
#[component]
pub fn LineList(
    bars: Memo<Vec<LineBar>>,
    unit: ValueUnit,
    chosen: RwSignal<Option<(String, u32)>>,
    target: Memo<Option<(String, u32)>>,
    config: SourceConfig,
) -> impl IntoView {
    let count = move || {
        let n = bars.with(Vec::len);
        format!("{n} line{}", if n == 1 { "" } else { "s" })
    };
    let config = StoredValue::new(config);
    view! {
        <div class="source-list">
            <div class="source-list-head"><span>{count}</span><span>"self · total"</span></div>
            <ol class="source-lines" data-testid="source-lines" aria-label="Lines, hottest first">
                {move || bars.get().into_iter().map(|b| {
                    let link = config.with_value(|c| c.url(&b.file, b.line));
                    view! { <Row bar=b unit=unit chosen=chosen target=target link=link /> }
                }).collect_view()}
            </ol>
        </div>
    }
}

#[component]
fn Row(
    bar: LineBar,
    unit: ValueUnit,
    chosen: RwSignal<Option<(String, u32)>>,
    target: Memo<Option<(String, u32)>>,
    link: Option<String>,
) -> impl IntoView {
    let key = (bar.file.clone(), bar.line);
    let here = key.clone();
    let current = Memo::new(move |_| target.with(|t| t.as_ref() == Some(&here)));
    let pct = |share: f64| format!("{:.1}%", share * 100.0);
    let label = format!("{}:{}", bar.short_file, bar.line);
    let title = format!(
        "{}:{} — self {} ({}), total {} ({}) of the function",
        bar.file,
        bar.line,
        format_value(bar.self_value, unit),
        pct(bar.self_share),
        format_value(bar.total_value, unit),
        pct(bar.total_share)
    );
    let (total_w, self_w) = (pct(bar.total_share), pct(bar.self_share));
    view! {
        <li class="source-row" class:current=current data-testid="source-line"
            data-file=bar.file.clone() data-line=bar.line.to_string()>
            <button type="button" title=title aria-pressed=move || current.get().to_string()
                on:click=move |_| chosen.set(Some(key.clone())) on:keydown=move_focus>
                <span class="source-loc">{label}</span>
                <span class="source-heat" aria-hidden="true">
                    <span class="total" style:width=total_w></span>
                    <span class="self" style:width=self_w></span>
                </span>
                <span class="source-value">{pct(bar.self_share)}</span>
                <span class="source-share">{pct(bar.total_share)}</span>
            </button>
            {link.map(|href| view! {
                <a class="source-link" href=href target="_blank" rel="noopener noreferrer"
                    data-testid="source-link" title="Open this line where the code is hosted">"↗"</a>
            })}
        </li>
    }
}
