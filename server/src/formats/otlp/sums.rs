//! The running sums of one request: each sample's observations added, in nanoseconds, to the
//! row of its batch, second, thread and stack, each timestamped one also kept as an event of
//! the row (its millisecond, `thread.id` and nanoseconds).

use std::collections::{BTreeMap, HashMap};

use data_encoding::HEXLOWER;
use opentelemetry_proto::tonic::profiles::v1development::{
    Link, Profile, ProfilesDictionary, Sample,
};

use super::attrs::{self, Layers, Meaning, Names};
use super::budget::Budget;
use super::check::{self, index};
use super::frames::{clean, Frames};
use super::measure::{self, Measure};
use super::OtlpError;

/// Nanoseconds in a second.
const NS_PER_S: u64 = 1_000_000_000;

/// A row of a batch: second, thread (into [`Sums::threads`]; `None` for no `[t]` frame) and
/// stack (into the stack table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct Row {
    pub time: i64,
    pub thread: Option<u32>,
    pub stack: usize,
}

/// A row's sum in nanoseconds and its timestamped observations.
#[derive(Debug, Default)]
pub(super) struct RowSum {
    pub ns: u128,
    pub events: Vec<Stamp>,
    /// Whether an observation without a timestamp is in it (then its events do not add up to
    /// it, and none are kept).
    pub untimed: bool,
}

/// One timestamped observation: its millisecond in its second, thread id and nanoseconds.
#[derive(Debug, Clone, Copy)]
pub(super) struct Stamp {
    pub offset_ms: u16,
    pub tid: u32,
    pub ns: u128,
}

/// What names a batch: app_service, event type and tags (trace and span included).
pub(super) type BatchKey = (String, &'static str, BTreeMap<String, String>);

/// The running sums of a request.
pub(super) struct Sums<'a> {
    pub dict: &'a ProfilesDictionary,
    meanings: &'a [Meaning<'a>],
    pub frames: Frames<'a>,
    pub budget: Budget,
    /// The batches, in the order first seen, with their rows' sums in nanoseconds.
    pub batches: Vec<(BatchKey, HashMap<Row, RowSum>)>,
    batch_of: HashMap<BatchKey, usize>,
    /// Thread names, cleaned.
    pub threads: Vec<String>,
    thread_of: HashMap<String, u32>,
}

/// Which batch a sample goes to, within its profile: the attributes of its own that name a
/// batch, its link, and its thread when nothing else names the app_service.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Signature {
    naming: Vec<i32>,
    link: Option<usize>,
    thread: Option<u32>,
}

/// What one profile's samples share.
struct Shared<'m, 'a> {
    layers: Layers<'m, 'a>,
    names: Names<'m>,
    measure: Measure,
    /// Seconds of samples without timestamps.
    time: i64,
    by_signature: HashMap<Signature, usize>,
}

