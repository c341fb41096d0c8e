//! A request → the store's batches. Samples are summed per batch (app_service, event type,
//! tags, trace and span), second, thread and stack, in nanoseconds ([`super::sums`]), and stored
//! as microseconds rounded once per row: one row per second and stack, as a folded ingest of
//! the same stacks would write, however many timestamps the samples carry. A row keeps its
//! stack's source lines and, when every observation in it was timestamped, each one's
//! millisecond and thread as events whose microseconds add up to the row's.

use opentelemetry_proto::tonic::profiles::v1development::ProfilesDictionary;

use super::attrs::{self, Layers, Meaning, Names};
use super::budget::{Bounds, Budget};
use super::check;
use super::frames::Frames;
use super::sums::{BatchKey, Row, RowSum, Stamp, Sums};
use super::{ExportProfilesServiceRequest, OtlpError};
use crate::input::check_stack_size;
use crate::limits::StackLimits;
use crate::store::{Batch, BatchMeta, Sample as Stored, Tags};
use embers_model::contract::detail::{SampleDetail, SourceLine, TimedEvent};
use embers_model::contract::event::{DEFAULT_LANGUAGE, DEFAULT_UNIT};

/// Nanoseconds in a microsecond.
const NS_PER_US: u128 = 1_000;

/// The batches `request` holds; `now` (Unix seconds) times profiles that carry no time. The
/// whole request is checked and converted before it returns: an error means nothing of it is
/// usable.
pub fn to_batches(
    request: &ExportProfilesServiceRequest,
    now: i64,
    bounds: &Bounds,
) -> Result<Vec<Batch>, OtlpError> {
    let empty = ProfilesDictionary::default();
    let dict = request.dictionary.as_ref().unwrap_or(&empty);
    check::dictionary(dict)?;
    let strings = &dict.string_table;
    let meanings: Vec<Meaning> = dict
        .attribute_table
        .iter()
        .map(|a| attrs::of_entry(a, strings))
        .collect();
    let frames = Frames::new(dict, &meanings, bounds.stacks);
    let mut sums = Sums::new(dict, &meanings, frames, Budget::new(bounds.max_text));
    for (r, rp) in request.resource_profiles.iter().enumerate() {
        let at = format!("resource_profiles[{r}]");
        let attributes = rp.resource.as_ref().map_or(&[][..], |res| &res.attributes);
        check::key_values(attributes, strings.len(), &|k| {
            format!("{at}.resource.attributes[{k}]")
        })?;
        let resource = attrs::of_key_values(attributes, strings);
        let names = Names::default().with(&resource);
        let resource_tags = attrs::tags_of(&resource);
        for (s, sp) in rp.scope_profiles.iter().enumerate() {
            let at = format!("{at}.scope_profiles[{s}]");
            let attributes = sp.scope.as_ref().map_or(&[][..], |sc| &sc.attributes);
            check::key_values(attributes, strings.len(), &|k| {
                format!("{at}.scope.attributes[{k}]")
            })?;
            let scope = attrs::of_key_values(attributes, strings);
            let scope_tags = attrs::tags_of(&scope);
            let layers = Layers {
                resource: &resource_tags,
                scope: &scope_tags,
                profile: &[],
            };
            let names = names.with(&scope);
            for (p, profile) in sp.profiles.iter().enumerate() {
                sums.profile(profile, layers, names, &format!("{at}.profiles[{p}]"), now)?;
            }
        }
    }
    finish(sums, &bounds.stacks)
}

