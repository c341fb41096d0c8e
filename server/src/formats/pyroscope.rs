//! Pyroscope's ingest API (`POST /ingest`, DeepFlow's agent: `/api/v1/profile/ingest`): its
//! query parameters ([`Params`]) and body forms ([`batches`]).
//!
//! - `name=app.suffix{k=v,…}` (Pyroscope's key): the app is `app_service` (a known profile type
//!   suffix such as `.cpu` or `.alloc_space` is the event type of text formats and is left
//!   off); the labels are tags ([`super::labels`]). A name that is no valid key is the app as
//!   a whole, as DeepFlow does.
//! - `from`, `until`: Unix seconds; samples are placed at `from` (else `until`, else the
//!   profile's own time, else now), to the second, as DeepFlow stores `time`.
//! - `spyName` → `profile_language_type` by DeepFlow's map (`gospy` → `Golang`, ...); another
//!   spy name is stored as sent; none leaves the language to the format (pprof: see
//!   [`super::pprof`]; text: `unknown`).
//! - `units`: the unit of text formats (else the event type's); one of Pyroscope's units.
//! - `sampleRate`: samples per second; eBPF text profiles (`spyName=ebpfspy`) become `on-cpu`
//!   microseconds with it, as DeepFlow's own agent data.
//! - `aggregationType` (or DeepFlow's spelling `aggregrationType`): `sum` or `average`, read and
//!   checked; Embers sums.
//! - `format`: `folded` (the default; `frame;frame value` per line), `lines` (one stack per
//!   line, each counting 1), `pprof`, `jfr` (Pyroscope's Java agent), `perf` (`perf script`
//!   output, Embers' addition). A `multipart/form-data` body is pprof, parts `profile`,
//!   `prev_profile` (the previous profile of cumulative types, subtracted) and
//!   `sample_type_config` (JSON); or JFR, part `jfr` (gzipped or not; the agent's `labels`
//!   part is not read).

use embers_model::budget::Budget;
use embers_model::contract::event::{language_of_spy, Quantity, SDK_EVENT_TYPES};
use embers_model::formats::Format;
use embers_model::wire::pprof::sample_types::SampleTypeConfig;

use super::labels::{tags_of, Labeled};
use super::pprof::Selection;
use super::{gzip, FormatError};
use crate::limits::StackLimits;
use crate::store::Batch;

/// The query parameters, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    /// The app (`app_service`).
    pub app: String,
    /// The profile type a name suffix gave (`cpu` in `app.cpu`).
    pub suffix_event: Option<String>,
    /// The key's labels.
    pub labels: Vec<(String, String)>,
    /// Where samples go, Unix seconds (`from`, else `until`).
    pub time: Option<i64>,
    /// `sampleRate`.
    pub sample_rate: Option<u64>,
    /// `profile_language_type` from `spyName`.
    pub language: Option<String>,
    /// `units`.
    pub units: Option<String>,
    /// `format`.
    pub format: Option<Format>,
}

/// Reads the query parameters.
pub fn params(query: &[(String, String)]) -> Result<Params, FormatError> {
    let get = |key: &str| {
        query
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    };
    let name = get("name")
        .filter(|n| !n.trim().is_empty())
        .ok_or_else(|| {
            FormatError::invalid(
                "name is required: the app and its labels, e.g. name=checkout{env=prod}",
            )
        })?;
    let (app, labels) = parse_key(name).unwrap_or_else(|| (name.trim().to_owned(), Vec::new()));
    let (app, suffix_event) = split_suffix(&app);
    let seconds = |key: &str| get(key).map(|v| time_param(key, v)).transpose();
    let (from, until) = (seconds("from")?, seconds("until")?);
    if let (Some(f), Some(u)) = (from, until) {
        if f > u {
            return Err(FormatError::invalid(format!(
                "from ({f}) is after until ({u})"
            )));
        }
    }
    let sample_rate = get("sampleRate")
        .map(|v| {
            v.trim()
                .parse::<u64>()
                .ok()
                .filter(|&r| r > 0)
                .ok_or_else(|| {
                    FormatError::invalid(format!(
                        "sampleRate must be a positive integer, got '{v}'"
                    ))
                })
        })
        .transpose()?;
    let aggregation = get("aggregationType").or_else(|| get("aggregrationType"));
    if let Some(a) = aggregation.filter(|a| !matches!(*a, "" | "sum" | "average")) {
        return Err(FormatError::invalid(format!(
            "aggregationType must be sum or average, got '{a}'"
        )));
    }
    let units = get("units").filter(|u| !u.is_empty());
    if let Some(u) = units.filter(|u| Quantity::from_unit_label(u).is_none()) {
        return Err(FormatError::invalid(format!(
            "units must be one of samples, objects, goroutines, bytes, lock_samples, \
             lock_nanoseconds, microseconds, nanoseconds; got '{u}'"
        )));
    }
    let language = get("spyName")
        .filter(|s| !s.trim().is_empty())
        .map(|s| language_of_spy(s).map_or_else(|| s.trim().to_owned(), str::to_owned));
    Ok(Params {
        app,
        suffix_event,
        labels,
        time: from.or(until),
        sample_rate,
        language,
        units: units.map(str::to_owned),
        format: get("format").map(format).transpose()?,
    })
}

