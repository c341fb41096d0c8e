//! Which of a pprof profile's sample types are stored, as which event type, in which unit.
//!
//! Without a configuration ([`choose`]), the names DeepFlow stores for language SDK profiles
//! (Pyroscope's default mapping; see `contract::event::SDK_EVENT_TYPES`), values as sent:
//!
//! | pprof sample type | event type | unit |
//! |---|---|---|
//! | `samples/count` (Go CPU) | `cpu` | samples |
//! | `inuse_objects`, `alloc_objects`, `inuse_space`, `alloc_space` (Go heap) | the same | objects / bytes |
//! | `goroutine` | `goroutines` | goroutines |
//! | `contentions`, `delay` (Go mutex, block) | `mutex_count`, `mutex_duration` | lock_samples / lock_nanoseconds |
//! | Java's `alloc_in_new_tlab_*`, `alloc_outside_tlab_*`, `lock_count`, `lock_duration` | the same | per the table |
//! | `wall`, `itimer` in a time unit, with a period in that unit | the same | samples (value ÷ period) |
//!
//! and, for eBPF-like data (a time without a sample count, as Grafana Alloy's `pyroscope.ebpf`
//! sends), what DeepFlow's own agent stores: `cpu/<time>` → `on-cpu` and `offcpu/<time>` →
//! `off-cpu`, in microseconds; Embers' own exports (`on-cpu/microseconds`, `mem-alloc/bytes`,
//! `cpu/count`, ...) read back as what they were. Other sample types are left out; a profile none of whose types
//! maps is an error naming them. A Pyroscope `sample_type_config` ([`SampleTypeConfig`])
//! replaces the table: exactly the types it names, renamed by `display-name`, in its `units`.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::Pprof;
use crate::contract::event::{unit_of, Quantity, EVENT_TYPES, SDK_EVENT_TYPES};

/// How sent values become stored ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Stored as sent.
    AsSent,
    /// Multiplied by `mul` and divided by `div` (rounded): a time unit to microseconds, or a
    /// time to samples (÷ the period).
    Ratio {
        /// Multiplier.
        mul: u64,
        /// Divisor (never 0).
        div: u64,
    },
}

impl Scale {
    /// `value` scaled, or `None` when it overflows.
    pub fn apply(self, value: u64) -> Option<u64> {
        match self {
            Scale::AsSent => Some(value),
            Scale::Ratio { mul, div } => {
                let wide = u128::from(value) * u128::from(mul) + u128::from(div / 2);
                u64::try_from(wide / u128::from(div.max(1))).ok()
            }
        }
    }
}

/// Whether a sample type counts since the process started (so a delta against the previous
/// profile is what belongs to this interval).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cumulative {
    /// Values belong to the profile's interval.
    No,
    /// Pyroscope's default mapping calls it cumulative: a previous profile, when sent, is
    /// subtracted; without one the values are stored as the totals they are.
    ByDefault,
    /// The sender's `sample_type_config` says so: a previous profile is required.
    Declared,
}

/// One sample type chosen for storage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventChoice {
    /// Its index among the profile's sample types.
    pub index: usize,
    /// `profile_event_type`.
    pub event_type: String,
    /// `profile_value_unit`.
    pub unit: String,
    /// How its values are stored.
    pub scale: Scale,
    /// Whether it is cumulative.
    pub cumulative: Cumulative,
    /// Whether it is eBPF-like data (stored as DeepFlow's agent stores its own: `on-cpu`,
    /// `off-cpu`, microseconds).
    pub ebpf: bool,
}

/// One entry of Pyroscope's `sample_type_config` (a JSON object keyed by sample type).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct SampleTypeEntry {
    /// `units`.
    #[serde(default)]
    pub units: Option<String>,
    /// `display-name`.
    #[serde(default, rename = "display-name")]
    pub display_name: Option<String>,
    /// `aggregation` (read, not used: Embers sums).
    #[serde(default)]
    pub aggregation: Option<String>,
    /// `cumulative`.
    #[serde(default)]
    pub cumulative: bool,
    /// `sampled` (read, not used).
    #[serde(default)]
    pub sampled: bool,
}

/// Pyroscope's `sample_type_config`.
pub type SampleTypeConfig = BTreeMap<String, SampleTypeEntry>;

/// Microseconds per one `unit` as a ratio, for the time units pprof writers use.
fn to_micros(unit: &str) -> Option<Scale> {
    let (mul, div) = match unit {
        "nanoseconds" | "ns" => (1, 1000),
        "microseconds" | "us" => (1, 1),
        "milliseconds" | "ms" => (1000, 1),
        "seconds" | "s" => (1_000_000, 1),
        _ => return None,
    };
    Some(Scale::Ratio { mul, div })
}

/// The sample types of `p` stored by default (see the module docs), in profile order.
pub fn choose(p: &Pprof<'_>) -> Vec<EventChoice> {
    let has_count = p.sample_types.iter().any(|t| p.string(t.kind) == "samples");
    (0..p.sample_types.len())
        .filter_map(|i| default_choice(p, i, has_count))
        .collect()
}

