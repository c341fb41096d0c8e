//! The query form: every request field, validated next to the field before sending.

use embers_model::contract::event::{event_menu, supports_whole_host, LANGUAGE_TYPES};
use leptos::prelude::*;

use crate::components::form::autocomplete::{
    present_event_types, ProcessOptions, TagNameOptions, TagValueOptions,
};
use crate::session::form::{FormState, ABSOLUTE};
use crate::session::navigator::Navigator;
use crate::session::time::PRESETS;
use crate::state::loaded::LoadState;

/// The form itself.
#[component]
pub fn QueryForm(nav: Navigator) -> impl IntoView {
    let (form, runner) = (nav.form, nav.runner);
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        form.take_trace();
        if let Err(errors) = nav.submit() {
            form.errors.set(errors);
        }
    };
    let loading = move || runner.view.load.with(LoadState::is_loading);
    // Memory event types are offered only when the range has data of them.
    let present = present_event_types(nav);

    view! {
        <form class="query-form" data-testid="query-form" on:submit=submit novalidate>
            <ProcessField nav=nav />
            <div class="field">
                <label for="f-lang">"Language"</label>
                <select id="f-lang" data-testid="language-type"
                    prop:value=move || form.language.get()
                    on:change=move |e| form.language.set(event_target_value(&e))>
                    {LANGUAGE_TYPES.iter().map(|l| view! { <option value=*l>{*l}</option> }).collect_view()}
                </select>
            </div>
            <div class="field">
                <label for="f-event">"Event"</label>
                <select id="f-event" data-testid="event-type"
                    prop:value=move || form.event_type.get()
                    on:change=move |e| form.set_event_type(&event_target_value(&e))>
                    {move || event_options(present.get(), form.event_type.get())}
                </select>
            </div>
            <TimeRange form=form />
            <div class="field narrow">
                <label for="f-kdepth" title="Keep at most N kernel frames per stack; empty or -1 keeps all">"Kernel depth"</label>
                <input id="f-kdepth" data-testid="kernel-depth" type="number" min="-1" placeholder="all"
                    prop:value=move || form.kernel_depth.get()
                    on:input=move |e| form.kernel_depth.set(event_target_value(&e)) />
                <FieldMessage message=form.error_for("max_kernel_stack_depth") />
            </div>
            <div class="field base-url">
                <label for="f-base" title="Where the ProfileTracing service is; empty means this page's origin">"Service URL"</label>
                <input id="f-base" data-testid="base-url" type="text" placeholder="same origin" spellcheck="false"
                    autocomplete="url"
                    prop:value=move || form.base_url.get()
                    on:input=move |e| form.base_url.set(event_target_value(&e)) />
            </div>
            <TagFilter nav=nav />
            <Trace form=form />
            <div class="field actions">
                <button type="submit" class="primary" data-testid="submit">"Query"</button>
                <button type="button" data-testid="cancel" prop:disabled=move || !loading()
                    on:click=move |_| nav.cancel()>"Cancel"</button>
            </div>
        </form>
    }
}

/// The event list's options: [`event_menu`] of what the range has, the chosen one selected
/// (options rendered after the select's value is set would otherwise leave it on the first).
fn event_options(present: Option<Vec<String>>, selected: String) -> impl IntoView {
    event_menu(&present.unwrap_or_default(), &selected)
        .into_iter()
        .map(|t| {
            let (chosen, value) = (t == selected, t.clone());
            view! { <option value=value selected=chosen>{t}</option> }
        })
        .collect_view()
}

/// The process name, or the whole host (`Total`, on-CPU only).
#[component]
fn ProcessField(nav: Navigator) -> impl IntoView {
    let form = nav.form;
    let total_allowed = move || supports_whole_host(&form.event_type.get());
    view! {
        <div class="field grow">
            <label for="f-app">"Process"</label>
            <div class="inline">
                <input id="f-app" data-testid="app-service" type="text" list="process-options"
                    placeholder="all services" title="A process name, or empty for every service" autocomplete="off" spellcheck="false"
                    prop:value=move || form.app_service.get()
                    prop:disabled=move || form.whole_host.get()
                    on:input=move |e| form.app_service.set(event_target_value(&e)) />
                <label class="check" title="Per-host graph of every process (on-CPU only)">
                    <input type="checkbox" data-testid="whole-host"
                        prop:checked=move || form.whole_host.get()
                        prop:disabled=move || !total_allowed()
                        on:change=move |e| form.whole_host.set(event_target_checked(&e)) />
                    "Whole host (Total)"
                </label>
            </div>
            <FieldMessage message=form.error_for("app_service") />
            <ProcessOptions nav=nav />
        </div>
    }
}

