//! `embers-load`: a load generator for the service on loopback. N clients send a mix of ingest
//! (small folded batches at the current time) and queries (ProfileTracing over the last hour,
//! services, timeline, the hottest functions) for a fixed time, then it prints throughput, p50/p99 latency per kind,
//! errors (503 "at a limit" answers counted apart, as deliberate) and the server's resident
//! memory (from /proc, given its pid).
//!
//! ```text
//! embers-load run --url http://127.0.0.1:8080 --clients 64 --duration 60s --pid PID [--no-explore]
//! embers-load stub --listen 127.0.0.1:20416 --delay 2s   # a slow DeepFlow querier
//! ```
//! The stub answers every ProfileTracing request with a small shape-B tree in DeepFlow's
//! envelope after `--delay`, for runs with `--upstream` pointing at a slow querier.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use embers_model::contract::envelope::SUCCESS;
use serde_json::{json, Value};

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the load.
    Run(RunArgs),
    /// Serve a slow stub querier.
    Stub(StubArgs),
}

#[derive(Args, Clone)]
struct RunArgs {
    /// The service.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    url: String,
    /// Concurrent clients.
    #[arg(long, default_value_t = 64)]
    clients: usize,
    /// How long to send.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    duration: Duration,
    /// The server's pid, to report its memory.
    #[arg(long)]
    pid: Option<u32>,
    /// Only ingest and ProfileTracing (for a querier stub without the SQL API).
    #[arg(long)]
    no_explore: bool,
}

#[derive(Args)]
struct StubArgs {
    #[arg(long, default_value = "127.0.0.1:20416")]
    listen: String,
    #[arg(long, default_value = "2s", value_parser = humantime::parse_duration)]
    delay: Duration,
}

