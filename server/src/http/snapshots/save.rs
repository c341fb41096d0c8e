//! `POST /v1/profile/snapshots`: check that the body carries a sound request and a successful
//! ProfileTracing answer the model decodes, then store the answer's bytes exactly as they came
//! (they are borrowed from the body, never re-serialised). A save takes one of
//! `--max-concurrent-saves` turns before its body is read, and must fit the snapshot caps
//! ([`super::quota`]).

use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use embers_model::contract::envelope::SUCCESS;
use embers_model::contract::event::TOTAL_APP_SERVICE;
use embers_model::contract::request::ProfileRequest;
use embers_model::contract::snapshot::{SnapshotMeta, SnapshotSave, SNAPSHOT_MEMBER};
use embers_model::summary::title::range_label;
use embers_model::wire::decode_response_table;
use serde_json::Value;

use crate::api_types::Answer;
use crate::error::envelope;
use crate::error::Error;
use crate::http::state::AppState;
use crate::limits::writes::{Refused, SaveBytes, WriteGate};
use crate::store::{NewSnapshot, Store};

/// Longest name kept, in characters.
const MAX_NAME_CHARS: usize = 200;

/// The handler.
#[utoipa::path(
    post,
    path = "/v1/profile/snapshots",
    tag = "snapshots",
    summary = "Save a ProfileTracing answer as a snapshot",
    description = "The answer is checked (a successful answer of either shape that Embers decodes, \
                   for a valid request) and kept byte for byte; retention never removes it \
                   (--snapshot-ttl does, when set).",
    request_body(content = SnapshotSave, content_type = "application/json"),
    responses((status = 200, description = "The new snapshot's metadata.", body = Answer<SnapshotMeta>)),
)]
pub async fn handle(State(state): State<AppState>, body: SaveBytes) -> Result<Response, Error> {
    let limit = state.limits.snapshot;
    let (turn, body) = match body.0 {
        Ok(read) => read,
        Err(Refused::Body(r)) if r.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return Err(too_large(limit))
        }
        Err(refused) => return Err(refused.into_error(limit)),
    };
    let (store, gate) = (state.store.clone(), state.writes.clone());
    // Parsing and decoding tens of megabytes is blocking work; the turn ends with it.
    let meta = crate::blocking::run("snapshot", move || {
        let _turn = turn;
        save(&store, &gate, &body, limit, now_secs())
    })
    .await??;
    Ok(envelope(StatusCode::OK, SUCCESS, "", meta, Value::Null))
}

/// 413 naming the limit (the body may exceed it by [`super::BODY_HEADROOM`] for the request).
pub fn too_large(limit: usize) -> Error {
    Error::payload_too_large(format!(
        "the answer is too large to save as a snapshot: the limit is {limit} bytes ({:.1} MiB, \
         set with --max-snapshot-bytes)",
        limit as f64 / (1024.0 * 1024.0)
    ))
}

/// Checks `body` and stores its answer, if it fits the snapshot caps; what was stored.
fn save(
    store: &Store,
    gate: &WriteGate,
    body: &[u8],
    limit: usize,
    now: i64,
) -> Result<SnapshotMeta, Error> {
    let save: SnapshotSave<'_> = serde_json::from_slice(body).map_err(|e| {
        Error::invalid(format!(
            "the body is not a snapshot to save ({{\"request\": {{...}}, \"response\": {{...}}, \
             \"name\"?: \"...\"}}): {e}"
        ))
    })?;
    let response = save.response.get();
    if response.len() > limit {
        return Err(too_large(limit));
    }
    check_request(&save.request)?;
    let root = check_response(response, save.request.app_service.is_none())?;
    let name = match save.name.as_deref().map(str::trim) {
        Some(name) if !name.is_empty() => check_name(name)?,
        _ => default_name(&save.request, root.as_deref()),
    };
    gate.with_snapshot_quota(|caps| {
        super::quota::check(store, caps, response.len() as u64)?;
        store
            .save_snapshot(&NewSnapshot {
                name: &name,
                request: &save.request,
                response: response.as_bytes(),
                saved_at: now,
            })
            .map_err(Error::from_store)
    })
}

fn check_request(request: &ProfileRequest) -> Result<(), Error> {
    let problems: Vec<String> = request
        .validate()
        .into_iter()
        .map(|e| format!("{}: {}", e.field, e.message))
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "`request` is not a sound ProfileTracing request: {}",
            problems.join(" ")
        )))
    }
}

