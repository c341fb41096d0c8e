//! JFR recordings → batches: one batch per event type the recording holds
//! ([`embers_model::wire::jfr`] reads it: CPU samples, allocations, lock contention), under the
//! app the sender names, language `Java` unless it says otherwise. What the JDK's recorder,
//! async-profiler and Pyroscope's Java agent (`/ingest?format=jfr`) write.
//!
//! Where the sender gives a time (Pyroscope's `from`, `import --time`) every sample goes there,
//! as DeepFlow stores them; else each goes at the second it was recorded (one batch per event
//! type and second), so that a long recording keeps its course on the timeline.

use embers_model::budget::Budget;
use embers_model::contract::event::unit_of;
use embers_model::wire::jfr;
use embers_model::wire::pprof::stacks::{stacks, StackBounds};

use super::{batch_of, FormatError};
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
    let bucket = match target.time {
        Some(_) => None,
        None => Some(1),
    };
    let recording = jfr::read_within(bytes, target.app_service, bucket, target.budget)?;
    if recording.profiles.is_empty() {
        return Err(FormatError::invalid(
            "the recording has no events Embers reads (jdk.ExecutionSample, allocation or lock \
             events); record with profiling on, e.g. -XX:StartFlightRecording=settings=profile",
        ));
    }

    let bounds = StackBounds {
        max_frames: limits.max_frames,
        max_frame_bytes: limits.max_frame_bytes,
    };
    recording
        .profiles
        .iter()
        .map(|p| {
            let meta = BatchMeta {
                app_service: target.app_service.to_owned(),
                language: target.language.unwrap_or("Java").to_owned(),
                event_type: p.event_type.to_owned(),
                unit: unit_of(p.event_type).to_owned(),
                tags: target.tags.clone(),
            };
            let stacks = stacks(&p.table, &bounds, target.budget).map_err(FormatError::from)?;
            let time = target.time.or(p.time).unwrap_or_else(super::now_seconds);
            batch_of(meta, stacks, time, limits)
        })
        .collect()
}