/// Latencies (µs) per request kind, and outcomes per kind and status.
#[derive(Default)]
struct Tally {
    latencies: BTreeMap<&'static str, Vec<u64>>,
    outcomes: BTreeMap<(&'static str, String), u64>,
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Request `n` of client `c`: its kind, path and body.
fn request(c: usize, n: u64, explore: bool) -> (&'static str, &'static str, Value) {
    let t = now();
    let range = |app: &str| {
        json!({"app_service": app, "profile_language_type": "eBPF",
               "profile_event_type": "on-cpu", "time_start": t - 3600, "time_end": t})
    };
    let app = format!("load-{}", c % 8);
    let pick = if explore { n % 7 } else { n % 2 };
    match pick {
        0 | 2 => {
            let folded: String = (0..20)
                .map(|i| {
                    format!(
                        "[t] w{};main;f{};g{} {}\n",
                        c % 4,
                        (n + i) % 40,
                        i % 7,
                        i + 1
                    )
                })
                .collect();
            let body = json!({"app_service": app, "time": t, "folded": folded});
            ("ingest", "/v1/profile/ingest", body)
        }
        1 | 4 => ("profile", "/v1/profile/ProfileTracing", range(&app)),
        3 => (
            "services",
            "/v1/profile/services",
            json!({"time_start": t - 3600, "time_end": t}),
        ),
        6 => (
            "functions",
            "/v1/profile/functions",
            json!({"time_start": t - 3600, "time_end": t, "profile_event_type": "on-cpu"}),
        ),
        _ => ("timeline", "/v1/profile/timeline", range(&app)),
    }
}

async fn client(c: usize, args: RunArgs, until: Instant, tally: Arc<Mutex<Tally>>) {
    let http = reqwest::Client::new();
    let mut n = 0u64;
    while Instant::now() < until {
        let (kind, path, body) = request(c, n, !args.no_explore);
        n += 1;
        let started = Instant::now();
        let sent = http
            .post(format!("{}{path}", args.url))
            .json(&body)
            .send()
            .await;
        let outcome = match sent {
            Ok(r) => {
                let status = r.status().as_u16();
                let _ = r.bytes().await;
                status.to_string()
            }
            Err(e) if e.is_connect() => "connect error".to_owned(),
            Err(_) => "transport error".to_owned(),
        };
        let micros = started.elapsed().as_micros() as u64;
        let mut t = tally.lock().unwrap_or_else(|p| p.into_inner());
        t.latencies.entry(kind).or_default().push(micros);
        *t.outcomes.entry((kind, outcome)).or_default() += 1;
    }
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i] as f64 / 1000.0
}

/// VmRSS and VmHWM of `pid`, in MiB.
fn memory(pid: u32) -> Option<(f64, f64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

fn report(args: &RunArgs, tally: &Tally, elapsed: Duration) {
    let mut all: Vec<u64> = tally.latencies.values().flatten().copied().collect();
    all.sort_unstable();
    let secs = elapsed.as_secs_f64();
    println!(
        "clients {}, {:.1} s: {} requests, {:.0} req/s, p50 {:.1} ms, p99 {:.1} ms",
        args.clients,
        secs,
        all.len(),
        all.len() as f64 / secs,
        percentile(&all, 0.5),
        percentile(&all, 0.99)
    );
    for (kind, lat) in &tally.latencies {
        let mut lat = lat.clone();
        lat.sort_unstable();
        println!(
            "  {kind:<9} {:>7} requests, {:>6.0} req/s, p50 {:>7.1} ms, p99 {:>7.1} ms",
            lat.len(),
            lat.len() as f64 / secs,
            percentile(&lat, 0.5),
            percentile(&lat, 0.99)
        );
    }
    let (mut errors, mut limited) = (0, 0);
    for ((kind, outcome), n) in &tally.outcomes {
        match outcome.as_str() {
            "200" => {}
            "503" => limited += n,
            _ => errors += n,
        }
        if outcome != "200" {
            println!("  {kind:<9} {outcome}: {n}");
        }
    }
    println!("errors {errors}, at a limit (503) {limited}");
    if let Some((rss, hwm)) = args.pid.and_then(memory) {
        println!("server memory: RSS {rss:.1} MiB, peak {hwm:.1} MiB");
    }
}

async fn run(args: RunArgs) {
    let tally = Arc::new(Mutex::new(Tally::default()));
    let started = Instant::now();
    let until = started + args.duration;
    let tasks: Vec<_> = (0..args.clients)
        .map(|c| tokio::spawn(client(c, args.clone(), until, tally.clone())))
        .collect();
    for t in tasks {
        let _ = t.await;
    }
    let tally = tally.lock().unwrap_or_else(|p| p.into_inner());
    report(&args, &tally, started.elapsed());
}

async fn stub(args: StubArgs) -> Result<(), String> {
    let profile =
        embers_model::wire::folded::parse_folded("[t] w;main;a 5\n[t] w;main;b 7\n", "up")
            .map_err(|e| format!("{e:?}"))?;
    let result = embers_model::export::encode::encode_result(
        Some(&profile),
        embers_model::contract::shape::ResultShape::B,
        "on-cpu",
    );
    let body = embers_server::error::envelope_json(SUCCESS, "", result, ());
    let delay = args.delay;
    let answer = move || {
        let body = body.clone();
        async move {
            tokio::time::sleep(delay).await;
            ([("content-type", "application/json")], body)
        }
    };
    let router =
        axum::Router::new().route("/v1/profile/ProfileTracing", axum::routing::post(answer));
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .map_err(|e| format!("bind {}: {e}", args.listen))?;
    println!(
        "stub querier on http://{}/ (delay {:?})",
        args.listen, delay
    );
    axum::serve(listener, router)
        .await
        .map_err(|e| e.to_string())
}

#[tokio::main]
async fn main() -> Result<(), String> {
    match Cli::parse().command {
        Command::Run(args) => {
            run(args).await;
            Ok(())
        }
        Command::Stub(args) => stub(args).await,
    }
}
