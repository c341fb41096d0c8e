//! A database written by schema version 1 (no rollup) is migrated when the new code opens it:
//! the explore rollup and the function rollup are filled from the stored samples, so the
//! explore and functions endpoints answer exactly, and samples ingested afterwards add to them.

use crate::common;

use common::{TempDb, TestServer};
use embers_server::store::schema;
use rusqlite::{params, Connection};
use serde_json::{json, Value};

/// A minute-aligned base time.
const M: i64 = 1_700_000_040;

/// Write a version-1 file: two tag sets, three stacks, samples on both sides of a minute.
fn write_v1(path: &std::path::Path) {
    let mut conn = Connection::open_in_memory().expect("open");
    conn.execute(
        "ATTACH DATABASE ?1 AS profile",
        [path.to_str().expect("utf-8 path")],
    )
    .expect("attach");
    schema::migrate_to(&mut conn, 1).expect("v1 schema");
    let version: i64 = conn
        .query_row("PRAGMA profile.user_version", [], |r| r.get(0))
        .expect("version");
    assert_eq!(version, 1);
    conn.execute_batch(
        "INSERT INTO profile.tagsets (id, fingerprint, host, pod, profile_value_unit)
           VALUES (1, 'a', 'node-a', 'web-1', 'microseconds'), (2, 'b', 'node-b', 'web-2', 'microseconds');
         INSERT INTO profile.tagset_tags (tagset_id, name, value) VALUES (1, 'k8s.label.app', 'web');
         INSERT INTO profile.stacks (id, location_str) VALUES
           (1, '[t] main;serve'), (2, '[t] worker;[l] read'), (3, 'orphan;frame');",
    )
    .expect("tags and stacks");
    let samples: [(i64, &str, i64, i64, i64); 6] = [
        (M - 1, "web", 1, 10, 1),
        (M, "web", 1, 20, 1),
        (M + 59, "web", 2, 30, 2),
        (M + 60, "web", 3, 40, 2),
        (M + 61, "Total", 1, 5, 1),
        (M + 3600, "web", 1, 1000, 1),
    ];
    for (time, app, stack, value, tagset) in samples {
        conn.execute(
            "INSERT INTO profile.samples (time, app_service, profile_language_type,
               profile_event_type, stack_id, profile_value, tagset_id, profile_create_timestamp,
               profile_in_timestamp) VALUES (?1, ?2, 'eBPF', 'on-cpu', ?3, ?4, ?5, 0, 0)",
            params![time, app, stack, value, tagset],
        )
        .expect("sample");
    }
}

async fn result(server: &TestServer, path: &str, body: Value) -> Value {
    let (status, envelope) = server.post(path, &body).await;
    assert_eq!(status, 200, "{envelope}");
    envelope["result"].clone()
}

#[tokio::test]
async fn a_version_1_file_is_migrated_and_its_rollup_answers() {
    let db = TempDb::new();
    write_v1(&db.path());
    let server = TestServer::start(&db.path()).await;
    let range = json!({"time_start": M - 1, "time_end": M + 61});
    assert_eq!(
        result(&server, "/v1/profile/services", range.clone()).await["values"],
        json!([
            ["web", "eBPF", "on-cpu", 100],
            ["Total", "eBPF", "on-cpu", 5]
        ])
    );
    let timeline = json!({"app_service": "web", "profile_language_type": "eBPF",
        "profile_event_type": "on-cpu", "time_start": M - 60, "time_end": M + 119,
        "interval": 60, "group_by": "thread"});
    assert_eq!(
        result(&server, "/v1/profile/timeline", timeline.clone()).await["values"],
        json!([
            [M - 60, "[t] main", 10],
            [M, "[t] main", 20],
            [M, "[t] worker", 30],
            [M + 60, "", 40]
        ])
    );
    let pods = common::with(range.clone(), json!({"tag": "pod"}));
    assert_eq!(
        result(&server, "/v1/profile/tag_values", pods).await["values"],
        json!([["web-1", 3], ["web-2", 2]])
    );
    assert_eq!(
        result(&server, "/v1/profile/tags", range.clone()).await["values"],
        json!([["host", 5], ["pod", 5], ["k8s.label.app", 3]])
    );
    // The function rollup was filled too (`orphan;frame` and `Total` left out).
    let functions =
        json!({"time_start": M - 1, "time_end": M + 3600, "profile_event_type": "on-cpu"});
    let names = |r: &Value| -> Vec<(String, u64, u64)> {
        r["values"]
            .as_array()
            .expect("rows")
            .iter()
            .map(|row| {
                (
                    row[0].as_str().unwrap_or("").to_owned(),
                    row[1].as_u64().unwrap_or(0),
                    row[2].as_u64().unwrap_or(0),
                )
            })
            .collect()
    };
    let migrated = result(&server, "/v1/profile/functions", functions.clone()).await;
    assert_eq!(migrated["value"], 1100);
    assert_eq!(
        names(&migrated)[..4],
        [
            ("serve".to_owned(), 1030, 1030),
            ("frame".to_owned(), 40, 40),
            ("[l] read".to_owned(), 30, 30),
            ("[t] main".to_owned(), 0, 1030)
        ]
    );
    // New samples add to the migrated rollup.
    server
        .ingest(
            json!({"app_service": "web", "time": M + 30, "tags": {"host": "node-a", "pod": "web-1"},
                       "folded": "[t] main;serve 7\n"}),
        )
        .await;
    let added = result(&server, "/v1/profile/functions", functions).await;
    assert_eq!(
        (added["value"].as_u64(), &names(&added)[0]),
        (Some(1107), &("serve".to_owned(), 1037, 1037))
    );
    assert_eq!(
        result(&server, "/v1/profile/timeline", timeline).await["values"],
        json!([
            [M - 60, "[t] main", 10],
            [M, "[t] main", 27],
            [M, "[t] worker", 30],
            [M + 60, "", 40]
        ])
    );
    server.stop().await;
    let conn = Connection::open(db.path()).expect("open");
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .expect("version");
    assert_eq!(version, schema::CURRENT_VERSION);
}
