//! The OTLP gRPC door against hostile senders: 30M empty `ResourceProfiles` (60 MB, ~60 KB
//! gzipped) sent without the token are refused from the headers, before a byte is decoded
//! (the peak does not move); with the token they are refused by the request's budget before
//! prost builds them (the peak grows by less than 100 MB, where it grew 3.2 GB).

use std::time::Duration;

use axum::http::uri::PathAndQuery;
use tonic::codec::CompressionEncoding;

use crate::common::grpc::Raw;
use crate::common::process::{peak_and_rss, spawn_serve_reading};
use crate::common::TempDb;

/// A service with a write token and the gRPC receiver, from the binary.
struct Receiver {
    child: tokio::process::Child,
    http: String,
    grpc: tonic::client::Grpc<tonic::transport::Channel>,
    _db: TempDb,
    _dir: tempfile::TempDir,
}

const TOKEN: &str = "s3cret-token";

impl Receiver {
    async fn start(extra: &[&str]) -> Receiver {
        let db = TempDb::new();
        let dir = tempfile::tempdir().expect("dir");
        let token_file = dir.path().join("token");
        std::fs::write(&token_file, format!("{TOKEN}\n")).expect("token");
        let mut args = vec![
            "--otlp-grpc-listen",
            "127.0.0.1:0",
            "--token-file",
            token_file.to_str().expect("path"),
        ];
        args.extend_from_slice(extra);
        let (child, http, after) = spawn_serve_reading(&db.path(), &args, 1).await;
        let addr = after[0].rsplit(' ').next().expect("address").to_owned();
        let channel = tonic::transport::Channel::from_shared(format!("http://{addr}"))
            .expect("uri")
            .timeout(Duration::from_secs(120))
            .connect()
            .await
            .expect("connect");
        let grpc = tonic::client::Grpc::new(channel).send_compressed(CompressionEncoding::Gzip);
        Receiver {
            child,
            http,
            grpc,
            _db: db,
            _dir: dir,
        }
    }

    /// Export `body` (with the token when `token`); the status code.
    async fn export(&mut self, token: bool, body: Vec<u8>) -> tonic::Code {
        self.grpc.ready().await.expect("ready");
        let mut request = tonic::Request::new(body);
        if token {
            let value = format!("Bearer {TOKEN}").parse().expect("metadata");
            request.metadata_mut().insert("authorization", value);
        }
        let path = PathAndQuery::from_static(
            "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export",
        );
        match self.grpc.unary(request, path, Raw).await {
            Ok(_) => tonic::Code::Ok,
            Err(status) => {
                eprintln!("gRPC: {status}");
                status.code()
            }
        }
    }
}

/// Export `body` to a fresh service; returns the status and the peak's growth.
async fn export(token: bool, body: Vec<u8>) -> (tonic::Code, u64) {
    let mut receiver = Receiver::start(&[]).await;
    let pid = receiver.child.id().expect("pid");
    let (_, before) = peak_and_rss(pid);
    let code = receiver.export(token, body).await;
    let (peak, _) = peak_and_rss(pid);
    (code, peak.saturating_sub(before))
}

#[tokio::test]
async fn without_the_token_nothing_is_decoded() {
    let body = [0x0a, 0x00].repeat(30_000_000);
    let (code, growth) = export(false, body).await;
    eprintln!(
        "without the token: {code:?}, peak grew {} MiB",
        growth >> 20
    );
    assert_eq!(code, tonic::Code::Unauthenticated);
    assert!(growth < 16 << 20, "the peak grew {} MiB", growth >> 20);
}

#[tokio::test]
async fn with_the_token_the_budget_refuses_before_prost_decodes() {
    let body = [0x0a, 0x00].repeat(30_000_000);
    let (code, growth) = export(true, body).await;
    eprintln!("with the token: {code:?}, peak grew {} MiB", growth >> 20);
    assert_eq!(code, tonic::Code::ResourceExhausted);
    assert!(growth < 100 << 20, "the peak grew {} MiB", growth >> 20);
}

#[tokio::test]
async fn exports_wait_behind_the_write_gate_like_every_ingest_route() {
    let mut receiver = Receiver::start(&[
        "--max-ingest-bytes",
        "1000000",
        "--max-ingest-in-flight-bytes",
        "1000000",
    ])
    .await;
    // An HTTP ingest that announces a full body and sends none holds the whole gate.
    let held = hold_the_gate(&receiver.http).await;
    // An empty request is a valid one: UNAVAILABLE while the gate is full, OK once it has room.
    assert_eq!(
        receiver.export(true, Vec::new()).await,
        tonic::Code::Unavailable
    );
    drop(held);
    let started = std::time::Instant::now();
    while receiver.export(true, Vec::new()).await != tonic::Code::Ok {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the gate never emptied"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// An HTTP ingest that announces a full body (the whole gate) and sends none, once the gate is
/// seen full: a small ingest is turned away. Should a small ingest be in flight when the held
/// request asks for its bytes, the held one is refused instead (a 503 on its socket) and is sent
/// again, so the gate fills however the service schedules the two connections.
async fn hold_the_gate(http: &str) -> tokio::net::TcpStream {
    let addr = http.trim_start_matches("http://").to_owned();
    let head = format!(
        "POST /v1/profile/ingest?app_service=held HTTP/1.1\r\nHost: {addr}\r\n\
         Authorization: Bearer {TOKEN}\r\nContent-Type: application/octet-stream\r\n\
         Content-Length: 1000000\r\n\r\n"
    );
    let client = reqwest::Client::new();
    let started = std::time::Instant::now();
    let mut held: Option<tokio::net::TcpStream> = None;
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the gate never filled"
        );
        let stream = match held.take() {
            Some(stream) => stream,
            None => {
                let mut stream = tokio::net::TcpStream::connect(&addr)
                    .await
                    .expect("connect");
                tokio::io::AsyncWriteExt::write_all(&mut stream, head.as_bytes())
                    .await
                    .expect("write");
                stream
            }
        };
        let small = client
            .post(format!("{http}/v1/profile/ingest?app_service=x"))
            .header("authorization", format!("Bearer {TOKEN}"))
            .header("content-type", "application/octet-stream")
            .body("main 1\n")
            .send()
            .await
            .expect("answered");
        if small.status() == 503 {
            // Only the held request can fill the gate (the small ones are sent one at a time).
            return stream;
        }
        // Not full yet: keep the held request unless the service has answered it (refused).
        let mut answer = [0u8; 64];
        match stream.try_read(&mut answer) {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => held = Some(stream),
            _ => eprintln!("the held ingest was answered or closed; sending it again"),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
