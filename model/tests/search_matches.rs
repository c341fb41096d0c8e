//! The keystroke search ([`Matches`] over a [`SearchIndex`]) against the full search
//! ([`search`]): the same functions, match count, covered total and stepping order, over every
//! decodable fixture and over generated profiles.

use embers_model::synth::{SynthOptions, SynthProfile};
use embers_model::testkit::fixtures;
use embers_model::tree::matches::{Matches, SearchIndex};
use embers_model::tree::search::{parse_terms, search, substring_matcher, SearchResult};
use embers_model::{decode_response, NodeId, Profile};

/// Search texts: single and combined terms, case, short and absent ones, Unicode.
const TEXTS: [&str; 12] = [
    "alloc",
    "decode",
    "socket, flush",
    "[k]",
    "::",
    "a",
    "READ",
    "worker-1",
    "no such function",
    "é",
    "über, poll",
    "e, [l] lib",
];

/// Every node, `None`, and one past the end: where stepping can start from.
fn starts(p: &Profile) -> impl Iterator<Item = Option<NodeId>> + '_ {
    let stride = (p.node_count() / 500).max(1);
    let count = p.node_count() as NodeId;
    (0..count)
        .step_by(stride)
        .map(Some)
        .chain([None, Some(count), Some(count.saturating_sub(1))])
}

fn check(p: &Profile, index: &SearchIndex, what: &str) {
    for text in TEXTS {
        let terms = parse_terms(text);
        let full: SearchResult = search(p, substring_matcher(&terms));
        let funcs = index.substring_set(p, &terms);
        assert_eq!(funcs, full.funcs, "{what}: functions for {text:?}");
        let m = Matches::new(p, index, funcs);
        assert_eq!(m.count, full.nodes.len(), "{what}: count for {text:?}");
        assert_eq!(m.total, full.total, "{what}: total for {text:?}");
        for from in starts(p) {
            assert_eq!(
                m.next_after(p, from),
                full.next_after(from),
                "{what}: next after {from:?} for {text:?}"
            );
            assert_eq!(
                m.previous_before(p, from),
                full.previous_before(from),
                "{what}: previous before {from:?} for {text:?}"
            );
        }
        for node in starts(p)
            .flatten()
            .filter(|&n| n < p.node_count() as NodeId)
        {
            assert_eq!(m.is_match(p, node), full.is_match(p, node));
        }
    }
}

#[test]
fn keystroke_search_equals_full_search_on_fixtures() {
    let mut checked = 0;
    for f in fixtures() {
        let Ok(decoded) = decode_response(f.http_status(), &f.response()) else {
            continue;
        };
        let p = decoded.profile;
        check(&p, &SearchIndex::new(&p), &f.name);
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} fixtures decoded");
}

#[test]
fn keystroke_search_equals_full_search_on_generated_profiles() {
    for (nodes, seed) in [(2_000, 1), (30_000, 7), (60_000, 3)] {
        let synth = SynthProfile::generate(SynthOptions {
            nodes,
            seed,
            ..SynthOptions::default()
        });
        let p = decode_response(200, &synth.to_shape_b_json())
            .expect("generated body decodes")
            .profile;
        check(
            &p,
            &SearchIndex::new(&p),
            &format!("{nodes} nodes, seed {seed}"),
        );
    }
}
