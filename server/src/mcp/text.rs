//! The list tools' texts: services per event type with shares, the fleet's top functions (or
//! what grew), a timeline with its peak, the snapshots. Bounded like the summaries (rows, names) and deterministic (the answers' own
//! order, which the contract's finishing steps fix).

use std::fmt::Write as _;

use embers_model::contract::event::TOTAL_APP_SERVICE;
use embers_model::contract::explore::{
    FunctionMetric, FunctionOrder, FunctionRow, FunctionsAnswer, PlaceValue, ServiceRow,
    TimelineAnswer,
};
use embers_model::contract::snapshot::SnapshotMeta;
use embers_model::summary::title::utc;
use embers_model::summary::{MAX_NAME_CHARS, MAX_ROWS};
use embers_model::view::format::{
    format_change, format_count, format_percent, format_value, measure_name, ValueUnit,
};

/// Services listed per event type unless asked otherwise.
const DEFAULT_SERVICE_ROWS: usize = 20;
/// Most timeline lines.
const MAX_BUCKET_LINES: usize = 200;
/// Places (services) named per function.
const PLACES_SHOWN: usize = 5;

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

/// What a functions list is about: its heading, event type, metric, order and, when
/// comparing, the baseline's label.
pub struct FunctionsAsked<'a> {
    /// What and when (`every service, on-cpu (eBPF), 2026-… UTC`).
    pub heading: &'a str,
    /// The event type, for units and the measure's name.
    pub event_type: &'a str,
    /// What ranks and is shown.
    pub metric: FunctionMetric,
    /// How the list is sorted.
    pub order: FunctionOrder,
    /// The baseline's range, when comparing.
    pub baseline: Option<&'a str>,
}

impl FunctionsAsked<'_> {
    fn of(&self, self_value: u64, total: u64) -> u64 {
        match self.metric {
            FunctionMetric::SelfValue => self_value,
            FunctionMetric::Total => total,
        }
    }

    fn metric_word(&self) -> &'static str {
        match self.metric {
            FunctionMetric::SelfValue => "self",
            FunctionMetric::Total => "total",
        }
    }
}

/// A `functions` answer as a numbered table: each function's self and total with shares of
/// every selected sample, or, against a baseline, its change in percentage points and its
/// share on both sides; below each, the services it runs in.
pub fn functions(answer: &FunctionsAnswer, asked: &FunctionsAsked) -> String {
    let measure = measure_name(asked.event_type);
    let what = match (asked.baseline, asked.order) {
        (None, _) => "Top functions",
        (Some(_), FunctionOrder::PlaceChange) => "What grew inside a service",
        (Some(_), _) => "What grew",
    };
    let mut out = format!(
        "{what}, by {} {measure}: {}\n",
        asked.metric_word(),
        asked.heading
    );
    let total = value(answer.value, asked.event_type);
    match (asked.baseline, answer.baseline_value) {
        (Some(label), Some(base)) => {
            let _ = writeln!(
                out,
                "Baseline: {label}, {} of {measure}. Comparison: {total}.",
                value(base, asked.event_type)
            );
            out.push_str(if base == 0 {
                "The baseline has no samples: every change is the function's whole share now.\n"
            } else {
                "Shares are of each side's own total, so ranges of different length compare fairly.\n"
            });
        }
        _ => {
            let _ = writeln!(out, "Total: {total} of {measure}.");
        }
    }
    if let Some(c) = &answer.coverage {
        let _ = writeln!(out, "Note: {}", c.note);
    }
    if answer.values.is_empty() {
        out.push_str("No functions: no samples match.\n");
        return out;
    }
    let _ = writeln!(
        out,
        "{} functions; {} to {} below.",
        format_count(answer.rows),
        answer.offset + 1,
        answer.offset + answer.values.len() as u64
    );
    function_header(&mut out, asked);
    for (i, row) in answer.values.iter().enumerate() {
        function_line(&mut out, answer, asked, i + 1, row);
    }
    out
}

fn function_header(out: &mut String, asked: &FunctionsAsked) {
    let metric = asked.metric_word();
    if asked.baseline.is_none() {
        let _ = writeln!(
            out,
            "{:>3}  {:>6} {:>10}    {:>6} {:>10}  function",
            "#", "self%", "self", "total%", "total"
        );
        return;
    }
    let change = match asked.order {
        FunctionOrder::PlaceChange => "the largest change of its share inside one service",
        _ => "the change of its share of every selected sample",
    };
    let _ = writeln!(
        out,
        "change: {change}; then its share of every selected sample, baseline → comparison, \
         and its {metric} value now."
    );
    let _ = writeln!(
        out,
        "{:>3}  {:>8}  {:>6} → {:<6}  {:>10}  function",
        "#", "change", "before", "now", metric
    );
}

fn function_line(
    out: &mut String,
    answer: &FunctionsAnswer,
    asked: &FunctionsAsked,
    n: usize,
    row: &FunctionRow,
) {
    let ev = asked.event_type;
    let name = cut(&row.function);
    match (answer.baseline_value, row.baseline_self, row.baseline_total) {
        (Some(base_all), Some(b_self), Some(b_total)) => {
            let change = match asked.order {
                FunctionOrder::PlaceChange => row.place_change,
                _ => row.change,
            };
            let now = asked.of(row.self_value, row.total);
            let _ = writeln!(
                out,
                "{n:>3}. {:>8}  {:>6} → {:<6}  {:>10}  {name}",
                format_change(change.unwrap_or(0.0) / 100.0),
                format_percent(asked.of(b_self, b_total), base_all),
                format_percent(now, answer.value),
                value(now, ev)
            );
        }
        _ => {
            let _ = writeln!(
                out,
                "{n:>3}. {:>6} {:>10}    {:>6} {:>10}  {name}",
                format_percent(row.self_value, answer.value),
                value(row.self_value, ev),
                format_percent(row.total, answer.value),
                value(row.total, ev)
            );
        }
    }
    let places: Vec<String> = row
        .places
        .iter()
        .take(PLACES_SHOWN)
        .map(|p| place(p, asked))
        .collect();
    let more = (row.place_count as usize).saturating_sub(places.len());
    let _ = writeln!(
        out,
        "       in {}{}",
        places.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    );
}

/// `api-gateway 1.2 s`, or `api-gateway +45 pp (1.2 s)` when comparing.
fn place(p: &PlaceValue, asked: &FunctionsAsked) -> String {
    let v = value(asked.of(p.self_value, p.total), asked.event_type);
    let group = p
        .group
        .as_deref()
        .map(|g| format!(" [{}]", cut(g)))
        .unwrap_or_default();
    match p.change {
        Some(change) => format!(
            "{}{group} {} ({v})",
            cut(&p.app_service),
            format_change(change / 100.0)
        ),
        None => format!("{}{group} {v}", cut(&p.app_service)),
    }
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
