//! Time helpers on the browser clock: `datetime-local` values ↔ Unix seconds, and presets.

use js_sys::Date;
use wasm_bindgen::JsValue;

/// Relative time ranges offered in the form: (label, seconds back from now).
pub const PRESETS: [(&str, i64); 5] = [
    ("Last 5 min", 300),
    ("Last 15 min", 900),
    ("Last 1 h", 3600),
    ("Last 6 h", 21_600),
    ("Last 24 h", 86_400),
];

/// Now, in Unix seconds.
pub fn now_secs() -> i64 {
    (Date::now() / 1000.0) as i64
}

/// Now, in milliseconds (for elapsed-time displays).
pub fn now_ms() -> f64 {
    Date::now()
}

/// Parses a `datetime-local` value (`2026-11-22T05:30` or with seconds) as local time.
pub fn parse_local(value: &str) -> Option<i64> {
    if value.trim().is_empty() {
        return None;
    }
    let ms = Date::new(&JsValue::from_str(value)).get_time();
    ms.is_finite().then(|| (ms / 1000.0) as i64)
}

/// Formats Unix seconds as a `datetime-local` value in local time, to the second.
pub fn format_local(secs: i64) -> String {
    let d = Date::new(&JsValue::from_f64(secs as f64 * 1000.0));
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        d.get_full_year(),
        d.get_month() + 1,
        d.get_date(),
        d.get_hours(),
        d.get_minutes(),
        d.get_seconds()
    )
}

/// A range in local time for headings: `14:02–15:02`, or with dates when it spans days
/// (`Nov 22 14:02 – Nov 23 15:02`).
pub fn format_span(start: i64, end: i64) -> String {
    let date = |secs: i64| Date::new(&JsValue::from_f64(secs as f64 * 1000.0));
    let (a, b) = (date(start), date(end));
    let hm = |d: &Date| format!("{:02}:{:02}", d.get_hours(), d.get_minutes());
    let day = |d: &Date| {
        const MONTHS: [&str; 12] = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        format!(
            "{} {}",
            MONTHS[(d.get_month() as usize).min(11)],
            d.get_date()
        )
    };
    if day(&a) == day(&b) {
        format!("{} {}–{}", day(&a), hm(&a), hm(&b))
    } else {
        format!("{} {} – {} {}", day(&a), hm(&a), day(&b), hm(&b))
    }
}

/// A time in local time to the second, for tooltips: `14:02:30`.
pub fn format_clock(secs: i64) -> String {
    let d = Date::new(&JsValue::from_f64(secs as f64 * 1000.0));
    format!(
        "{:02}:{:02}:{:02}",
        d.get_hours(),
        d.get_minutes(),
        d.get_seconds()
    )
}

/// The browser's offset from UTC at `secs`, in seconds east of UTC.
pub fn utc_offset_secs(secs: i64) -> i64 {
    let d = Date::new(&JsValue::from_f64(secs as f64 * 1000.0));
    -(d.get_timezone_offset() as i64) * 60
}
