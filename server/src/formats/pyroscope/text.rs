//! The text bodies of `/ingest`: `folded` (`frame;frame value` lines) and `lines` (one stack
//! per line, each counting 1), as one batch, with eBPF profiles (`spyName=ebpfspy`) turned into
//! the CPU time their samples stand for.

use embers_model::contract::event::unit_of;

use embers_model::formats::Format;

use super::Params;
use crate::formats::{batch_of, FormatError};
use crate::limits::StackLimits;
use crate::store::{Batch, BatchMeta};

/// The body as text.
pub(super) fn utf8(bytes: &[u8]) -> Result<&str, FormatError> {
    std::str::from_utf8(bytes)
        .map_err(|e| FormatError::invalid(format!("the body is not UTF-8 text: {e}")))
}

/// A `folded` or `lines` body as one batch.
pub(super) fn batch(
    params: &Params,
    format: Format,
    text: &str,
    tags: &crate::store::Tags,
    limits: &StackLimits,
) -> Result<Batch, FormatError> {
    let stacks: Vec<(String, u64)> = if format == Format::Lines {
        embers_model::formats::count_lines(text)
            .into_iter()
            .map(|(s, n)| (s.to_owned(), n))
            .collect()
    } else {
        crate::input::parse_samples(text, 1, limits)
            .map_err(|e| FormatError::invalid(e.to_string()))?
            .into_iter()
            .map(|s| (s.stack, s.value))
            .collect()
    };
    let ebpf = params.language.as_deref() == Some("eBPF");
    let event = match (&params.suffix_event, ebpf) {
        (Some(e), false) => e.clone(),
        (Some(e), true) if e != "cpu" => e.clone(),
        (_, true) => "on-cpu".to_owned(),
        (None, false) => "cpu".to_owned(),
    };
    // eBPF samples become the CPU time they stand for (DeepFlow's agent stores microseconds).
    let per_sample = ebpf.then(|| 1_000_000 / params.sample_rate.unwrap_or(100).max(1));
    let stacks = stacks
        .into_iter()
        .map(|(s, v)| (s, per_sample.map_or(v, |us| v.saturating_mul(us))));
    let meta = BatchMeta {
        app_service: params.app.clone(),
        language: params
            .language
            .clone()
            .unwrap_or_else(|| "unknown".to_owned()),
        unit: match (&params.units, ebpf) {
            (Some(u), false) => u.clone(),
            _ => unit_of(&event).to_owned(),
        },
        event_type: event,
        tags: tags.clone(),
    };
    batch_of(
        meta,
        stacks,
        params.time.unwrap_or_else(crate::formats::now_seconds),
        limits,
    )
}
