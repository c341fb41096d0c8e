//! Alerts from the fleet end to end: the demo's six hours in a real SQLite store, two rules
//! checked every second by the real scheduler — any service against the previous hour, and
//! redis-server (which did not change) alone — and a test HTTP server as the webhook. The
//! planted api-gateway regression fires exactly once, naming `render.jsonEncodeResponse` with
//! its shares, z and a permalink to the comparison; redis-server never fires; the dry run
//! lists it; and after a restart over the same state nothing fires again. Every wait is on a
//! condition (the webhook's count, the scheduler's checks), never a fixed sleep.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::routing::post;
use axum::{Json, Router};
use common::{TempDb, TestServer};
use embers_server::alerts::{self, AlertArgs, Alerts};
use embers_server::demo::{generate, REGRESSION_FUNCTION, REGRESSION_SERVICE};
use embers_server::store::Store;
use serde_json::Value;

type Received = Arc<Mutex<Vec<Value>>>;

/// A webhook receiver on a free port: its URL and what it received.
async fn receiver() -> (String, Received) {
    let got: Received = Arc::default();
    let keep = got.clone();
    let app = Router::new().route(
        "/hook",
        post(move |Json(body): Json<Value>| {
            let keep = keep.clone();
            async move {
                keep.lock().unwrap_or_else(|p| p.into_inner()).push(body);
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("receiver") });
    (format!("http://{addr}/hook"), got)
}

/// Waits until `done` holds (polling), failing after a minute with `what`.
async fn until(what: &str, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn received(got: &Received) -> Vec<Value> {
    got.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// The alerts of the two rules, sending to `hook`, their state beside `db`.
fn alerts_for(hook: &str, db: &std::path::Path) -> Arc<Alerts> {
    let args = AlertArgs {
        alert_rule: vec![
            r#"{"name": "cpu-share", "max_growth_points": 5, "baseline": "previous_hour", "window": "1h"}"#.into(),
            r#"{"name": "redis", "service": "redis-server", "max_growth_points": 2, "baseline": "previous_hour", "window": "1h"}"#.into(),
        ],
        alert_rules: None,
        alert_interval: Duration::from_secs(1),
        alert_webhook: Some(hook.to_owned()),
        public_url: Some("http://embers.example:8080".into()),
        alert_state: None,
    };
    args.build("127.0.0.1:0", Some(db))
        .expect("rules")
        .expect("alerts on")
}

/// Waits for `n` more complete checks of every rule.
async fn checks(alerts: &Alerts, n: u64) {
    let from = alerts.checks();
    until("the scheduler's checks", || alerts.checks() >= from + n).await;
}

#[tokio::test]
async fn a_rule_fires_once_for_the_planted_regression_and_not_for_unchanged_services() {
    let db = TempDb::new();
    let store = Arc::new(Store::open(&db.path()).expect("open"));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64;
    store.insert(&generate(now)).expect("demo");
    let (hook, got) = receiver().await;
    let alerts = alerts_for(&hook, &db.path());
    let static_dir = db.dir.path().join("no-viewer-here");
    let keep = alerts.clone();
    let server =
        TestServer::start_over(store.clone(), static_dir, move |s| s.alerts = Some(keep)).await;
    let scheduler = tokio::spawn(alerts::run(alerts.clone(), store.clone()));
    until("the webhook", || !received(&got).is_empty()).await;
    checks(&alerts, 3).await;
    let sent = received(&got);
    assert_eq!(sent.len(), 1, "fired once: {sent:#?}");
    let a = &sent[0];
    assert_eq!(
        (a["rule"].as_str(), a["service"].as_str()),
        (Some("cpu-share"), Some(REGRESSION_SERVICE))
    );
    assert_eq!(a["function"].as_str(), Some(REGRESSION_FUNCTION));
    let (before, after, change) = (
        a["before"].as_f64().unwrap_or(0.0),
        a["after"].as_f64().unwrap_or(0.0),
        a["change"].as_f64().unwrap_or(0.0),
    );
    assert!(
        before < 10.0 && after > 20.0 && (after - before - change).abs() < 1e-9,
        "{a}"
    );
    assert!(a["z"].as_f64().is_some_and(|z| z > 3.0), "{a}");
    let link = reqwest::Url::parse(a["permalink"].as_str().unwrap_or("")).expect("permalink");
    let param = |k: &str| {
        link.query_pairs()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.into_owned())
    };
    assert_eq!(link.host_str(), Some("embers.example"));
    assert_eq!(param("app_service").as_deref(), Some(REGRESSION_SERVICE));
    assert_eq!(param("select").as_deref(), Some(REGRESSION_FUNCTION));
    let start: i64 = param("time_start")
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    assert_eq!(
        param("baseline_time_start"),
        Some((start - 3600).to_string())
    );
    // The dry run lists what would fire now, and the pair already firing.
    let (status, _, body) = server.get("/v1/alerts/dry-run").await;
    assert_eq!(status, 200, "{body}");
    let dry: Value = serde_json::from_str(&body).expect("json");
    let would: Vec<(&str, &str, &str)> = dry["result"]["would_fire"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|w| {
            (
                w["rule"].as_str().unwrap_or(""),
                w["service"].as_str().unwrap_or(""),
                w["function"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        would,
        [("cpu-share", REGRESSION_SERVICE, REGRESSION_FUNCTION)]
    );
    assert_eq!(
        dry["result"]["firing"],
        serde_json::json!(["cpu-share / api-gateway"])
    );
    // A restart over the same state: the pair is still firing, nothing is sent again.
    scheduler.abort();
    let again = alerts_for(&hook, &db.path());
    let scheduler = tokio::spawn(alerts::run(again.clone(), store.clone()));
    checks(&again, 3).await;
    assert_eq!(received(&got).len(), 1, "not sent again after a restart");
    scheduler.abort();
    server.stop().await;
}

#[tokio::test]
async fn without_rules_the_dry_run_says_how_to_give_some() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    let (status, _, body) = server.get("/v1/alerts/dry-run").await;
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("--alert-rule"), "{body}");
    server.stop().await;
}
