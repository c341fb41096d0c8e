//! pprof (`profile.proto`, the format `go tool pprof`, Pyroscope, Parca and Grafana read and
//! write): bytes → [`Pprof`] (every table read and every index checked, [`decode`]) → one call
//! tree per sample type ([`fold`], a [`NodeTable`](crate::tree::table::NodeTable) the service
//! turns into stored stacks and the viewer into a profile), with the sample types mapped to
//! event types ([`sample_types`]). Writing pprof is [`crate::export::pprof`].
//!
//! Gzip is not read here (the model has no compression): callers gunzip first, the service with
//! `flate2` bounded by its ingest limit, the viewer's worker with the browser's
//! `DecompressionStream`; [`is_gzip`] tells them when to.

mod check;
mod decode;
pub mod fold;
pub mod line_stacks;
pub mod lines;
mod read;
pub mod sample_types;
pub mod stacks;

use thiserror::Error;

pub use decode::{decode, decode_within};
pub use read::{read_profile, read_profile_with_lines, ReadPprof};

use super::protobuf::{repeated_varints, Value, WireError};

/// The comment an Embers export carries its root's name in (`app_service=NAME`).
pub const ROOT_COMMENT: &str = "app_service=";

/// Whether `bytes` start with the gzip magic number (a `.pb.gz` file, a gzipped body).
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// A decoded pprof profile. Strings borrow the input bytes; every index in it was checked.
#[derive(Clone, Debug, Default)]
pub struct Pprof<'a> {
    /// `string_table`; entry 0 is `""`.
    pub strings: Vec<&'a str>,
    /// `sample_type`: what each value of a sample is.
    pub sample_types: Vec<ValueType>,
    /// `period_type`, when given.
    pub period_type: Option<ValueType>,
    /// `period`: the value between two samples, in `period_type`'s unit.
    pub period: i64,
    /// `time_nanos`: when the profile was collected (Unix nanoseconds, 0 when unknown).
    pub time_nanos: i64,
    /// `duration_nanos`.
    pub duration_nanos: i64,
    /// `comment`: string indices.
    pub comments: Vec<u64>,
    /// `default_sample_type` as a string index (0 = not given).
    pub default_sample_type: u64,
    /// The samples.
    pub samples: Samples<'a>,
    /// `mapping`.
    pub mappings: Vec<Mapping>,
    /// `location`, with each one's lines in `lines`.
    pub locations: Vec<Location>,
    /// The lines of every location, in order.
    pub lines: Vec<Line>,
    /// `function`.
    pub functions: Vec<Function>,
    /// The length of the bytes decoded, which bounds what folding may build.
    pub input_len: usize,
    /// Location ids → indices into `locations` (set by [`decode`]).
    pub(crate) location_lookup: check::Ids,
}

/// A sample type or the period type: string indices of its name and unit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ValueType {
    /// `type`.
    pub kind: u64,
    /// `unit`.
    pub unit: u64,
}

/// Where a sample's location ids are: still packed in the input (what every writer sends;
/// decoded only while folding, so a big profile's ids are never all held at once), or, for
/// the unpacked encoding, in [`Samples::unpacked_ids`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleLocations<'a> {
    /// Packed varints, starting at byte `at` of the input.
    Packed {
        /// The packed bytes.
        bytes: &'a [u8],
        /// Where they start, for error positions.
        at: usize,
    },
    /// `unpacked_ids[start..end]`.
    Ids {
        /// First index.
        start: u32,
        /// One past the last.
        end: u32,
    },
}

/// Every sample: location ids (leaf first), values and string labels.
#[derive(Clone, Debug, Default)]
pub struct Samples<'a> {
    /// Per sample: its location ids.
    pub locations: Vec<SampleLocations<'a>>,
    /// The ids of samples that sent them unpacked.
    pub unpacked_ids: Vec<u64>,
    /// Sample `i`'s values are `values[i * k..(i + 1) * k]`, `k` = the number of sample types
    /// (checked at decode time).
    pub values: Vec<i64>,
    /// Sample `i`'s string labels are `labels[label_start[i]..label_start[i + 1]]`.
    pub label_start: Vec<u32>,
    /// `(key, str)` string indices of every string label.
    pub labels: Vec<(u64, u64)>,
    /// How many values each sample had, until [`decode`] checked that all have `k`.
    pub(crate) value_counts: Vec<u32>,
}

