//! Slow and idle clients cannot hold the service (`embers_server::listen`): a client that
//! never finishes its headers is disconnected at `--header-read-timeout`, a kept-alive
//! connection at `--idle-timeout`, connections over `--max-connections` wait unaccepted until
//! one closes, and answers that take longer than both bounds (a slow handler, a slowly
//! streamed body) are not cut. Over real sockets; the last test measures 1,500 clients. The
//! body, write and per-address bounds are in `connections_bounds`.

use std::future::Future;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::routing::get;
use axum::Router;
use embers_server::listen::{serve, ConnLimits};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const HALF_HEADER: &[u8] = b"GET /fast HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
pub const REQUEST: &[u8] = b"GET /fast HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

/// A router with a quick answer, a slow one and a slowly streamed one.
fn router() -> Router {
    Router::new()
        .route("/fast", get(|| async { "fast" }))
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_millis(2500)).await;
                "slow"
            }),
        )
        .route(
            "/stream",
            get(|| async {
                let chunks = futures_util::stream::unfold(0, |n| async move {
                    if n == 5 {
                        return None;
                    }
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    Some((Ok::<_, std::io::Error>(format!("chunk{n};")), n + 1))
                });
                Body::from_stream(chunks)
            }),
        )
}

/// Serves [`router`] within `limits` on a free port; its address.
async fn start(limits: ConnLimits) -> String {
    start_with(router(), limits).await
}

/// Serves `router` within `limits` on a free port of 127.0.0.1; its address.
pub async fn start_with(router: Router, limits: ConnLimits) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    tokio::spawn(serve(listener, router, limits, std::future::pending()));
    addr
}

/// Header and idle bounds in milliseconds and a connection cap; no other bound (one client
/// may take every slot).
pub fn limits(header: u64, idle: u64, max: usize) -> ConnLimits {
    ConnLimits {
        header_read_timeout: Some(Duration::from_millis(header)),
        body_read_timeout: None,
        idle_timeout: Some(Duration::from_millis(idle)),
        write_timeout: None,
        max_connections: max,
        max_connections_per_ip: max,
    }
}

/// Reads until the server closes the connection (or `within` passes: `None`); what was read.
pub async fn read_to_close(stream: &mut TcpStream, within: Duration) -> Option<String> {
    let mut all = Vec::new();
    let read = tokio::time::timeout(within, async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => all.extend_from_slice(&buf[..n]),
            }
        }
    });
    read.await.ok()?;
    Some(String::from_utf8_lossy(&all).into_owned())
}

/// Time `f` takes.
pub async fn timed<T>(f: impl Future<Output = T>) -> (T, Duration) {
    let started = Instant::now();
    let out = f.await;
    (out, started.elapsed())
}

#[tokio::test]
async fn half_a_header_is_cut_at_the_header_timeout() {
    let addr = start(limits(800, 5000, 16)).await;
    let mut client = TcpStream::connect(&addr).await.expect("connect");
    client.write_all(HALF_HEADER).await.expect("write");
    // Trickling bytes does not help: the bound runs from the connection's start.
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let _ = client.write_all(b"x").await;
    }
    let (closed, took) = timed(read_to_close(&mut client, Duration::from_secs(5))).await;
    assert!(closed.is_some(), "still open after 5 s");
    assert!(took < Duration::from_millis(1500), "closed after {took:?}");
}

#[tokio::test]
async fn an_idle_kept_alive_connection_is_closed_at_the_idle_timeout_not_before() {
    let addr = start(limits(500, 2000, 16)).await;
    let mut client = TcpStream::connect(&addr).await.expect("connect");
    client.write_all(REQUEST).await.expect("write");
    let mut buf = [0u8; 1024];
    let n = client.read(&mut buf).await.expect("answer");
    assert!(String::from_utf8_lossy(&buf[..n]).ends_with("fast"));
    // Idle longer than the header timeout: still open, and a second request is answered.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    client.write_all(REQUEST).await.expect("second request");
    let n = client.read(&mut buf).await.expect("second answer");
    assert!(
        String::from_utf8_lossy(&buf[..n]).ends_with("fast"),
        "kept alive"
    );
    let (closed, took) = timed(read_to_close(&mut client, Duration::from_secs(6))).await;
    assert_eq!(closed.as_deref(), Some(""), "closed without another word");
    assert!(
        took >= Duration::from_millis(1800) && took < Duration::from_millis(3500),
        "closed after {took:?}"
    );
}

