//! The fleet's functions: `POST /v1/profile/functions` (the hottest functions over a range,
//! with the services each runs in, optionally against a baseline) and
//! `POST /v1/profile/function_timeline` (one function's self and total per interval) — the
//! bodies the viewer posts, how the service reads them, and what a function of a stack is.
//!
//! A stack's functions are its frames as they appear (`[k] vfs_read`, `[t] worker`, ...), each
//! counted once however often it recurs ([`stack_functions`]): a sample adds its value to the
//! total of every distinct frame and to the self of its last one.

use serde::{Deserialize, Serialize};

use super::request::{bounded, time_range};
use super::{Dimension, TimelineQuery, TimelineRequest};
use crate::contract::body::{check_range, Members, RequestError};
use crate::contract::selection::Selection;
use crate::contract::tag_filter;

/// Functions `functions` answers unless told otherwise.
pub const DEFAULT_FUNCTIONS_LIMIT: usize = 100;
/// Most functions one `functions` answer holds.
pub const MAX_FUNCTIONS_LIMIT: usize = 1000;
/// Most places (services, or service and group) listed per function.
pub const PLACES_PER_FUNCTION: usize = 10;

/// The distinct frames of a `;`-joined stack in first-seen order, and its last frame (its
/// self). Empty frames are skipped (stored stacks have none).
pub fn stack_functions(stack: &str) -> (Vec<&str>, Option<&str>) {
    let mut out: Vec<&str> = Vec::new();
    let mut leaf = None;
    for frame in stack.split(';').filter(|f| !f.is_empty()) {
        leaf = Some(frame);
        // Stacks are short (tens of frames): a linear check beats hashing each frame.
        if !out.contains(&frame) {
            out.push(frame);
        }
    }
    (out, leaf)
}

/// Which value ranks the list and which one the change describes.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FunctionMetric {
    /// Time in the function itself (the default).
    #[default]
    #[serde(rename = "self")]
    SelfValue,
    /// Time in the function and everything it called.
    Total,
}

/// How the list is sorted.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FunctionOrder {
    /// By the metric's value, highest first (the default).
    #[default]
    Value,
    /// By the change of the metric's share of every selected sample against the baseline,
    /// most grown first.
    Change,
    /// By the largest change of the metric's share of one place's own samples (a service, or
    /// a service and group), most grown first: what grew in some service, however small.
    #[serde(rename = "place_change")]
    PlaceChange,
}

/// Body of `POST /v1/profile/functions`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionsRequest {
    /// Unix seconds, inclusive.
    pub time_start: i64,
    /// Unix seconds, inclusive.
    pub time_end: i64,
    /// `on-cpu`, `off-cpu`, ... (required: values of two event types do not add up).
    pub profile_event_type: String,
    /// Only this language type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_language_type: Option<String>,
    /// Only this process (or `Total`); without it every process except `Total`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_service: Option<String>,
    /// Conditions `name='value' AND ...`; empty for none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub tag_filter: String,
    /// A tag to break each function's places down by, besides the process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_by: Option<String>,
    /// What ranks the list (`self`, the default, or `total`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<FunctionMetric>,
    /// `value` (the default), `change` or `place_change` (both need a baseline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_by: Option<FunctionOrder>,
    /// Only functions whose name contains this, case ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<String>,
    /// Most rows (1 to [`MAX_FUNCTIONS_LIMIT`], default [`DEFAULT_FUNCTIONS_LIMIT`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 1000))]
    pub limit: Option<i64>,
    /// Rows of the ranked list to skip (paging).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 0))]
    pub offset: Option<i64>,
    /// The baseline's range (with `baseline_time_end`); the range itself when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_time_start: Option<i64>,
    /// The baseline's range end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_time_end: Option<i64>,
    /// The baseline's tag filter; the request's own when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_tag_filter: Option<String>,
}

/// A `functions` request the service accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionsQuery {
    /// The samples; `app_service: None` means every process except `Total`.
    pub selection: Selection,
    /// The tag each function's places are broken down by: as requested, and what it means
    /// (always a [`Dimension::Tag`]).
    pub group_by: Option<(String, Dimension)>,
    /// What ranks the list.
    pub metric: FunctionMetric,
    /// How the list is sorted.
    pub order: FunctionOrder,
    /// Only names containing this (lower case), if given.
    pub search: Option<String>,
    /// Most rows.
    pub limit: usize,
    /// Rows skipped.
    pub offset: usize,
    /// The baseline's samples, when comparing.
    pub baseline: Option<Selection>,
}

impl FunctionsQuery {
    /// Whether the per-host `Total` pseudo-process is left out (no process named), so every
    /// sample counts once.
    pub fn skips_total(&self) -> bool {
        self.selection.app_service.is_none()
    }
}

