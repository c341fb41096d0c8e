//! The functions endpoints' side of `backends_bench`: top functions over the whole day (the
//! target: 24 h of 10M samples in at most 200 ms, of 1M in at most 50 ms), one process's, a
//! tag-filtered question, what grew (the day's second half against its first), and the
//! hottest function's timeline.

use std::time::Duration;

use embers_model::contract::explore::{parse_function_timeline_body, parse_functions_body};
use embers_server::store::Store;

use super::{DAY, T0};

/// The bench's fastest-of-several runner.
pub type Best<'a> =
    &'a dyn Fn(&mut dyn FnMut() -> Result<String, String>) -> Result<(Duration, String), String>;

/// Runs `f` with `best` and prints `label: time (what)`.
fn timed(
    label: &str,
    best: Best<'_>,
    mut f: impl FnMut() -> Result<String, String>,
) -> Result<(), String> {
    let (took, what) = best(&mut f)?;
    println!("  {label}: {:.1} ms ({what})", took.as_secs_f64() * 1000.0);
    Ok(())
}

/// Times the functions questions on `store`.
pub fn queries(store: &Store, best: Best<'_>) -> Result<(), String> {
    let day = format!(
        r#""time_start": {T0}, "time_end": {}, "profile_event_type": "on-cpu""#,
        T0 + DAY - 1
    );
    let ask = |extra: &str| {
        let q = parse_functions_body(format!("{{{day}{extra}}}").as_bytes())
            .map_err(|e| e.0.to_string())?;
        let a = store.functions(&q).map_err(|e| e.to_string())?;
        Ok::<_, String>((a.rows, a.values.first().map(|r| r.function.clone())))
    };
    let hottest = ask("")?.1.unwrap_or_default();
    for (label, extra) in [
        ("functions 24 h (top 100 of all)", ""),
        ("functions 24 h, metric total", r#","metric": "total""#),
        ("functions 24 h, app-0", r#","app_service": "app-0""#),
        (
            "functions 24 h, host='node-3'",
            r#","tag_filter": "host='node-3'""#,
        ),
    ] {
        timed(label, best, || {
            ask(extra)
                .map(|(rows, top)| format!("{rows} functions, top {}", top.unwrap_or_default()))
        })?;
    }
    let half = T0 + DAY / 2;
    let grew = format!(
        r#","time_start": {half}, "baseline_time_start": {T0}, "baseline_time_end": {}, "order_by": "change""#,
        half - 1
    );
    timed("what grew (12 h against the 12 h before)", best, || {
        ask(&grew).map(|(rows, top)| format!("{rows} functions, top {}", top.unwrap_or_default()))
    })?;
    let body = format!(
        r#"{{"time_start": {T0}, "time_end": {}, "profile_language_type": "eBPF", "profile_event_type": "on-cpu", "app_service": "app-0", "function": {}}}"#,
        T0 + DAY - 1,
        serde_json::Value::String(hottest.clone())
    );
    let q = parse_function_timeline_body(body.as_bytes()).map_err(|e| e.0.to_string())?;
    timed(
        &format!("function timeline 24 h, app-0, {hottest}"),
        best,
        || {
            store
                .function_timeline(&q)
                .map(|a| format!("{} points", a.values.len()))
                .map_err(|e| e.to_string())
        },
    )
}