/// Checks that `response` is a successful answer the model decodes and can carry a snapshot
/// member in front; with `want_root`, the profile's root name, if it has one.
fn check_response(response: &str, want_root: bool) -> Result<Option<String>, Error> {
    let not_an_answer = |why: String| {
        Error::invalid(format!(
            "`response` is not a successful ProfileTracing answer: {why}"
        ))
    };
    // serde would also read an envelope written as an array; the member goes into an object.
    if !response.starts_with('{') {
        return Err(not_an_answer("it is not a JSON object".into()));
    }
    // Decoding to the node table refuses whatever the viewer's decoder refuses; the tree is
    // built from it only for a name (at 1M nodes it would double the save's peak memory).
    let decoded = decode_response_table(200, response.as_bytes())
        .map_err(|e| not_an_answer(e.to_string()))?;
    // Only a body mentioning the member is parsed a second time.
    if response.contains(&format!("\"{SNAPSHOT_MEMBER}\"")) && has_snapshot_member(response) {
        return Err(Error::invalid(format!(
            "`response` already has a \"{SNAPSHOT_MEMBER}\" member (is it a saved snapshot?); \
             save the ProfileTracing answer itself"
        )));
    }
    if !want_root {
        return Ok(None);
    }
    let profile = decoded.build().profile;
    Ok((profile.node_count() > 0).then(|| profile.name(0).to_owned()))
}

fn has_snapshot_member(response: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Probe {
        snapshot: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_str::<Probe>(response).is_ok_and(|p| p.snapshot.is_some())
}

fn check_name(name: &str) -> Result<String, Error> {
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(Error::invalid(format!(
            "`name` is longer than {MAX_NAME_CHARS} characters"
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(Error::invalid(
            "`name` contains control characters (line breaks, tabs, ...)",
        ));
    }
    Ok(name.to_owned())
}

/// `api-gateway, 2026-11-22 09:00:00–09:20:00 UTC` (the end's date only when it differs).
/// Without an `app_service` the query named the root itself, so the root's name is used.
pub fn default_name(request: &ProfileRequest, root: Option<&str>) -> String {
    let named = |s: &&str| !s.trim().is_empty();
    let who = request
        .app_service
        .as_deref()
        .filter(named)
        .or(root.filter(named))
        .unwrap_or(TOTAL_APP_SERVICE);
    format!(
        "{who}, {}",
        range_label(request.time_start, request.time_end)
    )
}

fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(app: Option<&str>, start: i64, end: i64) -> ProfileRequest {
        ProfileRequest {
            app_service: app.map(str::to_owned),
            profile_language_type: "eBPF".into(),
            profile_event_type: "on-cpu".into(),
            time_start: start,
            time_end: end,
            ..ProfileRequest::default()
        }
    }

    #[test]
    fn default_names_say_what_and_when() {
        let t = 1_700_000_000; // 2023-11-14 22:13:20 UTC
        assert_eq!(
            default_name(&request(Some("redis"), t, t + 600), None),
            "redis, 2023-11-14 22:13:20–22:23:20 UTC"
        );
        assert_eq!(
            default_name(&request(None, t, t + 7200), Some("a, b")),
            "a, b, 2023-11-14 22:13:20–2023-11-15 00:13:20 UTC"
        );
        assert_eq!(
            default_name(&request(None, t, t), None),
            "Total, 2023-11-14 22:13:20–22:13:20 UTC"
        );
    }

    #[test]
    fn names_are_bounded_and_printable() {
        assert_eq!(check_name("before the fix").expect("ok"), "before the fix");
        assert!(check_name(&"x".repeat(MAX_NAME_CHARS + 1)).is_err());
        assert!(check_name("a\nb").is_err());
    }

    #[test]
    fn responses_must_be_successful_objects_without_a_snapshot_member() {
        let ok = r#"{"OPT_STATUS":"SUCCESS","DESCRIPTION":"","result":null}"#;
        assert_eq!(check_response(ok, true).expect("ok"), None);
        for bad in [
            r#"["SUCCESS","",null]"#,
            r#"{"OPT_STATUS":"FAIL","DESCRIPTION":"boom","result":null}"#,
            r#"{"OPT_STATUS":"SUCCESS","result":42}"#,
            r#"{"snapshot":{},"OPT_STATUS":"SUCCESS","result":null}"#,
        ] {
            let e = check_response(bad, true).expect_err(bad);
            assert_eq!(e.status(), StatusCode::BAD_REQUEST, "{bad}");
        }
        // The word alone, in a frame name, is fine.
        let named = r#"{"OPT_STATUS":"SUCCESS","result":[{"profile_location_str":"\"snapshot\"","node_id":"","parent_node_id":"-1","self_value":1,"total_value":1}]}"#;
        assert_eq!(
            check_response(named, true).expect("ok").as_deref(),
            Some("\"snapshot\"")
        );
        assert_eq!(check_response(named, false).expect("ok"), None);
    }
}
