//! The list tools' texts: services per event type with shares, a timeline with its peak, the
//! snapshots. Bounded like the summaries (rows, names) and deterministic (the answers' own
//! order, which the contract's finishing steps fix).

use std::fmt::Write as _;

use embers_model::contract::event::TOTAL_APP_SERVICE;
use embers_model::contract::explore::{ServiceRow, TimelineAnswer};
use embers_model::contract::snapshot::SnapshotMeta;
use embers_model::summary::{MAX_NAME_CHARS, MAX_ROWS};
use embers_model::view::format::{format_percent, format_value, measure_name, ValueUnit};

use crate::http::snapshots::save::utc;

/// Services listed per event type unless asked otherwise.
const DEFAULT_SERVICE_ROWS: usize = 20;
/// Most timeline lines.
const MAX_BUCKET_LINES: usize = 200;

fn cut(name: &str) -> String {
    let mut out: String = name.chars().take(MAX_NAME_CHARS).collect();
    if out.len() < name.len() {
        out.push('…');
    }
    out
}

fn value(v: u64, event_type: &str) -> String {
    format_value(v, ValueUnit::for_event_type(event_type))
}

/// `rows` (a `services` answer, by value) grouped by event type and language, with shares of
/// their group's total.
pub fn services(rows: &[ServiceRow], range: &str, limit: Option<usize>) -> String {
    let limit = limit.unwrap_or(DEFAULT_SERVICE_ROWS).clamp(1, MAX_ROWS);
    let mut out = format!("Services with samples, {range}:\n");
    if rows.is_empty() {
        out.push_str("none: no samples in this range.\n");
        return out;
    }
    let mut groups: Vec<(&str, &str)> = Vec::new();
    for r in rows {
        let key = (
            r.profile_event_type.as_str(),
            r.profile_language_type.as_str(),
        );
        if !groups.contains(&key) {
            groups.push(key);
        }
    }
    for (event, language) in groups {
        let in_group =
            |r: &&ServiceRow| r.profile_event_type == event && r.profile_language_type == language;
        // The per-host `Total` graph counts every process again: named apart, not in the shares.
        let (hosts, members): (Vec<&ServiceRow>, Vec<&ServiceRow>) = rows
            .iter()
            .filter(in_group)
            .partition(|r| r.app_service == TOTAL_APP_SERVICE);
        let total = members.iter().fold(0u64, |t, r| t.saturating_add(r.value));
        let _ = writeln!(
            out,
            "\n{event} ({}), {language}: {} in {} services",
            measure_name(event),
            value(total, event),
            members.len()
        );
        for (i, r) in members.iter().take(limit).enumerate() {
            let _ = writeln!(
                out,
                "{:>3}. {:>6}  {:>10}  {}",
                i + 1,
                format_percent(r.value, total),
                value(r.value, event),
                cut(&r.app_service)
            );
        }
        if members.len() > limit {
            let _ = writeln!(out, "     … and {} more", members.len() - limit);
        }
        if let Some(total) = hosts.first() {
            let _ = writeln!(
                out,
                "     ({TOTAL_APP_SERVICE}, every host's whole graph, all processes again: {})",
                value(total.value, event)
            );
        }
    }
    out
}

/// A timeline as lines `time  [group]  value`, with its peak and quietest bucket.
pub fn timeline(answer: &TimelineAnswer, heading: &str, event_type: &str) -> String {
    let mut out = format!(
        "{heading}: {} per {} s bucket\n",
        measure_name(event_type),
        answer.interval
    );
    if answer.values.is_empty() {
        out.push_str("No samples in this range.\n");
        return out;
    }
    let peak = answer
        .values
        .iter()
        .max_by_key(|p| (p.value, std::cmp::Reverse(p.time)));
    let low = answer.values.iter().min_by_key(|p| (p.value, p.time));
    for (what, point) in [("Peak", peak), ("Quietest", low)] {
        if let Some(p) = point {
            let group = p
                .group
                .as_deref()
                .map(|g| format!(" ({})", cut(g)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "{what}: {} at {} UTC{group}",
                value(p.value, event_type),
                utc(p.time)
            );
        }
    }
    let shown = answer.values.len().min(MAX_BUCKET_LINES);
    if shown < answer.values.len() {
        let _ = writeln!(
            out,
            "The last {shown} of {} points (ask for a larger interval to see all):",
            answer.values.len()
        );
    }
    for p in &answer.values[answer.values.len() - shown..] {
        let group = p
            .group
            .as_deref()
            .map(|g| format!("  {}", cut(g)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{}{group}  {}",
            utc(p.time),
            value(p.value, event_type)
        );
    }
    out
}

/// The snapshots, newest first.
pub fn snapshots(all: &[SnapshotMeta]) -> String {
    if all.is_empty() {
        return "No snapshots are saved.\n".to_owned();
    }
    let mut out = format!("{} snapshots, newest first:\n", all.len());
    for meta in all.iter().take(MAX_ROWS) {
        let r = &meta.request;
        let _ = writeln!(
            out,
            "{}  saved {} UTC  \"{}\"  ({}, {}, {} bytes)",
            meta.id,
            utc(meta.saved_at),
            cut(&meta.name),
            cut(r.app_service.as_deref().unwrap_or("(no app_service)")),
            r.profile_event_type,
            meta.size
        );
    }
    if all.len() > MAX_ROWS {
        let _ = writeln!(out, "… and {} older ones", all.len() - MAX_ROWS);
    }
    out
}
