//! The query form: every request field, validated next to the field before sending.

use embers_model::contract::event::{
    supports_whole_host, EVENT_TYPES, LANGUAGE_TYPES, TOTAL_APP_SERVICE,
};
use embers_model::contract::fields::offered_names;
use embers_model::contract::request::{FieldError, ProfileRequest};
use embers_model::contract::tag_filter::{render_tag_filter, TagCondition};
use leptos::prelude::*;

use crate::app::QueryRunner;
use crate::state::LoadState;
use crate::time::{format_local, now_secs, parse_local, PRESETS};
use crate::url::request_from_page;

/// The `<select>` value meaning "use the absolute start/end fields".
const ABSOLUTE: &str = "absolute";
/// The default preset (last 1 h).
const DEFAULT_PRESET_SECS: i64 = 3600;

/// The form's fields, one signal each.
#[derive(Clone, Copy)]
pub struct FormState {
    /// Base URL of the service; empty means this page's origin.
    pub base_url: RwSignal<String>,
    app_service: RwSignal<String>,
    whole_host: RwSignal<bool>,
    language: RwSignal<String>,
    event_type: RwSignal<String>,
    /// Builder rows: (stable id, condition).
    tag_rows: RwSignal<Vec<(u32, TagCondition)>>,
    next_row_id: StoredValue<u32>,
    tag_filter: RwSignal<String>,
    /// Seconds back from now, or [`ABSOLUTE`].
    preset: RwSignal<String>,
    time_start: RwSignal<String>,
    time_end: RwSignal<String>,
    kernel_depth: RwSignal<String>,
    errors: RwSignal<Vec<FieldError>>,
    /// Whether the page URL named a query, which then runs on load.
    pub run_on_load: bool,
}

impl FormState {
    /// A form filled from the page URL's parameters, or with defaults.
    pub fn from_page() -> FormState {
        let (request, base) = request_from_page();
        let req = request.clone().unwrap_or_else(|| ProfileRequest {
            profile_language_type: "eBPF".into(),
            profile_event_type: "on-cpu".into(),
            ..ProfileRequest::default()
        });
        let whole_host = req.app_service.as_deref() == Some(TOTAL_APP_SERVICE);
        let absolute = req.time_start > 0 && req.time_end > 0;
        FormState {
            base_url: RwSignal::new(base.unwrap_or_default()),
            app_service: RwSignal::new(if whole_host {
                String::new()
            } else {
                req.app_service.clone().unwrap_or_default()
            }),
            whole_host: RwSignal::new(whole_host),
            language: RwSignal::new(req.profile_language_type.clone()),
            event_type: RwSignal::new(req.profile_event_type.clone()),
            tag_rows: RwSignal::new(Vec::new()),
            next_row_id: StoredValue::new(0),
            tag_filter: RwSignal::new(req.tag_filter.clone()),
            preset: RwSignal::new(if absolute {
                ABSOLUTE.into()
            } else {
                DEFAULT_PRESET_SECS.to_string()
            }),
            time_start: RwSignal::new(if absolute {
                format_local(req.time_start)
            } else {
                String::new()
            }),
            time_end: RwSignal::new(if absolute {
                format_local(req.time_end)
            } else {
                String::new()
            }),
            kernel_depth: RwSignal::new(
                req.max_kernel_stack_depth
                    .map(|d| d.to_string())
                    .unwrap_or_default(),
            ),
            errors: RwSignal::new(Vec::new()),
            run_on_load: request.is_some(),
        }
    }

    /// Builds the request, or the per-field errors to show.
    pub fn to_request(&self) -> Result<ProfileRequest, Vec<FieldError>> {
        let mut errors = Vec::new();
        let (time_start, time_end) = match self.preset.get_untracked().parse::<i64>() {
            Ok(back) => {
                let now = now_secs();
                self.time_start.set(format_local(now - back));
                self.time_end.set(format_local(now));
                (now - back, now)
            }
            Err(_) => (
                parse_local(&self.time_start.get_untracked()).unwrap_or(0),
                parse_local(&self.time_end.get_untracked()).unwrap_or(0),
            ),
        };
        let kernel = self.kernel_depth.get_untracked();
        let max_kernel_stack_depth = if kernel.trim().is_empty() {
            None
        } else {
            match kernel.trim().parse::<i64>() {
                Ok(d) => Some(d),
                Err(_) => {
                    errors.push(FieldError {
                        field: "max_kernel_stack_depth",
                        message: "Enter a whole number.".into(),
                    });
                    None
                }
            }
        };
        let request = ProfileRequest {
            app_service: Some(if self.whole_host.get_untracked() {
                TOTAL_APP_SERVICE.to_string()
            } else {
                self.app_service.get_untracked().trim().to_string()
            }),
            profile_language_type: self.language.get_untracked(),
            profile_event_type: self.event_type.get_untracked(),
            tag_filter: self.tag_filter.get_untracked().trim().to_string(),
            time_start,
            time_end,
            max_kernel_stack_depth,
        };
        errors.extend(request.validate());
        if errors.is_empty() {
            Ok(request)
        } else {
            Err(errors)
        }
    }