impl<'a> Sums<'a> {
    pub fn new(
        dict: &'a ProfilesDictionary,
        meanings: &'a [Meaning<'a>],
        frames: Frames<'a>,
        budget: Budget,
    ) -> Sums<'a> {
        Sums {
            dict,
            meanings,
            frames,
            budget,
            batches: Vec::new(),
            batch_of: HashMap::new(),
            threads: Vec::new(),
            thread_of: HashMap::new(),
        }
    }

    /// Add one profile's samples: `layers` hold its resource's and scope's attributes,
    /// `names` what they say.
    pub fn profile(
        &mut self,
        profile: &Profile,
        layers: Layers<'_, 'a>,
        names: Names<'_>,
        at: &str,
        now: i64,
    ) -> Result<(), OtlpError> {
        let meanings = self.meanings;
        check::indices(
            &profile.attribute_indices,
            meanings.len(),
            "attribute_table",
            |k| format!("{at}.attribute_indices[{k}]"),
        )?;
        let own: Vec<&Meaning<'a>> = profile
            .attribute_indices
            .iter()
            .filter_map(|&a| meanings.get(usize::try_from(a).ok()?))
            .collect();
        let measure = measure::of(profile, &self.dict.string_table, at)?;
        let time = match profile.time_unix_nano / NS_PER_S {
            0 => now,
            // u64::MAX / 1e9 fits in an i64.
            s => i64::try_from(s).unwrap_or(i64::MAX),
        };
        let own_tags = attrs::tags_of(own.iter().copied());
        let mut shared = Shared {
            layers: Layers {
                profile: &own_tags,
                ..layers
            },
            names: names.with(own.iter().copied()),
            measure,
            time,
            by_signature: HashMap::new(),
        };
        for (i, sample) in profile.samples.iter().enumerate() {
            self.sample(sample, &mut shared, &|| format!("{at}.samples[{i}]"))?;
        }
        Ok(())
    }

    /// Add one sample's observations.
    fn sample(
        &mut self,
        sample: &Sample,
        shared: &mut Shared<'_, 'a>,
        at: &dyn Fn() -> String,
    ) -> Result<(), OtlpError> {
        let dict = self.dict;
        let stack = index(
            sample.stack_index,
            dict.stack_table.len(),
            "stack_table",
            || format!("{}.stack_index", at()),
        )?;
        check::indices(
            &sample.attribute_indices,
            self.meanings.len(),
            "attribute_table",
            |k| format!("{}.attribute_indices[{k}]", at()),
        )?;
        let link = index(
            sample.link_index,
            dict.link_table.len(),
            "link_table",
            || format!("{}.link_index", at()),
        )?;
        let link = dict
            .link_table
            .get(link)
            .filter(|l| link > 0 && !check::is_null_link(l))
            .map(|_| link);
        let thread = self.thread(sample, shared.names);
        let tid = shared
            .names
            .with(self.own(sample).map(|(_, m)| m))
            .tid
            .unwrap_or(0);
        let batch = self.batch_of_sample(sample, shared, link, thread)?;
        let row = |time| Row {
            time,
            thread,
            stack,
        };
        let ns_per_unit = shared.measure.ns_per_unit;
        let rows = &mut self.batches[batch].1;
        for (j, observed) in observations(sample, shared.time, at).enumerate() {
            let (time, offset_ms, count) = observed?;
            let add = u128::from(count)
                .checked_mul(ns_per_unit)
                .ok_or_else(|| overflow(format!("{}.values[{j}]", at())))?;
            let sum = rows.entry(row(time)).or_default();
            sum.ns = sum.ns.checked_add(add).ok_or_else(|| overflow(at()))?;
            match offset_ms {
                Some(offset_ms) => sum.events.push(Stamp {
                    offset_ms,
                    tid,
                    ns: add,
                }),
                None => sum.untimed = true,
            }
        }
        Ok(())
    }

    /// The meanings of a sample's own attributes (checked).
    fn own<'s>(&'s self, sample: &'s Sample) -> impl Iterator<Item = (i32, &'a Meaning<'a>)> + 's {
        let meanings = self.meanings;
        sample
            .attribute_indices
            .iter()
            .filter_map(move |&a| Some((a, meanings.get(usize::try_from(a).ok()?)?)))
    }

    /// The sample's thread, interned: its own `thread.name`, else the one above it.
    fn thread(&mut self, sample: &Sample, names: Names<'_>) -> Option<u32> {
        let name = names.with(self.own(sample).map(|(_, m)| m)).thread?;
        if let Some(&id) = self.thread_of.get(name) {
            return Some(id);
        }
        let id = u32::try_from(self.threads.len()).ok()?;
        self.threads.push(clean(name));
        self.thread_of.insert(name.to_owned(), id);
        Some(id)
    }

    /// The batch of a sample: its profile's, unless its own attributes, its link or (when
    /// nothing else names the app_service) its thread say otherwise.
    fn batch_of_sample(
        &mut self,
        sample: &Sample,
        shared: &mut Shared<'_, 'a>,
        link: Option<usize>,
        thread: Option<u32>,
    ) -> Result<usize, OtlpError> {
        let naming: Vec<(i32, &'a Meaning<'a>)> = self
            .own(sample)
            .filter(|(_, m)| m.names_the_batch())
            .collect();
        let names = shared.names.with(naming.iter().map(|(_, m)| *m));
        let signature = Signature {
            naming: naming.iter().map(|(a, _)| *a).collect(),
            link,
            thread: thread.filter(|_| names.app_service(None).is_none()),
        };
        if let Some(&batch) = shared.by_signature.get(&signature) {
            return Ok(batch);
        }
        let thread_name = thread.and_then(|t| self.threads.get(t as usize));
        let app_service = names
            .app_service(None)
            .map(clean)
            .or_else(|| thread_name.cloned())
            .unwrap_or_else(|| "unknown_service".to_owned());
        let extra: Vec<&Meaning<'a>> = naming.iter().map(|(_, m)| *m).collect();
        let mut tags = shared.layers.tags(&extra);
        add_link(&mut tags, link.and_then(|l| self.dict.link_table.get(l)));
        let key = (app_service, shared.measure.event, tags);
        // Every key made is counted, found or new: its making cost as much.
        let size = key.0.len() + key.2.iter().map(|(n, v)| n.len() + v.len()).sum::<usize>();
        self.budget.take(size)?;
        let batch = match self.batch_of.get(&key) {
            Some(&batch) => batch,
            None => {
                self.batches.push((key.clone(), HashMap::new()));
                self.batch_of.insert(key, self.batches.len() - 1);
                self.batches.len() - 1
            }
        };
        shared.by_signature.insert(signature, batch);
        Ok(batch)
    }
}

