//! pprof bytes → batches: one batch per sample type the profile stores
//! ([`embers_model::wire::pprof::sample_types`]: DeepFlow's names for SDK profiles, `on-cpu`
//! in microseconds for eBPF-like data, or what a `sample_type_config` or the user says), each
//! sample type folded into stacks by the model's reader, the values scaled as the choice says
//! and, for cumulative types sent with their previous profile, the difference between the two.
//!
//! The language is the sender's (`spyName`, a `pyroscope_spy` label, `--language`), else
//! `eBPF` for eBPF-like data, else `Golang` when the profile runs Go's runtime (a function
//! named `runtime.…`, which every Go program's profile has), else `unknown`.

use std::collections::HashMap;

use embers_model::budget::Budget;
use embers_model::contract::detail::SampleDetail;
use embers_model::wire::pprof::fold::fold;
use embers_model::wire::pprof::line_stacks::{has_lines, stacks_with_lines};
use embers_model::wire::pprof::sample_types::{
    choose, choose_configured, list, pick, Cumulative, EventChoice, SampleTypeConfig,
};
use embers_model::wire::pprof::stacks::{stacks, StackBounds};
use embers_model::wire::pprof::{decode_within, Pprof};

use super::{batch_of, batch_of_detailed, Detailed, FormatError};
use crate::limits::StackLimits;
use crate::store::{Batch, BatchMeta, Tags};

/// Which sample types to store.
#[derive(Debug, Clone, Copy)]
pub enum Selection<'a> {
    /// The default mapping.
    Default,
    /// A Pyroscope `sample_type_config`.
    Configured(&'a SampleTypeConfig),
    /// One sample type by name (`cpu`, `alloc_space`, `cpu/nanoseconds`), optionally stored
    /// under another event type.
    Pick {
        /// The sample type.
        sample_type: &'a str,
        /// The event type to store it as.
        event_type: Option<&'a str>,
    },
}

/// Everything but the profile itself.
#[derive(Debug, Clone)]
pub struct Target<'a> {
    /// `app_service`.
    pub app_service: &'a str,
    /// `profile_language_type`, when the sender said.
    pub language: Option<&'a str>,
    /// Unix seconds of every sample; else the profile's own `time_nanos`, else now.
    pub time: Option<i64>,
    /// Tags of every batch.
    pub tags: &'a Tags,
    /// Which sample types.
    pub selection: Selection<'a>,
    /// The unit to store instead of the choice's (Pyroscope's `units` parameter).
    pub unit: Option<&'a str>,
    /// The request's budget: decoding and every sample type's stack text are charged to it.
    pub budget: &'a Budget,
}

/// The batches of uncompressed pprof `bytes`, minus `previous` (also uncompressed) for
/// cumulative sample types.
pub fn batches(
    bytes: &[u8],
    previous: Option<&[u8]>,
    target: &Target<'_>,
    limits: &StackLimits,
) -> Result<Vec<Batch>, FormatError> {
    let p = decode_within(bytes, target.budget)?;
    batches_of(&p, previous, target, limits)
}

/// [`batches`] of a profile already decoded (within `target.budget`): `import` reads the root
/// name from it first, so the file is decoded once.
pub fn batches_of(
    p: &Pprof<'_>,
    previous: Option<&[u8]>,
    target: &Target<'_>,
    limits: &StackLimits,
) -> Result<Vec<Batch>, FormatError> {
    let previous = previous
        .map(|b| decode_within(b, target.budget))
        .transpose()
        .map_err(|e| FormatError::from(e).context("prev_profile"))?;
    let choices = choices(p, target.selection)?;
    let time = target.time.unwrap_or_else(|| profile_time(p));
    let mut out = Vec::with_capacity(choices.len());
    for choice in &choices {
        let meta = meta_of(target, choice, p);
        // Lines are kept where no previous profile is subtracted (a difference of two
        // cumulative profiles is per function stack).
        if previous.is_none() && has_lines(p) {
            let stacks = folded_lines(p, target, limits, choice)?;
            out.push(batch_of_detailed(meta, stacks, time, limits)?);
            continue;
        }
        let mut values = folded(p, target, limits, choice)?;
        match (&previous, choice.cumulative) {
            (Some(prev), Cumulative::ByDefault | Cumulative::Declared) => {
                subtract(&mut values, &folded_like(prev, target, limits, p, choice)?);
            }
            (None, Cumulative::Declared) => {
                return Err(FormatError::invalid(format!(
                    "{} is cumulative (sample_type_config) but the request has no prev_profile \
                     to subtract",
                    choice.event_type
                )))
            }
            _ => {}
        }
        out.push(batch_of(meta, values, time, limits)?);
    }
    Ok(out)
}