/// The batches of the sums: rows in microseconds (rows that round to 0 µs are left out),
/// stacks named, limits checked.
fn finish(mut sums: Sums<'_>, limits: &StackLimits) -> Result<Vec<Batch>, OtlpError> {
    let batches = std::mem::take(&mut sums.batches);
    let mut out = Vec::with_capacity(batches.len());
    for (key, rows) in batches {
        let mut rows: Vec<(Row, RowSum)> = rows.into_iter().collect();
        // Sorted, so the same request always writes the same rows in the same order.
        rows.sort_unstable_by_key(|(row, _)| *row);
        let mut samples = Vec::with_capacity(rows.len());
        for (row, sum) in rows {
            let ns = sum.ns;
            let micros = (ns + NS_PER_US / 2) / NS_PER_US;
            if micros == 0 {
                continue;
            }
            let value = u64::try_from(micros)
                .ok()
                .filter(|v| i64::try_from(*v).is_ok())
                .ok_or_else(|| {
                    OtlpError::field(
                        format!("dictionary.stack_table[{}]", row.stack),
                        format!(
                            "its samples in second {} add up to {micros} µs, more than {}",
                            row.time,
                            i64::MAX
                        ),
                    )
                })?;
            let (stack, lines) = stack_text(&mut sums, row, limits)?;
            let events = match sum.untimed {
                true => Vec::new(),
                false => events_of(sum.events, value),
            };
            let detail = SampleDetail { lines, events };
            samples.push(Stored {
                time: row.time,
                stack,
                value,
                detail: (!detail.is_empty()).then(|| Box::new(detail)),
            });
        }
        if !samples.is_empty() {
            out.push(Batch {
                meta: meta(key)?,
                samples,
            });
        }
    }
    Ok(out)
}

/// A row's events in time order, their nanoseconds rounded to microseconds as they add up, so
/// that their weights add up to the row's `micros` (events that round to nothing are left out).
fn events_of(mut stamps: Vec<Stamp>, micros: u64) -> Vec<TimedEvent> {
    stamps.sort_by_key(|s| s.offset_ms);
    let (mut ns, mut given) = (0u128, 0u64);
    let mut out = Vec::with_capacity(stamps.len());
    for s in stamps {
        ns = ns.saturating_add(s.ns);
        let upto = u64::try_from((ns + NS_PER_US / 2) / NS_PER_US)
            .unwrap_or(micros)
            .min(micros);
        let weight = upto - given;
        given = upto;
        if weight > 0 {
            out.push(TimedEvent {
                offset_ms: s.offset_ms,
                tid: s.tid,
                weight,
            });
        }
    }
    out
}

/// A row's stack as stored: `[t] thread` first, then the stack's frames; `[unknown]` when
/// neither exists. With the frames' source lines (none when no frame has one).
fn stack_text(
    sums: &mut Sums<'_>,
    row: Row,
    limits: &StackLimits,
) -> Result<(String, Vec<Option<SourceLine>>), OtlpError> {
    let thread = row
        .thread
        .and_then(|t| sums.threads.get(t as usize))
        .map(|name| format!("[t] {name}"));
    let named = sums.frames.stack(row.stack, &mut sums.budget)?;
    let frames = named.frames + usize::from(thread.is_some());
    let longest = named.longest.max(thread.as_ref().map_or(0, String::len));
    check_stack_size(frames, longest, limits)
        .map_err(|e| OtlpError::field(format!("dictionary.stack_table[{}]", row.stack), e))?;
    let mut lines = Vec::new();
    if named.lines.iter().any(Option::is_some) {
        lines.extend(thread.as_ref().map(|_| None));
        lines.extend(named.lines.iter().cloned());
    }
    let text = match (thread, named.text.is_empty()) {
        (Some(t), true) => t,
        (Some(t), false) => format!("{t};{}", named.text),
        (None, false) => named.text.clone(),
        (None, true) => "[unknown]".to_owned(),
    };
    sums.budget.take(text.len())?;
    Ok((text, lines))
}

/// The store's metadata for a batch key.
fn meta((app_service, event, tags): BatchKey) -> Result<BatchMeta, OtlpError> {
    let mut checked = Tags::new();
    for (name, value) in &tags {
        checked
            .set(name, value)
            .map_err(|e| OtlpError::field("attributes", e))?;
    }
    Ok(BatchMeta {
        app_service,
        language: DEFAULT_LANGUAGE.to_owned(),
        event_type: event.to_owned(),
        unit: DEFAULT_UNIT.to_owned(),
        tags: checked,
    })
}
