//! Time inside a range from the collector, end to end (issue 37): `agent/tests/workloads/halves.c`
//! spins in `first_half` during the first half of every wall-clock second and in `second_half`
//! (at most a fifth of a CPU) during the second half, profiled live by `serve --profile-host`. A
//! ProfileTracing window [S+50 ms, S+450 ms) of each whole second holds `first_half` (at least
//! 90%), the heatmap's first-half slots hold more samples than its second-half slots, and the
//! samples endpoint's stacks follow the clock.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use clap::Parser;
use embers_server::host_profile::{self, HostProfileArgs};
use embers_server::store::Store;
use serde_json::{json, Value};

use super::common::{folded_of, TempDb, TestServer};
use super::{allowed, now, run_to_end, SERIAL};

/// `serve`'s host profiling options, as the command line gives them.
#[derive(Parser)]
struct Serve {
    #[command(flatten)]
    host: HostProfileArgs,
}

const APP: &str = "embers-halves";

fn body(from: i64, to: i64, extra: Value) -> Value {
    let mut body = json!({"app_service": APP, "profile_language_type": "eBPF",
        "profile_event_type": "on-cpu", "time_start": from, "time_end": to});
    if let (Some(b), Value::Object(more)) = (body.as_object_mut(), extra) {
        b.extend(more);
    }
    body
}

/// The value of the folded lines whose stack names `function`, and of all lines.
fn share(folded: &str, function: &str) -> (u64, u64) {
    let mut of = 0;
    let mut all = 0;
    for line in folded.lines() {
        let Some((stack, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let value: u64 = value.parse().unwrap_or(0);
        all += value;
        if stack.split(';').any(|f| f == function) {
            of += value;
        }
    }
    (of, all)
}

/// Runs the workload for 3.5 s under the collector; the server (and its database, kept while
/// it runs) and the whole seconds it ran.
async fn profiled() -> (TestServer, TempDb, i64, i64) {
    let dir = tempfile::tempdir().expect("dir");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../agent/tests/workloads/halves.c");
    let bin = dir.path().join(APP);
    let built = Command::new("cc")
        .args(["-O2", "-fno-omit-frame-pointer", "-o"])
        .arg(&bin)
        .arg(&source)
        .status()
        .expect("cc");
    assert!(built.success(), "building halves.c failed");
    let db = TempDb::new();
    let store = Arc::new(Store::open(&db.path()).expect("store"));
    let args = Serve::parse_from(["serve", "--profile-host", "--profile-host-interval", "1s"]).host;
    let profiler = host_profile::start(&args, store.clone(), Default::default())
        .expect("starts")
        .expect("asked for");
    let server = TestServer::start_over(store, dir.path().join("no-viewer"), |_| {}).await;
    let started = now();
    let child = Command::new(&bin)
        .arg("3.5")
        .stdout(Stdio::null())
        .spawn()
        .expect("start");
    run_to_end(child, profiler).await;
    let ended = now();
    // Only the seconds it ran from start to end.
    (server, db, started + 1, ended - 1)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_window_inside_a_second_holds_what_ran_then() {
    let _one = SERIAL.lock().await;
    if !allowed() {
        return;
    }
    let (server, _db, first, last) = profiled().await;
    assert!(
        last > first,
        "the run covered whole seconds {first}..{last}"
    );
    let (mut early, mut early_all, mut late, mut late_all) = (0, 0, 0, 0);
    for s in first..=last {
        for (from, to, early_window) in [(50, 450, true), (550, 950, false)] {
            let bounds = json!({"time_start_ms": s * 1000 + from, "time_end_ms": s * 1000 + to});
            let (status, envelope) = server
                .post("/v1/profile/ProfileTracing", &body(s, s, bounds))
                .await;
            assert_eq!(status, 200, "{envelope}");
            assert_eq!(envelope["DESCRIPTION"], "", "every sample had its time");
            let folded = folded_of(&envelope);
            if early_window {
                let (of, all) = share(&folded, "first_half");
                (early, early_all) = (early + of, early_all + all);
            } else {
                let (of, all) = share(&folded, "second_half");
                (late, late_all) = (late + of, late_all + all);
            }
        }
    }
    assert!(early_all > 0 && late_all > 0, "samples in both halves");
    assert!(
        early as f64 >= 0.9 * early_all as f64,
        "first_half has {early} of {early_all} µs in [S+50, S+450) ms"
    );
    assert!(
        late as f64 >= 0.9 * late_all as f64,
        "second_half has {late} of {late_all} µs in [S+550, S+950) ms"
    );
    check_heatmap(&server, first, last).await;
    check_samples(&server, first, last).await;
    server.stop().await;
}

/// The heatmap at 10 slots: the first half's slots (all CPU) hold more than the second's.
async fn check_heatmap(server: &TestServer, first: i64, last: i64) {
    let (status, envelope) = server
        .post(
            "/v1/profile/heatmap",
            &body(first, last, json!({"slots_per_second": 10})),
        )
        .await;
    assert_eq!(status, 200, "{envelope}");
    let map = &envelope["result"];
    assert_eq!(map["resolution"], "ms", "{map}");
    assert_eq!(map["value_kind"], "samples");
    assert_eq!(map["time_start"], first);
    let rows = map["values"].as_array().expect("values");
    assert_eq!(rows.len() as i64, last - first + 1);
    let (mut a, mut b) = (0u64, 0u64);
    for row in rows {
        let slots: Vec<u64> = row
            .as_array()
            .expect("slots")
            .iter()
            .filter_map(Value::as_u64)
            .collect();
        assert_eq!(slots.len(), 10);
        a += slots[..5].iter().sum::<u64>();
        b += slots[5..].iter().sum::<u64>();
    }
    assert!(
        a as f64 >= 1.3 * b as f64,
        "the busy first halves hold {a} samples, the half-idle second halves {b}: {map}"
    );
}

/// The samples of the run: a stack's function follows the half of the second it was taken in.
async fn check_samples(server: &TestServer, first: i64, last: i64) {
    let (status, envelope) = server
        .post("/v1/profile/samples", &body(first, last, json!({})))
        .await;
    assert_eq!(status, 200, "{envelope}");
    let answer = &envelope["result"];
    assert_eq!(answer["resolution"], "ms");
    let stacks = answer["stacks"].as_array().expect("stacks");
    let rows = answer["values"].as_array().expect("values");
    let (mut agree, mut named) = (0, 0);
    let mut previous = i64::MIN;
    for row in rows {
        let time = row[0].as_i64().expect("time_ms");
        assert!(time >= previous, "time order");
        previous = time;
        assert!(row[1].as_u64().is_some(), "a thread: {row}");
        let stack = &stacks[row[2].as_u64().expect("stack") as usize];
        let has = |f: &str| stack.as_array().is_some_and(|s| s.iter().any(|x| x == f));
        let expected = if time.rem_euclid(1000) < 500 {
            "first_half"
        } else {
            "second_half"
        };
        if has("first_half") || has("second_half") {
            named += 1;
            agree += usize::from(has(expected));
        }
    }
    // 99 Hz on a shared 2-core machine: some tens of samples in two seconds.
    assert!(named >= 10, "{named} samples in either function");
    assert!(
        agree as f64 >= 0.9 * named as f64,
        "{agree} of {named} samples ran the function of their half-second"
    );
}
