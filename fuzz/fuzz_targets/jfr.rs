//! JFR recordings (the service's `/ingest?format=jfr`, the Java agent's upload, `import`):
//! reading never panics, loops or holds memory past the budget; every event type's tree has the
//! call-tree invariants; and the service's adapter, reading by the second, stores only what is
//! in range: stacks without empty frames within its limits, values at most `i64::MAX`.
#![no_main]

use embers_fuzz::{alloc, check};
use embers_model::wire::jfr;
use embers_model::Profile;
use embers_server::formats::jfr::{batches, Target};
use embers_server::limits::StackLimits;
use embers_server::store::Tags;
use libfuzzer_sys::fuzz_target;

const LIMITS: StackLimits = StackLimits {
    max_frames: 64,
    max_frame_bytes: 64,
};

fn service(data: &[u8]) {
    let tags = Tags::new();
    let budget = check::request_budget(data.len());
    let target = Target {
        app_service: "app",
        language: None,
        // No time: samples go at their own seconds (the reader's buckets), the path an
        // import takes (the fuzz target reads the whole recording at one time itself).
        time: None,
        tags: &tags,
        budget: &budget,
    };
    let Ok(stored) = batches(data, &target, &LIMITS) else {
        return;
    };
    check::stored_in_range(&stored, &LIMITS);
}

fuzz_target!(|data: &[u8]| {
    alloc::bounded(data.len(), || {
        if let Ok(recording) = jfr::read(data, "root") {
            for p in recording.profiles {
                check::profile_invariants(&Profile::from_table(p.table));
            }
        }
        service(data);
    });
});
