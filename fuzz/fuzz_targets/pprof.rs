//! pprof bytes (the service's `/ingest`, push and import, the viewer's *Open*): decoding and
//! folding never panic and hold memory within the budget; every sample type folds into a tree
//! with the call-tree invariants; Embers' own export of that tree reads back to the same tree
//! (a fixed point after one round, root name included); and the service's adapter stores only
//! what is in range: stacks without empty frames within its limits, values at most `i64::MAX`.
#![no_main]

use embers_fuzz::{alloc, check};
use embers_model::contract::event::Quantity;
use embers_model::export::folded::to_folded;
use embers_model::export::pprof::{to_pprof, PprofMeta};
use embers_model::wire::pprof::fold::fold;
use embers_model::wire::pprof::{decode, read_profile};
use embers_model::Profile;
use embers_server::formats::pprof::{batches, Selection, Target};
use embers_server::limits::StackLimits;
use embers_server::store::Tags;
use libfuzzer_sys::fuzz_target;

const LIMITS: StackLimits = StackLimits {
    max_frames: 64,
    max_frame_bytes: 64,
};

fn round_trip(profile: &Profile) {
    let meta = PprofMeta {
        event_type: "on-cpu",
        quantity: Quantity::Microseconds,
        time_nanos: 0,
        duration_nanos: 0,
    };
    let written = to_pprof(profile, &meta);
    let back = decode(&written).expect("Embers' own pprof decodes");
    let root = back.root_name().unwrap_or("");
    if !profile.is_empty() {
        assert_eq!(root, profile.name(0), "the root's name is not kept");
    }
    let again = Profile::from_table(fold(&back, root, 0).expect("Embers' own pprof folds"));
    assert_eq!(
        to_folded(&again),
        to_folded(profile),
        "the round trip changes the tree"
    );
}

fn service(data: &[u8]) {
    let tags = Tags::new();
    let budget = check::request_budget(data.len());
    let target = Target {
        app_service: "app",
        language: None,
        time: Some(1),
        tags: &tags,
        selection: Selection::Default,
        unit: None,
        budget: &budget,
    };
    let Ok(stored) = batches(data, None, &target, &LIMITS) else {
        return;
    };
    check::stored_in_range(&stored, &LIMITS);
}

fuzz_target!(|data: &[u8]| {
    alloc::bounded(data.len(), || {
        let Ok(p) = decode(data) else { return };
        for index in 0..p.sample_types.len() {
            if let Ok(table) = fold(&p, "root", index) {
                let profile = Profile::from_table(table);
                check::profile_invariants(&profile);
                if !profile.is_empty() {
                    round_trip(&profile);
                }
            }
        }
        let _ = read_profile(data, "root");
        service(data);
    });
});
