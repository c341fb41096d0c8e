//! The ProfileTracing request: the body the viewer posts (and the service reads, see
//! [`crate::contract::body`]), validation with per-field messages for the form, and the URL
//! parameters that reproduce a request.

use serde::{Deserialize, Serialize};

use crate::contract::event::{
    supports_whole_host, DEFAULT_EVENT_TYPE, DEFAULT_LANGUAGE, TOTAL_APP_SERVICE,
};
use crate::contract::tag_filter::quote_tag_value;

/// The body of `POST /v1/profile/ProfileTracing`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileRequest {
    /// Process name, or `Total` for the per-host graph.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_service: Option<String>,
    /// `eBPF` for agent data.
    pub profile_language_type: String,
    /// `on-cpu`, `off-cpu`, `mem-alloc`, ...
    pub profile_event_type: String,
    /// Conditions `name='value' AND ...`; empty for none.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub tag_filter: String,
    /// Unix seconds, inclusive.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub time_start: i64,
    /// Unix seconds, inclusive.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub time_end: i64,
    /// Keep at most this many leading kernel frames; -1 keeps all. Other negative values are
    /// refused: the interface defines only -1 (its default) and depths of 0 or more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = -1))]
    pub max_kernel_stack_depth: Option<i64>,
}

impl ProfileRequest {
    /// `max_kernel_stack_depth` as the service applies it: -1 (keep all) unless given, and only
    /// for eBPF data.
    pub fn kernel_depth(&self) -> i64 {
        if crate::contract::event::is_ebpf(&self.profile_language_type) {
            self.max_kernel_stack_depth.unwrap_or(-1)
        } else {
            -1
        }
    }
}

/// A problem with one field of a request, for display next to that field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// The request field's name (`time_start`, ...), which the form uses as its key.
    pub field: &'static str,
    /// What to fix.
    pub message: String,
}

impl ProfileRequest {
    /// Checks what the service would reject, so the user hears about it before sending.
    pub fn validate(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let mut err = |field, message: &str| {
            errors.push(FieldError {
                field,
                message: message.to_string(),
            })
        };
        if self
            .app_service
            .as_deref()
            .is_some_and(|s| s.trim().is_empty())
        {
            err(
                "app_service",
                "Enter a process name, or choose the whole host.",
            );
        }
        if self.app_service.as_deref() == Some(TOTAL_APP_SERVICE)
            && !supports_whole_host(&self.profile_event_type)
        {
            err(
                "app_service",
                "The whole-host (Total) graph exists for on-CPU profiles only.",
            );
        }
        if self.profile_language_type.trim().is_empty() {
            err(
                "profile_language_type",
                "Choose a language type (eBPF for agent data).",
            );
        }
        if self.profile_event_type.trim().is_empty() {
            err("profile_event_type", "Choose an event type.");
        }
        if self.time_start <= 0 {
            err("time_start", "Set a start time.");
        }
        if self.time_end <= 0 {
            err("time_end", "Set an end time.");
        }
        if self.time_start > 0 && self.time_end > 0 && self.time_start > self.time_end {
            err("time_end", "The end must not be before the start.");
        }
        if self.max_kernel_stack_depth.is_some_and(|d| d < -1) {
            err(
                "max_kernel_stack_depth",
                "Use -1 (keep all) or a depth of 0 or more.",
            );
        }
        errors
    }
}

/// The record fields that tie samples to one request of a traced application: a trace and a
/// span (`trace_id`, `span_name`, per-sample tags of DeepFlow's table). A link, the form or an
/// embedding page names them to open that trace's or span's profile.
pub const TRACE_FIELDS: [&str; 2] = ["trace_id", "span_name"];

impl ProfileRequest {
    /// Whether the tag filter has a condition on a trace or span ([`TRACE_FIELDS`]): such a
    /// request opens that trace's profile even without a process (the service finds the
    /// processes). A scan of the filter's words outside quoted values, not the parser: the
    /// page needs only this answer (the parser weighs 4 KB of its wasm).
    pub fn names_a_trace(&self) -> bool {
        let mut quoted = false;
        let mut escaped = false;
        let mut word = String::new();
        for c in self.tag_filter.chars().chain([' ']) {
            if quoted {
                match (escaped, c) {
                    (false, '\\') => escaped = true,
                    (false, '\'') => quoted = false,
                    _ => escaped = false,
                }
                continue;
            }
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '`' {
                word.push(c);
                continue;
            }
            if TRACE_FIELDS.contains(&word.trim_matches('`')) {
                return true;
            }
            word.clear();
            quoted = c == '\'';
        }
        false
    }
}

/// `request` narrowed to one trace and/or span: `trace_id='…'` and `span_name='…'` added to
/// its tag filter, values quoted by the contract's renderer (empty ones are left out).
pub fn with_trace(
    mut request: ProfileRequest,
    trace_id: Option<&str>,
    span_name: Option<&str>,
) -> ProfileRequest {
    for (field, value) in TRACE_FIELDS.iter().zip([trace_id, span_name]) {
        let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else {
            continue;
        };
        let condition = format!("{field}={}", quote_tag_value(value));
        request.tag_filter = match request.tag_filter.trim() {
            "" => condition,
            filter => format!("{filter} AND {condition}"),
        };
    }
    request
}

