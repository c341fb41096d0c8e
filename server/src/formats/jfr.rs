//! JFR recordings → batches: one batch per event type the recording holds
//! ([`embers_model::wire::jfr`] reads it: CPU samples, allocations, lock contention), under the
//! app the sender names, language `Java` unless it says otherwise. What the JDK's recorder,
//! async-profiler and Pyroscope's Java agent (`/ingest?format=jfr`) write.
//!
//! Each frame keeps its line number (JFR names no source file: the class stands for it). Where
//! the sender gives a time (Pyroscope's `from`, `import --time`) every sample goes there, as
//! DeepFlow stores them; else each event keeps its own time to the millisecond and thread
//! ([`super::timed`]), so that a long recording keeps its course on the timeline and the
//! heatmap, the samples and millisecond windows answer for it.

use std::collections::HashMap;

use embers_model::budget::Budget;
use embers_model::contract::detail::SampleDetail;
use embers_model::contract::event::unit_of;
use embers_model::wire::jfr;

use super::timed::Timed;
use super::{batch_of_timed, Detailed, FormatError};
use crate::limits::StackLimits;
use crate::store::{Batch, BatchMeta, Tags};

/// Everything but the recording itself.
#[derive(Debug, Clone)]
pub struct Target<'a> {
    /// `app_service`.
    pub app_service: &'a str,
    /// `profile_language_type` [default: `Java`].
    pub language: Option<&'a str>,
    /// Unix seconds of every sample; else each sample's own second.
    pub time: Option<i64>,
    /// Tags of every batch.
    pub tags: &'a Tags,
    /// The request's budget: values decoded and every event type's stack text are charged
    /// to it.
    pub budget: &'a Budget,
}

impl From<jfr::JfrError> for FormatError {
    fn from(e: jfr::JfrError) -> FormatError {
        match e {
            jfr::JfrError::TooLarge(m) => FormatError::TooLarge(m),
            other => FormatError::Invalid(other.to_string()),
        }
    }
}

/// The batches of an uncompressed recording.
pub fn batches(
    bytes: &[u8],
    target: &Target<'_>,
    limits: &StackLimits,
) -> Result<Vec<Batch>, FormatError> {
    let recording = jfr::read_timed(bytes, target.budget)?;
    if recording.events.is_empty() {
        return Err(FormatError::invalid(
            "the recording has no events Embers reads (jdk.ExecutionSample, allocation or lock \
             events); record with profiling on, e.g. -XX:StartFlightRecording=settings=profile",
        ));
    }
    // One batch per event type, in the order first met.
    let mut by: Vec<(&'static str, Timed)> = Vec::new();
    let mut stacks: HashMap<(usize, u32), u32> = HashMap::new();
    for e in &recording.events {
        let at = match by.iter().position(|(t, _)| *t == e.event_type) {
            Some(at) => at,
            None => {
                by.push((e.event_type, Timed::default()));
                by.len() - 1
            }
        };
        let stack = match stacks.get(&(at, e.stack)) {
            Some(&id) => id,
            None => {
                let s = &recording.stacks[e.stack as usize];
                let text = s.frames.join(";");
                target.budget.charge(text.len(), "JFR stack text")?;
                let id = by[at].1.stack(text, s.lines.clone())?;
                stacks.insert((at, e.stack), id);
                id
            }
        };
        let tid = u32::try_from(e.tid).unwrap_or(u32::MAX);
        by[at]
            .1
            .add(stack, e.unix_nanos.div_euclid(1_000_000), tid, e.value);
    }
    by.into_iter()
        .map(|(event_type, timed)| {
            let meta = BatchMeta {
                app_service: target.app_service.to_owned(),
                language: target.language.unwrap_or("Java").to_owned(),
                event_type: event_type.to_owned(),
                unit: unit_of(event_type).to_owned(),
                tags: target.tags.clone(),
            };
            let samples = timed.finish()?;
            match target.time {
                None => batch_of_timed(meta, samples, limits),
                Some(time) => batch_of_timed(meta, at_one_second(samples, time), limits),
            }
        })
        .collect()
}

/// Every sample at `time`, as DeepFlow stores what a sender dated: their lines kept, their
/// events' times dropped (they would not be the sender's).
fn at_one_second(samples: Vec<(i64, Detailed)>, time: i64) -> Vec<(i64, Detailed)> {
    samples
        .into_iter()
        .map(|(_, (stack, value, detail))| {
            let detail = detail
                .map(|d| SampleDetail {
                    lines: d.lines,
                    events: Vec::new(),
                })
                .filter(|d| !d.is_empty())
                .map(Box::new);
            (time, (stack, value, detail))
        })
        .collect()
}