/// What every batch of `choice` shares.
fn meta_of(target: &Target<'_>, choice: &EventChoice, p: &Pprof<'_>) -> BatchMeta {
    BatchMeta {
        app_service: target.app_service.to_owned(),
        language: language(target.language, choice, p),
        event_type: choice.event_type.clone(),
        unit: target
            .unit
            .map_or_else(|| choice.unit.clone(), str::to_owned),
        tags: target.tags.clone(),
    }
}

/// The sample types to store, or why there are none.
fn choices(p: &Pprof<'_>, selection: Selection<'_>) -> Result<Vec<EventChoice>, FormatError> {
    let chosen = match selection {
        Selection::Default => choose(p),
        Selection::Configured(config) => choose_configured(p, config),
        Selection::Pick {
            sample_type,
            event_type,
        } => pick(p, sample_type, event_type).into_iter().collect(),
    };
    if chosen.is_empty() {
        let how = match selection {
            Selection::Default => {
                "none of them is one Embers stores by default; pick one \
                                   (import --sample-type, or a sample_type_config)"
            }
            Selection::Configured(_) => "sample_type_config names none of them",
            Selection::Pick { .. } => "the one asked for is not among them",
        };
        return Err(FormatError::invalid(format!(
            "unknown sample types: the profile has {}; {how}",
            list(p)
        )));
    }
    Ok(chosen)
}

/// The profile's own collection time in Unix seconds, else now.
fn profile_time(p: &Pprof<'_>) -> i64 {
    match p.time_nanos / 1_000_000_000 {
        t if t > 0 => t,
        _ => super::now_seconds(),
    }
}

/// The stacks of one choice, scaled, by stack text.
fn folded(
    p: &Pprof<'_>,
    target: &Target<'_>,
    limits: &StackLimits,
    choice: &EventChoice,
) -> Result<Vec<(String, u64)>, FormatError> {
    let table = fold(p, target.app_service, choice.index)?;
    let bounds = StackBounds {
        max_frames: limits.max_frames,
        max_frame_bytes: limits.max_frame_bytes,
    };
    stacks(&table, &bounds, target.budget)?
        .into_iter()
        .map(|(stack, v)| match choice.scale.apply(v) {
            Some(v) => Ok((stack, v)),
            None => Err(FormatError::invalid(format!(
                "a value of {} overflows when converted to {}",
                choice.event_type, choice.unit
            ))),
        })
        .collect()
}

/// The stacks of one choice with their source lines, scaled: each inlined function its own
/// frame at its own line, as pprof lists them.
fn folded_lines(
    p: &Pprof<'_>,
    target: &Target<'_>,
    limits: &StackLimits,
    choice: &EventChoice,
) -> Result<Vec<Detailed>, FormatError> {
    let bounds = StackBounds {
        max_frames: limits.max_frames,
        max_frame_bytes: limits.max_frame_bytes,
    };
    stacks_with_lines(p, target.app_service, choice.index, &bounds, target.budget)?
        .into_iter()
        .map(|(stack, lines, v)| {
            let v = choice.scale.apply(v).ok_or_else(|| {
                FormatError::invalid(format!(
                    "a value of {} overflows when converted to {}",
                    choice.event_type, choice.unit
                ))
            })?;
            let detail = (!lines.is_empty()).then(|| {
                Box::new(SampleDetail {
                    lines,
                    events: Vec::new(),
                })
            });
            Ok((stack, v, detail))
        })
        .collect()
}

/// The stacks of the previous profile's sample type of the same name as `choice`'s.
fn folded_like(
    prev: &Pprof<'_>,
    target: &Target<'_>,
    limits: &StackLimits,
    p: &Pprof<'_>,
    choice: &EventChoice,
) -> Result<HashMap<String, u64>, FormatError> {
    let name = p.sample_type_name(choice.index);
    let index = (0..prev.sample_types.len())
        .find(|&i| prev.sample_type_name(i) == name)
        .ok_or_else(|| FormatError::invalid(format!("prev_profile has no sample type {name}")))?;
    let same = EventChoice {
        index,
        ..choice.clone()
    };
    Ok(folded(prev, target, limits, &same)
        .map_err(|e| e.context("prev_profile"))?
        .into_iter()
        .collect())
}

/// `values` minus `previous`, per stack; what did not grow is left out (as Pyroscope does).
fn subtract(values: &mut Vec<(String, u64)>, previous: &HashMap<String, u64>) {
    values.retain_mut(|(stack, v)| {
        *v = v.saturating_sub(previous.get(stack.as_str()).copied().unwrap_or(0));
        *v > 0
    });
}

/// See the module docs.
fn language(sent: Option<&str>, choice: &EventChoice, p: &Pprof<'_>) -> String {
    let language = match sent {
        Some(l) => l,
        None if choice.ebpf => "eBPF",
        None if runs_go(p) => "Golang",
        None => "unknown",
    };
    language.to_owned()
}

/// Whether the profile has Go runtime functions.
fn runs_go(p: &Pprof<'_>) -> bool {
    p.functions
        .iter()
        .any(|f| p.string(f.name).starts_with("runtime."))
}