fn default_choice(p: &Pprof<'_>, index: usize, has_count: bool) -> Option<EventChoice> {
    let t = p.sample_types.get(index)?;
    let (kind, unit) = (p.string(t.kind), p.string(t.unit));
    let sdk = |event: &str, cumulative| EventChoice {
        index,
        event_type: event.to_owned(),
        unit: unit_of(event).to_owned(),
        scale: Scale::AsSent,
        cumulative,
        ebpf: false,
    };
    let ebpf = |event: &str, scale| EventChoice {
        index,
        event_type: event.to_owned(),
        unit: Quantity::Microseconds.unit_label().to_owned(),
        scale,
        cumulative: Cumulative::No,
        ebpf: true,
    };
    let counted = matches!(unit, "count" | "samples");
    Some(match kind {
        "samples" => sdk("cpu", Cumulative::No),
        "cpu" if counted => sdk("cpu", Cumulative::No),
        "cpu" if !has_count => ebpf("on-cpu", to_micros(unit)?),
        // Embers' own exports name their eBPF event types.
        e if EVENT_TYPES.contains(&e) => EventChoice {
            scale: Scale::AsSent,
            ..ebpf(e, Scale::AsSent)
        },
        "offcpu" | "off_cpu" | "off-cpu" => ebpf("off-cpu", to_micros(unit)?),
        "wall" | "itimer" => per_period(p, unit).map(|scale| EventChoice {
            scale,
            ..sdk(kind, Cumulative::No)
        })?,
        "goroutine" | "goroutines" => sdk("goroutines", Cumulative::No),
        "contentions" => sdk("mutex_count", Cumulative::ByDefault),
        "delay" if unit == "nanoseconds" => sdk("mutex_duration", Cumulative::ByDefault),
        "alloc_objects" | "alloc_space" => sdk(kind, Cumulative::ByDefault),
        k if k != "cpu" && SDK_EVENT_TYPES.iter().any(|(e, _, _)| *e == k) => {
            sdk(k, Cumulative::No)
        }
        _ => return None,
    })
}

/// Values of a sampled time (`wall`, `itimer`) as sample counts: ÷ the period when the period
/// is in the same unit; a count stays as it is.
fn per_period(p: &Pprof<'_>, unit: &str) -> Option<Scale> {
    if unit == "count" || unit == "samples" {
        return Some(Scale::AsSent);
    }
    let period_unit = p.period_type.map(|t| p.string(t.unit))?;
    let period = u64::try_from(p.period).ok().filter(|&n| n > 0)?;
    (period_unit == unit).then_some(Scale::Ratio {
        mul: 1,
        div: period,
    })
}

/// The sample types a `sample_type_config` names that `p` has, as it says to store them.
pub fn choose_configured(p: &Pprof<'_>, config: &SampleTypeConfig) -> Vec<EventChoice> {
    (0..p.sample_types.len())
        .filter_map(|index| {
            let kind = p.string(p.sample_types[index].kind);
            let entry = config.get(kind)?;
            let event = entry.display_name.as_deref().unwrap_or(kind).to_owned();
            let unit = entry
                .units
                .clone()
                .unwrap_or_else(|| unit_of(&event).to_owned());
            Some(EventChoice {
                index,
                event_type: event,
                unit,
                scale: Scale::AsSent,
                cumulative: if entry.cumulative {
                    Cumulative::Declared
                } else {
                    Cumulative::No
                },
                ebpf: false,
            })
        })
        .collect()
}

/// The sample type named `kind` (`cpu`, `alloc_space`, or `type/unit`), stored under its
/// default event type or `event_type`, with the values as sent unless the default mapping
/// converts them. `None` when the profile has no such type.
pub fn pick(p: &Pprof<'_>, kind: &str, event_type: Option<&str>) -> Option<EventChoice> {
    let index = (0..p.sample_types.len())
        .find(|&i| p.string(p.sample_types[i].kind) == kind || p.sample_type_name(i) == kind)?;
    let mut choice = default_choice(p, index, false).unwrap_or_else(|| EventChoice {
        index,
        event_type: kind.to_owned(),
        unit: unit_of(kind).to_owned(),
        scale: Scale::AsSent,
        cumulative: Cumulative::No,
        ebpf: false,
    });
    if let Some(event) = event_type {
        event.clone_into(&mut choice.event_type);
        unit_of(event).clone_into(&mut choice.unit);
    }
    Some(choice)
}

/// The choice to show when only one can be (the viewer): the profile's
/// `default_sample_type`, else the last one, as `go tool pprof` does.
pub fn primary<'c>(p: &Pprof<'_>, choices: &'c [EventChoice]) -> Option<&'c EventChoice> {
    let default = p.default_sample_type;
    choices
        .iter()
        .find(|c| {
            default != 0
                && p.sample_types
                    .get(c.index)
                    .is_some_and(|t| t.kind == default)
        })
        .or_else(|| choices.last())
}

/// Every sample type of `p` as `type/unit`, comma-separated (for error messages).
pub fn list(p: &Pprof<'_>) -> String {
    (0..p.sample_types.len())
        .map(|i| p.sample_type_name(i))
        .collect::<Vec<_>>()
        .join(", ")
}
