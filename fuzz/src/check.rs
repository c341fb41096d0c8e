//! The properties every target asserts, beyond "does not panic".

use embers_model::contract::shape::ResultShape;
use embers_model::wire::{decode_response_table, decode_result_table, DecodedTable};
use embers_model::Profile;
use serde::Deserialize;
use serde_json::value::RawValue;

/// Checks the call-tree invariants of a decoded profile: the model's own validator
/// (`from_parts` re-checks every index and range), then what it does not cover: totals at
/// least self plus children, children partitioning their parent's preorder range, siblings in
/// strictly increasing name order (repeated siblings were merged).
pub fn profile_invariants(profile: &Profile) {
    let described = format!("{profile:?}");
    if let Err(e) = Profile::from_parts(profile.clone().into_parts()) {
        panic!("decoded profile fails its own check: {e}\n{described}");
    }
    for node in profile.nodes() {
        let mut next = node + 1;
        let mut children_total = 0u64;
        let mut previous_name: Option<&str> = None;
        for child in profile.children(node) {
            assert_eq!(child, next, "child ranges do not follow each other");
            assert_eq!(profile.parent(child), Some(node), "child's parent");
            assert!(profile.subtree_end(child) > child, "empty subtree range");
            children_total = children_total.saturating_add(profile.total(child));
            let name = profile.name(child);
            if let Some(prev) = previous_name {
                assert!(
                    prev < name,
                    "siblings {prev:?} and {name:?} out of order or repeated"
                );
            }
            previous_name = Some(name);
            next = profile.subtree_end(child);
        }
        assert_eq!(
            next,
            profile.subtree_end(node),
            "children do not fill the subtree"
        );
        let needed = profile.self_value(node).saturating_add(children_total);
        assert!(
            profile.total(node) >= needed,
            "node {node}: total {} < self {} + children {children_total}",
            profile.total(node),
            profile.self_value(node)
        );
    }
}

/// The response envelope as the general path reads it (a copy of the model's private one:
/// `result` left raw, members checked by serde).
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "OPT_STATUS")]
    opt_status: Option<String>,
    #[serde(rename = "DESCRIPTION", default)]
    description: Option<String>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
}

/// The general (serde) path of a 200 answer, bypassing the one-pass reader; a non-blank
/// `DESCRIPTION` is the answer's notice.
fn general_path(body: &[u8]) -> Option<DecodedTable> {
    let envelope: Envelope = serde_json::from_slice(body).ok()?;
    if envelope.opt_status.as_deref() != Some("SUCCESS") {
        return None;
    }
    let mut decoded = decode_result_table(envelope.result).ok()?;
    decoded.notice = envelope.description.filter(|d| !d.trim().is_empty());
    Some(decoded)
}

/// A decoded answer in comparable form: the shape, the notice and the profile (as text, for
/// comparing, and itself, for checking).
pub type Outcome = Option<(Option<ResultShape>, String, Profile)>;

/// Decodes a 200 answer the way the viewer does (one-pass reader first) and checks that the
/// general path agrees: both fail, or both give the same shape and the same tree. Returns the
/// outcome, invariants checked. Also decodes it as an error status (must not panic).
pub fn decode_both_ways(body: &[u8]) -> Outcome {
    let _ = decode_response_table(500, body);
    let fast = decode_response_table(200, body).ok().map(built);
    let general = general_path(body).map(built);
    match (&fast, &general) {
        (None, None) => {}
        (Some((fs, fp, _)), Some((gs, gp, _))) => {
            assert_eq!(fs, gs, "the two paths disagree on the shape");
            assert_eq!(
                fp, gp,
                "the one-pass reader and the general path build different trees"
            );
        }
        (Some(_), None) => panic!("the one-pass reader accepts a body the general path rejects"),
        (None, Some(_)) => panic!("the one-pass reader rejects a body the general path accepts"),
    }
    if let Some((_, _, profile)) = &fast {
        profile_invariants(profile);
    }
    fast
}

fn built(table: DecodedTable) -> (Option<ResultShape>, String, Profile) {
    let decoded = table.build();
    (
        decoded.shape,
        format!("notice {:?}\n{:?}", decoded.notice, decoded.profile),
        decoded.profile,
    )
}

/// Asserts that two renderings of the same answer decode alike (both fail, or the same tree).
pub fn same_outcome(a: &Outcome, b: &Outcome, what: &str) {
    match (a, b) {
        (None, None) => {}
        (Some((sa, pa, _)), Some((sb, pb, _))) => {
            assert_eq!(sa, sb, "{what}: shapes differ");
            assert_eq!(pa, pb, "{what}: trees differ");
        }
        _ => panic!(
            "{what}: one rendering decodes, the other does not ({} vs {})",
            a.is_some(),
            b.is_some()
        ),
    }
}

/// Prints a rendered input when `EMBERS_FUZZ_SHOW` is set: structured targets' crash files
/// hold the generator's bytes, not the body that failed (run the target on the crash file
/// with the variable set to see it).
pub fn show(label: &str, bytes: &[u8]) {
    static SHOW: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *SHOW.get_or_init(|| std::env::var_os("EMBERS_FUZZ_SHOW").is_some()) {
        eprintln!("{label}: {}", String::from_utf8_lossy(bytes).escape_debug());
    }
}

/// What a format adapter stored is in range: values in `1..=i64::MAX`, stacks within `limits`
/// and without empty frames (the pprof and JFR targets).
pub fn stored_in_range(
    batches: &[embers_server::store::Batch],
    limits: &embers_server::limits::StackLimits,
) {
    for batch in batches {
        for s in &batch.samples {
            assert!(
                i64::try_from(s.value).is_ok() && s.value > 0,
                "value {}",
                s.value
            );
            let frames: Vec<&str> = s.stack.split(';').collect();
            assert!(frames.len() <= limits.max_frames, "too deep: {}", s.stack);
            assert!(
                frames
                    .iter()
                    .all(|f| !f.is_empty() && f.len() <= limits.max_frame_bytes),
                "a frame empty or too long: {}",
                s.stack
            );
        }
    }
}

/// The request budget the service's adapters get here: what a small input may expand to,
/// well inside [`crate::alloc`]'s bound for the same input, so an adapter that charges less
/// than it allocates is caught by the allocator, not hidden by a generous budget.
pub fn request_budget(len: usize) -> embers_model::budget::Budget {
    embers_model::budget::Budget::with_limit((4 << 20) + len.saturating_mul(64))
}
