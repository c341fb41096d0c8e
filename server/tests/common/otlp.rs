//! OTLP test harness: a service answering HTTP and the gRPC `ProfilesService` over one store,
//! the official Python client (`tests/otlp_py/otlp_client.py` in the venv `scripts/setup.sh
//! --test` makes), and a reference service holding the client's expected stacks, ingested as
//! folded text, to compare answers with.

use std::path::PathBuf;
use std::sync::Arc;

use embers_server::http::guard::args::GuardArgs;
use embers_server::http::otlp::grpc;
use embers_server::store::Store;
use embers_server::AppState;
use serde_json::{json, Value};
use tokio::sync::oneshot;

use super::{TempDb, TestServer, T0};

/// A service with both OTLP receivers over one SQLite store.
pub struct OtlpServer {
    pub http: TestServer,
    /// `127.0.0.1:PORT` of the gRPC receiver.
    pub grpc: String,
    pub store: Arc<Store>,
    stop_grpc: oneshot::Sender<()>,
    pub db: TempDb,
}

impl OtlpServer {
    /// Start with `guard` and an ingest limit of `ingest_limit` bytes.
    pub async fn start(guard: GuardArgs, ingest_limit: usize) -> OtlpServer {
        OtlpServer::start_limits(guard, ingest_limit, embers_server::DEFAULT_REQUEST_MEMORY).await
    }

    /// [`OtlpServer::start`], each request's memory budget capped at `request_memory`.
    pub async fn start_limits(
        guard: GuardArgs,
        ingest_limit: usize,
        request_memory: usize,
    ) -> OtlpServer {
        let db = TempDb::new();
        let store = Arc::new(Store::open(&db.path()).expect("open store"));
        let configure = |s: &mut AppState| {
            s.guard = Arc::new(guard.guard("127.0.0.1:0").expect("guard"));
            s.limits.ingest = ingest_limit;
            s.limits.request_memory = request_memory;
        };
        let static_dir = db.dir.path().join("no-viewer-here");
        let http = TestServer::start_over(store.clone(), static_dir, configure).await;
        let mut state = AppState::new(store.clone());
        configure(&mut state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let grpc = listener.local_addr().expect("addr").to_string();
        let (stop_grpc, stopped) = oneshot::channel::<()>();
        tokio::spawn(grpc::serve(listener, state, async {
            let _ = stopped.await;
        }));
        OtlpServer {
            http,
            grpc,
            store,
            stop_grpc,
            db,
        }
    }

    /// Default guard and limits.
    pub async fn open() -> OtlpServer {
        OtlpServer::start(GuardArgs::default(), embers_server::DEFAULT_INGEST_LIMIT).await
    }

    pub async fn stop(self) {
        let _ = self.stop_grpc.send(());
        self.http.stop().await;
    }
}

/// The venv's Python; `None` (after a loud note) when it is missing and
/// `EMBERS_SKIP_PYTHON` is set outside CI. Otherwise a missing venv fails the test: these tests
/// must not pass by doing nothing.
pub fn python() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = root.join(".tools/otlp-venv/bin/python");
    if python.is_file() {
        return Some(python);
    }
    let skip = std::env::var_os("EMBERS_SKIP_PYTHON").is_some();
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
    assert!(
        skip && !ci,
        "{} is missing: run `bash scripts/setup.sh --test` (it makes the venv with the official \
         opentelemetry-proto and grpcio packages), or, outside CI, set EMBERS_SKIP_PYTHON=1 to \
         skip the tests that need it",
        python.display()
    );
    eprintln!("\n!!!!! SKIPPED: EMBERS_SKIP_PYTHON is set and {python:?} is missing !!!!!\n");
    None
}

/// Run the Python client with `args`; its JSON output (`answer`, `expected`).
pub async fn client(python: &PathBuf, args: &[&str]) -> Value {
    script(python, "otlp_client.py", args).await
}

/// Run `name` of `tests/otlp_py/` (from that directory) with `args`; its JSON output.
pub async fn script(python: &PathBuf, name: &str, args: &[&str]) -> Value {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/otlp_py");
    let out = tokio::process::Command::new(python)
        .arg(dir.join(name))
        .args(args)
        .current_dir(&dir)
        .output()
        .await
        .expect("run the Python client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the Python client failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// A service holding `expected` (the client's list of batches) ingested as folded text: one
/// JSON ingest per batch and second.
pub async fn reference(expected: &Value) -> (TempDb, TestServer) {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    for batch in expected.as_array().expect("expected batches") {
        let mut by_second: std::collections::BTreeMap<i64, String> = Default::default();
        for row in batch["rows"].as_array().expect("rows") {
            let (t, stack, value) = (&row[0], &row[1], &row[2]);
            let line = format!("{} {value}\n", stack.as_str().expect("stack"));
            by_second
                .entry(t.as_i64().expect("time"))
                .or_default()
                .push_str(&line);
        }
        for (time, folded) in by_second {
            server
                .ingest(json!({
                    "app_service": batch["app_service"],
                    "profile_event_type": batch["event"],
                    "tags": batch["tags"],
                    "time": time,
                    "folded": folded,
                }))
                .await;
        }
    }
    (db, server)
}

/// A ProfileTracing body for `app` and `event` over [T0 + from, T0 + to] with `filter`.
pub fn query(app: &str, event: &str, from: i64, to: i64, filter: &str) -> Value {
    json!({
        "app_service": app,
        "profile_language_type": "eBPF",
        "profile_event_type": event,
        "time_start": T0 + from,
        "time_end": T0 + to,
        "tag_filter": filter,
    })
}
