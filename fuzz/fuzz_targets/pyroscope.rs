//! Pyroscope's `/ingest` (`server/src/formats/pyroscope.rs`): the first line is the query
//! string (`k=v&k=v`, values taken as they are), the rest the body. Never a panic; what is
//! accepted is in range: a non-empty app, positive times, values at most `i64::MAX`, stacks
//! without empty frames within the limits, a unit that is a known label or the event's.
#![no_main]

use embers_fuzz::{alloc, check};
use embers_server::formats::pyroscope::{batches, params, Body};
use embers_server::limits::StackLimits;
use libfuzzer_sys::fuzz_target;

const LIMITS: StackLimits = StackLimits {
    max_frames: 16,
    max_frame_bytes: 32,
};

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == b'\n').unwrap_or(data.len());
    let (query, body) = data.split_at(split);
    let query = String::from_utf8_lossy(query);
    let pairs: Vec<(String, String)> = query
        .split('&')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    let body = body.get(1..).unwrap_or_default();
    alloc::bounded(data.len(), || {
        let Ok(p) = params(&pairs) else { return };
        assert!(!p.app.trim().is_empty());
        let Ok(ingest) = batches(
            &p,
            Body::Raw(body),
            &LIMITS,
            1 << 20,
            &check::request_budget(data.len()),
        ) else {
            return;
        };
        for b in &ingest.batches {
            assert!(!b.meta.language.is_empty() && !b.meta.event_type.is_empty());
            for s in &b.samples {
                assert!(s.time > 0 && s.value > 0 && i64::try_from(s.value).is_ok());
                assert!(
                    s.stack.split(';').count() <= LIMITS.max_frames,
                    "{}",
                    s.stack
                );
            }
        }
    });
});
