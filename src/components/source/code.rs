//! The code beside the lines: the chosen line's file as the service has it (`serve
//! --source-dir`), the function's lines with their heat in the gutter, scrolled so the chosen
//! (else the hottest) line sits in the upper third. Without a source root it says how to get
//! one; the lines list stays useful on its own.

use embers_model::view::source::{code_view, short_file, LineBar};
use leptos::html::Div;
use leptos::prelude::*;

use super::fetch::{text, Lines};
use crate::state::fetched::fetched;

/// The code of `target`'s file, when the service can show it.
#[component]
pub fn CodeBox(
    lines: Lines,
    bars: Memo<Vec<LineBar>>,
    target: Memo<Option<(String, u32)>>,
) -> impl IntoView {
    let configured = lines.config.source_dirs_configured;
    let Some(base) = lines.base_url.clone().filter(|_| configured) else {
        let flag = match lines.base_url {
            None => "",
            Some(_) => " (or --source-url TEMPLATE to link to where it is hosted)",
        };
        let why = view! {
            {match lines.base_url {
                None => "The code is not shown for an opened file: open the profile through a \
                         service started with ",
                Some(_) => "The service has no source roots: start it with ",
            }}
            <code>"--source-dir DIR"</code>
            {format!(" to see the code beside the lines{flag}.")}
        };
        return view! { <p class="source-code source-note" data-testid="source-no-code">{why}</p> }
            .into_any();
    };
    let file = Memo::new(move |_| target.get().map(|t| t.0));
    let answer = fetched(move || {
        let (base, file) = (base.clone(), file.get());
        async move {
            let got = match &file {
                Some(f) => Some(text(&base, f).await),
                None => None,
            };
            (file, got)
        }
    });
    let holder = NodeRef::<Div>::new();
    let body = move || {
        let (asked, got) = answer.get()?;
        if asked != file.get() {
            return Some(view! { <p class="source-note">"Reading the file…"</p> }.into_any());
        }
        let file = asked?;
        Some(match got? {
            Err(why) => {
                view! { <p class="source-note" data-testid="source-no-code">{why}</p> }.into_any()
            }
            Ok(text) => {
                let line = target.with(|t| t.as_ref().map(|t| t.1));
                view! { <Code text=text file=file bars=bars line=line /> }.into_any()
            }
        })
    };
    // Once the code is in, put the target line in the upper third of the box.
    Effect::new(move |_| {
        let line = target.get().map(|t| t.1);
        answer.track();
        request_animation_frame(move || scroll_to(holder, line));
    });
    view! { <div class="source-code" node_ref=holder data-testid="source-code">{body}</div> }
        .into_any()
}

/// The lines of `text` with their heat.
#[component]
fn Code(text: String, file: String, bars: Memo<Vec<LineBar>>, line: Option<u32>) -> impl IntoView {
    let rows = bars.with(|b| {
        let view = code_view(&text, &file, b, line);
        let total = view.line_count;
        let rows = view
            .lines
            .into_iter()
            .map(|l| {
                let level = l.heat.map_or(0, |h| h.level);
                let share = l.heat.map(|h| format!("{:.0}%", h.total_share * 100.0));
                let tip = share.clone();
                let width = l.heat.map(|h| format!("{:.1}%", h.total_share * 100.0));
                let current = view.target == Some(l.number);
                view! {
                    <div class=format!("code-line heat-{level}") class:current=current
                        data-line=l.number.to_string() data-heat=level.to_string()>
                        <span class="code-gutter" title=tip>
                            <span class="code-bar" style:width=width></span>
                            <span class="code-share">{share}</span>
                        </span>
                        <span class="code-no">{l.number}</span>
                        <span class="code-text">{l.text.to_owned()}</span>
                    </div>
                }
            })
            .collect_view();
        (rows, total)
    });
    let head = format!("{} · {} lines", short_file(&file), rows.1);
    view! {
        <div class="code-head" title=file>{head}</div>
        <div class="code-lines" role="region" aria-label="Source code with the heat in the gutter" tabindex="0">{rows.0}</div>
    }
}

/// Scrolls `holder` so `line` is a third of the way down it.
fn scroll_to(holder: NodeRef<Div>, line: Option<u32>) {
    let (Some(box_), Some(line)) = (holder.get_untracked(), line) else {
        return;
    };
    let Ok(Some(el)) = box_.query_selector(&format!("[data-line='{line}']")) else {
        return;
    };
    let Ok(el) = wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(el) else {
        return;
    };
    let top = el.offset_top() - box_.client_height() / 3;
    box_.set_scroll_top(top.max(0));
}
