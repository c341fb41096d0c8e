//! Reading request bodies as the service does: JSON objects whose members are checked one by
//! one, so every rejection names the member and what it should be. [`parse_tracing_body`] reads
//! `POST /v1/profile/ProfileTracing` into a [`ProfileRequest`] that passed
//! [`ProfileRequest::validate`], the rules the viewer's form and the snapshot store apply;
//! [`Members`] is the reader the other endpoints share.

use serde_json::{Map, Value};
use thiserror::Error;

use crate::contract::fine::window::{MsBounds, MsWindow};
use crate::contract::request::ProfileRequest;
use crate::contract::shape::ResultShape;
use crate::contract::tag_filter::{self, TagFilter};

/// Why a body was rejected (answered as 400 `INVALID_POST_DATA` with this text).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct RequestError(pub String);

impl RequestError {
    fn new(message: impl Into<String>) -> RequestError {
        RequestError(message.into())
    }
}

/// A ProfileTracing body the service accepted: the request, checked, its tag filter parsed, and
/// the service's own options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TracingRequest {
    /// The request (`app_service` is `None` when absent or empty).
    pub request: ProfileRequest,
    /// `tag_filter`, parsed.
    pub filter: TagFilter,
    /// Whether to answer diagnostics in `debug`.
    pub debug: bool,
    /// `result_shape` when the request names one.
    pub shape: Option<ResultShape>,
    /// `time_start_ms` / `time_end_ms` when the request names either: the millisecond window
    /// inside the seconds (see [`crate::contract::fine`]).
    pub window: Option<MsWindow>,
}

/// The members of a JSON object body, read with messages that name the member.
pub struct Members(Map<String, Value>);

/// The hint given for a bad or missing time.
pub const TIME_HINT: &str = "Unix seconds, non-zero";

impl Members {
    /// Parses `body` as a JSON object.
    pub fn parse(body: &[u8]) -> Result<Members, RequestError> {
        let value: Value = serde_json::from_slice(body)
            .map_err(|e| RequestError::new(format!("request body is not valid JSON: {e}")))?;
        match value {
            Value::Object(map) => Ok(Members(map)),
            _ => Err(RequestError::new("request body must be a JSON object")),
        }
    }

    /// A string member; absent and `null` are `None`.
    pub fn string(&self, key: &str) -> Result<Option<String>, RequestError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(RequestError::new(format!(
                "{key} must be a string, got {other}"
            ))),
        }
    }

    /// A string member that must not be empty when present; empty counts as absent.
    pub fn non_empty(&self, key: &str) -> Result<Option<String>, RequestError> {
        Ok(self.string(key)?.filter(|s| !s.is_empty()))
    }

    /// An integer member; `hint` says what it means in the error.
    pub fn int(&self, key: &str, hint: &str) -> Result<Option<i64>, RequestError> {
        let bad = |got: &dyn std::fmt::Display| {
            RequestError::new(format!("{key} must be an integer ({hint}), got {got}"))
        };
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => n.as_i64().map(Some).ok_or_else(|| bad(n)),
            Some(other) => Err(bad(other)),
        }
    }

    /// A boolean member (absent is `false`).
    pub fn flag(&self, key: &str) -> Result<bool, RequestError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(RequestError::new(format!(
                "{key} must be a boolean, got {other}"
            ))),
        }
    }

    /// A Unix-seconds member; 0 counts as absent (as the querier's validator has it).
    pub fn time(&self, key: &str) -> Result<Option<i64>, RequestError> {
        Ok(self.int(key, TIME_HINT)?.filter(|&t| t != 0))
    }

    /// `tag_filter`, parsed (absent is no filter), with its text.
    pub fn tag_filter(&self) -> Result<(String, TagFilter), RequestError> {
        let text = self.string("tag_filter")?.unwrap_or_default();
        let filter = tag_filter::parse(&text).map_err(|e| RequestError::new(e.to_string()))?;
        Ok((text, filter))
    }
}

/// The Gin validator's text for a missing required field (as DeepFlow's querier answers), with
/// our field name spelled out.
pub fn required(go_field: &str, json_field: &str, hint: &str) -> String {
    format!(
        "Key: 'Profile.{go_field}' Error:Field validation for '{go_field}' failed on the \
         'required' tag ({json_field} is required: {hint})"
    )
}

