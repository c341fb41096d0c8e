//! The SQLite store's event times: written beside their samples, read back by the heatmap, the
//! samples and millisecond windows, dropped by the fine retention and with their samples.

use embers_model::contract::body::parse_tracing_body;
use embers_model::contract::detail::{SampleDetail, TimedEvent};
use embers_model::contract::fine::heatmap::parse_heatmap_body;
use embers_model::contract::fine::samples::parse_samples_body;
use embers_model::contract::fine::Resolution;

use crate::store::{Batch, BatchMeta, Sample, Store, Tags};

const S: i64 = 1_700_000_000;

/// `n` events of `tid` spread over `[from, to)` ms of second `S + second`, 10 each.
fn timed(second: i64, stack: &str, tid: u32, from: u16, to: u16, n: u16) -> Sample {
    let events: Vec<TimedEvent> = (0..n)
        .map(|i| TimedEvent {
            offset_ms: from + i * (to - from) / n,
            tid,
            weight: 10,
        })
        .collect();
    Sample {
        time: S + second,
        stack: stack.into(),
        value: 10 * u64::from(n),
        detail: Some(Box::new(SampleDetail {
            lines: vec![],
            events,
        })),
    }
}

/// Two seconds of a process that runs `first` in the first half of each second and `second`
/// in the other, plus an untimed row in the second second.
pub(crate) fn halves() -> Vec<Batch> {
    let mut samples = Vec::new();
    for s in 0..2 {
        samples.push(timed(s, "main;first", 7, 0, 500, 50));
        samples.push(timed(s, "main;second", 8, 500, 1000, 50));
    }
    samples.push(Sample {
        time: S + 1,
        stack: "main;old".into(),
        value: 30,
        detail: None,
    });
    vec![Batch {
        meta: BatchMeta {
            app_service: "w".into(),
            language: "eBPF".into(),
            event_type: "on-cpu".into(),
            unit: "microseconds".into(),
            tags: Tags::new(),
        },
        samples,
    }]
}

fn body(extra: &str) -> Vec<u8> {
    format!(
        r#"{{"app_service":"w","profile_language_type":"eBPF","profile_event_type":"on-cpu","time_start":{S},"time_end":{}{extra}}}"#,
        S + 1
    )
    .into_bytes()
}

fn stored() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("dir");
    let store = Store::open(&dir.path().join("p.db")).expect("open");
    store.insert(&halves()).expect("insert");
    (dir, store)
}

/// The stacks of a window, sorted.
pub(crate) fn window_stacks(store: &Store, extra: &str) -> (Vec<(String, u64)>, bool) {
    let req = parse_tracing_body(&body(extra)).expect("body");
    let w = req.window.expect("a window");
    let out = store.query_window(&req.selection(), w).expect("query");
    let mut stacks = out.output.stacks;
    stacks.sort();
    (stacks, out.untimed_at_edges)
}

#[test]
fn a_millisecond_window_holds_only_its_events() {
    let (_dir, store) = stored();
    let start = S * 1000;
    let (stacks, untimed) = window_stacks(
        &store,
        &format!(
            r#","time_start_ms":{},"time_end_ms":{}"#,
            start + 50,
            start + 450
        ),
    );
    assert_eq!(
        stacks,
        vec![("main;first".to_owned(), 400)],
        "40 events of 10"
    );
    assert!(!untimed);
    // Across the seconds: the end of the first, the second whole but its last 100 ms.
    let (stacks, untimed) = window_stacks(
        &store,
        &format!(
            r#","time_start_ms":{},"time_end_ms":{}"#,
            start + 600,
            start + 1900
        ),
    );
    assert_eq!(
        stacks,
        vec![
            ("main;first".to_owned(), 500),
            ("main;old".to_owned(), 30),
            ("main;second".to_owned(), 400 + 400),
        ]
    );
    assert!(untimed, "the untimed row was counted whole, and said so");
}

#[test]
fn the_heatmap_and_the_samples_follow_the_clock() {
    let (_dir, store) = stored();
    let q = parse_heatmap_body(&body(r#","slots_per_second":2"#)).expect("body");
    let map = store.heatmap(&q).expect("heatmap");
    assert_eq!(map.resolution, Resolution::Ms);
    assert_eq!(map.values, vec![vec![50, 50], vec![50, 50]]);
    assert_eq!(map.untimed_values, Some(vec![0, 30]));
    let start = S * 1000;
    let q = parse_samples_body(&body(&format!(
        r#","time_start_ms":{},"time_end_ms":{}"#,
        start + 400,
        start + 600
    )))
    .expect("body");
    let got = store.samples(&q).expect("read").expect("fits");
    assert_eq!(got.values.len(), 20, "10 events each side of the half");
    for row in &got.values {
        let leaf = got.stacks[row.2 as usize].last().expect("frame").as_str();
        let half = if row.0 < start + 500 {
            "first"
        } else {
            "second"
        };
        assert_eq!(leaf, half, "{row:?}");
        assert_eq!(row.1, Some(if half == "first" { 7 } else { 8 }));
    }
    assert!(
        got.values.windows(2).all(|p| p[0].0 <= p[1].0),
        "time order"
    );
    assert_eq!(got.resolution, Resolution::Ms);
}

#[test]
fn times_go_with_their_samples_and_by_their_own_retention() {
    let (_dir, store) = stored();
    let count = |store: &Store| {
        store
            .sqlite()
            .expect("sqlite")
            .with_reader(|c| {
                c.query_row("SELECT COUNT(*) FROM profile.sample_times", [], |r| {
                    r.get::<_, i64>(0)
                })
                .map_err(crate::store::StoreError::from)
            })
            .expect("count")
    };
    assert_eq!(count(&store), 4, "one row per timed sample row");
    let sqlite = store.sqlite().expect("sqlite");
    assert_eq!(sqlite.expire_fine_step(S + 1, 1).expect("step"), 1);
    assert_eq!(sqlite.expire_fine_step(S + 1, 10).expect("step"), 1);
    assert_eq!(sqlite.expire_fine_step(S + 1, 10).expect("step"), 0);
    let q = parse_heatmap_body(&body("")).expect("body");
    let map = store.heatmap(&q).expect("heatmap");
    assert_eq!(
        map.values[0].iter().sum::<u64>(),
        0,
        "second S has no times left"
    );
    assert_eq!(map.untimed_values.as_ref().map(|u| u[0]), Some(1000));
    store.expire_step(S + 2, 100).expect("retention");
    assert_eq!(
        count(&store),
        0,
        "the trigger dropped the rest with their samples"
    );
    let q = parse_heatmap_body(&body("")).expect("body");
    assert_eq!(
        store.heatmap(&q).expect("heatmap").resolution,
        Resolution::S
    );
}
