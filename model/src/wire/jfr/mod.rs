//! JFR, the JDK Flight Recorder's format (what the JDK's own recorder, async-profiler and
//! Pyroscope's Java agent write): bytes → chunks → each chunk's metadata (`types`) and
//! constant pools (`values`) → its sampling events, folded into one call tree per event type
//! (`events`), the same [`NodeTable`](crate::tree::table::NodeTable) the pprof reader gives,
//! so the service stores them as it stores pprof.
//!
//! Written for untrusted input instead of taking the `jfrs` crate (0.2.5, last released 2023),
//! which loops forever on an event of size 0, allocates whatever size a file claims and
//! recurses without bound on forged metadata: here every size is checked against the bytes
//! left, nesting is bounded and so is the number of values and nodes a recording of a given
//! size may expand to. `model/tests/jfr.rs` holds it to the JDK's own reader (`jfr print`) on a
//! real recording.
//!
//! Gzip is not read here, as for pprof: callers gunzip first.

mod bytes;
mod clock;
mod events;
mod names;
mod timed;
mod tree;
mod types;
mod values;

use thiserror::Error;

pub use events::{JfrProfile, Recording};
pub use timed::{JfrEvent, JfrStack, TimedRecording};

use crate::budget::Budget;
use bytes::Bytes;
use values::{Chunk, VALUE_BYTES};

/// The first bytes of every chunk.
pub const MAGIC: &[u8; 4] = b"FLR\0";
/// A chunk header's size.
const HEADER_BYTES: usize = 68;

/// Whether `bytes` start like a JFR recording.
pub fn is_jfr(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// Why a recording could not be read.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum JfrError {
    #[error("not a JFR recording (it does not start with FLR\\0)")]
    NotJfr,
    #[error("JFR version {major}.{minor} is not read (2.x is: JDK 11 and later, async-profiler)")]
    Version { major: u16, minor: u16 },
    #[error("the recording is truncated: {what} at offset {offset} runs past the end")]
    Truncated { what: String, offset: usize },
    #[error("the recording is malformed: {0}")]
    Invalid(String),
    #[error("{0}")]
    TooLarge(String),
}

/// A chunk's header fields that reading needs.
struct Header {
    size: usize,
    metadata_offset: usize,
    start_nanos: i64,
    start_ticks: i64,
    ticks_per_second: i64,
    compressed: bool,
}

fn header(b: &mut Bytes<'_>) -> Result<Header, JfrError> {
    let at = b.pos();
    let magic = [b.u8()?, b.u8()?, b.u8()?, b.u8()?];
    if &magic != MAGIC {
        return Err(if at == 0 {
            JfrError::NotJfr
        } else {
            JfrError::Invalid(format!("no chunk header at offset {at}"))
        });
    }
    let (major, minor) = (b.fixed_u16()?, b.fixed_u16()?);
    if major != 2 {
        return Err(JfrError::Version { major, minor });
    }
    let size = b.fixed_i64()?;
    let _constant_pools = b.fixed_i64()?;
    let metadata_offset = b.fixed_i64()?;
    let start_nanos = b.fixed_i64()?;
    let _duration = b.fixed_i64()?;
    let start_ticks = b.fixed_i64()?;
    let ticks_per_second = b.fixed_i64()?;
    let features = b.fixed_i32()?;
    // async-profiler leaves a chunk it has not finished claiming 1 GiB: only whole chunks.
    let size = usize::try_from(size)
        .ok()
        .filter(|&s| s >= HEADER_BYTES && s <= b.remaining() + HEADER_BYTES)
        .ok_or_else(|| {
            JfrError::Invalid(format!(
                "the chunk at offset {at} claims {size} bytes, {} are there (an unfinished \
                 recording?)",
                b.remaining() + HEADER_BYTES
            ))
        })?;
    let metadata_offset = usize::try_from(metadata_offset)
        .ok()
        .filter(|&m| (HEADER_BYTES..size).contains(&m))
        .ok_or_else(|| {
            JfrError::Invalid(format!(
                "the chunk at offset {at} has its metadata at {metadata_offset}"
            ))
        })?;
    Ok(Header {
        size,
        metadata_offset,
        start_nanos,
        start_ticks,
        ticks_per_second: ticks_per_second.max(1),
        compressed: features & 1 != 0,
    })
}

/// Reads every chunk of a recording into one tree per event type, each under a root named
/// `root`.
pub fn read(bytes: &[u8], root: &str) -> Result<Recording, JfrError> {
    read_within(bytes, root, None, &own_budget(bytes.len()))
}

/// Reads a recording into one tree per event type and time bucket of `seconds` (each
/// profile's `time`), so that a long recording keeps its course over time.
pub fn read_in_buckets(bytes: &[u8], root: &str, seconds: i64) -> Result<Recording, JfrError> {
    read_within(bytes, root, Some(seconds), &own_budget(bytes.len()))
}

/// The budget of a recording read on its own (a file opened in the viewer): a value per 8
/// bytes, far more than real recordings use (see the tests).
fn own_budget(len: usize) -> Budget {
    let values = len.saturating_mul(8).saturating_add(1 << 16);
    Budget::with_limit(values.saturating_mul(VALUE_BYTES))
}