#[tokio::test]
async fn answers_longer_than_both_bounds_are_not_cut() {
    let addr = start(limits(400, 400, 16)).await;
    for (path, expected) in [
        ("/slow", "slow"),
        ("/stream", "chunk0;chunk1;chunk2;chunk3;chunk4;"),
    ] {
        let mut client = TcpStream::connect(&addr).await.expect("connect");
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        client.write_all(request.as_bytes()).await.expect("write");
        let (answer, took) = timed(read_to_close(&mut client, Duration::from_secs(10))).await;
        let answer = answer.expect("answered");
        assert!(took > Duration::from_secs(2), "{path} took {took:?}");
        let body: String = answer
            .split("\r\n\r\n")
            .nth(1)
            .unwrap_or("")
            .lines()
            .filter(|l| l.starts_with("chunk") || *l == "slow")
            .collect();
        assert_eq!(body, expected, "{answer}");
    }
}

#[tokio::test]
async fn connections_over_the_cap_wait_until_one_closes() {
    let addr = start(limits(10_000, 10_000, 2)).await;
    let holders = [
        TcpStream::connect(&addr).await.expect("first"),
        TcpStream::connect(&addr).await.expect("second"),
    ];
    // Both slots are taken by connections that send nothing: the third is not served...
    let mut third = TcpStream::connect(&addr)
        .await
        .expect("third connects (backlog)");
    third.write_all(REQUEST).await.expect("write");
    let mut buf = [0u8; 1024];
    let early = tokio::time::timeout(Duration::from_millis(700), third.read(&mut buf)).await;
    assert!(early.is_err(), "answered over the cap");
    // ...until one of them closes.
    drop(holders);
    let (n, took) = timed(async { third.read(&mut buf).await.expect("answer") }).await;
    assert!(String::from_utf8_lossy(&buf[..n]).ends_with("fast"));
    assert!(
        took < Duration::from_secs(2),
        "served {took:?} after a slot freed"
    );
}

/// The measurement behind the defaults: 1,500 clients that never finish their headers.
/// Without bounds they were all still held after 35 s; here each is closed at most one header
/// timeout after it was accepted, and no more than `--max-connections` are held at once.
#[tokio::test]
async fn fifteen_hundred_slow_clients_are_all_let_go() {
    const CLIENTS: usize = 1500;
    const CAP: usize = 1024;
    let header = Duration::from_secs(2);
    let addr = start(limits(2000, 60_000, CAP)).await;
    let started = Instant::now();
    let mut clients = Vec::with_capacity(CLIENTS);
    for _ in 0..CLIENTS {
        let mut c = TcpStream::connect(&addr)
            .await
            .expect("connect (ulimit -n too low?)");
        c.write_all(HALF_HEADER).await.expect("write");
        clients.push(c);
    }
    let tasks: Vec<_> = clients
        .into_iter()
        .map(|mut c| {
            tokio::spawn(async move {
                read_to_close(&mut c, Duration::from_secs(20)).await?;
                Some(started.elapsed())
            })
        })
        .collect();
    let mut closed_at = Vec::new();
    for task in tasks {
        closed_at.push(task.await.expect("join"));
    }
    let held = |t: Duration| closed_at.iter().filter(|c| c.is_none_or(|c| c > t)).count();
    let first_round = header + Duration::from_millis(1500);
    let (after_bound, after_two) = (held(first_round), held(2 * header + Duration::from_secs(3)));
    println!(
        "{CLIENTS} slow clients, --max-connections {CAP}, --header-read-timeout {header:?}: \
         held {after_bound} at {first_round:?}, {after_two} at {:?}; last closed at {:?}",
        2 * header + Duration::from_secs(3),
        closed_at.iter().flatten().max()
    );
    assert!(
        after_bound <= CLIENTS - CAP,
        "{after_bound} held after the first bound"
    );
    assert_eq!(after_two, 0, "every client let go after two rounds");
    // And the service answers again.
    let mut client = TcpStream::connect(&addr).await.expect("connect");
    client.write_all(REQUEST).await.expect("write");
    let mut buf = [0u8; 1024];
    let n = client.read(&mut buf).await.expect("answer");
    assert!(String::from_utf8_lossy(&buf[..n]).ends_with("fast"));
}
