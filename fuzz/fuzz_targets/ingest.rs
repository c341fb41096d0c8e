//! The service's ingest parser (`server/src/input.rs`). The first byte picks the body form:
//! even, a JSON body (one batch or `{"batches": [...]}`); odd, folded text (the form sent with
//! metadata in the query string). Never a panic; what is accepted is in range: positive
//! times, sample values at most `i64::MAX` (SQLite's integer), non-empty stacks without empty
//! frames within the stack limits (small here, so the fuzzer reaches them), non-blank metadata,
//! integer tag columns that parse as `i64`.
#![no_main]

use embers_fuzz::alloc;
use embers_model::contract::fields::{settable_columns, FieldKind};
use embers_server::input::{parse_json_body, parse_samples};
use embers_server::limits::StackLimits;
use embers_server::store::{Batch, Sample};
use libfuzzer_sys::fuzz_target;

/// "Now" for inputs without a time.
const NOW: i64 = 1_700_000_000;

/// Limits small enough for short inputs to cross them.
const LIMITS: StackLimits = StackLimits {
    max_frames: 16,
    max_frame_bytes: 32,
};

fn sample_in_range(s: &Sample) {
    assert!(s.time > 0, "time {} accepted", s.time);
    assert!(i64::try_from(s.value).is_ok(), "value {} accepted", s.value);
    assert!(!s.stack.is_empty(), "empty stack accepted");
    assert!(
        s.stack.split(';').all(|f| !f.is_empty()),
        "empty frame in {:?}",
        s.stack
    );
    assert!(
        s.stack.split(';').count() <= LIMITS.max_frames,
        "too deep: {:?}",
        s.stack
    );
    assert!(
        s.stack
            .split(';')
            .all(|f| f.len() <= LIMITS.max_frame_bytes),
        "frame too long in {:?}",
        s.stack
    );
}

fn batch_in_range(b: &Batch) {
    for (what, v) in [
        ("app_service", &b.meta.app_service),
        ("language", &b.meta.language),
        ("event type", &b.meta.event_type),
    ] {
        assert!(!v.trim().is_empty(), "blank {what} accepted");
    }
    for def in settable_columns().filter(|d| d.kind == FieldKind::Int) {
        if let Some(v) = b.meta.tags.column(def.name) {
            assert!(
                v.trim().parse::<i64>().is_ok(),
                "{}={v:?} accepted",
                def.name
            );
        }
    }
    b.samples.iter().for_each(sample_in_range);
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, body)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        if let Ok(batches) = alloc::bounded(body.len(), || parse_json_body(body, NOW, &LIMITS)) {
            assert!(!batches.is_empty(), "no batches accepted");
            batches.iter().for_each(batch_in_range);
        }
    } else {
        let text = String::from_utf8_lossy(body);
        if let Ok(samples) = alloc::bounded(text.len(), || parse_samples(&text, NOW, &LIMITS)) {
            samples.iter().for_each(sample_in_range);
        }
    }
});