/// [`read`] (`bucket: None`) or [`read_in_buckets`], every value decoded charged to the
/// request's `budget`.
pub fn read_within(
    bytes: &[u8],
    root: &str,
    bucket: Option<i64>,
    budget: &Budget,
) -> Result<Recording, JfrError> {
    if !is_jfr(bytes) {
        return Err(JfrError::NotJfr);
    }
    let bucket = bucket.map(|s| s.max(1));
    let mut recording = events::Builder::new(root, bytes.len(), bucket.is_some());
    recording.start_nanos = read_chunks(bytes, bucket, &mut recording, budget)?;
    Ok(recording.finish())
}

/// Reads a recording's events one by one, each with its time, thread and stack's source lines
/// ([`timed`]), every value decoded and every stack named charged to `budget`.
pub fn read_timed(bytes: &[u8], budget: &Budget) -> Result<TimedRecording, JfrError> {
    if !is_jfr(bytes) {
        return Err(JfrError::NotJfr);
    }
    let mut timed = timed::TimedBuilder::new(budget);
    read_chunks(bytes, None, &mut timed, budget)?;
    Ok(timed.finish())
}

/// Reads every chunk into `sink`; when the first chunk began (Unix nanoseconds).
fn read_chunks(
    bytes: &[u8],
    bucket: Option<i64>,
    sink: &mut impl events::Sink,
    budget: &Budget,
) -> Result<Option<i64>, JfrError> {
    let (mut at, mut start) = (0, None);
    while at < bytes.len() {
        let h = header(&mut Bytes::new(bytes, at, false))?;
        let chunk = &bytes[at..at + h.size];
        read_chunk(chunk, &h, bucket, sink, budget).map_err(|e| match e {
            JfrError::Truncated { what, offset } => JfrError::Truncated {
                what,
                offset: offset + at,
            },
            e => e,
        })?;
        start.get_or_insert(h.start_nanos);
        at += h.size;
    }
    Ok(start)
}

/// An event's place in its chunk.
struct EventAt {
    start: usize,
    end: usize,
    class: i64,
}

fn read_chunk(
    chunk: &[u8],
    h: &Header,
    bucket: Option<i64>,
    out: &mut impl events::Sink,
    budget: &Budget,
) -> Result<(), JfrError> {
    let mut c = Chunk::default();
    let (mut b, _) = event_at(chunk, h.metadata_offset, h.compressed)?;
    if b.long()? != 0 {
        return Err(JfrError::Invalid(
            "the header's metadata offset is no metadata event".into(),
        ));
    }
    c.types = types::read_metadata(&mut b)?;
    c.string_class = c.types.id_of("java.lang.String");
    let kinds = events::kinds(&c.types);
    let mut found = Vec::new();
    let mut at = HEADER_BYTES;
    while at < chunk.len() {
        let (mut b, end) = event_at(chunk, at, h.compressed)?;
        match b.long()? {
            0 => {}
            1 => c.read_checkpoint(&mut b, budget)?,
            class if events::kind_of(&kinds, class).is_some() => found.push(EventAt {
                start: b.pos(),
                end,
                class,
            }),
            _ => {}
        }
        at = end;
    }
    // Settings first: async-profiler's `event` setting says what its execution samples are.
    // (Two passes, not a sort: a sort's code is ~12 KB of the viewer's worker.)
    let is_setting =
        |f: &&EventAt| events::kind_of(&kinds, f.class).is_some_and(|k| k.is_setting());
    let settings = found.iter().filter(is_setting);
    let ordered = settings.chain(found.iter().filter(|f| !is_setting(f)));
    let clock = clock::Clock {
        start_nanos: h.start_nanos,
        start_ticks: h.start_ticks,
        ticks_per_second: h.ticks_per_second,
        bucket,
    };
    if out.timed() {
        // Kept one by one, each event costs its record.
        budget
            .charge_items::<events::Raw>(found.len().saturating_mul(2), "JFR events")
            .map_err(|e| JfrError::TooLarge(e.to_string()))?;
    }
    let mut sums = events::ChunkSums::new(&c, &kinds, clock, out.mode(), out.timed());
    for f in ordered {
        let mut d = values::Decoder {
            types: &c.types,
            budget,
        };
        let v = d.value(
            &mut Bytes::new(&chunk[..f.end], f.start, h.compressed),
            f.class,
            0,
        )?;
        sums.add(f.class, &v)?;
    }
    out.add(sums)
}

/// A reader of the event at `at`, bounded by its size, after its size; and where it ends.
fn event_at(chunk: &[u8], at: usize, compressed: bool) -> Result<(Bytes<'_>, usize), JfrError> {
    let mut b = Bytes::new(chunk, at, compressed);
    let size = b.int()?;
    let end = usize::try_from(size)
        .ok()
        .filter(|&s| s > 0)
        .and_then(|s| at.checked_add(s))
        .filter(|&e| e <= chunk.len() && e > b.pos())
        .ok_or_else(|| JfrError::Invalid(format!("an event at offset {at} has size {size}")))?;
    Ok((Bytes::new(&chunk[..end], b.pos(), compressed), end))
}

#[cfg(test)]
mod tests;
