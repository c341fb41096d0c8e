//! The running sums of one request: each sample's observations added, in nanoseconds, to the
//! row of its batch, second, thread and stack.

use std::collections::{BTreeMap, HashMap};

use data_encoding::HEXLOWER;
use opentelemetry_proto::tonic::profiles::v1development::{
    Link, Profile, ProfilesDictionary, Sample,
};

use super::attrs::{Context, Meaning};
use super::check::{self, index};
use super::convert::observations;
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

/// What names a batch: app_service, event type and tags (trace and span included).
pub(super) type BatchKey = (String, &'static str, BTreeMap<String, String>);

/// The running sums of a request.
pub(super) struct Sums<'a> {
    pub dict: &'a ProfilesDictionary,
    pub meanings: &'a [Meaning],
    pub frames: Frames<'a>,
    /// The batches, in the order first seen, with their rows' sums in nanoseconds.
    pub batches: Vec<(BatchKey, HashMap<Row, u128>)>,
    batch_of: HashMap<BatchKey, usize>,
    /// Thread names, cleaned.
    pub threads: Vec<String>,
    thread_of: HashMap<String, u32>,
}

/// Which batch a sample that may differ from its profile's goes to: the attributes that name
/// a batch, its link, and its thread when the thread names the app_service.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Signature {
    naming: Vec<i32>,
    link: Option<usize>,
    thread: Option<u32>,
}

/// What one profile's samples share.
struct Shared<'c> {
    context: &'c Context,
    measure: Measure,
    /// Seconds of samples without timestamps.
    time: i64,
    /// Whether nothing but a thread names the app_service.
    thread_names_service: bool,
    by_signature: HashMap<Signature, usize>,
}

impl<'a> Sums<'a> {
    pub fn new(dict: &'a ProfilesDictionary, meanings: &'a [Meaning]) -> Sums<'a> {
        Sums {
            dict,
            meanings,
            frames: Frames::new(dict, meanings),
            batches: Vec::new(),
            batch_of: HashMap::new(),
            threads: Vec::new(),
            thread_of: HashMap::new(),
        }
    }

    /// Add one profile's samples; `context` holds its resource's and scope's attributes.
    pub fn profile(
        &mut self,
        profile: &Profile,
        mut context: Context,
        at: &str,
        now: i64,
    ) -> Result<(), OtlpError> {
        self.apply(&mut context, &profile.attribute_indices, &|k| {
            format!("{at}.attribute_indices[{k}]")
        })?;
        let measure = measure::of(profile, &self.dict.string_table, at)?;
        let time = match profile.time_unix_nano / NS_PER_S {
            0 => now,
            // u64::MAX / 1e9 fits in an i64.
            s => i64::try_from(s).unwrap_or(i64::MAX),
        };
        let mut shared = Shared {
            thread_names_service: context.app_service(None).is_none(),
            context: &context,
            measure,
            time,
            by_signature: HashMap::new(),
        };
        for (i, sample) in profile.samples.iter().enumerate() {
            self.sample(sample, &mut shared, &|| format!("{at}.samples[{i}]"))?;
        }
        Ok(())
    }

    /// Check `list` as attribute indices and apply each to `context`.
    fn apply(
        &self,
        context: &mut Context,
        list: &[i32],
        field: &dyn Fn(usize) -> String,
    ) -> Result<(), OtlpError> {
        check::indices(list, self.meanings.len(), "attribute_table", field)?;
        for m in list.iter().filter_map(|&a| self.meaning(a)) {
            context.apply(m);
        }
        Ok(())
    }

    /// The meaning of attribute-table entry `a` (checked).
    fn meaning(&self, a: i32) -> Option<&'a Meaning> {
        self.meanings.get(usize::try_from(a).ok()?)
    }

    /// Add one sample's observations.
    fn sample(
        &mut self,
        sample: &Sample,
        shared: &mut Shared<'_>,
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
        let thread = self.thread(sample, shared.context);
        let batch = self.batch_of_sample(sample, shared, link, thread)?;
        let row = |time| Row {
            time,
            thread,
            stack,
        };
        let ns_per_unit = shared.measure.ns_per_unit;
        let rows = &mut self.batches[batch].1;
        for (j, observed) in observations(sample, shared.time, at).enumerate() {
            let (time, count) = observed?;
            let add = u128::from(count)
                .checked_mul(ns_per_unit)
                .ok_or_else(|| overflow(format!("{}.values[{j}]", at())))?;
            let sum = rows.entry(row(time)).or_insert(0);
            *sum = sum.checked_add(add).ok_or_else(|| overflow(at()))?;
        }
        Ok(())
    }

    /// The sample's thread, interned: its own `thread.name`, else its profile's.
    fn thread(&mut self, sample: &Sample, context: &Context) -> Option<u32> {
        let own = sample
            .attribute_indices
            .iter()
            .rev()
            .find_map(|&a| match self.meaning(a)? {
                Meaning::Thread(t) => Some(t.as_str()),
                _ => None,
            });
        let name = own.or(context.thread.as_deref())?;
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
        shared: &mut Shared<'_>,
        link: Option<usize>,
        thread: Option<u32>,
    ) -> Result<usize, OtlpError> {
        let naming: Vec<i32> = sample
            .attribute_indices
            .iter()
            .copied()
            .filter(|&a| self.meaning(a).is_some_and(Meaning::names_the_batch))
            .collect();
        let signature = Signature {
            naming,
            link,
            thread: thread.filter(|_| shared.thread_names_service),
        };
        if let Some(&batch) = shared.by_signature.get(&signature) {
            return Ok(batch);
        }
        let mut context = shared.context.clone();
        for m in signature.naming.iter().filter_map(|&a| self.meaning(a)) {
            context.apply(m);
        }
        let thread = thread.and_then(|t| self.threads.get(t as usize)).cloned();
        let link = link.and_then(|l| self.dict.link_table.get(l));
        let key = batch_key(&context, shared.measure.event, thread.as_deref(), link);
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

/// The batch a context, event type, thread and link name. A link gives `trace_id`, and
/// `span_name` when no `span.name` attribute did: OTLP links carry the span's id, not its name.
fn batch_key(
    context: &Context,
    event: &'static str,
    thread: Option<&str>,
    link: Option<&Link>,
) -> BatchKey {
    let app_service = clean(context.app_service(thread).unwrap_or("unknown_service"));
    let mut tags = context.tags.clone();
    if let Some(link) = link {
        for (name, id) in [("trace_id", &link.trace_id), ("span_name", &link.span_id)] {
            if !id.is_empty() && !tags.contains_key(name) {
                tags.insert(name.to_owned(), HEXLOWER.encode(id));
            }
        }
    }
    (app_service, event, tags)
}

fn overflow(field: String) -> OtlpError {
    OtlpError::field(
        field,
        "the values add up to more than a 128-bit count of nanoseconds",
    )
}
