//! Folded-stack text (the viewer's import and the service's ingest): parsing never panics;
//! a parsed profile satisfies the tree invariants; `to_folded_stacks` reads back to the same
//! tree and text (a fixed point after one round); the service's line parser accepts exactly
//! the same lines, except values above `i64::MAX`, which it refuses instead of capping (its
//! stack limits are lifted here: they are the ingest target's business).
#![no_main]

use embers_fuzz::{alloc, check};
use embers_model::export::folded::{to_folded, to_folded_stacks};
use embers_model::wire::folded::parse_folded;
use embers_server::input::parse_samples;
use embers_server::limits::StackLimits;
use libfuzzer_sys::fuzz_target;

const UNLIMITED: StackLimits = StackLimits {
    max_frames: usize::MAX,
    max_frame_bytes: usize::MAX,
};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let parsed = alloc::bounded(text.len(), || parse_folded(&text, "root"));
    let service = parse_samples(&text, 1, &UNLIMITED);
    let profile = match parsed {
        Ok(p) => p,
        Err(e) => {
            let refused = service.expect_err("the service accepts text the model refuses");
            // The service also stops at an earlier value above i64::MAX.
            let line = refused.line.expect("a line number");
            assert!(line <= e.line, "the service fails later: {refused} vs {e}");
            if line < e.line {
                assert!(refused.message.contains("too large"), "{refused} vs {e}");
            }
            return;
        }
    };
    if let Err(e) = &service {
        assert!(
            e.message.contains("too large"),
            "the service refuses a valid line: {e}"
        );
    }
    check::profile_invariants(&profile);
    let written = to_folded_stacks(&profile);
    let again = parse_folded(&written, "root").expect("written folded stacks parse");
    assert_eq!(
        to_folded(&again),
        to_folded(&profile),
        "round trip changes the tree"
    );
    assert_eq!(
        to_folded_stacks(&again),
        written,
        "round trip is not a fixed point"
    );
});
