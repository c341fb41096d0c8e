//! Human formatting of values, percentages and labels.

use std::borrow::Cow;

use crate::contract::event::{measure, quantity, Measure, Quantity};
use crate::tree::symbol::kind_prefix_len;

/// What the numbers of a profile are: the contract's [`Quantity`], the one mapping from event
/// types to units that the service stores by.
pub type ValueUnit = Quantity;

impl Quantity {
    /// The unit that an event type's values really are in.
    pub fn for_event_type(event_type: &str) -> ValueUnit {
        quantity(event_type)
    }

    /// Whether values are counts, which name what they count ("1,234 samples").
    pub fn is_count(self) -> bool {
        matches!(
            self,
            Quantity::Samples | Quantity::Objects | Quantity::Goroutines | Quantity::Events
        )
    }
}

/// What a profile's values mean, in words, for the status line and tooltips.
pub fn measure_name(event_type: &str) -> &'static str {
    match measure(event_type) {
        Measure::CpuTime => "CPU time",
        Measure::WaitingTime => "waiting time",
        Measure::Allocated => "allocated bytes",
        Measure::InUse => "bytes in use",
        Measure::CpuSamples => "CPU samples",
        Measure::WallSamples => "wall-clock samples",
        Measure::AllocatedObjects => "allocated objects",
        Measure::ObjectsInUse => "objects in use",
        Measure::Goroutines => "goroutines",
        Measure::LockTime => "lock wait time",
        Measure::BlockedTime => "blocked time",
        Measure::Contentions => "lock contentions",
        Measure::BlockingEvents => "blocking events",
        Measure::Other => "value",
    }
}

/// Formats a value with a unit picked for its size: `850 µs`, `12.3 ms`, `4.56 s`, `2.1 min`;
/// `512 B`, `3.4 KiB`, `1.2 MiB`, `2.0 GiB`; `850 ns`; counts with their noun (`1,234 samples`).
pub fn format_value(value: u64, unit: ValueUnit) -> String {
    let count = |one: &str, many: &str| {
        format!(
            "{} {}",
            format_count(value),
            if value == 1 { one } else { many }
        )
    };
    match unit {
        ValueUnit::Microseconds => format_micros(value),
        ValueUnit::Nanoseconds if value < 1_000 => format!("{value} ns"),
        ValueUnit::Nanoseconds => format_micros(value / 1_000),
        ValueUnit::Bytes => format_bytes(value),
        ValueUnit::Samples => count("sample", "samples"),
        ValueUnit::Objects => count("object", "objects"),
        ValueUnit::Goroutines => count("goroutine", "goroutines"),
        ValueUnit::Events => count("event", "events"),
    }
}

fn format_micros(us: u64) -> String {
    let v = us as f64;
    if us < 1_000 {
        format!("{us} µs")
    } else if us < 1_000_000 {
        format!("{} ms", three_digits(v / 1e3))
    } else if us < 120_000_000 {
        format!("{} s", three_digits(v / 1e6))
    } else if us < 7_200_000_000 {
        format!("{} min", three_digits(v / 6e7))
    } else {
        format!("{} h", three_digits(v / 3.6e9))
    }
}

fn format_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if b < 1024 {
        return format!("{b} B");
    }
    let mut v = b as f64 / 1024.0;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    format!("{} {}", three_digits(v), UNITS[i])
}

/// Three significant digits, without trailing zeros: 1.23, 12.3, 123.
fn three_digits(v: f64) -> String {
    let s = if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `part` as a percentage of `whole`: `42.1%`, `0.05%`, `<0.01%`, `100%`.
pub fn format_percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "–".to_string();
    }
    let p = part as f64 * 100.0 / whole as f64;
    if part == 0 {
        "0%".to_string()
    } else if p < 0.01 {
        "<0.01%".to_string()
    } else if p < 10.0 {
        format!("{}%", three_digits(p))
    } else {
        format!("{}%", trim_zero(format!("{p:.1}")))
    }
}

