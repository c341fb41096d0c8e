//! The service binary under slow clients: `/healthz` and `/readyz` keep answering (within
//! 5 s) from another address while 1,030 clients trickle request bodies from one, and the
//! service recovers fully afterwards; a snapshot download nobody reads holds no read
//! transaction and no slot past `--write-timeout`, and keeps no other read from finishing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::common::process::spawn_serve;
use super::common::snapshots::{big_answer, save_body, SNAPSHOTS};
use super::common::{query_for, TempDb};
use super::connections::read_to_close;
use super::connections_bounds::{connect_from, trickle_until_answered};

/// The slow clients: more than `--max-connections` (1,024).
const TRICKLERS: usize = 1030;
/// How long they trickle.
const TRICKLE_FOR: Duration = Duration::from_secs(8);

/// A GET of `path` from `from` with `Connection: close`; the answer and the time it took
/// (`None`: no answer within 5 s).
async fn probe(from: [u8; 4], addr: &str, path: &str) -> (Option<String>, Duration) {
    let started = Instant::now();
    let answer = tokio::time::timeout(Duration::from_secs(5), async {
        let mut c = connect_from(from, addr).await;
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        c.write_all(request.as_bytes()).await.ok()?;
        read_to_close(&mut c, Duration::from_secs(5)).await
    })
    .await
    .ok()
    .flatten();
    (answer, started.elapsed())
}

/// One slow client until `until`: connects from 127.0.0.1, sends a query's headers and then
/// its body a byte at a time; when the server answers or closes, does it again (at most 100
/// times). How many answers were 408.
async fn trickler(addr: String, until: Instant, timed_out: Arc<AtomicUsize>) {
    let head = "POST /v1/profile/ProfileTracing HTTP/1.1\r\nHost: 127.0.0.1\r\n\
                Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{";
    for _ in 0..100 {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        let mut answered = false;
        if let Ok(mut c) = TcpStream::connect(&addr).await {
            if c.write_all(head.as_bytes()).await.is_ok() {
                let answer = trickle_until_answered(&mut c, left).await;
                answered = answer.starts_with("HTTP/1.1 408");
            }
        }
        if answered {
            timed_out.fetch_add(1, Ordering::Relaxed);
        }
        // Closed at once (over its address's share): wait a while, so that the loop neither
        // spins nor runs out of ephemeral ports.
        let pause = if answered { 100 } else { 1000 };
        tokio::time::sleep(Duration::from_millis(pause)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_answers_while_a_thousand_clients_trickle_bodies() {
    let db = TempDb::new();
    let bounds = [
        "--header-read-timeout",
        "2s",
        "--body-read-timeout",
        "2s",
        "--idle-timeout",
        "5s",
    ];
    let (_child, url) = spawn_serve(&db.path(), &bounds).await;
    let addr = url.trim_start_matches("http://").to_owned();
    let started = Instant::now();
    let until = started + TRICKLE_FOR;
    let timed_out = Arc::new(AtomicUsize::new(0));
    let tricklers: Vec<_> = (0..TRICKLERS)
        .map(|_| tokio::spawn(trickler(addr.clone(), until, timed_out.clone())))
        .collect();
    // Probes from another address while they trickle (after the first ones are in).
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut slowest = Duration::ZERO;
    let mut probes = 0;
    while Instant::now() < until && probes < 100 {
        for path in ["/healthz", "/readyz"] {
            let (answer, took) = probe([127, 0, 0, 2], &addr, path).await;
            let answer = answer.unwrap_or_else(|| panic!("{path}: no answer within 5 s"));
            assert!(answer.starts_with("HTTP/1.1 200"), "{path}: {answer}");
            slowest = slowest.max(took);
            probes += 1;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    for t in tricklers {
        t.await.expect("trickler");
    }
    let cut = timed_out.load(Ordering::Relaxed);
    println!(
        "{TRICKLERS} trickling clients for {TRICKLE_FOR:?}: {probes} probes, slowest \
         /healthz or /readyz {slowest:?}; {cut} bodies answered 408"
    );
    assert!(slowest < Duration::from_secs(5), "{slowest:?}");
    assert!(cut > 0, "no body was cut at --body-read-timeout");
    // Recovered: the tricklers' own address is served again, its slots given back.
    let (answer, took) = probe([127, 0, 0, 1], &addr, "/healthz").await;
    assert!(
        answer.is_some_and(|a| a.starts_with("HTTP/1.1 200")),
        "{took:?}"
    );
    let client = reqwest::Client::new();
    let query = client
        .post(format!("{url}/v1/profile/ProfileTracing"))
        .json(&query_for("web"))
        .send()
        .await
        .expect("query");
    assert_eq!(query.status().as_u16(), 200);
}

/// A client whose receive buffer is small and fixed (no autotuning to tens of MiB), so that
/// a big answer it does not read stays mostly unsent.
async fn small_window(addr: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(64 << 10).expect("SO_RCVBUF");
    socket
        .connect(addr.parse().expect("address"))
        .await
        .expect("connect")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_download_nobody_reads_holds_no_read_transaction() {
    let db = TempDb::new();
    let extra = ["--write-timeout", "1s", "--max-concurrent-queries", "1"];
    let (_child, url) = spawn_serve(&db.path(), &extra).await;
    let addr = url.trim_start_matches("http://").to_owned();
    let client = reqwest::Client::new();
    let answer = big_answer(150_000);
    let saved: serde_json::Value = client
        .post(format!("{url}{SNAPSHOTS}"))
        .header("content-type", "application/json")
        .body(save_body(&query_for("web"), &answer, None))
        .send()
        .await
        .expect("save")
        .json()
        .await
        .expect("json");
    let id = saved["result"]["id"].as_str().expect("an id").to_owned();
    let get = format!("GET {SNAPSHOTS}/{id} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    // Four downloads whose clients read nothing.
    let mut stuck = Vec::new();
    for _ in 0..4 {
        let mut c = small_window(&addr).await;
        c.write_all(get.as_bytes()).await.expect("write");
        stuck.push(c);
    }
    let sent = Instant::now();
    tokio::time::sleep(Duration::from_millis(500)).await;
    // No read transaction is open: the write-ahead log checkpoints to its end.
    let conn = rusqlite::Connection::open(db.path()).expect("open");
    conn.busy_timeout(Duration::from_millis(200))
        .expect("timeout");
    let (busy, log, done): (i64, i64, i64) = conn
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .expect("checkpoint");
    assert_eq!(
        busy, 0,
        "a reader holds the log ({log} frames, {done} done)"
    );
    // Other reads finish: the same snapshot whole, and a query.
    let whole = tokio::time::timeout(Duration::from_secs(10), async {
        let r = client.get(format!("{url}{SNAPSHOTS}/{id}")).send().await?;
        r.bytes().await
    })
    .await
    .expect("within 10 s")
    .expect("the snapshot");
    assert!(whole.len() > answer.len(), "{} bytes", whole.len());
    let query = client
        .post(format!("{url}/v1/profile/ProfileTracing"))
        .json(&query_for("web"))
        .send()
        .await
        .expect("query");
    assert_eq!(query.status().as_u16(), 200);
    // And the stuck downloads are cut at --write-timeout, not left open: read well after it
    // what was sent before the cut.
    tokio::time::sleep(Duration::from_secs(3).saturating_sub(sent.elapsed())).await;
    for mut c in stuck {
        let got = read_to_close(&mut c, Duration::from_secs(10))
            .await
            .expect("closed by the server");
        assert!(got.len() < whole.len(), "{} bytes", got.len());
    }
}
