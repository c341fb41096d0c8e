//! `POST /v1/profile/ProfileTracing`: validate the request, query the store (or forward it
//! upstream), build the tree and answer shape A or B.
//!
//! Shape B is the default; shape A is answered when the server runs with `--result-shape a` or
//! the request says `"result_shape": "A"` (or `"a"`).

use std::time::Instant;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use embers_model::encode::ResultShape;
use serde_json::{json, Map, Value};

use crate::error::{envelope, SUCCESS};
use crate::store::{ProfileQuery, QueryError, StoreError};
use crate::{tag_filter, tree, AppState, Error};

/// A validated ProfileTracing request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracingRequest {
    /// What to read.
    pub query: ProfileQuery,
    /// `max_kernel_stack_depth` (−1 = keep all).
    pub max_kernel_stack_depth: i64,
    /// Whether to answer diagnostics in `debug`.
    pub debug: bool,
    /// `result_shape` when the request names one.
    pub shape: Option<ResultShape>,
}

/// The Gin validator's text for a missing required field (as DeepFlow's querier answers), with
/// our field name spelled out.
fn required(go_field: &str, json_field: &str, hint: &str) -> String {
    format!(
        "Key: 'Profile.{go_field}' Error:Field validation for '{go_field}' failed on the \
         'required' tag ({json_field} is required: {hint})"
    )
}

fn optional_string(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, Error> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(Error::invalid(format!(
            "{key} must be a string, got {other}"
        ))),
    }
}

fn optional_int(obj: &Map<String, Value>, key: &str, hint: &str) -> Result<Option<i64>, Error> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .map(Some)
            .ok_or_else(|| Error::invalid(format!("{key} must be an integer ({hint}), got {n}"))),
        Some(other) => Err(Error::invalid(format!(
            "{key} must be an integer ({hint}), got {other}"
        ))),
    }
}

/// Parse and validate a request body.
pub fn parse_request(body: &[u8]) -> Result<TracingRequest, Error> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| Error::invalid(format!("request body is not valid JSON: {e}")))?;
    let Value::Object(obj) = value else {
        return Err(Error::invalid("request body must be a JSON object"));
    };

    let app_service = optional_string(&obj, "app_service")?.filter(|s| !s.is_empty());
    let language = optional_string(&obj, "profile_language_type")?.filter(|s| !s.is_empty());
    let event_type = optional_string(&obj, "profile_event_type")?.filter(|s| !s.is_empty());
    let time_hint = "Unix seconds, non-zero";
    let time_start = optional_int(&obj, "time_start", time_hint)?.filter(|&t| t != 0);
    let time_end = optional_int(&obj, "time_end", time_hint)?.filter(|&t| t != 0);

    // Report every missing required field at once, one per line, as the Gin validator does.
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
        missing.push(required("TimeStart", "time_start", time_hint));
    }
    if time_end.is_none() {
        missing.push(required("TimeEnd", "time_end", time_hint));
    }
    let (Some(language), Some(event_type), Some(time_start), Some(time_end)) =
        (language, event_type, time_start, time_end)
    else {
        return Err(Error::invalid(missing.join("\n")));
    };
    if time_start > time_end {
        return Err(Error::invalid(format!(
            "time_start ({time_start}) is after time_end ({time_end}); the range is inclusive \
             at both ends, so time_start must be <= time_end"
        )));
    }

    let filter_text = optional_string(&obj, "tag_filter")?.unwrap_or_default();
    let filter = tag_filter::parse(&filter_text).map_err(|e| Error::invalid(e.to_string()))?;
    let max_kernel_stack_depth =
        optional_int(&obj, "max_kernel_stack_depth", "frames to keep, -1 = all")?.unwrap_or(-1);
    let debug = match obj.get("debug") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(Error::invalid(format!(
                "debug must be a boolean, got {other}"
            )))
        }
    };
    let shape = match optional_string(&obj, "result_shape")? {
        None => None,
        Some(name) => Some(tree::parse_shape(&name).ok_or_else(|| {
            Error::invalid(format!(
                "result_shape must be \"A\" or \"B\", got \"{name}\""
            ))
        })?),
    };

    Ok(TracingRequest {
        query: ProfileQuery {
            app_service,
            language,
            event_type,
            time_start,
            time_end,
            filter,
        },
        max_kernel_stack_depth,
        debug,
        shape,
    })
}

