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
