//! Values near `i64::MAX` (SQLite's integer): whatever was acknowledged at ingest, later
//! queries of the process answer. Sums that would pass `i64::MAX` are held there (saturate),
//! in ProfileTracing (both shapes) and in every explore endpoint.

use crate::common;

use common::{folded_of, ok, query_for, with, TempDb, TestServer, T0};
use serde_json::{json, Value};

const MAX: i64 = i64::MAX;

/// Every read of `app` over [T0, T0+60] succeeds; returns the ProfileTracing folded text
/// (identical in both shapes) and the services table's value for `app`.
async fn every_read(server: &TestServer, app: &str) -> (String, Value) {
    let mut folded = Vec::new();
    for shape in ["A", "B"] {
        let envelope = ok(
            server,
            "/v1/profile/ProfileTracing",
            with(query_for(app), json!({"result_shape": shape})),
        )
        .await;
        folded.push(folded_of(&envelope));
    }
    assert_eq!(folded[0], folded[1], "shapes agree");
    let range = json!({"time_start": T0, "time_end": T0 + 60});
    let services = ok(server, "/v1/profile/services", range.clone()).await;
    let timeline = with(
        query_for(app),
        json!({"interval": 60, "group_by": "thread"}),
    );
    ok(server, "/v1/profile/timeline", timeline).await;
    ok(server, "/v1/profile/timeline", query_for(app)).await;
    // A per-sample field in the filter: summed from the samples, not the rollup.
    let per_sample = with(
        query_for(app),
        json!({"interval": 1, "tag_filter": "_id != 0"}),
    );
    ok(server, "/v1/profile/timeline", per_sample).await;
    ok(server, "/v1/profile/tags", range.clone()).await;
    ok(
        server,
        "/v1/profile/tag_values",
        with(range, json!({"tag": "app_service"})),
    )
    .await;
    let row = services["result"]["values"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r[0] == app).cloned())
        .unwrap_or(Value::Null);
    (folded.remove(0), row[3].clone())
}

#[tokio::test]
async fn sums_past_i64_max_saturate_instead_of_failing_later_queries() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    // Separate batches (each acceptable alone), the same stack and second, then more.
    for folded in [
        format!("x {MAX}\n"),
        "x 1\n".to_owned(),
        format!("y;z {MAX}\n"),
    ] {
        server
            .ingest(json!({"app_service": "p", "time": T0, "folded": folded}))
            .await;
    }
    server
        .ingest(json!({"app_service": "p", "time": T0 + 1, "folded": format!("x {MAX}\ny 5\n")}))
        .await;
    let (folded, total) = every_read(&server, "p").await;
    assert_eq!(folded, format!("p;x {MAX}\np;y 5\np;y;z {MAX}\n"));
    assert_eq!(total, json!(MAX));
    server.stop().await;
}

#[tokio::test]
async fn values_just_below_the_limit_add_up_exactly() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    let half = MAX / 2;
    server
        .ingest(json!({"app_service": "q", "time": T0, "folded": format!("a {half}\nb {half}\n")}))
        .await;
    server
        .ingest(json!({"app_service": "q", "time": T0, "folded": "a 1\n"}))
        .await;
    let (folded, total) = every_read(&server, "q").await;
    assert_eq!(folded, format!("q;a {}\nq;b {half}\n", half + 1));
    assert_eq!(total, json!(MAX));
    // One more would pass the limit: held at the limit.
    server
        .ingest(json!({"app_service": "q", "time": T0 + 2, "folded": "b 1\n"}))
        .await;
    let (_, total) = every_read(&server, "q").await;
    assert_eq!(total, json!(MAX));
    server.stop().await;
}