    fn sync_filter_from_rows(&self) {
        let rows: Vec<TagCondition> = self
            .tag_rows
            .get_untracked()
            .into_iter()
            .map(|(_, r)| r)
            .collect();
        self.tag_filter.set(render_tag_filter(&rows));
    }

    fn add_row(&self) {
        let id = self.next_row_id.get_value();
        self.next_row_id.set_value(id + 1);
        self.tag_rows
            .update(|rows| rows.push((id, TagCondition::default())));
    }

    fn edit_row(&self, id: u32, edit: impl FnOnce(&mut TagCondition)) {
        self.tag_rows.update(|rows| {
            if let Some((_, row)) = rows.iter_mut().find(|(i, _)| *i == id) {
                edit(row);
            }
        });
        self.sync_filter_from_rows();
    }

    fn remove_row(&self, id: u32) {
        self.tag_rows.update(|rows| rows.retain(|(i, _)| *i != id));
        self.sync_filter_from_rows();
    }

    fn error_for(
        &self,
        field: &'static str,
    ) -> impl Fn() -> Option<String> + Send + Sync + 'static {
        let errors = self.errors;
        move || {
            errors.with(|e| {
                e.iter()
                    .find(|e| e.field == field)
                    .map(|e| e.message.clone())
            })
        }
    }
}

/// The form itself.
#[component]
pub fn QueryForm(form: FormState, runner: QueryRunner) -> impl IntoView {
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        match form.to_request() {
            Ok(req) => {
                form.errors.set(Vec::new());
                runner.run(form.base_url.get_untracked(), req);
            }
            Err(errors) => form.errors.set(errors),
        }
    };
    let loading = move || matches!(runner.load.get(), LoadState::Loading { .. });
    let total_allowed = move || supports_whole_host(&form.event_type.get());
    Effect::new(move |_| {
        if !total_allowed() && form.whole_host.get_untracked() {
            form.whole_host.set(false);
        }
    });

    view! {
        <form class="query-form" data-testid="query-form" on:submit=submit novalidate>
            <div class="field grow">
                <label for="f-app">"Process"</label>
                <div class="inline">
                    <input id="f-app" data-testid="app-service" type="text" placeholder="app_service, e.g. redis-server"
                        autocomplete="off" spellcheck="false"
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
            </div>
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
                    on:change=move |e| form.event_type.set(event_target_value(&e))>
                    {EVENT_TYPES.iter().map(|t| view! { <option value=*t>{*t}</option> }).collect_view()}
                </select>
            </div>
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
            <TagFilter form=form />
            <div class="field actions">
                <button type="submit" class="primary" data-testid="submit">"Query"</button>
                <button type="button" data-testid="cancel" prop:disabled=move || !loading()
                    on:click=move |_| runner.cancel()>"Cancel"</button>
            </div>
        </form>
    }
}

/// The tag filter: rows of name/value that render into the filter text, which can also be
/// edited directly (raw mode).
#[component]
fn TagFilter(form: FormState) -> impl IntoView {
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
                <button type="button" class="ghost" data-testid="add-tag" on:click=move |_| form.add_row()>"+ Condition"</button>
            </div>
            <datalist id="tag-names">
                {offered_names().into_iter().map(|n| view! { <option value=n></option> }).collect_view()}
            </datalist>
            <For each=move || form.tag_rows.get() key=|(id, _)| *id let:row>
                <TagRow form=form id=row.0 />
            </For>
        </div>
    }
}

#[component]
fn TagRow(form: FormState, id: u32) -> impl IntoView {
    view! {
        <div class="inline tag-row" data-testid="tag-row">
            <input type="text" list="tag-names" placeholder="tag name" aria-label="Tag name" data-testid="tag-name"
                on:input=move |e| { let v = event_target_value(&e); form.edit_row(id, |r| r.name = v); } />
            <select aria-label="Operator" data-testid="tag-op"
                on:change=move |e| { let neg = event_target_value(&e) == "!="; form.edit_row(id, |r| r.negated = neg); }>
                <option value="=">"="</option>
                <option value="!=">"≠"</option>
            </select>
            <input type="text" placeholder="value" aria-label="Tag value" data-testid="tag-value"
                on:input=move |e| { let v = event_target_value(&e); form.edit_row(id, |r| r.value = v); } />
            <button type="button" class="ghost" aria-label="Remove condition" on:click=move |_| form.remove_row(id)>"×"</button>
        </div>
    }
}

#[component]
fn FieldMessage(message: impl Fn() -> Option<String> + Send + Sync + 'static) -> impl IntoView {
    move || message().map(|m| view! { <span class="field-error" role="alert">{m}</span> })
}
