//! What an acknowledged ingest survives: the real binary takes many concurrent ingest requests,
//! is killed with SIGKILL in the middle of them, and is started again on the same file. Every
//! request answered 200 before the kill is there in full, and no request is there in part
//! (each request is one transaction; the file is in WAL mode with `synchronous = NORMAL`,
//! which keeps committed transactions across a process crash).

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::process::spawn_serve;
use common::{folded_of, query_for, TempDb, T0};
use serde_json::{json, Value};

/// Concurrent clients.
const CLIENTS: usize = 16;
/// Stacks per inner batch (two batches per request).
const LINES: u64 = 25;
/// Acknowledged requests to wait for before the kill.
const ACKED_BEFORE_KILL: usize = 150;

/// Request `id`: two batches of `LINES` stacks each, all under the frame `r{id}`.
fn request(id: u64) -> Value {
    let batch = |side: &str| {
        let folded: String = (0..LINES)
            .map(|j| format!("r{id};{side}{j} {}\n", j + 1))
            .collect();
        json!({"app_service": "dur", "time": T0, "folded": folded})
    };
    json!({"batches": [batch("a"), batch("b")]})
}

/// Send requests until the server goes away; returns nothing, records acknowledged ids.
async fn client(base: String, next: Arc<AtomicU64>, acked: Arc<Mutex<BTreeSet<u64>>>) {
    let http = reqwest::Client::new();
    loop {
        let id = next.fetch_add(1, Ordering::Relaxed);
        let sent = http
            .post(format!("{base}/v1/profile/ingest"))
            .json(&request(id))
            .send()
            .await;
        let Ok(response) = sent else { return };
        let ok = response.status() == 200;
        let Ok(envelope) = response.json::<Value>().await else {
            return;
        };
        if ok && envelope["OPT_STATUS"] == "SUCCESS" {
            acked.lock().expect("lock").insert(id);
        }
    }
}

/// Stored stacks per request id: `id -> {(leaf, value)}`.
fn stored(folded: &str) -> BTreeMap<u64, BTreeSet<(String, u64)>> {
    let mut out: BTreeMap<u64, BTreeSet<(String, u64)>> = BTreeMap::new();
    for line in folded.lines() {
        let (stack, value) = line.rsplit_once(' ').expect("value");
        let frames: Vec<&str> = stack.split(';').collect();
        assert_eq!(frames.len(), 3, "{line}");
        let id = frames[1]
            .strip_prefix('r')
            .and_then(|n| n.parse().ok())
            .expect("request id");
        let value = value.parse().expect("number");
        out.entry(id)
            .or_default()
            .insert((frames[2].to_owned(), value));
    }
    out
}

#[tokio::test]
async fn sigkill_mid_ingest_keeps_every_acknowledged_request_and_no_partial_one() {
    let db = TempDb::new();
    let options = ["--retention", "0", "--max-answer-nodes", "10000000"];
    let (mut child, base) = spawn_serve(&db.path(), &options).await;
    let next = Arc::new(AtomicU64::new(0));
    let acked = Arc::new(Mutex::new(BTreeSet::new()));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| tokio::spawn(client(base.clone(), next.clone(), acked.clone())))
        .collect();
    let started = Instant::now();
    while acked.lock().expect("lock").len() < ACKED_BEFORE_KILL {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "ingest too slow"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    child.start_kill().expect("SIGKILL");
    child.wait().await.expect("exited");
    for c in clients {
        c.await.expect("client");
    }
    let acked = acked.lock().expect("lock").clone();
    let sent = next.load(Ordering::Relaxed);
    assert!(
        sent > acked.len() as u64,
        "requests were in flight at the kill"
    );

    let (mut child, base) = spawn_serve(&db.path(), &options).await;
    let envelope: Value = reqwest::Client::new()
        .post(format!("{base}/v1/profile/ProfileTracing"))
        .json(&query_for("dur"))
        .send()
        .await
        .expect("query")
        .json()
        .await
        .expect("envelope");
    assert_eq!(envelope["OPT_STATUS"], "SUCCESS", "{envelope}");
    let stored = stored(&folded_of(&envelope));
    let whole: BTreeSet<(String, u64)> = ["a", "b"]
        .iter()
        .flat_map(|side| (0..LINES).map(move |j| (format!("{side}{j}"), j + 1)))
        .collect();
    for id in &acked {
        assert_eq!(stored.get(id), Some(&whole), "acknowledged request {id}");
    }
    for (id, stacks) in &stored {
        assert_eq!(stacks, &whole, "request {id} is there in part");
    }
    let conn = rusqlite::Connection::open(db.path()).expect("open");
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity");
    assert_eq!(check, "ok");
    eprintln!(
        "sent {sent}, acknowledged {}, stored {} (in flight and committed: {})",
        acked.len(),
        stored.len(),
        stored.len() - acked.len()
    );
    child.start_kill().expect("kill");
    let _ = child.wait().await;
}
