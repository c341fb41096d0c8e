//! Durability and atomicity: data survives a restart, a bad batch writes nothing; and the real
//! binary: `import` (all-or-nothing per file), `serve` printing its URL with port 0, `--demo`,
//! and graceful shutdown on SIGTERM.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::process::spawn_serve;
use common::{query_for, with, TempDb, TestServer, T0};
use embers_server::store::Store;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_embers-server");

#[tokio::test]
async fn data_survives_a_restart() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    server
        .ingest(
            json!({"app_service": "web", "time": T0, "tags": {"pod_ns": "team-o'brien"},
            "folded": "[t] web;main;a 2\n[t] web;main;b 3\n"}),
        )
        .await;
    let before = server.folded(&query_for("web")).await;
    server.stop().await;

    let server = TestServer::start(&db.path()).await;
    let after = server.folded(&query_for("web")).await;
    assert_eq!(before, after);
    assert_eq!(after, "web;[t] web;main;a 2\nweb;[t] web;main;b 3\n");
    let quoted = with(
        query_for("web"),
        json!({"tag_filter": "pod_ns='team-o''brien'"}),
    );
    assert_eq!(server.folded(&quoted).await, after);
    // Appending after the restart reuses stored stacks.
    let body = server
        .ingest(json!({"app_service": "web", "time": T0, "folded": "[t] web;main;a 1\n"}))
        .await;
    assert_eq!(body["result"]["new_stacks"], 0);
    assert_eq!(
        server.folded(&query_for("web")).await,
        "web;[t] web;main;a 3\nweb;[t] web;main;b 3\n"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_bad_line_writes_nothing_of_its_request() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    let (status, envelope) = server
        .post(
            "/v1/profile/ingest",
            &json!({"app_service": "web", "time": T0, "folded": "[t] web;a 1\n[t] web;b 2\n[t] web;c x\n[t] web;d 4\n"}),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(envelope["OPT_STATUS"], "INVALID_POST_DATA");
    let description = envelope["DESCRIPTION"].as_str().unwrap_or("");
    assert!(description.contains("line 3"), "{envelope}");

    // Several batches: the second is bad, so the first is not written either.
    let (status, envelope) = server
        .post(
            "/v1/profile/ingest",
            &json!({"batches": [
                {"app_service": "web", "time": T0, "folded": "[t] web;a 1\n"},
                {"app_service": "web", "time": T0, "folded": "[t] web;b 1\n[t] web;;c 1\n"},
            ]}),
        )
        .await;
    assert_eq!(status, 400);
    let description = envelope["DESCRIPTION"].as_str().unwrap_or("");
    assert!(
        description.contains("batch 2") && description.contains("line 2"),
        "{envelope}"
    );

    let (status, envelope) = server.query(&query_for("web")).await;
    assert_eq!(status, 200);
    assert_eq!(envelope["result"]["functions"], Value::Null);
    server.stop().await;
    let store = Store::open(&db.path()).expect("reopen");
    assert_eq!(store.sample_count().expect("count"), 0);
    assert_eq!(store.stack_count().expect("count"), 0);
}

fn run_import(db: &Path, extra: &[&str], files: &[&Path]) -> std::process::Output {
    std::process::Command::new(BIN)
        .arg("import")
        .arg("--db")
        .arg(db)
        .args([
            "--app-service",
            "cli-app",
            "--time",
            &T0.to_string(),
            "--tag",
            "host=node-a",
        ])
        .args(extra)
        .args(files)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run import")
}

async fn terminate(child: &mut tokio::process::Child) {
    let pid = child.id().expect("pid");
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let exit = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("exits after SIGTERM")
        .expect("wait");
    assert!(exit.success(), "graceful shutdown exits 0: {exit:?}");
}

#[tokio::test]
async fn import_command_and_serve_binary() {
    let db = TempDb::new();
    let good = db.dir.path().join("good.folded");
    let bad = db.dir.path().join("bad.folded");
    std::fs::write(
        &good,
        "[t] cli-app;main;a 10\n\n# comment\n[t] cli-app;main;b 20\n",
    )
    .expect("write");
    std::fs::write(&bad, "[t] cli-app;main;c 1\n[t] cli-app;main;d\n").expect("write");

    let out = run_import(&db.path(), &[], &[&bad]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bad.folded") && stderr.contains("line 2"),
        "{stderr}"
    );
    assert_eq!(
        Store::open(&db.path())
            .expect("open")
            .sample_count()
            .expect("count"),
        0
    );

    let out = run_import(&db.path(), &["--tag", "k8s.label.app=cli"], &[&good]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("imported 2 samples"));

    let out = run_import(&db.path(), &["--tag", "colour=red"], &[&good]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown tag 'colour'"));

    // The imported samples are from 2023: older than the default retention would keep.
    let (mut child, base) = spawn_serve(&db.path(), &["--retention", "0"]).await;
    let client = reqwest::Client::new();
    let q = with(
        query_for("cli-app"),
        json!({"tag_filter": "host='node-a' AND k8s.label.app='cli'"}),
    );
    let envelope = common::query_at(&client, &base, &q).await;
    assert_eq!(
        common::folded_of(&envelope),
        "cli-app;[t] cli-app;main;a 10\ncli-app;[t] cli-app;main;b 20\n"
    );
    let health = client
        .get(format!("{base}/healthz"))
        .send()
        .await
        .expect("health");
    assert_eq!(health.status().as_u16(), 200);
    terminate(&mut child).await;
}

#[tokio::test]
async fn demo_fills_a_fresh_database_once() {
    let db = TempDb::new();
    let (mut child, base) = spawn_serve(&db.path(), &["--demo"]).await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0));
    let client = reqwest::Client::new();
    let ask = |body: Value| {
        let client = client.clone();
        let url = format!("{base}/v1/profile/ProfileTracing");
        async move {
            let response = client.post(url).json(&body).send().await.expect("query");
            let status = response.status().as_u16();
            (status, response.json::<Value>().await.expect("json"))
        }
    };
    let hour = |app: &str, event: &str| {
        json!({"app_service": app, "profile_language_type": "eBPF", "profile_event_type": event,
               "time_start": now - 3700, "time_end": now + 60})
    };
    for (app, event) in [
        ("redis-server", "on-cpu"),
        ("redis-server", "off-cpu"),
        ("redis-server", "mem-alloc"),
        ("java", "on-cpu"),
        ("nginx", "on-cpu"),
        ("Total", "on-cpu"),
    ] {
        let (status, envelope) = ask(hour(app, event)).await;
        assert_eq!(status, 200, "{app} {event}: {envelope}");
        let functions = envelope["result"]["functions"]
            .as_array()
            .map_or(0, Vec::len);
        assert!(functions > 3, "{app} {event}: {envelope}");
    }
    let quoted = with(
        hour("java", "on-cpu"),
        json!({"tag_filter": "pod_ns='team-o''brien'"}),
    );
    let (_, envelope) = ask(quoted).await;
    assert!(envelope["result"]["functions"].is_array(), "{envelope}");
    let node_a = with(
        hour("Total", "on-cpu"),
        json!({"tag_filter": "host='node-a'"}),
    );
    let (_, envelope) = ask(node_a).await;
    let folded = common::folded_of(&envelope);
    assert!(
        folded.contains("Total;[p] redis-server;[t] io_thd_1 "),
        "{folded}"
    );
    assert!(
        !folded.contains("[p] java"),
        "java runs on node-b: {folded}"
    );
    terminate(&mut child).await;

    let count = Store::open(&db.path())
        .expect("open")
        .sample_count()
        .expect("count");
    assert!(count > 10_000, "{count}");
    let (mut child, _) = spawn_serve(&db.path(), &["--demo"]).await;
    terminate(&mut child).await;
    assert_eq!(
        Store::open(&db.path())
            .expect("open")
            .sample_count()
            .expect("count"),
        count
    );
}
