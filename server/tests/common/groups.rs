//! Twelve pods of one process with known values, for the timeline's default grouping (no
//! `group_limit`): the ten with the largest sums over the range by name, the other two summed
//! as `other` in each bucket. Checked on SQLite (`explore_groups.rs`) and on ClickHouse
//! (`clickhouse.rs`).
//!
//! Pod `i` (1 to 12) has `100 i` in the first minute and `10 (13 - i)` in the second: the range
//! sums `90 i + 130` rank the pods by number, while in the second minute the two smallest pods
//! are the largest. So the ten named groups must be chosen by the sum over the range, not per
//! bucket.

use embers_model::contract::explore::TimelineAnswer;
use serde_json::{json, Value};

use super::{batch, with};

/// An hour-aligned base time (Unix seconds).
pub const H: i64 = 1_699_999_200;
/// How many pods, and how many are named in the answer (the default group limit).
pub const PODS: u64 = 12;
pub const NAMED: u64 = 10;

fn pod(i: u64) -> String {
    format!("pod-{i:02}")
}

/// `(minute, pod i) -> value` as described above.
fn value(minute: u64, i: u64) -> u64 {
    if minute == 0 {
        100 * i
    } else {
        10 * (13 - i)
    }
}

/// The ingest body: for each pod, one sample in each of the two minutes.
pub fn batches() -> Value {
    let mut out = Vec::new();
    for i in 1..=PODS {
        for minute in 0..2 {
            let time = H + 10 + 60 * minute as i64;
            let folded = format!("[t] web;main;work {}\n", value(minute, i));
            out.push(batch(
                "web",
                "on-cpu",
                time,
                json!({"pod": pod(i)}),
                &folded,
            ));
        }
    }
    json!({ "batches": out })
}

/// The timeline request over both minutes, grouped by pod, with the default group limit;
/// `extra` members are set on it.
pub fn request(extra: Value) -> Value {
    let base = json!({"app_service": "web", "profile_language_type": "eBPF",
        "profile_event_type": "on-cpu", "time_start": H, "time_end": H + 119, "interval": 60,
        "group_by": "pod"});
    with(base, extra)
}

/// What the answer must hold: per minute, `other` (pods 1 and 2 summed) and pods 3 to 12, by
/// time and then group name.
pub fn expected() -> Vec<(i64, String, u64)> {
    let unnamed = 1..=PODS - NAMED;
    let mut out = Vec::new();
    for minute in 0..2 {
        let time = H + 60 * minute as i64;
        let other = unnamed.clone().map(|i| value(minute, i)).sum();
        out.push((time, "other".to_owned(), other));
        for i in PODS - NAMED + 1..=PODS {
            out.push((time, pod(i), value(minute, i)));
        }
    }
    out
}

/// Checks a decoded answer against [`expected`].
pub fn check(answer: &TimelineAnswer) {
    assert_eq!(answer.interval, 60);
    assert_eq!(answer.columns, ["time", "pod", "value"]);
    let got: Vec<(i64, String, u64)> = answer
        .values
        .iter()
        .map(|r| (r.time, r.group.clone().unwrap_or_default(), r.value))
        .collect();
    assert_eq!(got, expected());
}
