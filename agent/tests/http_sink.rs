//! The HTTP sink against a scripted service on a loopback port: a 503 with `Retry-After` is
//! retried after the time it asks for and the body arrives whole; a 400 is never retried; an
//! unreachable service fills the bounded buffer, which drops the oldest windows and counts them.
//! No root needed.

use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use embers_agent::sink::http::{HttpOptions, HttpSink};
use embers_agent::sink::Sink;
use embers_model::contract::ingest::{BatchInput, Batches};

/// One request the service saw: when, and its body.
struct Seen {
    at: Instant,
    body: Vec<u8>,
    token: bool,
}

/// A service answering each request with the next of `answers` (status, extra header line).
fn scripted(answers: Vec<(u16, &'static str)>) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let mut answers: VecDeque<_> = answers.into();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let mut length = 0;
            let mut token = false;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                let lower = line.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                token |= lower.trim() == "authorization: bearer secret";
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            log.lock().expect("log").push(Seen {
                at: Instant::now(),
                body,
                token,
            });
            let (status, header) = answers.pop_front().unwrap_or((200, ""));
            let reply = format!(
                "HTTP/1.1 {status} X\r\n{header}content-length: 2\r\nconnection: close\r\n\r\n{{}}"
            );
            let _ = reader.get_mut().write_all(reply.as_bytes());
        }
    });
    (url, seen)
}

fn sink(to: &str, buffer_bytes: usize) -> HttpSink {
    HttpSink::start(HttpOptions {
        to: to.to_owned(),
        token: Some("secret".into()),
        buffer_bytes,
        max_request_bytes: 1 << 20,
        timeout: Duration::from_secs(5),
    })
    .expect("sink")
}

fn window(app: &str, lines: usize) -> Vec<BatchInput> {
    vec![BatchInput {
        app_service: app.into(),
        profile_language_type: "eBPF".into(),
        profile_event_type: "on-cpu".into(),
        profile_value_unit: "microseconds".into(),
        time: Some(1_700_000_000),
        tags: BTreeMap::new(),
        folded: "[t] main;main;work 10101\n".repeat(lines),
        details: Vec::new(),
    }]
}

#[test]
fn a_503_is_retried_when_it_says_and_arrives_whole() {
    let (url, seen) = scripted(vec![(503, "retry-after: 1\r\n"), (200, "")]);
    let mut s = sink(&url, 1 << 20);
    s.accept(1_700_000_000, window("web", 3));
    s.close(Duration::from_secs(10));
    let seen = seen.lock().expect("seen");
    assert_eq!(seen.len(), 2, "one 503, one retry");
    let waited = seen[1].at - seen[0].at;
    assert!(
        waited >= Duration::from_millis(950),
        "retried after {waited:?}"
    );
    assert_eq!(seen[0].body, seen[1].body);
    assert!(
        seen.iter().all(|r| r.token),
        "the bearer token goes with every try"
    );
    let sent: Batches = serde_json::from_slice(&seen[1].body).expect("the contract's body");
    assert_eq!(sent.batches, window("web", 3));
    assert_eq!(s.counters().sent.load(Ordering::Relaxed), 1);
    assert_eq!(s.counters().retries.load(Ordering::Relaxed), 1);
}

#[test]
fn a_4xx_is_never_retried() {
    let (url, seen) = scripted(vec![(400, ""), (200, "")]);
    let mut s = sink(&url, 1 << 20);
    s.accept(1_700_000_000, window("web", 1));
    s.close(Duration::from_secs(3));
    assert_eq!(seen.lock().expect("seen").len(), 1);
    assert_eq!(s.counters().refused.load(Ordering::Relaxed), 1);
    assert_eq!(s.counters().retries.load(Ordering::Relaxed), 0);
}

#[test]
fn an_absent_service_costs_at_most_the_buffer() {
    // A port nothing listens on: bound, then closed.
    let closed = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", closed.local_addr().expect("addr"));
    drop(closed);
    let one = serde_json::to_vec(&Batches {
        batches: window("w0", 50),
    })
    .expect("json")
    .len();
    let mut s = sink(&url, 3 * one);
    for i in 0..10 {
        s.accept(1_700_000_000 + i, window(&format!("w{i}"), 50));
    }
    // At most three wait (and one is being tried): the rest were dropped, and counted.
    let dropped = s.counters().dropped.load(Ordering::Relaxed);
    assert!((6..=7).contains(&dropped), "dropped {dropped}");
    s.close(Duration::from_millis(200));
}
