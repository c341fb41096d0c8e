//! What a profile's values measure, and how many nanoseconds one unit of them is: Embers stores
//! OTLP profiles as DeepFlow stores its eBPF agent's, as `on-cpu` or `off-cpu` time in
//! microseconds.
//!
//! | sample type | stored as | one unit is |
//! |---|---|---|
//! | `samples`/`count` (or `cpu`/`count`), period type `cpu`/<time> | `on-cpu` | `period` of the period type's unit |
//! | `cpu`/<time>, `samples`/<time>, `on_cpu`/<time> | `on-cpu` | one of that unit |
//! | `off_cpu`/<time> | `off-cpu` | one of that unit |
//!
//! <time> is `nanoseconds`, `microseconds`, `milliseconds` or `seconds` (or `ns`, `us`, `ms`,
//! `s`). The OpenTelemetry eBPF profiler sends `samples`/`count` with period type
//! `cpu`/`nanoseconds` and period 1e9 / frequency for on-CPU, and `off_cpu`/`nanoseconds` for
//! off-CPU. Anything else (its probe `events`/`count`, memory, wall time) is refused.

use opentelemetry_proto::tonic::profiles::v1development::{Profile, ValueType};

use super::check::index;
use super::OtlpError;

/// A profile's event type and the size of one unit of its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Measure {
    /// `on-cpu` or `off-cpu`.
    pub event: &'static str,
    /// Nanoseconds per unit of a sample's value (a count's unit is the period).
    pub ns_per_unit: u128,
}

/// Nanoseconds in one `unit`, for the time units.
fn ns_per(unit: &str) -> Option<u128> {
    Some(match unit {
        "nanoseconds" | "nanosecond" | "ns" => 1,
        "microseconds" | "microsecond" | "us" => 1_000,
        "milliseconds" | "millisecond" | "ms" => 1_000_000,
        "seconds" | "second" | "s" => 1_000_000_000,
        _ => return None,
    })
}

/// The (type, unit) strings of a value type, checked.
fn names<'a>(
    v: &ValueType,
    strings: &'a [String],
    field: &str,
) -> Result<(&'a str, &'a str), OtlpError> {
    let get = |i: i32, member: &str| {
        index(i, strings.len(), "string_table", || {
            format!("{field}.{member}")
        })
        .map(|at| strings.get(at).map_or("", String::as_str))
    };
    Ok((
        get(v.type_strindex, "type_strindex")?,
        get(v.unit_strindex, "unit_strindex")?,
    ))
}

/// The measure of `profile` at `path`, or a 400 naming its sample type.
pub(super) fn of(profile: &Profile, strings: &[String], path: &str) -> Result<Measure, OtlpError> {
    let field = format!("{path}.sample_type");
    let Some(sample_type) = &profile.sample_type else {
        return Err(OtlpError::field(
            field,
            "is missing: it says what the values measure",
        ));
    };
    let (kind, unit) = names(sample_type, strings, &field)?;
    let on_cpu = matches!(kind, "samples" | "cpu" | "on_cpu" | "on-cpu");
    let off_cpu = matches!(kind, "off_cpu" | "off-cpu" | "offcpu");
    if let (true, Some(ns)) = (on_cpu || off_cpu, ns_per(unit)) {
        let event = if on_cpu { "on-cpu" } else { "off-cpu" };
        return Ok(Measure {
            event,
            ns_per_unit: ns,
        });
    }
    if matches!(kind, "samples" | "cpu") && matches!(unit, "count" | "samples") {
        return counted(profile, strings, path, kind);
    }
    Err(OtlpError::field(
        field,
        format!(
            "{kind}/{unit} is not a sample type Embers stores; it stores on-CPU profiles \
             (samples/count with a cpu period, or cpu/<time unit>) and off-CPU profiles \
             (off_cpu/<time unit>), <time unit> being nanoseconds, microseconds, milliseconds \
             or seconds"
        ),
    ))
}

/// On-CPU samples counted at a period: one sample is `period` of the period type's time unit.
fn counted(
    profile: &Profile,
    strings: &[String],
    path: &str,
    kind: &str,
) -> Result<Measure, OtlpError> {
    let field = format!("{path}.period_type");
    let needs = "a count of samples is CPU time only with a period: period_type cpu/nanoseconds \
                 (or another time unit) and period > 0 say how much time one sample stands for";
    let Some(period_type) = &profile.period_type else {
        return Err(OtlpError::field(field, format!("is missing; {needs}")));
    };
    let (_, unit) = names(period_type, strings, &field)?;
    let Some(ns) = ns_per(unit) else {
        return Err(OtlpError::field(
            field,
            format!("has unit '{unit}', not a time unit; {needs}"),
        ));
    };
    if profile.period <= 0 {
        return Err(OtlpError::field(
            format!("{path}.period"),
            format!(
                "is {} for sample type {kind}/count; {needs}",
                profile.period
            ),
        ));
    }
    // i64::MAX × 1e9 fits in a u128.
    let ns_per_unit = u128::from(profile.period.unsigned_abs()) * ns;
    Ok(Measure {
        event: "on-cpu",
        ns_per_unit,
    })
}
