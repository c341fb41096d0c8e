//! The query form's state: one signal per request field, filled from a request (the page URL,
//! Back/Forward), turned into a [`ProfileRequest`] (or per-field errors) on submit. An empty
//! process asks for every service (the home view).

use embers_model::contract::event::{
    supports_whole_host, DEFAULT_EVENT_TYPE, DEFAULT_LANGUAGE, TOTAL_APP_SERVICE,
};
use embers_model::contract::request::{FieldError, ProfileRequest, TRACE_FIELDS};
use embers_model::contract::tag_filter::{quote_tag_value, render_tag_filter, TagCondition};
use leptos::prelude::*;

use crate::session::time::{format_local, now_secs, parse_local};

/// The `<select>` value meaning "use the absolute start/end fields".
pub const ABSOLUTE: &str = "absolute";
/// The default preset (last 1 h).
const DEFAULT_PRESET_SECS: i64 = 3600;

/// The form's fields, one signal each.
#[derive(Clone, Copy)]
pub struct FormState {
    /// Base URL of the service; empty means this page's origin.
    pub base_url: RwSignal<String>,
    /// The process name (empty: every service).
    pub app_service: RwSignal<String>,
    /// The per-host graph instead of one process.
    pub whole_host: RwSignal<bool>,
    /// `profile_language_type`.
    pub language: RwSignal<String>,
    /// `profile_event_type`; set it with [`FormState::set_event_type`].
    pub event_type: RwSignal<String>,
    /// Builder rows: (stable id, condition).
    pub tag_rows: RwSignal<Vec<(u32, TagCondition)>>,
    next_row_id: StoredValue<u32>,
    /// The filter text (rendered from the rows, or typed).
    pub tag_filter: RwSignal<String>,
    /// Seconds back from now, or [`ABSOLUTE`].
    pub preset: RwSignal<String>,
    /// `datetime-local` start.
    pub time_start: RwSignal<String>,
    /// `datetime-local` end.
    pub time_end: RwSignal<String>,
    /// `max_kernel_stack_depth` as typed.
    pub kernel_depth: RwSignal<String>,
    /// Messages next to the fields.
    pub errors: RwSignal<Vec<FieldError>>,
    /// A trace (`trace_id`) and span (`span_name`) to narrow the next query to; they join the
    /// tag filter when it is sent ([`FormState::take_trace`]).
    pub trace: [RwSignal<String>; 2],
}

impl FormState {
    /// A form with defaults (last hour, eBPF on-CPU).
    pub fn new(base_url: Option<String>) -> FormState {
        FormState {
            base_url: RwSignal::new(base_url.unwrap_or_default()),
            app_service: RwSignal::new(String::new()),
            whole_host: RwSignal::new(false),
            language: RwSignal::new(DEFAULT_LANGUAGE.into()),
            event_type: RwSignal::new(DEFAULT_EVENT_TYPE.into()),
            tag_rows: RwSignal::new(Vec::new()),
            next_row_id: StoredValue::new(0),
            tag_filter: RwSignal::new(String::new()),
            preset: RwSignal::new(DEFAULT_PRESET_SECS.to_string()),
            time_start: RwSignal::new(String::new()),
            time_end: RwSignal::new(String::new()),
            kernel_depth: RwSignal::new(String::new()),
            errors: RwSignal::new(Vec::new()),
            trace: [RwSignal::new(String::new()), RwSignal::new(String::new())],
        }
    }

    /// Moves a typed trace id and span name into the tag filter (`trace_id='…'`,
    /// `span_name='…'`), so the query sent, its URL and the filter field all say them.
    pub fn take_trace(&self) {
        for (field, typed) in TRACE_FIELDS.iter().zip(self.trace) {
            let value = typed.get_untracked().trim().to_owned();
            if !value.is_empty() {
                self.add_condition(field, &value);
                typed.set(String::new());
            }
        }
    }

    /// Shows `req` in the fields (times become absolute when it has them).
    pub fn fill(&self, req: &ProfileRequest) {
        let whole_host = req.app_service.as_deref() == Some(TOTAL_APP_SERVICE);
        self.whole_host.set(whole_host);
        self.app_service.set(if whole_host {
            String::new()
        } else {
            req.app_service.clone().unwrap_or_default()
        });
        self.language.set(req.profile_language_type.clone());
        self.set_event_type(&req.profile_event_type);
        self.tag_rows.set(Vec::new());
        self.tag_filter.set(req.tag_filter.clone());
        if req.time_start > 0 && req.time_end > 0 {
            self.set_range(req.time_start, req.time_end);
        }
        self.kernel_depth.set(
            req.max_kernel_stack_depth
                .map(|d| d.to_string())
                .unwrap_or_default(),
        );
    }

