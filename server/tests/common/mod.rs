//! Test harness: a real server on 127.0.0.1:0 over a temporary database, and a small client.

#![allow(dead_code)]

pub mod clickhouse;
pub mod differential;
pub mod explore;
pub mod functions;
pub mod golang;
pub mod groups;
pub mod grpc;
pub mod http;
pub mod otlp;
pub mod process;
pub mod querier;
pub mod snapshots;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use embers_model::export::folded::to_folded;
use embers_server::listen::ConnLimits;
use embers_server::store::Store;
use embers_server::{app, AppState};
use serde_json::{json, Value};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Base time of the test data (Unix seconds).
pub const T0: i64 = 1_700_000_000;

/// A running server.
pub struct TestServer {
    /// `http://127.0.0.1:PORT`
    pub base: String,
    /// The client.
    pub client: reqwest::Client,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

/// A temporary directory holding `embers.db`.
pub struct TempDb {
    pub dir: tempfile::TempDir,
}

impl TempDb {
    pub fn new() -> TempDb {
        TempDb {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.path().join("embers.db")
    }
}

impl TestServer {
    /// Start a server over the database at `db`, adjusting the state with `configure`.
    pub async fn start_with(db: &Path, configure: impl FnOnce(&mut AppState)) -> TestServer {
        let store = Arc::new(Store::open(db).expect("open store"));
        let static_dir = db.parent().expect("db dir").join("no-viewer-here");
        TestServer::start_over(store, static_dir, configure).await
    }

    /// Start a server over an opened store (SQLite or ClickHouse).
    pub async fn start_over(
        store: Arc<Store>,
        static_dir: PathBuf,
        configure: impl FnOnce(&mut AppState),
    ) -> TestServer {
        let mut state = AppState::new(store);
        state.static_dir = Some(static_dir);
        configure(&mut state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (stop, stopped) = oneshot::channel::<()>();
        let router = app(state);
        let task = tokio::spawn(async move {
            let stopped = async {
                let _ = stopped.await;
            };
            embers_server::listen::serve(listener, router, ConnLimits::default(), stopped)
                .await
                .expect("serve");
        });
        TestServer {
            base: format!("http://{addr}"),
            client: reqwest::Client::new(),
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Start a server over `db` with default settings.
    pub async fn start(db: &Path) -> TestServer {
        TestServer::start_with(db, |_| {}).await
    }

    /// Stop the server and wait until it (and its store) is gone.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.expect("server task");
        }
    }

    /// POST raw bytes to `path`; returns status and body text.
    pub async fn post_raw(&self, path: &str, content_type: &str, body: Vec<u8>) -> (u16, String) {
        let response = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", content_type)
            .body(body)
            .send()
            .await
            .expect("request");
        let status = response.status().as_u16();
        (status, response.text().await.expect("body"))
    }

    /// POST JSON to `path`; returns status and parsed body.
    pub async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let (status, text) = self
            .post_raw(path, "application/json", body.to_string().into_bytes())
            .await;
        let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        (status, value)
    }

    /// DELETE `path`; status and envelope.
    pub async fn delete(&self, path: &str) -> (u16, Value) {
        let (status, _, text) = self.send(reqwest::Method::DELETE, path).await;
        (
            status,
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}")),
        )
    }

    /// GET `path`; returns status, content type and body text.
    pub async fn get(&self, path: &str) -> (u16, String, String) {
        self.send(reqwest::Method::GET, path).await
    }

    /// A request without a body; status, content type and body text.
    async fn send(&self, method: reqwest::Method, path: &str) -> (u16, String, String) {
        let response = self
            .client
            .request(method, format!("{}{path}", self.base))
            .send()
            .await
            .expect("request");
        let (status, ct) = (response.status().as_u16(), content_type(&response));
        (status, ct, response.text().await.expect("body"))
    }

    /// Ingest one batch; panics unless it succeeds.
    pub async fn ingest(&self, batch: Value) -> Value {
        let (status, body) = self.post("/v1/profile/ingest", &batch).await;
        assert_eq!(status, 200, "ingest failed: {body}");
        assert_eq!(body["OPT_STATUS"], "SUCCESS", "{body}");
        body
    }

    /// Run a ProfileTracing query; returns status and envelope.
    pub async fn query(&self, body: &Value) -> (u16, Value) {
        self.post("/v1/profile/ProfileTracing", body).await
    }

    /// Run a query that must succeed and return its tree in canonical folded form.
    pub async fn folded(&self, body: &Value) -> String {
        let (status, envelope) = self.query(body).await;
        assert_eq!(status, 200, "{envelope}");
        folded_of(&envelope)
    }
}

/// The ProfileTracing envelope a service at `base` (not a [`TestServer`]: a child process)
/// answers `body` with.
pub async fn query_at(client: &reqwest::Client, base: &str, body: &Value) -> Value {
    client
        .post(format!("{base}/v1/profile/ProfileTracing"))
        .json(body)
        .send()
        .await
        .expect("query")
        .json()
        .await
        .expect("json")
}

/// A response's `Content-Type`, `""` when absent.
pub fn content_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned()
}

/// The canonical folded text of a successful envelope (shape A or B), decoded by the model.
pub fn folded_of(envelope: &Value) -> String {
    let decoded = embers_model::decode_response(200, &envelope.to_string())
        .unwrap_or_else(|e| panic!("decode: {e:?}: {envelope}"));
    to_folded(&decoded.profile)
}

/// A query body for `app` with the usual eBPF on-CPU fields over [T0, T0+60].
pub fn query_for(app: &str) -> Value {
    json!({
        "app_service": app,
        "profile_language_type": "eBPF",
        "profile_event_type": "on-cpu",
        "time_start": T0,
        "time_end": T0 + 60,
    })
}

/// One ingest batch of eBPF samples in microseconds.
pub fn batch(app: &str, event: &str, time: i64, tags: Value, folded: &str) -> Value {
    json!({
        "app_service": app, "profile_language_type": "eBPF", "profile_event_type": event,
        "profile_value_unit": "microseconds", "time": time, "tags": tags, "folded": folded,
    })
}

/// A server over a fresh database that holds `batches` (an ingest body).
pub async fn seeded_with(batches: Value) -> (TempDb, TestServer) {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    server.ingest(batches).await;
    (db, server)
}

/// The `DESCRIPTION` of an envelope (`""` when absent).
pub fn description(envelope: &Value) -> &str {
    envelope["DESCRIPTION"].as_str().unwrap_or("")
}

/// POSTs `body` to `path`, which must answer 200 `SUCCESS`; returns the envelope.
pub async fn ok(server: &TestServer, path: &str, body: Value) -> Value {
    let (status, envelope) = server.post(path, &body).await;
    assert_eq!(status, 200, "{path} {body}: {envelope}");
    assert_eq!(envelope["OPT_STATUS"], "SUCCESS", "{path}: {envelope}");
    envelope
}

/// `base` with `extra`'s members set.
pub fn with(mut base: Value, extra: Value) -> Value {
    if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            b.insert(k.clone(), v.clone());
        }
    }
    base
}
