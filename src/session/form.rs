//! The query form's state: one signal per request field, filled from the page URL, turned into
//! a [`ProfileRequest`] (or per-field errors) on submit.

use embers_model::contract::event::TOTAL_APP_SERVICE;
use embers_model::contract::request::{FieldError, ProfileRequest};
use embers_model::contract::tag_filter::{render_tag_filter, TagCondition};
use leptos::prelude::*;

use crate::session::time::{format_local, now_secs, parse_local};
use crate::session::url::request_from_page;

/// The `<select>` value meaning "use the absolute start/end fields".
pub const ABSOLUTE: &str = "absolute";
/// The default preset (last 1 h).
const DEFAULT_PRESET_SECS: i64 = 3600;

/// The form's fields, one signal each.
#[derive(Clone, Copy)]
pub struct FormState {
    /// Base URL of the service; empty means this page's origin.
    pub base_url: RwSignal<String>,
    pub app_service: RwSignal<String>,
    pub whole_host: RwSignal<bool>,
    pub language: RwSignal<String>,
    pub event_type: RwSignal<String>,
    /// Builder rows: (stable id, condition).
    pub tag_rows: RwSignal<Vec<(u32, TagCondition)>>,
    next_row_id: StoredValue<u32>,
    pub tag_filter: RwSignal<String>,
    /// Seconds back from now, or [`ABSOLUTE`].
    pub preset: RwSignal<String>,
    pub time_start: RwSignal<String>,
    pub time_end: RwSignal<String>,
    pub kernel_depth: RwSignal<String>,
    pub errors: RwSignal<Vec<FieldError>>,
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

    pub fn add_row(&self) {
        let id = self.next_row_id.get_value();
        self.next_row_id.set_value(id + 1);
        self.tag_rows
            .update(|rows| rows.push((id, TagCondition::default())));
    }

    pub fn edit_row(&self, id: u32, edit: impl FnOnce(&mut TagCondition)) {
        self.tag_rows.update(|rows| {
            if let Some((_, row)) = rows.iter_mut().find(|(i, _)| *i == id) {
                edit(row);
            }
        });
        self.sync_filter_from_rows();
    }

    pub fn remove_row(&self, id: u32) {
        self.tag_rows.update(|rows| rows.retain(|(i, _)| *i != id));
        self.sync_filter_from_rows();
    }

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
