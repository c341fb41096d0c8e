//! The bounds on what one request or one client may hold (`embers_server::listen`): a body
//! that does not arrive within `--body-read-timeout` fails with 408 and frees its slot, an
//! answer the client does not read is dropped at `--write-timeout` (one it reads slowly is
//! not), and one address holds at most `--max-connections-per-ip` connections — more are
//! closed at once while other addresses are served. Over real sockets; distinct loopback
//! addresses (127.0.0.2, …) stand for distinct clients.

use std::net::SocketAddr;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::routing::{get, post};
use axum::Router;
use embers_server::listen::ConnLimits;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use super::connections::{limits, read_to_close, start_with, timed, REQUEST};

/// Size of `/big`'s answer: far more than the socket buffers of both ends hold.
const BIG: usize = 48 << 20;

/// A router with a quick answer, a body echo (its length), a slow answer after the body and
/// a big streamed answer of `n` MiB.
fn router() -> Router {
    Router::new()
        .route("/fast", get(|| async { "fast" }))
        .route(
            "/echo",
            post(|body: Bytes| async move { format!("got {}", body.len()) }),
        )
        .route(
            "/echo-slowly",
            post(|body: Bytes| async move {
                tokio::time::sleep(Duration::from_millis(1500)).await;
                format!("got {}", body.len())
            }),
        )
        .route(
            "/big/{mib}",
            get(
                |axum::extract::Path(mib): axum::extract::Path<usize>| async move {
                    let chunk = Bytes::from(vec![b'x'; 1 << 20]);
                    let chunks = (0..mib).map(move |_| Ok::<_, std::io::Error>(chunk.clone()));
                    Body::from_stream(futures_util::stream::iter(chunks))
                },
            ),
        )
}

/// A client connected from `from` (a loopback address).
pub async fn connect_from(from: [u8; 4], to: &str) -> TcpStream {
    let to: SocketAddr = to.parse().expect("address");
    let socket = TcpSocket::new_v4().expect("socket");
    socket
        .bind(SocketAddr::from((from, 0)))
        .expect("bind the client address");
    socket.connect(to).await.expect("connect")
}

