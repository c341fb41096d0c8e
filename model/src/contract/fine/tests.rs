//! The fine-time contract: bounds read and checked, the heatmap's cells and caps, the samples'
//! order and caps, and the JSON forms the viewer reads.

use super::heatmap::{parse_heatmap_body, HeatmapBuilder, ValueKind};
use super::samples::{parse_samples_body, SamplesBuilder};
use super::*;
use crate::contract::body::parse_tracing_body;

const BASE: &str =
    r#""app_service":"w","profile_language_type":"eBPF","profile_event_type":"on-cpu""#;

fn body(extra: &str) -> Vec<u8> {
    format!(r#"{{{BASE},"time_start":100,"time_end":101{extra}}}"#).into_bytes()
}

#[test]
fn bounds_narrow_the_seconds_or_say_why_not() {
    let r = parse_tracing_body(&body("")).expect("plain");
    assert_eq!(r.window, None, "no bounds: the seconds as before");
    let r = parse_tracing_body(&body(r#","time_start_ms":100050,"time_end_ms":100450"#))
        .expect("window");
    let w = r.window.expect("set");
    assert_eq!((w.start_ms, w.end_ms), (100_050, 100_450));
    assert!(w.contains(100, 50) && w.contains(100, 449));
    assert!(!w.contains(100, 450) && !w.contains(100, 49) && !w.contains(101, 100));
    assert_eq!((w.first_second(), w.last_second()), (100, 100));
    assert!(!w.is_whole_seconds() && !w.covers_second(100));
    let r = parse_tracing_body(&body(r#","time_end_ms":101500"#)).expect("end only");
    assert_eq!(r.window.map(|w| w.start_ms), Some(100_000));
    let whole = MsWindow::seconds(100, 101);
    assert!(whole.is_whole_seconds() && whole.covers_second(101) && !whole.covers_second(102));
    assert_eq!(whole.last_second(), 101);
    for (extra, says) in [
        (
            r#","time_start_ms":99999"#,
            "outside the range's seconds [100000, 102000)",
        ),
        (
            r#","time_end_ms":102001"#,
            "time_end_ms (102001) is outside",
        ),
        (
            r#","time_start_ms":100500,"time_end_ms":100500"#,
            "must be before",
        ),
        (
            r#","time_start_ms":"1""#,
            "time_start_ms must be an integer",
        ),
    ] {
        let e = parse_tracing_body(&body(extra)).expect_err(extra).0;
        assert!(e.contains(says), "{extra}: {e}");
    }
}

#[test]
fn slots_default_and_cap() {
    assert_eq!(
        parse_heatmap_body(&body("")).expect("ok").slots_per_second,
        50
    );
    let q = parse_samples_body(&body(r#","slots_per_second":1000"#)).expect("ok");
    assert_eq!(q.window, MsWindow::seconds(100, 101));
    for bad in ["0", "1001", "-3"] {
        let e = parse_heatmap_body(&body(&format!(r#","slots_per_second":{bad}"#)))
            .expect_err(bad)
            .0;
        assert!(e.contains("slots_per_second must be 1 to 1000"), "{e}");
    }
    let hour = format!(r#"{{{BASE},"time_start":1000,"time_end":4599}}"#);
    assert!(parse_heatmap_body(hour.as_bytes()).is_ok(), "1 h x 50 fits");
    let more = format!(r#"{{{BASE},"time_start":1000,"time_end":4600}}"#);
    let e = parse_heatmap_body(more.as_bytes()).expect_err("over").0;
    assert!(
        e.contains("180050 cells (3601 s x 50 slots") && e.contains("180000"),
        "{e}"
    );
}

#[test]
fn the_heatmap_counts_events_in_their_slots() {
    let window = MsWindow::narrow(
        MsBounds {
            time_start_ms: Some(100_000),
            time_end_ms: Some(101_500),
        },
        100,
        101,
    )
    .expect("window");
    let mut h = HeatmapBuilder::new(window, 4);
    for (s, o) in [
        (100, 0),
        (100, 249),
        (100, 250),
        (100, 999),
        (101, 499),
        (101, 500),
        (99, 1),
    ] {
        h.event(s, o);
    }
    h.untimed(101, 7);
    let a = h.finish();
    assert_eq!((a.time_start, a.slots_per_second), (100, 4));
    assert_eq!(
        a.values,
        vec![vec![2, 1, 0, 1], vec![0, 1, 0, 0]],
        "101.500 is past the end"
    );
    assert_eq!(
        (a.value_kind, a.resolution),
        (ValueKind::Samples, Resolution::Ms)
    );
    assert_eq!(a.untimed_values, Some(vec![0, 7]));
    let json = serde_json::to_value(&a).expect("json");
    assert_eq!(json["resolution"], "ms");
    assert_eq!(json["value_kind"], "samples");
    let mut s = HeatmapBuilder::new(MsWindow::seconds(100, 101), 50);
    s.untimed(100, 3);
    let a = s.finish();
    assert_eq!((a.slots_per_second, a.resolution), (1, Resolution::S));
    assert_eq!(
        (a.values, a.value_kind),
        (vec![vec![3], vec![0]], ValueKind::Values)
    );
}

#[test]
fn samples_come_in_time_order_with_stacks_by_first_use() {
    let mut b = SamplesBuilder::new();
    let late = b.stack("main;late");
    let early = b.stack("main;early");
    assert_eq!(b.stack("main;late"), late, "a stack is listed once");
    b.event(100_900, 2, late, 10).expect("room");
    b.event(100_100, 1, early, 10).expect("room");
    b.event(100_100, 1, late, 10).expect("room");
    let a = b.finish();
    assert_eq!(a.columns, ["time_ms", "thread", "stack", "value"]);
    assert_eq!(a.stacks, vec![vec!["main", "early"], vec!["main", "late"]]);
    let rows: Vec<_> = a.values.iter().map(|r| (r.0, r.2)).collect();
    assert_eq!(rows, vec![(100_100, 0), (100_100, 1), (100_900, 1)]);
    assert_eq!(a.resolution, Resolution::Ms);
    let json = serde_json::to_string(&a.values[0]).expect("json");
    assert_eq!(json, "[100100,1,0,10]");
    let mut b = SamplesBuilder::new();
    let st = b.stack("a");
    b.untimed(100, st, 5).expect("room");
    let a = b.finish();
    assert_eq!(a.resolution, Resolution::S);
    assert_eq!(
        serde_json::to_string(&a.values[0]).expect("json"),
        "[100000,null,0,5]"
    );
}

#[test]
fn samples_stop_at_the_cap_with_the_numbers() {
    let mut b = SamplesBuilder::new();
    let st = b.stack("a");
    for i in 0..MAX_SAMPLES {
        b.event(100_000 + (i as i64 % 10_000), 1, st, 1)
            .expect("room");
    }
    let e = b.event(100_000, 1, st, 1).expect_err("full");
    let text = e.to_string();
    assert!(
        text.contains("more than 100000 samples") && text.contains("over 10 s"),
        "{text}"
    );
}

#[test]
fn the_viewers_body_is_what_the_service_reads() {
    let sent = FineRequest {
        request: crate::contract::request::ProfileRequest {
            app_service: Some("w".into()),
            profile_language_type: "eBPF".into(),
            profile_event_type: "on-cpu".into(),
            time_start: 100,
            time_end: 101,
            ..Default::default()
        },
        bounds: MsBounds {
            time_start_ms: Some(100_050),
            time_end_ms: Some(100_450),
        },
        slots_per_second: Some(20),
    };
    let json = serde_json::to_vec(&sent).expect("json");
    let q = parse_heatmap_body(&json).expect("reads");
    assert_eq!(q.tracing.request, sent.request);
    assert_eq!(
        (q.window.start_ms, q.window.end_ms, q.slots_per_second),
        (100_050, 100_450, 20)
    );
    let back: FineRequest = serde_json::from_slice(&json).expect("back");
    assert_eq!(back, sent);
}
