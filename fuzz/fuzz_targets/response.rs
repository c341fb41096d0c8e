//! Raw bytes as a ProfileTracing HTTP body (seeded with the fixtures' answers of both shapes):
//! the one-pass reader and the general serde path must agree, a decoded profile must satisfy
//! the tree invariants, and memory stays within the input's budget.
#![no_main]

use embers_fuzz::{alloc, check};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|body: &[u8]| {
    alloc::bounded(body.len(), || check::decode_both_ways(body));
});