/// A preset ("Last 1 h") or absolute start and end.
#[component]
fn TimeRange(form: FormState) -> impl IntoView {
    view! {
        <div class="field">
            <label for="f-preset">"Time range"</label>
            <div class="inline">
                <select id="f-preset" data-testid="time-preset"
                    prop:value=move || form.preset.get()
                    on:change=move |e| form.preset.set(event_target_value(&e))>
                    {PRESETS.iter().map(|(label, secs)| view! { <option value=secs.to_string()>{*label}</option> }).collect_view()}
                    <option value=ABSOLUTE>"Absolute…"</option>
                </select>
                <input type="datetime-local" step="1" data-testid="time-start" aria-label="Start"
                    prop:value=move || form.time_start.get()
                    on:input=move |e| { form.time_start.set(event_target_value(&e)); form.preset.set(ABSOLUTE.into()); } />
                <span class="dash">"–"</span>
                <input type="datetime-local" step="1" data-testid="time-end" aria-label="End"
                    prop:value=move || form.time_end.get()
                    on:input=move |e| { form.time_end.set(event_target_value(&e)); form.preset.set(ABSOLUTE.into()); } />
            </div>
            <FieldMessage message=form.error_for("time_start") />
            <FieldMessage message=form.error_for("time_end") />
        </div>
    }
}

/// The tag filter: rows of name/value that render into the filter text, which can also be
/// edited directly (raw mode).
#[component]
fn TagFilter(nav: Navigator) -> impl IntoView {
    let form = nav.form;
    view! {
        <div class="field tag-filter">
            <label for="f-tags">"Tag filter"</label>
            <div class="inline">
                <input id="f-tags" data-testid="tag-filter" type="text" spellcheck="false" autocomplete="off"
                    placeholder="pod='web-1' AND host_ip='10.0.0.1'"
                    prop:value=move || form.tag_filter.get()
                    on:input=move |e| {
                        // Typing here is raw mode: the rows no longer describe the filter.
                        form.tag_rows.set(Vec::new());
                        form.tag_filter.set(event_target_value(&e));
                    } />
                <button type="button" class="ghost" data-testid="add-tag" on:click=move |_| { form.add_row(); }>"+ Condition"</button>
            </div>
            <TagNameOptions nav=nav />
            <For each=move || form.tag_rows.get() key=|(id, _)| *id let:row>
                <TagRow nav=nav id=row.0 />
            </For>
        </div>
    }
}

#[component]
fn TagRow(nav: Navigator, id: u32) -> impl IntoView {
    let form = nav.form;
    let row = move || {
        form.tag_rows
            .with(|rows| rows.iter().find(|(i, _)| *i == id).map(|(_, r)| r.clone()))
            .unwrap_or_default()
    };
    let values_list = format!("tag-values-{id}");
    view! {
        <div class="inline tag-row" data-testid="tag-row">
            <input type="text" list="tag-names" placeholder="tag name" aria-label="Tag name" data-testid="tag-name"
                prop:value=move || row().name
                on:input=move |e| { let v = event_target_value(&e); form.edit_row(id, |r| r.name = v); } />
            <select aria-label="Operator" data-testid="tag-op"
                on:change=move |e| { let neg = event_target_value(&e) == "!="; form.edit_row(id, |r| r.negated = neg); }>
                <option value="=">"="</option>
                <option value="!=">"≠"</option>
            </select>
            <input type="text" placeholder="value" aria-label="Tag value" data-testid="tag-value"
                list=values_list.clone() autocomplete="off"
                prop:value=move || row().value
                on:input=move |e| { let v = event_target_value(&e); form.edit_row(id, |r| r.value = v); } />
            <button type="button" class="ghost" aria-label="Remove condition" on:click=move |_| form.remove_row(id)>"×"</button>
            <TagValueOptions nav=nav id=values_list tag=Signal::derive(move || row().name)
                prefix=Signal::derive(move || row().value) />
        </div>
    }
}

/// A trace id and span name: the query opens that trace's (or span's) profile (they join the
/// tag filter when it is sent).
#[component]
fn Trace(form: FormState) -> impl IntoView {
    let input = |i: usize, id: &'static str, placeholder: &'static str, label: &'static str| {
        let typed = form.trace[i];
        view! {
            <input id=id data-testid=id type="text" spellcheck="false" autocomplete="off"
                placeholder=placeholder aria-label=label
                prop:value=move || typed.get() on:input=move |e| typed.set(event_target_value(&e)) />
        }
    };
    view! {
        <div class="field trace">
            <label for="trace-id" title="Open the profile of one trace or span (its samples' trace_id and span_name)">"Trace"</label>
            <div class="inline">
                {input(0, "trace-id", "trace_id", "Trace ID")}
                {input(1, "span-name", "span_name", "Span name")}
            </div>
        </div>
    }
}

#[component]
fn FieldMessage(message: impl Fn() -> Option<String> + Send + Sync + 'static) -> impl IntoView {
    move || message().map(|m| view! { <span class="field-error" role="alert">{m}</span> })
}
