//! The first lines of the summaries: what was asked, in words — the process, event type,
//! language, range (UTC) and tag filter — and the labels of a comparison's two sides. The
//! service's MCP tools and the viewer's *Export → Summary* both title with these, so the same
//! profile gets the same text from either.

use std::fmt::Write as _;
use std::time::{Duration, UNIX_EPOCH};

use crate::contract::event::is_instant;
use crate::contract::request::ProfileRequest;

/// `2026-11-22 09:00:00`, or `@<seconds>` for a time outside years 1970–9999.
pub fn utc(secs: i64) -> String {
    let time = u64::try_from(secs)
        .ok()
        .and_then(|s| UNIX_EPOCH.checked_add(Duration::from_secs(s)));
    let mut text = String::new();
    match time.map(|t| write!(text, "{}", humantime::format_rfc3339_seconds(t))) {
        Some(Ok(())) => text.trim_end_matches('Z').replacen('T', " ", 1),
        _ => format!("@{secs}"),
    }
}

/// `later` without its date when `earlier` has the same one.
fn after(earlier: &str, later: String) -> String {
    match (earlier.split_once(' '), later.split_once(' ')) {
        (Some((day, _)), Some((later_day, time))) if day == later_day => time.to_owned(),
        _ => later,
    }
}

/// `2026-11-22 09:00:00–09:20:00 UTC` (the end's date only when it differs).
pub fn range_label(time_start: i64, time_end: i64) -> String {
    let start = utc(time_start);
    let end = after(&start, utc(time_end));
    format!("{start}–{end} UTC")
}

/// `live at 2026-11-22 09:20:00 UTC`: the moment an instant (in-use) profile is read at.
pub fn live_label(time_end: i64) -> String {
    format!("live at {} UTC", utc(time_end))
}

/// When a profile of `event_type` over a range is: the range, or for an instant event type
/// ([`is_instant`]: each process's latest upload in it) the moment at its end,
/// `live at 2026-11-22 09:20:00 UTC (latest upload since 09:00:00)`.
pub fn when_label(event_type: &str, time_start: i64, time_end: i64) -> String {
    if !is_instant(event_type) {
        return range_label(time_start, time_end);
    }
    let end = utc(time_end);
    let since = after(&end, utc(time_start));
    format!("{} (latest upload since {since})", live_label(time_end))
}

/// When `request`'s profile is ([`when_label`]), or `None` for a profile that no query
/// produced (an imported file has no times).
fn request_range(request: &ProfileRequest) -> Option<String> {
    (request.time_start > 0 || request.time_end > 0).then(|| {
        when_label(
            &request.profile_event_type,
            request.time_start,
            request.time_end,
        )
    })
}

/// `api-gateway, on-cpu (eBPF), 2026-11-27 02:40:00–03:40:00 UTC[, where host='a']`.
pub fn profile_title(request: &ProfileRequest) -> String {
    let mut out = format!(
        "{}, {} ({})",
        request.app_service.as_deref().unwrap_or_default(),
        request.profile_event_type,
        request.profile_language_type
    );
    if let Some(range) = request_range(request) {
        let _ = write!(out, ", {range}");
    }
    if !request.tag_filter.is_empty() {
        let _ = write!(out, ", where {}", request.tag_filter);
    }
    out
}

/// `Snapshot <id> "<name>": <profile title>`.
pub fn snapshot_title(id: &str, name: &str, request: &ProfileRequest) -> String {
    format!("Snapshot {id} \"{name}\": {}", profile_title(request))
}

/// `Comparing <the comparison's profile title>`.
pub fn compare_title(comparison: &ProfileRequest) -> String {
    format!("Comparing {}", profile_title(comparison))
}

/// How a comparison's side is named: `snapshot <id> (<name>)` when it is a saved snapshot,
/// else its range (or `imported` without one).
pub fn side_label(request: &ProfileRequest, snapshot: Option<(&str, &str)>) -> String {
    match snapshot {
        Some((id, name)) => format!("snapshot {id} ({name})"),
        None => request_range(request).unwrap_or_else(|| "imported".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(start: i64, end: i64, filter: &str) -> ProfileRequest {
        ProfileRequest {
            app_service: Some("api-gateway".into()),
            profile_language_type: "eBPF".into(),
            profile_event_type: "on-cpu".into(),
            tag_filter: filter.into(),
            time_start: start,
            time_end: end,
            max_kernel_stack_depth: None,
        }
    }

    #[test]
    fn titles_say_what_was_asked_and_when() {
        let t = 1_700_000_000; // 2023-11-14 22:13:20 UTC
        assert_eq!(range_label(t, t + 600), "2023-11-14 22:13:20–22:23:20 UTC");
        assert_eq!(
            range_label(t, t + 7200),
            "2023-11-14 22:13:20–2023-11-15 00:13:20 UTC"
        );
        assert_eq!(utc(i64::MAX), format!("@{}", i64::MAX));
        assert_eq!(utc(-5), "@-5");
        assert_eq!(
            profile_title(&request(t, t + 60, "host='a'")),
            "api-gateway, on-cpu (eBPF), 2023-11-14 22:13:20–22:14:20 UTC, where host='a'"
        );
        assert_eq!(
            compare_title(&request(0, 0, "")),
            "Comparing api-gateway, on-cpu (eBPF)"
        );
        assert_eq!(
            snapshot_title("ABC", "before", &request(t, t, "")),
            "Snapshot ABC \"before\": api-gateway, on-cpu (eBPF), 2023-11-14 22:13:20–22:13:20 UTC"
        );
        assert_eq!(side_label(&request(0, 0, ""), None), "imported");
        let heap = ProfileRequest {
            profile_event_type: "inuse_space".into(),
            ..request(t, t + 60, "")
        };
        assert_eq!(
            profile_title(&heap),
            "api-gateway, inuse_space (eBPF), live at 2023-11-14 22:14:20 UTC \
             (latest upload since 22:13:20)"
        );
        assert_eq!(
            when_label("mem-inuse", t - 86_400, t),
            "live at 2023-11-14 22:13:20 UTC (latest upload since 2023-11-13 22:13:20)"
        );
        assert_eq!(
            side_label(&request(t, t, ""), Some(("ABC", "before"))),
            "snapshot ABC (before)"
        );
    }
}