/// The handler.
pub async fn handle(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match super::read_body(body, state.limits.query) {
        Ok(body) => body,
        Err(e) => return e.into_response(),
    };
    if let Some(upstream) = &state.upstream {
        return upstream.forward(&headers, body).await;
    }
    match answer(&state, &body).await {
        Ok(response) => response,
        Err(e) => e.into_response(),
    }
}

/// The querier's `debug` member for our one statement list.
fn diagnostics(statements: &[String], query_time: &str, format_time: &str) -> Value {
    json!({
        "querier_debug": statements.iter().map(|sql| json!({
            "ip": "embedded-sqlite",
            "sql": sql,
            "sql_CH": sql,
            "query_time": query_time,
            "query_uuid": "",
            "error": "",
        })).collect::<Vec<_>>(),
        "format_time": format_time,
    })
}

async fn answer(state: &AppState, body: &[u8]) -> Result<Response, Error> {
    let req = parse_request(body)?;
    let shape = req.shape.unwrap_or(state.default_shape);
    let store = state.store.clone();
    let debug = req.debug;
    let task = tokio::task::spawn_blocking(move || {
        let out = store.query(&req.query)?;
        let started = Instant::now();
        let kernel_depth = if req.query.language.eq_ignore_ascii_case("eBPF") {
            req.max_kernel_stack_depth
        } else {
            -1
        };
        let profile = tree::build_profile(
            &out.root,
            out.stacks.iter().map(|(s, v)| (s.as_str(), *v)),
            kernel_depth,
        );
        let result = tree::encode(profile.as_ref(), shape, &req.query.event_type);
        let format_time = format!("{:?}", started.elapsed());
        Ok::<_, QueryError>((result, out, format_time))
    })
    .await;

    let fail = |detail: String, statements: &[String]| {
        let e = Error::internal(detail).with_shape(shape);
        if debug {
            e.with_debug(diagnostics(statements, "", ""))
        } else {
            e
        }
    };
    match task {
        Err(join) => Err(fail(format!("query task failed: {join}"), &[])),
        Ok(Err(e @ (QueryError::NoAppService | QueryError::TooManyAppServices(_)))) => {
            Err(Error::invalid(e.to_string()))
        }
        Ok(Err(QueryError::Store(StoreError::Invalid(msg)))) => Err(fail(msg, &[])),
        Ok(Err(QueryError::Store(e))) => Err(fail(e.to_string(), &[])),
        Ok(Ok((result, out, format_time))) => {
            let debug_value = if debug {
                diagnostics(&out.statements, &format!("{:?}", out.elapsed), &format_time)
            } else {
                Value::Null
            };
            Ok(envelope(StatusCode::OK, SUCCESS, "", result, debug_value))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(body: &str) -> TracingRequest {
        parse_request(body.as_bytes()).unwrap_or_else(|e| panic!("{body}: {e}"))
    }

    fn err(body: &str) -> String {
        match parse_request(body.as_bytes()) {
            Ok(r) => panic!("{body}: accepted {r:?}"),
            Err(e) => {
                assert_eq!(e.status(), StatusCode::BAD_REQUEST);
                e.description().to_owned()
            }
        }
    }

    const BASE: &str = r#""profile_language_type":"eBPF","profile_event_type":"on-cpu""#;

    #[test]
    fn accepts_a_full_request() {
        let r = ok(&format!(
            r#"{{"app_service":"redis",{BASE},"time_start":1,"time_end":2,"tag_filter":"pod='a'","max_kernel_stack_depth":2,"debug":true,"group_by":"x","result_shape":"a"}}"#
        ));
        assert_eq!(r.query.app_service.as_deref(), Some("redis"));
        assert_eq!(r.max_kernel_stack_depth, 2);
        assert!(r.debug);
        assert_eq!(r.shape, Some(ResultShape::A));
        assert_eq!(r.query.filter.conditions.len(), 1);
    }

    #[test]
    fn defaults() {
        let r = ok(&format!(r#"{{{BASE},"time_start":1,"time_end":1}}"#));
        assert_eq!(r.query.app_service, None);
        assert_eq!(r.max_kernel_stack_depth, -1);
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
}