    /// Sets the event type; one without a per-host graph unticks the whole host (only on-CPU
    /// has `Total`), so the form never holds a request the service refuses.
    pub fn set_event_type(&self, event_type: &str) {
        if !supports_whole_host(event_type) {
            self.whole_host.set(false);
        }
        self.event_type.set(event_type.to_owned());
    }

    /// Sets an absolute time range.
    pub fn set_range(&self, time_start: i64, time_end: i64) {
        self.preset.set(ABSOLUTE.into());
        self.time_start.set(format_local(time_start));
        self.time_end.set(format_local(time_end));
    }

    /// Sets the process (`Total` ticks the whole-host box).
    pub fn set_process(&self, app_service: &str) {
        let whole_host = app_service == TOTAL_APP_SERVICE;
        self.whole_host.set(whole_host);
        self.app_service
            .set(if whole_host { "" } else { app_service }.into());
    }

    /// Adds `name = 'value'` to the tag filter (as a builder row when rows are in use).
    pub fn add_condition(&self, name: &str, value: &str) {
        if self.tag_rows.with_untracked(|r| !r.is_empty()) {
            let id = self.add_row();
            self.edit_row(id, |row| {
                row.name = name.into();
                row.value = value.into();
            });
            return;
        }
        let condition = format!("{name}={}", quote_tag_value(value));
        self.tag_filter.update(|f| {
            *f = if f.trim().is_empty() {
                condition
            } else {
                format!("{} AND {condition}", f.trim())
            };
        });
    }

    /// The time range the form names, resolving a preset against now (and showing it).
    pub fn range(&self) -> (i64, i64) {
        let (start, end) = self.peek_range();
        if self.is_relative() {
            self.time_start.set(format_local(start));
            self.time_end.set(format_local(end));
        }
        (start, end)
    }

    /// The time range the form names, without touching the fields (for suggestions).
    pub fn peek_range(&self) -> (i64, i64) {
        match self.preset.get_untracked().parse::<i64>() {
            Ok(back) => {
                let now = now_secs();
                (now - back, now)
            }
            Err(_) => (
                parse_local(&self.time_start.get_untracked()).unwrap_or(0),
                parse_local(&self.time_end.get_untracked()).unwrap_or(0),
            ),
        }
    }

    /// Whether the time range is a preset relative to now (rather than absolute times).
    pub fn is_relative(&self) -> bool {
        self.preset.get_untracked() != ABSOLUTE
    }

    /// Builds the request, or the per-field errors to show. No process (and not the whole
    /// host) leaves `app_service` out: every service.
    pub fn to_request(&self) -> Result<ProfileRequest, Vec<FieldError>> {
        let mut errors = Vec::new();
        let (time_start, time_end) = self.range();
        let max_kernel_stack_depth = self.kernel_depth(&mut errors);
        let process = self.app_service.get_untracked().trim().to_string();
        let app_service = if self.whole_host.get_untracked() {
            Some(TOTAL_APP_SERVICE.to_string())
        } else {
            Some(process).filter(|p| !p.is_empty())
        };
        let request = ProfileRequest {
            app_service,
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

    fn kernel_depth(&self, errors: &mut Vec<FieldError>) -> Option<i64> {
        let kernel = self.kernel_depth.get_untracked();
        if kernel.trim().is_empty() {
            return None;
        }
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

    /// Adds an empty builder row; returns its id.
    pub fn add_row(&self) -> u32 {
        let id = self.next_row_id.get_value();
        self.next_row_id.set_value(id + 1);
        self.tag_rows
            .update(|rows| rows.push((id, TagCondition::default())));
        id
    }

    /// Changes builder row `id` and re-renders the filter text.
    pub fn edit_row(&self, id: u32, edit: impl FnOnce(&mut TagCondition)) {
        self.tag_rows.update(|rows| {
            if let Some((_, row)) = rows.iter_mut().find(|(i, _)| *i == id) {
                edit(row);
            }
        });
        self.sync_filter_from_rows();
    }

    /// Removes builder row `id`.
    pub fn remove_row(&self, id: u32) {
        self.tag_rows.update(|rows| rows.retain(|(i, _)| *i != id));
        self.sync_filter_from_rows();
    }

    /// The message for `field`, if any.
    pub fn error_for(
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
