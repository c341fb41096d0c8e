//! Structured shape-B answers (see `embers_fuzz::gen::shape_b`): both renderings decode the
//! same way as each other (fast readers vs serde fallbacks) and the one-pass reader agrees with
//! the general path on each; invariants and the memory budget hold.
#![no_main]

use embers_fuzz::gen::shape_b::Answer;
use embers_fuzz::{alloc, check};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|answer: Answer| {
    let fast = answer.render(false);
    let slow = answer.render(true);
    check::show("fast rendering", &fast);
    check::show("slow rendering", &slow);
    let a = alloc::bounded(fast.len(), || check::decode_both_ways(&fast));
    let b = alloc::bounded(slow.len(), || check::decode_both_ways(&slow));
    if !answer.edited() {
        check::same_outcome(&a, &b, "fast readers vs serde fallbacks");
    }
});
