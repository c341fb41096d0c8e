//! The gate on generated profiles of one program: a planted regression fails it, sampling noise
//! does not, counted samples judge weighted values; the text, Markdown and JSON of a planted
//! regression against golden files (`model/tests/data/gate/`, `BLESS=1` rewrites them).

use super::render::{markdown, text};
use super::*;
use crate::testkit::{check_snapshot, data_dir, sampled_folded};
use crate::tree::profile::Profile;
use crate::wire::folded::parse_folded;

/// The program: where its time goes.
const PROGRAM: [(&str, u32); 4] = [
    ("main;serve;parse", 30),
    ("main;serve;handle;compute", 40),
    ("main;serve;handle;encode", 20),
    ("main;runtime.gcBgMarkWorker", 10),
];

/// The same program with a new function taking 27 % of the time (37 of 137).
fn regressed() -> Vec<(&'static str, u32)> {
    let mut w = PROGRAM.to_vec();
    w.push(("main;serve;handle;checksumAgain", 37));
    w
}

fn profile(weights: &[(&str, u32)], seed: u64) -> Profile {
    parse_folded(&sampled_folded(weights, 5_000, seed), "bench").expect("folded")
}

fn side<'a>(profile: &'a Profile, label: &'a str) -> Side<'a> {
    Side {
        profile,
        label,
        event_type: "samples",
        samples: None,
    }
}

fn options(max_growth: Option<f64>) -> GateOptions {
    GateOptions {
        rule: Rule::default(),
        max_growth,
        max_total_growth: None,
        rows: 5,
    }
}

fn planted_report() -> Report {
    let (base, new) = (profile(&PROGRAM, 1), profile(&regressed(), 2));
    let mut report = gate(
        &side(&base, "main.folded"),
        &side(&new, "pr.folded"),
        &options(Some(5.0)),
    )
    .expect("report");
    report.link = Some("http://embers.example/?app_service=bench&baseline_time_start=1".into());
    report
}

#[test]
fn a_planted_regression_fails_and_is_named_first() {
    let report = planted_report();
    assert!(!report.passed());
    let names: Vec<&str> = report
        .breaches
        .iter()
        .map(|b| b.row.function.as_str())
        .collect();
    assert_eq!(names, ["checksumAgain"], "{report:#?}");
    let b = &report.breaches[0].row;
    assert!((b.change_points - 27.0).abs() < 2.0, "{b:?}");
    assert!(b.significant && b.z > 20.0, "{b:?}");
    assert_eq!(report.self_time[0].function, "checksumAgain");
    // Everything else lost share, which is the same regression seen from the other side.
    assert!(report.self_time[1..].iter().all(|r| r.change_points < 0.0));
}

#[test]
fn noise_of_equal_runs_passes() {
    let mut significant = 0;
    for seed in 0..20 {
        let (a, b) = (profile(&PROGRAM, seed), profile(&PROGRAM, seed + 100));
        let report = gate(&side(&a, "a"), &side(&b, "b"), &options(Some(2.0))).expect("report");
        assert!(report.passed(), "seed {seed}: {:#?}", report.breaches);
        // The noise is there: shares moved, just not by much, and rarely significantly
        // (|z| >= 3 happens to about 3 in 1,000 unchanged functions).
        assert!(report.self_time.iter().any(|r| r.change_points.abs() > 0.1));
        significant += report.self_time.iter().filter(|r| r.significant).count();
    }
    assert!(
        significant <= 1,
        "{significant} of 20 runs' changes called significant"
    );
}

#[test]
fn total_time_growth_has_its_own_limit() {
    let (base, new) = (profile(&PROGRAM, 1), profile(&regressed(), 2));
    let opts = GateOptions {
        max_total_growth: Some(8.0),
        ..options(None)
    };
    let report = gate(&side(&base, "a"), &side(&new, "b"), &opts).expect("report");
    let mut names: Vec<(&str, Metric)> = report
        .breaches
        .iter()
        .map(|b| (b.row.function.as_str(), b.metric))
        .collect();
    names.sort_by_key(|(n, _)| *n);
    // The new function and its caller `handle` (20 + 40 + 37 of 137 against 60 of 100).
    assert_eq!(
        names,
        [
            ("checksumAgain", Metric::TotalTime),
            ("handle", Metric::TotalTime)
        ]
    );
}

#[test]
fn counted_samples_judge_weighted_values() {
    // Microseconds of 10 ms samples: 30 samples each side. As counts, 300,000 "samples"
    // would make +10 points certain; as the 30 samples they are, it is noise.
    let base = parse_folded("main;a 100000\nmain;b 200000\n", "p").expect("base");
    let new = parse_folded("main;a 130000\nmain;b 170000\n", "p").expect("new");
    let weighted = gate(&side(&base, "a"), &side(&new, "b"), &options(Some(5.0))).expect("r");
    assert!(!weighted.passed());
    let counted = |p| Side {
        samples: Some(30),
        ..side(p, "x")
    };
    let report = gate(&counted(&base), &counted(&new), &options(Some(5.0))).expect("r");
    assert!(report.passed(), "{report:#?}");
    let a = report
        .self_time
        .iter()
        .find(|r| r.function == "a")
        .expect("a");
    assert_eq!((a.base_samples, a.new_samples), (10, 13));
    assert!((a.change_points - 10.0).abs() < 1e-9);
}

#[test]
fn an_empty_side_is_an_error() {
    let p = parse_folded("main;a 1\n", "p").expect("p");
    let empty = parse_folded("", "p").expect("empty");
    let err = gate(&side(&empty, "a"), &side(&p, "b"), &options(None)).expect_err("empty");
    assert_eq!(
        err.to_string(),
        "the baseline has no samples: nothing to compare"
    );
    let err = gate(&side(&p, "a"), &side(&empty, "b"), &options(None)).expect_err("empty");
    assert_eq!(
        err.to_string(),
        "the new profile has no samples: nothing to compare"
    );
}

#[test]
fn golden_text_markdown_and_json() {
    let report = planted_report();
    let dir = data_dir().join("gate");
    check_snapshot(&dir.join("planted.txt"), &text(&report));
    check_snapshot(&dir.join("planted.md"), &markdown(&report));
    let json = serde_json::to_string_pretty(&report).expect("json") + "\n";
    check_snapshot(&dir.join("planted.json"), &json);
}
