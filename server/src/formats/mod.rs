//! Other profilers' formats in: one adapter per format, each turning what a sender sends into
//! the store's [`Batch`]es, completely or not at all (a bad sample fails its whole request,
//! before anything is written).
//!
//! - [`otlp`]: OTLP profiles (opentelemetry-proto v1.11; `docs/otlp.md`), protobuf and JSON;
//! - [`pyroscope`]: Pyroscope's `/ingest` parameters (`name=app{k=v}`, `from`, `spyName`, ...)
//!   and its body forms (`folded`, `lines`, `pprof`, multipart, and `perf`);
//! - [`pprof`]: pprof bytes → one batch per stored sample type ([`embers_model::wire::pprof`]);
//! - [`jfr`]: JFR recordings → one batch per event type ([`embers_model::wire::jfr`]);
//! - [`perf`]: `perf script` text → one batch per process;
//! - [`push`]: Pyroscope's `PusherService/Push` (what Grafana Alloy's `pyroscope.write` sends);
//! - [`timed`]: samples their producer timed one by one (perf, JFR, OTLP) as stored samples
//!   with millisecond event times;
//! - [`labels`]: the labels those senders attach → the tag columns of the field table;
//! - [`gzip`]: gunzipping bounded by `--max-ingest-bytes` or by the request's budget.
//!
//! **One budget per request.** Everything a request expands to while it is read (gunzipped
//! parts, decoded tables and values, stack text, for every sample type and every pushed
//! profile) is charged to one [`embers_model::budget::Budget`], sized from the bytes the
//! sender sent (`--max-request-memory` caps it), before it is allocated; past it the request
//! is refused with a 413 ([`FormatError::TooLarge`]) and nothing is stored.
//!
//! HTTP lives in `http/` (which calls these); the command line's `import` calls them too.

pub mod gzip;
pub mod jfr;
pub mod labels;
pub mod otlp;
pub mod perf;
pub mod pprof;
pub mod push;
pub mod pyroscope;
pub mod timed;

use embers_model::budget::{Budget, OverBudget};
use embers_model::contract::detail::SampleDetail;
use embers_model::wire::perf::PerfError;
use embers_model::wire::pprof::PprofError;

use crate::input::check_stack;
use crate::limits::StackLimits;
use crate::store::{Batch, BatchMeta, Sample};

/// Why a sender's request cannot be stored; the message names the field or the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// The request (a parameter, a label, a part) is wrong.
    #[error("{0}")]
    Invalid(String),
    /// A pprof profile is unusable.
    #[error("{0}")]
    Pprof(PprofError),
    /// `perf script` text is unusable.
    #[error("{0}")]
    Perf(#[from] PerfError),
    /// Compressed data is corrupt.
    #[error("{0}")]
    Gzip(String),
    /// Decompressed data is over the ingest limit.
    #[error("{0}")]
    TooLarge(String),
}

impl From<PprofError> for FormatError {
    fn from(e: PprofError) -> FormatError {
        match e {
            PprofError::OverBudget(over) => FormatError::from(over),
            other => FormatError::Pprof(other),
        }
    }
}

impl From<OverBudget> for FormatError {
    fn from(e: OverBudget) -> FormatError {
        FormatError::TooLarge(e.to_string())
    }
}

impl From<gzip::GunzipError> for FormatError {
    fn from(e: gzip::GunzipError) -> FormatError {
        match e {
            gzip::GunzipError::TooLarge { .. } => FormatError::TooLarge(e.to_string()),
            gzip::GunzipError::Corrupt(_) => FormatError::Gzip(e.to_string()),
        }
    }
}

impl FormatError {
    /// An invalid request, with its message.
    pub fn invalid(message: impl Into<String>) -> FormatError {
        FormatError::Invalid(message.into())
    }

    /// The same error with `context: ` in front of its message.
    pub fn context(self, context: &str) -> FormatError {
        match self {
            FormatError::TooLarge(m) => FormatError::TooLarge(format!("{context}: {m}")),
            other => FormatError::Invalid(format!("{context}: {other}")),
        }
    }
}

/// A batch of `stacks` (`;`-joined frames below the root) at `time`, each checked against
/// `limits`; stacks with a zero value are left out.
pub fn batch_of(
    meta: BatchMeta,
    stacks: impl IntoIterator<Item = (String, u64)>,
    time: i64,
    limits: &StackLimits,
) -> Result<Batch, FormatError> {
    let plain = stacks
        .into_iter()
        .map(|(stack, value)| (stack, value, None));
    batch_of_detailed(meta, plain, time, limits)
}

/// A stack, its value and what its producer knows below it (source lines).
pub type Detailed = (String, u64, Option<Box<SampleDetail>>);

/// [`batch_of`] for stacks with details (checked against their stack).
pub fn batch_of_detailed(
    meta: BatchMeta,
    stacks: impl IntoIterator<Item = Detailed>,
    time: i64,
    limits: &StackLimits,
) -> Result<Batch, FormatError> {
    batch_of_timed(meta, stacks.into_iter().map(|s| (time, s)), limits)
}

/// [`batch_of_detailed`] with each stack at its own Unix second ([`timed::Timed::finish`]).
pub fn batch_of_timed(
    meta: BatchMeta,
    stacks: impl IntoIterator<Item = (i64, Detailed)>,
    limits: &StackLimits,
) -> Result<Batch, FormatError> {
    let mut samples = Vec::new();
    for (time, (stack, value, detail)) in stacks {
        if value == 0 {
            continue;
        }
        if i64::try_from(value).is_err() {
            return Err(FormatError::invalid(format!(
                "a value of {} is {value}, over {}",
                meta.event_type,
                i64::MAX
            )));
        }
        let frames: Vec<&str> = stack.split(';').collect();
        check_stack(&frames, limits).map_err(|e| {
            FormatError::invalid(format!(
                "{} stack {}: {e}",
                meta.event_type,
                samples.len() + 1
            ))
        })?;
        if let Some(d) = &detail {
            d.check(frames.len(), value).map_err(|e| {
                FormatError::invalid(format!(
                    "{} stack {}: {e}",
                    meta.event_type,
                    samples.len() + 1
                ))
            })?;
        }
        samples.push(Sample {
            time,
            stack,
            value,
            detail,
        });
    }
    Ok(Batch { meta, samples })
}

/// Charge what a JSON body may decode into, before it is decoded: `per_value` for every
/// object, array and string it opens (a value of two bytes, `{}`, can become a struct of a
/// hundred). Counting the bytes that open them is a bound: braces inside strings only make it
/// larger.
pub fn charge_json(body: &[u8], per_value: usize, budget: &Budget) -> Result<(), OverBudget> {
    let (mut nested, mut quotes) = (0usize, 0usize);
    for &b in body {
        match b {
            b'{' | b'[' => nested += 1,
            b'"' => quotes += 1,
            _ => {}
        }
    }
    let opened = nested.saturating_add(quotes / 2);
    budget.charge(opened.saturating_mul(per_value), "JSON values")
}

/// Unix seconds now.
pub fn now_seconds() -> i64 {
    crate::store::ingest::now_micros() / 1_000_000
}
