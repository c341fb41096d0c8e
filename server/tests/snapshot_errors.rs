//! What the snapshot endpoints refuse, over real HTTP: answers over `--max-snapshot-bytes`
//! (413 naming the limit, nothing stored), bodies that are not a save, answers that are not a
//! successful ProfileTracing answer, unsound requests and bad names (400 saying why), malformed
//! ids (400), unknown ids (404 naming them) and other methods (405).

use crate::common;

use common::snapshots::{big_answer, save_body, SNAPSHOTS};
use common::{description, query_for, with, TempDb, TestServer};
use serde_json::{json, Value};

#[tokio::test]
async fn answers_over_the_limit_are_refused_and_nothing_is_stored() {
    let db = TempDb::new();
    let answer = big_answer(20);
    let limit = answer.len();
    let server = TestServer::start_with(&db.path(), |s| s.limits.snapshot = limit).await;
    // At the limit: saved.
    let (status, envelope) = server
        .save_snapshot(save_body(&query_for("web"), &answer, None))
        .await;
    assert_eq!(status, 200, "{envelope}");
    // One byte over (a space inside the answer): refused, saying the limit.
    let over = answer.replacen(',', ", ", 1);
    let (status, envelope) = server
        .save_snapshot(save_body(&query_for("web"), &over, None))
        .await;
    assert_eq!(status, 413, "{envelope}");
    assert_eq!(envelope["OPT_STATUS"], "FAIL");
    assert!(
        description(&envelope).contains(&format!("{limit} bytes"))
            && description(&envelope).contains("--max-snapshot-bytes"),
        "{envelope}"
    );
    // A body far over the limit is cut off while it arrives, with the same answer.
    let huge = big_answer(20_000);
    let (status, envelope) = server
        .save_snapshot(save_body(&query_for("web"), &huge, None))
        .await;
    assert_eq!(status, 413, "{envelope}");
    assert!(
        description(&envelope).contains(&format!("{limit} bytes")),
        "{envelope}"
    );
    assert_eq!(server.snapshot_list().await.len(), 1, "only the first");
    server.stop().await;
}

#[tokio::test]
async fn bad_saves_are_400_saying_why_and_store_nothing() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    let ok = big_answer(2);
    let request = query_for("web");
    let failed = r#"{"OPT_STATUS":"FAIL","DESCRIPTION":"clickhouse is down","result":null}"#;
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"not json".to_vec(), "not a snapshot to save"),
        (br#"{"request": {}}"#.to_vec(), "not a snapshot to save"),
        (
            format!(r#"{{"response":{ok}}}"#).into_bytes(),
            "missing field `request`",
        ),
        (
            format!(r#"{{"request":{request},"response":{ok},"colour":1}}"#).into_bytes(),
            "unknown field `colour`",
        ),
        (save_body(&request, failed, None), "clickhouse is down"),
        (
            save_body(&request, r#""SUCCESS""#, None),
            "not a JSON object",
        ),
        (
            save_body(&request, r#"["SUCCESS","",null]"#, None),
            "not a JSON object",
        ),
        (
            save_body(&request, r#"{"OPT_STATUS":"SUCCESS","result":7}"#, None),
            "neither a node array",
        ),
        (
            save_body(
                &request,
                r#"{"snapshot":{},"OPT_STATUS":"SUCCESS","result":null}"#,
                None,
            ),
            "already has a \"snapshot\" member",
        ),
        (
            save_body(&with(request.clone(), json!({"time_start": 0})), &ok, None),
            "time_start",
        ),
        (
            save_body(&request, &ok, Some(&"n".repeat(201))),
            "longer than 200",
        ),
        (
            save_body(&request, &ok, Some("a\u{7}b")),
            "control characters",
        ),
    ];
    for (body, why) in cases {
        let shown = String::from_utf8_lossy(&body)
            .chars()
            .take(120)
            .collect::<String>();
        let (status, envelope) = server.save_snapshot(body).await;
        assert_eq!(status, 400, "{shown}: {envelope}");
        assert_eq!(envelope["OPT_STATUS"], "INVALID_POST_DATA", "{shown}");
        assert!(description(&envelope).contains(why), "{shown}: {envelope}");
    }
    assert!(server.snapshot_list().await.is_empty());
    server.stop().await;
}

#[tokio::test]
async fn ids_are_checked_before_they_are_looked_up() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    let unknown = "AAAAAAAAAAAAAAAAAAAAAAAAAA";
    let (status, _, text) = server.get(&format!("{SNAPSHOTS}/{unknown}")).await;
    assert_eq!(status, 404, "{text}");
    let envelope: Value = serde_json::from_str(&text).expect("envelope");
    assert_eq!(envelope["OPT_STATUS"], "FAIL");
    assert!(description(&envelope).contains(unknown), "{envelope}");
    assert_eq!(
        server.delete(&format!("{SNAPSHOTS}/{unknown}")).await.0,
        404
    );

    for bad in [
        "aaaaaaaaaaaaaaaaaaaaaaaaaa",
        "1",
        "AAAAAAAAAAAAAAAAAAAAAAAAA1",
        "..%2F..%2Fetc",
        "%FF",
    ] {
        let path = format!("{SNAPSHOTS}/{bad}");
        let (status, _, text) = server.get(&path).await;
        assert_eq!(status, 400, "{bad}: {text}");
        let envelope: Value = serde_json::from_str(&text).expect("envelope");
        assert_eq!(envelope["OPT_STATUS"], "INVALID_POST_DATA", "{bad}");
        let (status, envelope) = server.delete(&path).await;
        assert_eq!(status, 400, "{bad}: {envelope}");
    }
    server.stop().await;
}

#[tokio::test]
async fn other_methods_are_405_naming_the_allowed_ones() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    let id = "AAAAAAAAAAAAAAAAAAAAAAAAAA";
    for (path, allowed) in [
        (SNAPSHOTS.to_owned(), "GET, POST"),
        (format!("{SNAPSHOTS}/{id}"), "GET, DELETE"),
    ] {
        let response = server
            .client
            .put(format!("{}{path}", server.base))
            // Without a JSON type the guard refuses the write first (403), as it would for a
            // form a page on another site sends.
            .header("content-type", "application/json")
            .send()
            .await
            .expect("put");
        assert_eq!(response.status().as_u16(), 405, "{path}");
        assert_eq!(response.headers()["allow"], allowed);
        let envelope: Value = response.json().await.expect("envelope");
        assert_eq!(envelope["OPT_STATUS"], "FAIL");
    }
    // The POST-only endpoints still say so.
    let (status, _, text) = server.get("/v1/profile/ProfileTracing").await;
    assert_eq!(status, 405, "{text}");
    assert!(text.contains("use POST"), "{text}");
    server.stop().await;
}