fn format(name: &str) -> Result<Format, FormatError> {
    match name {
        "" => Ok(Format::Folded),
        name => Format::from_name(name).ok_or_else(|| {
            FormatError::invalid(format!(
                "format={name} is not supported; Embers reads {} (pprof and jfr also as \
                 multipart)",
                Format::names()
            ))
        }),
    }
}

/// Pyroscope's key `app{k=v,...}`: the app and its labels, or `None` when it is no valid key.
pub fn parse_key(name: &str) -> Option<(String, Vec<(String, String)>)> {
    let name = name.trim();
    let Some((app, rest)) = name.split_once('{') else {
        return (!name.is_empty() && !name.contains('}')).then(|| (name.to_owned(), Vec::new()));
    };
    let inner = rest.strip_suffix('}')?;
    let app = app.trim();
    if app.is_empty() || inner.contains(['{', '}']) {
        return None;
    }
    let mut labels = Vec::new();
    for pair in inner.split(',').filter(|p| !p.trim().is_empty()) {
        let (k, v) = pair.split_once('=')?;
        let k = k.trim();
        let key_ok = k
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/'));
        if k.is_empty() || !key_ok {
            return None;
        }
        labels.push((k.to_owned(), v.trim().to_owned()));
    }
    Some((app.to_owned(), labels))
}

/// `app.cpu` → (`app`, `cpu`) when the suffix is a profile type; else the app as it is.
fn split_suffix(app: &str) -> (String, Option<String>) {
    match app.rsplit_once('.') {
        Some((base, suffix))
            if !base.is_empty() && SDK_EVENT_TYPES.iter().any(|(e, _, _)| *e == suffix) =>
        {
            (base.to_owned(), Some(suffix.to_owned()))
        }
        _ => (app.to_owned(), None),
    }
}

/// A body: raw bytes (in `format`), or the parts of a multipart pprof upload.
#[derive(Debug, Clone, Copy)]
pub enum Body<'a> {
    /// The body as sent (gunzipped already if it came with `Content-Encoding: gzip`).
    Raw(&'a [u8]),
    /// `profile`, `prev_profile` and `sample_type_config` parts.
    Multipart {
        /// `profile`.
        profile: &'a [u8],
        /// `prev_profile`.
        previous: Option<&'a [u8]>,
        /// `sample_type_config`.
        config: Option<&'a [u8]>,
    },
}

/// What an ingest request stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ingest {
    /// The batches.
    pub batches: Vec<Batch>,
    /// Labels that are no field, left out.
    pub ignored_labels: Vec<String>,
}