impl Samples<'_> {
    /// The number of samples.
    pub fn len(&self) -> usize {
        self.locations.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.locations.is_empty()
    }

    /// The location ids of sample `i`, leaf first, into `out` (cleared first).
    pub fn location_ids(&self, i: usize, out: &mut Vec<u64>) -> Result<(), WireError> {
        out.clear();
        match self.locations.get(i) {
            Some(SampleLocations::Packed { bytes, at }) => {
                repeated_varints(Value::Bytes(bytes), *at, |id| out.push(id))
            }
            Some(&SampleLocations::Ids { start, end }) => {
                out.extend_from_slice(&self.unpacked_ids[start as usize..end as usize]);
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// The `(key, str)` string labels of sample `i`.
    pub fn labels(&self, i: usize) -> &[(u64, u64)] {
        let (a, b) = (self.label_start[i], self.label_start[i + 1]);
        &self.labels[a as usize..b as usize]
    }
}

/// A mapped file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mapping {
    /// `id`.
    pub id: u64,
    /// `memory_start`.
    pub start: u64,
    /// `file_offset`.
    pub file_offset: u64,
    /// `filename` (string index).
    pub file: u64,
}

/// A code address and the functions inlined there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Location {
    /// `id`.
    pub id: u64,
    /// `mapping_id` (0 = none).
    pub mapping_id: u64,
    /// The mapping as an index into [`Pprof::mappings`] ([`NONE`] = none; set by [`decode`]).
    pub mapping: u32,
    /// `address`.
    pub address: u64,
    /// Its lines are `lines[line_start..line_end]`, innermost first.
    pub line_start: u32,
    /// See `line_start`.
    pub line_end: u32,
}

/// One function at a location.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Line {
    /// `function_id`.
    pub function_id: u64,
    /// The function as an index into [`Pprof::functions`] ([`NONE`] = none; set by [`decode`]).
    pub function: u32,
    /// `line`: the source line (1-based; 0 = not given).
    pub line: u32,
}

/// No mapping or function (an id of 0).
pub const NONE: u32 = u32::MAX;

/// A function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Function {
    /// `id`.
    pub id: u64,
    /// `name` (string index).
    pub name: u64,
    /// `system_name` (string index).
    pub system_name: u64,
    /// `filename`: the source file (string index; 0 = not given).
    pub filename: u64,
}

/// Why bytes are not a usable pprof profile; each message names the field and the index.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum PprofError {
    /// The protobuf itself is malformed.
    #[error("not a pprof profile (profile.proto): {0}")]
    Wire(#[from] WireError),
    /// The bytes are gzip: gunzip them first.
    #[error("the profile is gzip-compressed; decompress it first")]
    Gzipped,
    /// A string index past the end of `string_table`.
    #[error("{field} refers to string {index}, but string_table has {len} entries")]
    StringIndex {
        /// The field holding the index.
        field: String,
        /// The index.
        index: u64,
        /// The table's length.
        len: usize,
    },
    /// `string_table[0]` is not empty.
    #[error("string_table[0] must be the empty string")]
    FirstString,
    /// A string that is not UTF-8.
    #[error("string_table[{0}] is not valid UTF-8")]
    NotUtf8(usize),
    /// An id that no table entry has.
    #[error("{field} refers to {table} id {id}, which the profile does not define")]
    MissingId {
        /// The field holding the id.
        field: String,
        /// `location`, `function` or `mapping`.
        table: &'static str,
        /// The id.
        id: u64,
    },
    /// Two entries of a table share an id.
    #[error("{table} id {id} is defined twice")]
    DuplicateId {
        /// The table.
        table: &'static str,
        /// The id.
        id: u64,
    },
    /// A sample with the wrong number of values.
    #[error("sample {sample} has {values} values but the profile has {types} sample types")]
    ValueCount {
        /// 1-based sample number.
        sample: usize,
        /// Its values.
        values: usize,
        /// Sample types.
        types: usize,
    },
    /// The profile has no sample type.
    #[error("the profile has no sample_type")]
    NoSampleType,
    /// A negative value where a measure is expected.
    #[error("sample {sample} has the negative value {value} for {sample_type}")]
    Negative {
        /// 1-based sample number.
        sample: usize,
        /// The value.
        value: i64,
        /// `type/unit`.
        sample_type: String,
    },
    /// Values whose sum does not fit 63 bits.
    #[error("the values of {sample_type} add up to more than {}", i64::MAX)]
    Overflow {
        /// `type/unit`.
        sample_type: String,
    },
    /// Too many samples, locations or frames for 32-bit indices.
    #[error("the profile is too large ({0})")]
    TooLarge(&'static str),
    /// Folding would build far more nodes than the profile has bytes: its stacks repeat
    /// locations with many inlined functions, the shape of a decompression bomb.
    #[error(
        "the profile's stacks expand to more than {0} call-tree nodes (more than one per byte \
         of the profile); it is refused as a decompression bomb"
    )]
    TooManyNodes(usize),
    /// A stack over the caller's limits.
    #[error("{0}")]
    Stack(String),
    /// The profile expands past the request's memory budget.
    #[error("{0}")]
    OverBudget(#[from] crate::budget::OverBudget),
}

impl Pprof<'_> {
    /// String `index` (checked at decode time; an unknown index reads as `""`).
    pub fn string(&self, index: u64) -> &str {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.strings.get(i))
            .copied()
            .unwrap_or("")
    }

    /// The root name an Embers export recorded (its `app_service=NAME` comment).
    pub fn root_name(&self) -> Option<&str> {
        self.comments
            .iter()
            .find_map(|&c| self.string(c).strip_prefix(ROOT_COMMENT))
            .filter(|name| !name.is_empty())
    }

    /// `type/unit` of sample type `i`, as `go tool pprof` names it.
    pub fn sample_type_name(&self, i: usize) -> String {
        self.sample_types.get(i).map_or_else(String::new, |t| {
            format!("{}/{}", self.string(t.kind), self.string(t.unit))
        })
    }
}