/// The baseline members: `None` when none is given.
fn baseline(m: &Members, selection: &Selection) -> Result<Option<Selection>, RequestError> {
    let start = m.time("baseline_time_start")?;
    let end = m.time("baseline_time_end")?;
    let filter_text = m.string("baseline_tag_filter")?;
    let range = match (start, end) {
        (None, None) => None,
        (Some(s), Some(e)) => {
            check_range(s, e).map_err(|e| RequestError(format!("baseline: {e}")))?;
            Some((s, e))
        }
        (Some(_), None) => {
            return Err(RequestError(
                "baseline_time_end is required with baseline_time_start".into(),
            ))
        }
        (None, Some(_)) => {
            return Err(RequestError(
                "baseline_time_start is required with baseline_time_end".into(),
            ))
        }
    };
    let filter = match &filter_text {
        Some(text) => Some(
            tag_filter::parse(text)
                .map_err(|e| RequestError(format!("baseline_tag_filter: {e}")))?,
        ),
        None => None,
    };
    if range.is_none() && filter.is_none() {
        return Ok(None);
    }
    let (time_start, time_end) = range.unwrap_or((selection.time_start, selection.time_end));
    Ok(Some(Selection {
        time_start,
        time_end,
        filter: filter.unwrap_or_else(|| selection.filter.clone()),
        ..selection.clone()
    }))
}

/// `group_by` of `functions`: a tag, or nothing (the process is always listed).
fn tag_group(m: &Members) -> Result<Option<(String, Dimension)>, RequestError> {
    let Some(name) = m.non_empty("group_by")? else {
        return Ok(None);
    };
    match Dimension::parse("group_by", &name)? {
        d @ Dimension::Tag(_) => Ok(Some((name, d))),
        _ => Err(RequestError(format!(
            "group_by must be a tag (pod, host, k8s.label.app, ...), got '{name}': each \
             function lists its processes anyway"
        ))),
    }
}

/// An optional enum member read with serde, so the accepted words are the type's own.
fn word<T: for<'de> Deserialize<'de> + Default>(
    m: &Members,
    key: &str,
    hint: &str,
) -> Result<T, RequestError> {
    match m.string(key)? {
        None => Ok(T::default()),
        Some(text) => serde_json::from_value(serde_json::Value::String(text.clone()))
            .map_err(|_| RequestError(format!("{key} must be {hint}, got \"{text}\""))),
    }
}

/// Reads `POST /v1/profile/functions`.
pub fn parse_functions_body(body: &[u8]) -> Result<FunctionsQuery, RequestError> {
    let m = Members::parse(body)?;
    let (time_start, time_end) = time_range(&m)?;
    let event_type = m
        .non_empty("profile_event_type")?
        .ok_or_else(|| RequestError("profile_event_type is required (e.g. \"on-cpu\")".into()))?;
    let (_, filter) = m.tag_filter()?;
    let selection = Selection {
        app_service: m.non_empty("app_service")?,
        language: m.non_empty("profile_language_type")?,
        event_type: Some(event_type),
        time_start,
        time_end,
        filter,
    };
    let offset = match m.int("offset", "rows to skip, 0 or more")? {
        None => 0,
        Some(n) => usize::try_from(n)
            .map_err(|_| RequestError(format!("offset must be 0 or more, got {n}")))?,
    };
    let baseline = baseline(&m, &selection)?;
    let order = word(&m, "order_by", "\"value\", \"change\" or \"place_change\"")?;
    if order != FunctionOrder::Value && baseline.is_none() {
        return Err(RequestError(format!(
            "order_by \"{}\" needs a baseline: baseline_time_start and baseline_time_end, or \
             baseline_tag_filter",
            if order == FunctionOrder::Change {
                "change"
            } else {
                "place_change"
            }
        )));
    }
    Ok(FunctionsQuery {
        group_by: tag_group(&m)?,
        metric: word(&m, "metric", "\"self\" or \"total\"")?,
        order,
        search: m.non_empty("search")?.map(|s| s.to_lowercase()),
        limit: bounded(&m, "limit", MAX_FUNCTIONS_LIMIT, DEFAULT_FUNCTIONS_LIMIT)?,
        offset,
        baseline,
        selection,
    })
}

/// Body of `POST /v1/profile/function_timeline`: a timeline's members and the function.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionTimelineRequest {
    /// The samples, interval and breakdown, as for `timeline`.
    #[serde(flatten)]
    pub timeline: TimelineRequest,
    /// The function's name as it appears in frames (`[k] vfs_read`, `main`, ...).
    pub function: String,
}

/// A `function_timeline` request the service accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionTimelineQuery {
    /// The samples, interval and breakdown.
    pub timeline: TimelineQuery,
    /// The function.
    pub function: String,
}

/// Reads `POST /v1/profile/function_timeline`.
pub fn parse_function_timeline_body(body: &[u8]) -> Result<FunctionTimelineQuery, RequestError> {
    let timeline = super::parse_timeline_body(body)?;
    let function = function_member(&Members::parse(body)?)?;
    Ok(FunctionTimelineQuery { timeline, function })
}

/// The required `function` member: one frame's name as it appears in stacks.
pub(crate) fn function_member(m: &Members) -> Result<String, RequestError> {
    let function = m.non_empty("function")?.ok_or_else(|| {
        RequestError(
            "function is required: a function's name as it appears in frames (e.g. \"main\")"
                .into(),
        )
    })?;
    if function.contains(';') {
        return Err(RequestError(format!(
            "function must be one frame's name, without ';', got \"{function}\""
        )));
    }
    Ok(function)
}

#[cfg(test)]
#[path = "functions_tests.rs"]
mod tests;