/// A link gives `trace_id`, and `span_name` when no `span.name` attribute did: OTLP links
/// carry the span's id, not its name.
fn add_link(tags: &mut BTreeMap<String, String>, link: Option<&Link>) {
    if let Some(link) = link {
        for (name, id) in [("trace_id", &link.trace_id), ("span_name", &link.span_id)] {
            if !id.is_empty() && !tags.contains_key(name) {
                tags.insert(name.to_owned(), HEXLOWER.encode(id));
            }
        }
    }
}

fn overflow(field: String) -> OtlpError {
    OtlpError::field(
        field,
        "the values add up to more than a 128-bit count of nanoseconds",
    )
}

/// A sample's observations as (Unix second, millisecond in it, count): one per timestamp
/// (count 1 when there are no values), or its values at `time` (no millisecond) when there are
/// no timestamps.
fn observations<'s>(
    sample: &'s Sample,
    time: i64,
    at: &'s dyn Fn() -> String,
) -> impl Iterator<Item = Result<(i64, Option<u16>, u64), OtlpError>> + 's {
    let (values, stamps) = (&sample.values, &sample.timestamps_unix_nano);
    let shape = match (values.len(), stamps.len()) {
        (0, 0) => Err(OtlpError::field(
            at(),
            "has neither values nor timestamps_unix_nano; a sample needs one of them",
        )),
        (v, t) if v > 0 && t > 0 && v != t => Err(OtlpError::field(
            at(),
            format!(
                "has {v} values and {t} timestamps_unix_nano; when both are given they pair \
                 up one to one"
            ),
        )),
        _ => Ok(()),
    };
    let count = values.len().max(stamps.len());
    let shape = shape.err().map(Err).into_iter();
    shape.chain((0..count).map(move |j| {
        let value = match values.get(j) {
            None => 1,
            Some(&v) => u64::try_from(v).map_err(|_| {
                OtlpError::field(format!("{}.values[{j}]", at()), format!("{v} is negative"))
            })?,
        };
        let offset_ms = stamps
            .get(j)
            .and_then(|&ns| u16::try_from(ns % NS_PER_S / 1_000_000).ok());
        let second = match stamps.get(j) {
            None => time,
            Some(&ns) => match ns / NS_PER_S {
                0 => {
                    return Err(OtlpError::field(
                        format!("{}.timestamps_unix_nano[{j}]", at()),
                        format!("{ns} is not a time (nanoseconds since 1970)"),
                    ))
                }
                // u64::MAX / 1e9 fits in an i64.
                s => i64::try_from(s).unwrap_or(i64::MAX),
            },
        };
        Ok((second, offset_ms, value))
    }))
}