/// The batches of one request; what it expands to (gzipped parts included) is charged to
/// `budget`, and each gzipped part may decompress to `max_bytes` (`--max-ingest-bytes`).
pub fn batches(
    params: &Params,
    body: Body<'_>,
    limits: &StackLimits,
    max_bytes: usize,
    budget: &Budget,
) -> Result<Ingest, FormatError> {
    let labels = params.labels.iter().map(|(k, v)| (k.as_str(), v.as_str()));
    let Labeled { tags, ignored } = tags_of(labels, &params.app)?;
    let pprof_target = |selection| super::pprof::Target {
        app_service: &params.app,
        language: params.language.as_deref(),
        time: params.time,
        tags: &tags,
        selection,
        unit: None,
        budget,
    };
    let batches = match body {
        Body::Multipart {
            profile,
            previous,
            config,
        } => {
            let config: Option<SampleTypeConfig> =
                config
                    .map(serde_json::from_slice)
                    .transpose()
                    .map_err(|e| FormatError::invalid(format!("sample_type_config: {e}")))?;
            let selection = config
                .as_ref()
                .map_or(Selection::Default, Selection::Configured);
            let profile = gzip::maybe_gunzip_within(profile, max_bytes, budget)
                .map_err(|e| e.context("profile"))?;
            // Told apart by its first bytes as every door does (no name: a multipart part).
            if params.format == Some(Format::Jfr) || Format::detect("", &profile) == Format::Jfr {
                return jfr_ingest(params, &profile, &tags, limits, budget, ignored);
            }
            let previous = previous
                .map(|p| gzip::maybe_gunzip_within(p, max_bytes, budget))
                .transpose()
                .map_err(|e| e.context("prev_profile"))?;
            super::pprof::batches(
                &profile,
                previous.as_deref(),
                &pprof_target(selection),
                limits,
            )?
        }
        Body::Raw(bytes) => match params.format.unwrap_or(Format::Folded) {
            Format::Pprof => {
                let bytes = gzip::maybe_gunzip_within(bytes, max_bytes, budget)?;
                super::pprof::batches(&bytes, None, &pprof_target(Selection::Default), limits)?
            }
            Format::Jfr => {
                let bytes = gzip::maybe_gunzip_within(bytes, max_bytes, budget)?;
                return jfr_ingest(params, &bytes, &tags, limits, budget, ignored);
            }
            Format::Perf => perf_ingest(params, text::utf8(bytes)?, &tags, limits)?,
            text_format => vec![text::batch(
                params,
                text_format,
                text::utf8(bytes)?,
                &tags,
                limits,
            )?],
        },
    };
    Ok(Ingest {
        batches,
        ignored_labels: ignored,
    })
}

/// `perf script` text's batches, under the app the key names.
fn perf_ingest(
    params: &Params,
    text: &str,
    tags: &crate::store::Tags,
    limits: &StackLimits,
) -> Result<Vec<Batch>, FormatError> {
    let target = super::perf::Target {
        app_service: Some(&params.app),
        language: params.language.as_deref(),
        event_type: params.suffix_event.as_deref(),
        time: params.time,
        tags,
    };
    super::perf::batches(text, &target, limits)
}

/// A JFR recording's batches. `units` and `aggregationType` describe only the agent's main
/// event, and a recording holds several: each event type keeps its own unit.
fn jfr_ingest(
    params: &Params,
    bytes: &[u8],
    tags: &crate::store::Tags,
    limits: &StackLimits,
    budget: &Budget,
    ignored_labels: Vec<String>,
) -> Result<Ingest, FormatError> {
    let target = super::jfr::Target {
        app_service: &params.app,
        language: params.language.as_deref(),
        time: params.time,
        tags,
        budget,
    };
    Ok(Ingest {
        batches: super::jfr::batches(bytes, &target, limits)?,
        ignored_labels,
    })
}

/// The Unix seconds of parameter `key`'s value `v`.
fn time_param(key: &str, v: &str) -> Result<i64, FormatError> {
    v.trim()
        .parse::<i64>()
        .ok()
        .filter(|&t| t > 0)
        .map(unix_seconds)
        .ok_or_else(|| {
            FormatError::invalid(format!(
                "{key} must be Unix time in seconds (or milliseconds, microseconds, nanoseconds), \
                 got '{v}'"
            ))
        })
}

/// Unix seconds from a time in seconds, milliseconds, microseconds or nanoseconds, told apart
/// by size as senders mix them: no time in seconds passes 1e11 (the year 5138), and no time
/// in milliseconds since 1973 is below it.
fn unix_seconds(t: i64) -> i64 {
    match t {
        t if t >= 100_000_000_000_000_000 => t / 1_000_000_000,
        t if t >= 100_000_000_000_000 => t / 1_000_000,
        t if t >= 100_000_000_000 => t / 1_000,
        t => t,
    }
}

mod text;

#[cfg(test)]
mod tests;