/// Reads request fields from URL query pairs (already percent-decoded), using the request's
/// own field names; `trace_id` and `span_name` narrow its tag filter ([`with_trace`]).
/// Returns `None` when the URL names no request field at all.
pub fn request_from_url_pairs<'a>(
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Option<ProfileRequest> {
    let mut req = ProfileRequest {
        profile_language_type: DEFAULT_LANGUAGE.to_string(),
        profile_event_type: DEFAULT_EVENT_TYPE.to_string(),
        ..ProfileRequest::default()
    };
    let mut named_any = false;
    let mut trace: [Option<&str>; 2] = [None, None];
    for (k, v) in pairs {
        named_any |= matches!(
            k,
            "app_service"
                | "time_start"
                | "time_end"
                | "profile_language_type"
                | "profile_event_type"
                | "tag_filter"
                | "max_kernel_stack_depth"
                | "trace_id"
                | "span_name"
        );
        match k {
            "app_service" => req.app_service = Some(v.to_string()),
            "profile_language_type" => req.profile_language_type = v.to_string(),
            "profile_event_type" => req.profile_event_type = v.to_string(),
            "tag_filter" => req.tag_filter = v.to_string(),
            "time_start" => req.time_start = v.trim().parse().unwrap_or(0),
            "time_end" => req.time_end = v.trim().parse().unwrap_or(0),
            "max_kernel_stack_depth" => req.max_kernel_stack_depth = v.trim().parse().ok(),
            "trace_id" => trace[0] = Some(v),
            "span_name" => trace[1] = Some(v),
            _ => {}
        }
    }
    named_any.then(|| with_trace(req, trace[0], trace[1]))
}

/// The URL query pairs that reproduce a request (inverse of [`request_from_url_pairs`]).
pub fn request_to_url_pairs(req: &ProfileRequest) -> Vec<(&'static str, String)> {
    let mut pairs = Vec::new();
    if let Some(app) = &req.app_service {
        pairs.push(("app_service", app.clone()));
    }
    pairs.push(("profile_language_type", req.profile_language_type.clone()));
    pairs.push(("profile_event_type", req.profile_event_type.clone()));
    if !req.tag_filter.is_empty() {
        pairs.push(("tag_filter", req.tag_filter.clone()));
    }
    pairs.push(("time_start", req.time_start.to_string()));
    pairs.push(("time_end", req.time_end.to_string()));
    if let Some(d) = req.max_kernel_stack_depth {
        pairs.push(("max_kernel_stack_depth", d.to_string()));
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid() -> ProfileRequest {
        ProfileRequest {
            app_service: Some("redis".into()),
            profile_language_type: "eBPF".into(),
            profile_event_type: "on-cpu".into(),
            time_start: 100,
            time_end: 200,
            ..ProfileRequest::default()
        }
    }

    #[test]
    fn a_sound_request_validates_and_serialises_without_optional_fields() {
        assert!(valid().validate().is_empty());
        let json = serde_json::to_value(valid()).unwrap();
        assert_eq!(json["app_service"], "redis");
        assert!(json.get("max_kernel_stack_depth").is_none());
        assert_eq!(json["tag_filter"], "");
    }

    #[test]
    fn validation_names_each_bad_field() {
        let mut r = valid();
        r.time_start = 300;
        r.app_service = Some(TOTAL_APP_SERVICE.into());
        r.profile_event_type = "off-cpu".into();
        r.max_kernel_stack_depth = Some(-5);
        let fields: Vec<_> = r.validate().into_iter().map(|e| e.field).collect();
        assert_eq!(
            fields,
            ["app_service", "time_end", "max_kernel_stack_depth"]
        );
        let mut r = valid();
        r.time_start = 0;
        assert_eq!(r.validate()[0].field, "time_start");
    }

    #[test]
    fn url_pairs_round_trip() {
        let mut r = valid();
        r.tag_filter = "pod='a'".into();
        r.max_kernel_stack_depth = Some(2);
        let pairs = request_to_url_pairs(&r);
        let back = request_from_url_pairs(pairs.iter().map(|(k, v)| (*k, v.as_str()))).unwrap();
        assert_eq!(back, r);
        assert_eq!(request_from_url_pairs([("embed", "1")]), None);
    }

    #[test]
    fn a_trace_or_span_narrows_the_filter() {
        let r = request_from_url_pairs([("trace_id", "4bf9'2f"), ("time_start", "5")]).unwrap();
        assert_eq!(r.tag_filter, r"trace_id='4bf9\'2f'");
        assert_eq!(r.app_service, None, "every process of the trace");
        let r = request_from_url_pairs([
            ("tag_filter", "pod='a'"),
            ("span_name", "GET /cart"),
            ("trace_id", " "),
        ])
        .unwrap();
        assert_eq!(r.tag_filter, "pod='a' AND span_name='GET /cart'");
        let parsed = crate::contract::tag_filter::parse(&r.tag_filter).expect("a filter");
        assert_eq!(parsed.conditions.len(), 2);
        let both = with_trace(valid(), Some("t1"), Some("s"));
        assert_eq!(both.tag_filter, "trace_id='t1' AND span_name='s'");
        assert!(both.names_a_trace() && r.names_a_trace());
        assert!(!valid().names_a_trace());
        let filter = |f: &str| ProfileRequest {
            tag_filter: f.into(),
            ..valid()
        };
        for traced in [
            "trace_id='x'",
            "pod='a' AND `span_name` != 'b'",
            "trace_id IN ('a')",
        ] {
            assert!(filter(traced).names_a_trace(), "{traced}");
        }
        for plain in [
            "pod='trace_id=1'",
            r"pod='a\' trace_id'",
            "k8s.label.trace_id='x'",
            "",
        ] {
            assert!(!filter(plain).names_a_trace(), "{plain}");
        }
    }
}
