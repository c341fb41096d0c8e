//! `/healthz` while the service profiles its host: the collector's member, from its windows.

use std::time::Duration;

use serde_json::Value;

use super::now;
use crate::common::TestServer;

/// `/healthz` reports the collector once its first window ended: running, windows ≥ 1, samples
/// taken, the window's time, nothing lost to a store error.
pub async fn check_after_a_window(server: &TestServer) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let collector = loop {
        let (status, _, body) = server.get("/healthz").await;
        assert_eq!(status, 200, "{body}");
        let health: Value = serde_json::from_str(&body).expect("json");
        assert_eq!(health["status"], "ok", "{health}");
        let collector = health["collector"].clone();
        assert_eq!(collector["status"], "running", "{health}");
        if collector["windows"].as_u64().unwrap_or(0) >= 1 {
            break collector;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no window within 10 s of 1 s windows: {health}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        collector["samples"].as_u64().unwrap_or(0) > 0,
        "{collector}"
    );
    assert!(
        collector["last_window"].as_i64().unwrap_or(0) >= now() - 10,
        "{collector}"
    );
    assert_eq!(collector["store_errors"], 0, "{collector}");
    assert!(collector.get("last_error").is_none() && collector.get("reason").is_none());
    for member in [
        "lost_events",
        "lost_counts",
        "lost_stacks",
        "stacks_cut_short",
    ] {
        assert!(collector[member].is_u64(), "{member}: {collector}");
    }
}
