//! Golden tests over the ProfileTracing fixtures in `tests/data/fixtures/` (copied from the
//! shared emulator fixtures) and our own layout snapshots in `tests/data/layout/`.
//!
//! Layout snapshots are regenerated with `BLESS=1 cargo test -p embers-model --test golden`;
//! review the diff before committing. Paint snapshots live in `tests/paint.rs`.

use embers_model::export::folded::to_folded;
use embers_model::testkit::{check_snapshot, data_dir, fixture, fixtures, Fixture};
use embers_model::tree::stats::function_stats;
use embers_model::view::layout::{layout, LayoutOptions, Viewport};
use embers_model::{decode_response, DecodeError, Profile};
use serde_json::Value;

fn decode(f: &Fixture) -> Result<Profile, DecodeError> {
    decode_response(f.http_status(), &f.response()).map(|d| d.profile)
}

/// The querier's type letter for a function, as `expected.json` records it.
fn type_letter(p: &Profile, func: u32) -> &'static str {
    if func == p.func(0) {
        if p.function_name(func) == "Total" {
            "H"
        } else {
            "P"
        }
    } else {
        p.function_kind(func).type_letter()
    }
}

#[test]
fn every_fixture_decodes_to_its_expected_tree() {
    for f in fixtures() {
        let (name, decoded, expected) = (&f.name, decode(&f), &f.expected);
        if f.expects_error() {
            let err = decoded.expect_err(name);
            let want = &expected["error"];
            match &err {
                DecodeError::Server {
                    http_status,
                    opt_status,
                    description,
                } => {
                    assert_eq!(
                        u64::from(*http_status),
                        want["http_status"].as_u64().unwrap(),
                        "{name}"
                    );
                    assert_eq!(opt_status.as_deref(), want["opt_status"].as_str(), "{name}");
                    assert_eq!(
                        Some(description.as_str()),
                        want["description"].as_str(),
                        "{name}"
                    );
                }
                other => panic!("{name}: expected a server error, got {other:?}"),
            }
            continue;
        }
        let p = decoded.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(to_folded(&p), f.expected_folded(), "{name}: folded stacks");
        assert_eq!(
            p.root_total(),
            expected["root_total"].as_u64().unwrap(),
            "{name}: root total"
        );
        assert_eq!(
            p.node_count() as u64,
            expected["node_count"].as_u64().unwrap(),
            "{name}: node count"
        );
        if !p.is_empty() {
            assert_eq!(
                u64::from(p.max_depth()),
                expected["max_depth"].as_u64().unwrap(),
                "{name}: depth"
            );
        }
        assert_eq!(p.warnings().total(), 0, "{name}: {:?}", p.warnings());
        check_functions(name, &p, &expected["functions"]);
    }
}

fn check_functions(name: &str, p: &Profile, want: &Value) {
    let want = want.as_object().expect("functions object");
    let stats = function_stats(p);
    assert_eq!(stats.len(), want.len(), "{name}: function count");
    for s in &stats {
        let fname = p.function_name(s.func);
        let w = &want[fname];
        assert_eq!(
            s.self_value,
            w["self"].as_u64().unwrap(),
            "{name}: self of {fname}"
        );
        assert_eq!(
            s.total,
            w["total"].as_u64().unwrap(),
            "{name}: total of {fname}"
        );
        assert_eq!(
            type_letter(p, s.func),
            w["type"].as_str().unwrap(),
            "{name}: type of {fname}"
        );
        if let Some(server) = p.server_function_values() {
            let server_total = w
                .get("server_total")
                .and_then(Value::as_u64)
                .unwrap_or(s.total);
            assert_eq!(
                server[s.func as usize].1 as u64, server_total,
                "{name}: server total of {fname}"
            );
        }
    }
}

#[test]
fn shape_a_and_shape_b_of_one_profile_build_identical_models() {
    let pairs = [
        ("process-oncpu-a", "process-oncpu-b"),
        ("host-total-a", "host-total-b"),
        ("recursion-a", "recursion-b"),
    ];
    for (a, b) in pairs {
        let pa = decode(&fixture(a)).unwrap();
        let pb = decode(&fixture(b)).unwrap();
        assert_eq!(pa.node_count(), pb.node_count(), "{a}/{b}");
        for n in pa.nodes() {
            let row = |p: &Profile| {
                (
                    p.name(n).to_string(),
                    p.parent(n),
                    p.depth(n),
                    p.self_value(n),
                    p.total(n),
                    p.start(n),
                )
            };
            assert_eq!(row(&pa), row(&pb), "{a}/{b}: node {n}");
        }
        let opts = LayoutOptions::default();
        let vp = Viewport {
            width_css: 1200.0,
            height_css: 800.0,
            scroll_top_css: 0.0,
        };
        let (mut la, mut lb) = (Vec::new(), Vec::new());
        layout(&pa, 0, &vp, &opts, &mut la);
        layout(&pb, 0, &vp, &opts, &mut lb);
        assert_eq!(la, lb, "{a}/{b}: identical picture");
    }
}

/// Renders the layout of a fixture as text: one line per bar.
fn layout_snapshot(p: &Profile) -> String {
    let opts = LayoutOptions::default();
    let vp = Viewport {
        width_css: 1200.0,
        height_css: 600.0,
        scroll_top_css: 0.0,
    };
    let mut bars = Vec::new();
    layout(p, 0, &vp, &opts, &mut bars);
    let mut out = String::new();
    for b in bars {
        let what = if b.is_frame() {
            p.name(b.node).to_string()
        } else {
            format!("<{} merged>", b.merged)
        };
        out.push_str(&format!(
            "d{:<3} x{:>9.3} w{:>9.3} {}\n",
            b.depth, b.x_css, b.width_css, what
        ));
    }
    out
}

#[test]
fn layout_snapshots_match() {
    for f in fixtures() {
        let Ok(p) = decode(&f) else { continue };
        let path = data_dir().join("layout").join(format!("{}.txt", f.name));
        check_snapshot(&path, &layout_snapshot(&p));
    }
}
