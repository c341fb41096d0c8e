//! A real JFR recording (OpenJDK 17 recording a workload of ours, `model/tests/data/jfr`)
//! through every way in — `import`, Pyroscope's `/ingest?format=jfr` with the recording as the
//! body, and the multipart upload Pyroscope's Java agent sends (a gzipped `jfr` part and a
//! `labels` part) — must store, per event type, exactly the stacks and sums the JDK's own reader
//! found in the file (`workload.expected.tsv`), answered by ProfileTracing; a damaged recording
//! is a 400 that says what is wrong.

use crate::common;

use std::collections::BTreeSet;
use std::io::Read;

use common::process::{run_fails, run_ok};
use common::{folded_of, TempDb, TestServer};
use serde_json::json;

fn data(name: &str) -> std::path::PathBuf {
    embers_model::testkit::data_dir().join("jfr").join(name)
}

/// The recording's own start, Unix seconds (where samples go when the sender gives no time).
fn start_of(gz: &[u8]) -> i64 {
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_end(&mut raw)
        .expect("gzip");
    let recording = embers_model::wire::jfr::read(&raw, "x").expect("jfr");
    recording.start_nanos.expect("start") / 1_000_000_000
}

/// `app;stack value` lines the JDK's reader found for `event_type`.
fn expected(app: &str, event_type: &str) -> BTreeSet<String> {
    std::fs::read_to_string(data("workload.expected.tsv"))
        .expect("expected")
        .lines()
        .filter_map(|l| {
            let mut cols = l.split('\t');
            let (e, stack, value) = (cols.next()?, cols.next()?, cols.next()?);
            (e == event_type).then(|| format!("{app};{stack} {value}"))
        })
        .collect()
}

async fn stored(server: &TestServer, app: &str, event_type: &str, t: i64) -> BTreeSet<String> {
    stored_in(server, app, event_type, (t - 60, t + 60)).await
}

async fn stored_in(
    server: &TestServer,
    app: &str,
    event_type: &str,
    (start, end): (i64, i64),
) -> BTreeSet<String> {
    let (status, envelope) = server
        .query(&json!({
            "app_service": app, "profile_language_type": "Java",
            "profile_event_type": event_type, "time_start": start, "time_end": end,
        }))
        .await;
    assert_eq!(status, 200, "{envelope}");
    folded_of(&envelope).lines().map(str::to_owned).collect()
}

#[tokio::test]
async fn a_recording_gives_the_jdks_stacks_through_every_way_in() {
    let db = TempDb::new();
    let file = data("workload.jfr.gz");
    let gz = std::fs::read(&file).expect("recording");
    let t = start_of(&gz);
    let db_arg = db.path().into_os_string();
    let out = run_ok([
        "import".as_ref(),
        "--db".as_ref(),
        db_arg.as_os_str(),
        "--app-service".as_ref(),
        "jfr-cli".as_ref(),
        file.as_os_str(),
    ]);
    // No --time: a batch per event type, each sample at its own second (and millisecond:
    // tests/producer_detail/jfr.rs).
    let batches: usize = out
        .rsplit_once(" in ")
        .and_then(|(_, n)| n.split(' ').next()?.parse().ok())
        .expect("a batch count");
    assert_eq!(batches, 8, "{out}");
    let server = TestServer::start(&db.path()).await;
    let url = |app: &str, format: &str| {
        format!(
            "/ingest?name={app}%7Benv%3Dtest%7D&spyName=javaspy&from={t}&until={}{format}",
            t + 4
        )
    };
    let (s, body) = server
        .post_raw(
            &url("jfr-ingest", "&format=jfr"),
            "application/octet-stream",
            gz.clone(),
        )
        .await;
    assert_eq!(s, 200, "{body}");
    // As the agent sends it: format=jfr, units and aggregationType of its main event, a
    // gzipped `jfr` part and a protobuf `labels` part (not read).
    let form = reqwest::multipart::Form::new()
        .part(
            "jfr",
            reqwest::multipart::Part::bytes(gz.clone()).file_name("jfr"),
        )
        .part(
            "labels",
            reqwest::multipart::Part::bytes(vec![0x12, 0x00]).file_name("labels"),
        );
    let response = server
        .client
        .post(format!(
            "{}{}",
            server.base,
            url(
                "jfr-agent",
                "&format=jfr&units=samples&aggregationType=sum&sampleRate=100"
            )
        ))
        .multipart(form)
        .send()
        .await
        .expect("multipart");
    let status = response.status().as_u16();
    assert_eq!(status, 200, "{}", response.text().await.unwrap_or_default());

    for event_type in [
        "cpu",
        "alloc_space",
        "alloc_outside_tlab_bytes",
        "lock_duration",
    ] {
        for app in ["jfr-cli", "jfr-ingest", "jfr-agent"] {
            let got = stored(&server, app, event_type, t).await;
            assert_eq!(got, expected(app, event_type), "{app} {event_type}");
        }
    }
    // Imported, the samples keep their course: one second of the 4-second run holds some of
    // them, not all (time ranges include both ends; sent with `from`, every sample is there).
    let samples_in = |lines: &BTreeSet<String>| -> u64 {
        lines
            .iter()
            .filter_map(|l| l.rsplit_once(' ')?.1.parse::<u64>().ok())
            .sum()
    };
    let all = samples_in(&stored(&server, "jfr-cli", "cpu", t).await);
    let second = samples_in(&stored_in(&server, "jfr-cli", "cpu", (t + 2, t + 2)).await);
    assert!(
        second > 0 && second < all / 2,
        "{second} of {all} samples in one second"
    );
    let at_from = samples_in(&stored_in(&server, "jfr-agent", "cpu", (t, t)).await);
    assert_eq!(at_from, all);
    // The workload's main thread: Workload.hot about twice Workload.warm.
    let cpu = stored(&server, "jfr-agent", "cpu", t).await;
    let samples = |f: &str| -> u64 {
        cpu.iter()
            .filter(|l| l.contains(f))
            .filter_map(|l| l.rsplit_once(' ')?.1.parse::<u64>().ok())
            .sum()
    };
    let (hot, warm) = (samples("Workload.hot"), samples("Workload.warm"));
    assert!(
        hot > warm * 3 / 2 && hot < warm * 4,
        "hot {hot}, warm {warm}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_damaged_recording_is_a_400_that_says_why() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    let ingest = |body: Vec<u8>| {
        server.post_raw(
            "/ingest?name=broken&format=jfr&from=1700000000",
            "application/octet-stream",
            body,
        )
    };
    let (s, body) = ingest(b"not a recording".to_vec()).await;
    assert_eq!(s, 400);
    assert!(body.contains("not a JFR recording"), "{body}");
    let mut raw = Vec::new();
    let gz = std::fs::read(data("workload.jfr.gz")).expect("recording");
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut raw)
        .expect("gzip");
    let (s, body) = ingest(raw[..raw.len() / 3].to_vec()).await;
    assert_eq!(s, 400);
    assert!(body.contains("an unfinished recording"), "{body}");
    server.stop().await;

    // The command line says the same, naming the file, and wants the app.
    let file = data("workload.jfr.gz");
    let db_arg = db.path().into_os_string();
    let err = run_fails([
        "import".as_ref(),
        "--db".as_ref(),
        db_arg.as_os_str(),
        file.as_os_str(),
    ]);
    assert!(err.contains("JFR recordings need --app-service"), "{err}");
}
