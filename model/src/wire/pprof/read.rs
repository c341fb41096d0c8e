//! A whole pprof file → one profile to show (the viewer's *Open* and drop, in its decode
//! worker): the sample type [`primary`] picks among those the service would store (else the
//! profile's default or last type, named as it is), its values scaled as stored, under the root
//! an Embers export named or `fallback_root`.

use super::fold::fold;
use super::lines::function_lines;
use super::sample_types::{choose, primary, EventChoice, Scale};
use super::{decode, Pprof, PprofError};
use crate::tree::lines::LineTable;
use crate::tree::profile::Profile;

/// A profile read from pprof, with what its values are.
#[derive(Clone, Debug)]
pub struct ReadPprof {
    /// The call tree.
    pub profile: Profile,
    /// The event type its values are shown as (`cpu`, `inuse_space`, `on-cpu`, ...).
    pub event_type: String,
    /// The sample type read, `type/unit`.
    pub sample_type: String,
    /// How many samples its values stand for, when the profile says ([`sample_count`]).
    pub samples: Option<u64>,
}

/// Reads uncompressed pprof `bytes` into the profile of its primary sample type.
pub fn read_profile(bytes: &[u8], fallback_root: &str) -> Result<ReadPprof, PprofError> {
    let p = decode(bytes)?;
    read_decoded(&p, &chosen(&p), fallback_root)
}

/// [`read_profile`] and the source lines of its functions (the viewer's Source panel on an
/// opened file), summed over the same sample type and scaled alike.
pub fn read_profile_with_lines(
    bytes: &[u8],
    fallback_root: &str,
) -> Result<(ReadPprof, LineTable), PprofError> {
    let p = decode(bytes)?;
    let choice = chosen(&p);
    let read = read_decoded(&p, &choice, fallback_root)?;
    Ok((read, function_lines(&p, choice.index, choice.scale)?))
}

/// The sample type a file is read as: [`primary`], else the default or last type as it is.
fn chosen(p: &Pprof<'_>) -> EventChoice {
    let choices = choose(p);
    match primary(p, &choices) {
        Some(c) => c.clone(),
        None => {
            let default = p.default_sample_type;
            let index = p
                .sample_types
                .iter()
                .position(|t| default != 0 && t.kind == default)
                .unwrap_or(p.sample_types.len().saturating_sub(1));
            EventChoice {
                index,
                event_type: p.string(p.sample_types[index].kind).to_owned(),
                unit: String::new(),
                scale: Scale::AsSent,
                cumulative: super::sample_types::Cumulative::No,
                ebpf: false,
            }
        }
    }
}

fn read_decoded(
    p: &Pprof<'_>,
    choice: &EventChoice,
    fallback_root: &str,
) -> Result<ReadPprof, PprofError> {
    let root = p.root_name().unwrap_or(fallback_root);
    let mut table = fold(p, root, choice.index)?;
    if choice.scale != Scale::AsSent {
        for v in &mut table.self_value {
            let scaled = u64::try_from(*v).ok().and_then(|v| choice.scale.apply(v));
            *v = scaled
                .and_then(|s| i64::try_from(s).ok())
                .unwrap_or(i64::MAX);
        }
    }
    Ok(ReadPprof {
        profile: Profile::from_table(table),
        event_type: choice.event_type.clone(),
        sample_type: p.sample_type_name(choice.index),
        samples: sample_count(p, choice.index),
    })
}

/// How many samples the values of sample type `index` stand for: the sum of a `samples/count`
/// type when the profile has one (Go's CPU profiles do), else the sum of the values over the
/// `period` when the period is in the same unit; `None` when the profile does not say (the
/// values may be events, bytes or counts already).
pub fn sample_count(p: &Pprof<'_>, index: usize) -> Option<u64> {
    let k = p.sample_types.len();
    let sum = |i: usize| -> u64 {
        p.samples
            .values
            .iter()
            .skip(i)
            .step_by(k.max(1))
            .map(|&v| u64::try_from(v).unwrap_or(0))
            .fold(0u64, u64::saturating_add)
    };
    let named = |t: &super::ValueType, kind: &str, unit: &str| {
        p.string(t.kind) == kind && p.string(t.unit) == unit
    };
    if let Some(i) = p
        .sample_types
        .iter()
        .position(|t| named(t, "samples", "count"))
    {
        return Some(sum(i));
    }
    let chosen = p.sample_types.get(index)?;
    let period = u64::try_from(p.period).ok().filter(|&p| p > 0)?;
    let period_unit = p.period_type.map(|t| p.string(t.unit))?;
    (period_unit == p.string(chosen.unit)).then(|| sum(index) / period)
}