/// Sends a byte of body every 100 ms until the server closes the connection (or `within`
/// passes); what the server answered.
pub async fn trickle_until_answered(stream: &mut TcpStream, within: Duration) -> String {
    let (mut reader, mut writer) = stream.split();
    let mut answer = Vec::new();
    let read = async {
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = reader.read(&mut buf).await {
            answer.extend_from_slice(&buf[..n]);
        }
    };
    let trickle = async {
        loop {
            // A closed connection fails a write; the reader then sees its end too.
            if writer.write_all(b"x").await.is_err() {
                std::future::pending::<()>().await;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    let _ = tokio::time::timeout(within, async {
        tokio::select! {
            () = read => {},
            () = trickle => {},
        }
    })
    .await;
    String::from_utf8_lossy(&answer).into_owned()
}

fn post_head(path: &str, length: usize) -> String {
    format!("POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {length}\r\n\r\n")
}

#[tokio::test]
async fn a_trickled_body_gets_408_at_the_body_timeout_and_frees_its_slot() {
    let bounds = ConnLimits {
        body_read_timeout: Some(Duration::from_millis(800)),
        ..limits(5000, 5000, 1)
    };
    let addr = start_with(router(), bounds).await;
    let mut slow = TcpStream::connect(&addr).await.expect("connect");
    slow.write_all(post_head("/echo", 1000).as_bytes())
        .await
        .expect("head");
    let (answer, took) = timed(trickle_until_answered(&mut slow, Duration::from_secs(4))).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("--body-read-timeout"), "{answer}");
    assert!(
        took < Duration::from_millis(2500),
        "answered after {took:?}"
    );
    // The only slot is free again.
    let mut next = TcpStream::connect(&addr).await.expect("connect");
    next.write_all(format!("{}abc", post_head("/echo", 3)).as_bytes())
        .await
        .expect("write");
    let mut buf = [0u8; 1024];
    let n = tokio::time::timeout(Duration::from_secs(3), next.read(&mut buf))
        .await
        .expect("served within 3 s")
        .expect("answer");
    assert!(String::from_utf8_lossy(&buf[..n]).ends_with("got 3"));
}

#[tokio::test]
async fn the_body_timeout_ends_with_the_body_and_does_not_cut_a_slow_answer() {
    let bounds = ConnLimits {
        body_read_timeout: Some(Duration::from_millis(500)),
        ..limits(5000, 5000, 4)
    };
    let addr = start_with(router(), bounds).await;
    let mut client = TcpStream::connect(&addr).await.expect("connect");
    let request = format!("{}abcd", post_head("/echo-slowly", 4));
    client.write_all(request.as_bytes()).await.expect("write");
    let (answer, took) = timed(async {
        let mut buf = [0u8; 1024];
        let n = client.read(&mut buf).await.expect("answer");
        String::from_utf8_lossy(&buf[..n]).into_owned()
    })
    .await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("got 4"), "{answer}");
    assert!(took >= Duration::from_millis(1400), "{took:?}");
}

#[tokio::test]
async fn an_answer_nobody_reads_is_dropped_at_the_write_timeout() {
    let bounds = ConnLimits {
        write_timeout: Some(Duration::from_millis(700)),
        ..limits(5000, 5000, 1)
    };
    let addr = start_with(router(), bounds).await;
    let mut stuck = TcpStream::connect(&addr).await.expect("connect");
    let request = format!("GET /big/{} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", BIG >> 20);
    stuck.write_all(request.as_bytes()).await.expect("write");
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The only slot is held by a client reading nothing; it is freed without its help.
    let mut next = TcpStream::connect(&addr).await.expect("connect");
    next.write_all(REQUEST).await.expect("write");
    let mut buf = [0u8; 1024];
    let (n, took) = timed(async {
        tokio::time::timeout(Duration::from_secs(5), next.read(&mut buf))
            .await
            .expect("served within 5 s")
            .expect("answer")
    })
    .await;
    assert!(String::from_utf8_lossy(&buf[..n]).ends_with("fast"));
    assert!(took < Duration::from_secs(3), "served after {took:?}");
    // What the stuck client gets is cut short.
    let got = read_to_close(&mut stuck, Duration::from_secs(10))
        .await
        .expect("closed");
    assert!(got.len() < BIG, "{} bytes", got.len());
}

#[tokio::test]
async fn a_slow_reader_that_keeps_reading_is_not_cut() {
    let bounds = ConnLimits {
        write_timeout: Some(Duration::from_millis(700)),
        ..limits(5000, 5000, 4)
    };
    let addr = start_with(router(), bounds).await;
    let mut client = TcpStream::connect(&addr).await.expect("connect");
    let request = "GET /big/4 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    client.write_all(request.as_bytes()).await.expect("write");
    let mut total = 0usize;
    let mut buf = vec![0u8; 64 << 10];
    // Half a MiB, then a pause shorter than the write timeout, to the end.
    for _ in 0..100 {
        let mut round = 0usize;
        while round < 512 << 10 {
            match client.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => round += n,
            }
        }
        total += round;
        if round < 512 << 10 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert!(total > 4 << 20, "read {total} bytes: cut");
}

#[tokio::test]
async fn one_address_holds_at_most_its_share_while_others_are_served() {
    let bounds = ConnLimits {
        max_connections_per_ip: 2,
        ..limits(10_000, 10_000, 8)
    };
    let addr = start_with(router(), bounds).await;
    let mut holders = vec![
        connect_from([127, 0, 0, 1], &addr).await,
        connect_from([127, 0, 0, 1], &addr).await,
    ];
    // Let the server accept both before the third comes.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut third = connect_from([127, 0, 0, 1], &addr).await;
    let _ = third.write_all(REQUEST).await;
    let (closed, took) = timed(read_to_close(&mut third, Duration::from_secs(3))).await;
    assert_eq!(closed.as_deref(), Some(""), "closed without an answer");
    assert!(took < Duration::from_secs(1), "closed after {took:?}");
    // Another address is served at once.
    let mut other = connect_from([127, 0, 0, 2], &addr).await;
    other.write_all(REQUEST).await.expect("write");
    let mut buf = [0u8; 1024];
    let n = tokio::time::timeout(Duration::from_secs(2), other.read(&mut buf))
        .await
        .expect("served")
        .expect("answer");
    assert!(String::from_utf8_lossy(&buf[..n]).ends_with("fast"));
    // A closed connection gives its place back.
    drop(holders.pop());
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut again = connect_from([127, 0, 0, 1], &addr).await;
    again.write_all(REQUEST).await.expect("write");
    let n = tokio::time::timeout(Duration::from_secs(2), again.read(&mut buf))
        .await
        .expect("served")
        .expect("answer");
    assert!(String::from_utf8_lossy(&buf[..n]).ends_with("fast"));
}