/// Checks an inclusive range: `time_start` must not be after `time_end`.
pub fn check_range(time_start: i64, time_end: i64) -> Result<(), RequestError> {
    if time_start > time_end {
        return Err(RequestError::new(format!(
            "time_start ({time_start}) is after time_end ({time_end}); the range is inclusive \
             at both ends, so time_start must be <= time_end"
        )));
    }
    Ok(())
}

/// Parses and checks a ProfileTracing body. Every missing required member is reported at
/// once, one per line, as the querier's validator does.
pub fn parse_tracing_body(body: &[u8]) -> Result<TracingRequest, RequestError> {
    let m = Members::parse(body)?;
    let app_service = m.non_empty("app_service")?;
    let language = m.non_empty("profile_language_type")?;
    let event_type = m.non_empty("profile_event_type")?;
    let time_start = m.time("time_start")?;
    let time_end = m.time("time_end")?;
    let mut missing = Vec::new();
    if language.is_none() {
        missing.push(required(
            "ProfileLanguageType",
            "profile_language_type",
            "e.g. \"eBPF\"",
        ));
    }
    if event_type.is_none() {
        missing.push(required(
            "ProfileEventType",
            "profile_event_type",
            "e.g. \"on-cpu\"",
        ));
    }
    if time_start.is_none() {
        missing.push(required("TimeStart", "time_start", TIME_HINT));
    }
    if time_end.is_none() {
        missing.push(required("TimeEnd", "time_end", TIME_HINT));
    }
    let (Some(language), Some(event_type), Some(time_start), Some(time_end)) =
        (language, event_type, time_start, time_end)
    else {
        return Err(RequestError::new(missing.join("\n")));
    };
    check_range(time_start, time_end)?;
    let (tag_filter, filter) = m.tag_filter()?;
    let max_kernel_stack_depth = m.int("max_kernel_stack_depth", "frames to keep, -1 = all")?;
    let debug = m.flag("debug")?;
    let shape = match m.string("result_shape")? {
        None => None,
        Some(name) => Some(ResultShape::parse(&name).ok_or_else(|| {
            RequestError::new(format!(
                "result_shape must be \"A\" or \"B\", got \"{name}\""
            ))
        })?),
    };
    let bounds = MsBounds {
        time_start_ms: m.int("time_start_ms", "Unix milliseconds, inclusive")?,
        time_end_ms: m.int("time_end_ms", "Unix milliseconds, exclusive")?,
    };
    let window = bounds
        .is_set()
        .then(|| MsWindow::narrow(bounds, time_start, time_end).map_err(RequestError))
        .transpose()?;
    let request = ProfileRequest {
        app_service,
        profile_language_type: language,
        profile_event_type: event_type,
        tag_filter,
        time_start,
        time_end,
        max_kernel_stack_depth,
    };
    // The form's and the snapshot store's rules, so a request means the same everywhere.
    let problems = request.validate();
    if !problems.is_empty() {
        let lines: Vec<String> = problems
            .iter()
            .map(|p| format!("{}: {}", p.field, p.message))
            .collect();
        return Err(RequestError::new(lines.join("\n")));
    }
    Ok(TracingRequest {
        request,
        filter,
        debug,
        shape,
        window,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(body: &str) -> TracingRequest {
        parse_tracing_body(body.as_bytes()).unwrap_or_else(|e| panic!("{body}: {e}"))
    }

    fn err(body: &str) -> String {
        match parse_tracing_body(body.as_bytes()) {
            Ok(r) => panic!("{body}: accepted {r:?}"),
            Err(e) => e.0,
        }
    }

    const BASE: &str = r#""profile_language_type":"eBPF","profile_event_type":"on-cpu""#;

    #[test]
    fn accepts_a_full_request() {
        let r = ok(&format!(
            r#"{{"app_service":"redis",{BASE},"time_start":1,"time_end":2,"tag_filter":"pod='a'","max_kernel_stack_depth":2,"debug":true,"group_by":"x","result_shape":"a"}}"#
        ));
        assert_eq!(r.request.app_service.as_deref(), Some("redis"));
        assert_eq!(r.request.kernel_depth(), 2);
        assert!(r.debug);
        assert_eq!(r.shape, Some(ResultShape::A));
        assert_eq!(r.filter.conditions.len(), 1);
    }

    #[test]
    fn defaults() {
        let r = ok(&format!(r#"{{{BASE},"time_start":1,"time_end":1}}"#));
        assert_eq!(r.request.app_service, None);
        assert_eq!(r.request.kernel_depth(), -1);
        assert!(!r.debug);
        assert_eq!(r.shape, None);
    }

    #[test]
    fn missing_fields_are_named() {
        let d = err(&format!(r#"{{"app_service":"a",{BASE},"time_end":2}}"#));
        assert!(d.starts_with(
            "Key: 'Profile.TimeStart' Error:Field validation for 'TimeStart' failed on the 'required' tag"
        ), "{d}");
        assert!(d.contains("time_start is required"), "{d}");
        let d = err(r#"{"time_start":1,"time_end":2}"#);
        assert!(
            d.contains("ProfileLanguageType") && d.contains("ProfileEventType"),
            "{d}"
        );
        let d = err(&format!(r#"{{{BASE},"time_start":0,"time_end":2}}"#));
        assert!(d.contains("TimeStart"), "{d}");
    }

    #[test]
    fn bad_types_and_ranges() {
        assert!(err("not json").contains("not valid JSON"));
        assert!(err("[1]").contains("JSON object"));
        assert!(err(&format!(r#"{{{BASE},"time_start":"1","time_end":2}}"#))
            .contains("time_start must be an integer"));
        assert!(err(&format!(r#"{{{BASE},"time_start":1.5,"time_end":2}}"#)).contains("integer"));
        assert!(
            err(&format!(r#"{{{BASE},"time_start":3,"time_end":2}}"#)).contains("after time_end")
        );
        assert!(err(&format!(
            r#"{{{BASE},"time_start":1,"time_end":2,"result_shape":"C"}}"#
        ))
        .contains("result_shape"));
        assert!(err(&format!(
            r#"{{{BASE},"time_start":1,"time_end":2,"debug":"yes"}}"#
        ))
        .contains("debug"));
        assert!(err(&format!(
            r#"{{{BASE},"time_start":1,"time_end":2,"tag_filter":"pod='x' OR 1=1"}}"#
        ))
        .contains("character 9"));
    }

    #[test]
    fn the_forms_rules_apply() {
        let e = err(&format!(
            r#"{{{BASE},"time_start":1,"time_end":2,"max_kernel_stack_depth":-5}}"#
        ));
        assert!(
            e.starts_with("max_kernel_stack_depth: ") && e.contains("-1 (keep all)"),
            "{e}"
        );
        for depth in [-1, 0, 7] {
            let r = ok(&format!(
                r#"{{{BASE},"time_start":1,"time_end":2,"max_kernel_stack_depth":{depth}}}"#
            ));
            assert_eq!(r.request.kernel_depth(), depth);
        }
        let e = err(
            r#"{"app_service":"Total","profile_language_type":"eBPF","profile_event_type":"off-cpu","time_start":1,"time_end":2}"#,
        );
        assert!(
            e.starts_with("app_service: ") && e.contains("on-CPU"),
            "{e}"
        );
        let e = err(&format!(r#"{{{BASE},"time_start":-5,"time_end":2}}"#));
        assert!(e.starts_with("time_start: "), "{e}");
        let e = err(
            r#"{"profile_language_type":" ","profile_event_type":"on-cpu","time_start":1,"time_end":2}"#,
        );
        assert!(e.starts_with("profile_language_type: "), "{e}");
    }

    #[test]
    fn the_viewers_request_is_what_the_service_reads() {
        let sent = ProfileRequest {
            app_service: Some("redis".into()),
            profile_language_type: "eBPF".into(),
            profile_event_type: "off-cpu".into(),
            tag_filter: "pod='web-1' AND k8s.label.app!='x'".into(),
            time_start: 10,
            time_end: 20,
            max_kernel_stack_depth: Some(3),
        };
        let body = serde_json::to_vec(&sent).unwrap();
        let read = parse_tracing_body(&body).unwrap();
        assert_eq!(read.request, sent);
        assert_eq!(read.filter.conditions.len(), 2);
    }
}