fn trim_zero(s: String) -> String {
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// A change of share in percentage points: `+3.2 pp`, `−0.4 pp`, `±0 pp` (for tiny changes).
pub fn format_change(change: f64) -> String {
    let pp = change * 100.0;
    if !pp.is_finite() || pp.abs() < 0.05 {
        return "±0 pp".to_string();
    }
    let sign = if pp > 0.0 { "+" } else { "−" };
    let v = pp.abs();
    if v >= 10.0 {
        format!("{sign}{v:.0} pp")
    } else {
        format!("{sign}{v:.1} pp")
    }
}

/// A relative change: `+25%`, `−60%`, `new` when the old value is 0.
pub fn format_ratio(old: u64, new: u64) -> String {
    if old == 0 {
        return if new == 0 {
            "±0%".into()
        } else {
            "new".into()
        };
    }
    let pct = (new as f64 - old as f64) * 100.0 / old as f64;
    if pct.abs() < 0.5 {
        "±0%".into()
    } else if pct > 0.0 {
        format!("+{pct:.0}%")
    } else {
        format!("−{:.0}%", -pct)
    }
}

/// Groups digits for counts: `1234567` → `1,234,567`.
pub fn format_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Shortens `label` to at most `max_chars` characters, ending in `…` when cut. Labels of fewer
/// than [`MIN_ELIDED_CHARS`] characters after cutting are not worth drawing: returns `None`.
pub fn elide(label: &str, max_chars: usize) -> Option<Cow<'_, str>> {
    let len = label.chars().count();
    if len <= max_chars {
        return Some(Cow::Borrowed(label));
    }
    // A kind prefix (`[k] `) alone says nothing: require real name characters after it.
    if max_chars < MIN_ELIDED_CHARS + kind_prefix_len(label) {
        return None;
    }
    let kept: String = label.chars().take(max_chars - 1).collect();
    Some(Cow::Owned(kept + "…"))
}

/// The fewest characters an elided label keeps (two characters and the ellipsis).
pub const MIN_ELIDED_CHARS: usize = 3;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_units_scale() {
        let f = |v| format_value(v, ValueUnit::Microseconds);
        assert_eq!(f(0), "0 µs");
        assert_eq!(f(999), "999 µs");
        assert_eq!(f(10_101), "10.1 ms");
        assert_eq!(f(1_656_564), "1.66 s");
        assert_eq!(f(60_000_000), "60 s");
        assert_eq!(f(600_000_000), "10 min");
        assert_eq!(f(36_000_000_000), "10 h");
    }

    #[test]
    fn byte_units_scale() {
        let f = |v| format_value(v, ValueUnit::Bytes);
        assert_eq!(f(512), "512 B");
        assert_eq!(f(1536), "1.5 KiB");
        assert_eq!(f(5 * 1024 * 1024), "5 MiB");
        assert_eq!(ValueUnit::for_event_type("mem-alloc"), ValueUnit::Bytes);
        assert_eq!(
            ValueUnit::for_event_type("off-cpu"),
            ValueUnit::Microseconds
        );
    }

    #[test]
    fn sdk_event_types_are_formatted_as_what_they_count() {
        let f = |v, e| format_value(v, ValueUnit::for_event_type(e));
        assert_eq!(f(1234, "cpu"), "1,234 samples");
        assert_eq!(f(5 * 1024 * 1024, "inuse_space"), "5 MiB");
        assert_eq!(f(1, "alloc_objects"), "1 object");
        assert_eq!(f(12, "goroutines"), "12 goroutines");
        assert_eq!(f(850, "mutex_duration"), "850 ns");
        assert_eq!(f(12_300_000, "block_duration"), "12.3 ms");
        assert_eq!(f(3, "lock_count"), "3 events");
        assert_eq!(measure_name("inuse_space"), "bytes in use");
        assert_eq!(measure_name("cpu"), "CPU samples");
    }

    #[test]
    fn percentages() {
        assert_eq!(format_percent(1, 3), "33.3%");
        assert_eq!(format_percent(5, 1000), "0.5%");
        assert_eq!(format_percent(1, 1_000_000), "<0.01%");
        assert_eq!(format_percent(7, 7), "100%");
        assert_eq!(format_percent(0, 7), "0%");
        assert_eq!(format_percent(1, 0), "–");
    }

    #[test]
    fn changes_read_in_points_and_ratios() {
        assert_eq!(format_change(0.032), "+3.2 pp");
        assert_eq!(format_change(-0.004), "−0.4 pp");
        assert_eq!(format_change(0.25), "+25 pp");
        assert_eq!(format_change(0.0001), "±0 pp");
        assert_eq!(format_ratio(100, 125), "+25%");
        assert_eq!(format_ratio(100, 40), "−60%");
        assert_eq!(format_ratio(0, 5), "new");
        assert_eq!(format_ratio(0, 0), "±0%");
    }

    #[test]
    fn counts_and_elision() {
        assert_eq!(format_count(1_234_567), "1,234,567");
        assert_eq!(format_count(12), "12");
        assert_eq!(elide("do_syscall_64", 20).unwrap(), "do_syscall_64");
        assert_eq!(elide("do_syscall_64", 5).unwrap(), "do_s…");
        assert_eq!(elide("do_syscall_64", 2), None);
        assert_eq!(elide("ünïcödé", 4).unwrap(), "ünï…");
        assert_eq!(elide("[k] do_syscall_64", 6), None);
        assert_eq!(elide("[k] do_syscall_64", 7).unwrap(), "[k] do…");
    }
}
