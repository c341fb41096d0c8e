//! Snapshots behind the guard, over real HTTP: saving and deleting are writes (the write
//! token, no cross-site request, no body type a browser sends anywhere), listing and reading
//! are queries (the query token).

use crate::common;

use std::sync::Arc;

use common::http::{send, Answer};
use common::snapshots::{big_answer, save_body, SNAPSHOTS};
use common::{query_for, TempDb, TestServer};
use embers_server::http::guard::args::GuardArgs;
use reqwest::Method;

const JSON: &str = "application/json";
const WRITE: (&str, &str) = ("authorization", "Bearer write-s3cret");
const READ: (&str, &str) = ("authorization", "Bearer read-s3cret");
const EVIL: [(&str, &str); 2] = [
    ("origin", "http://evil.example"),
    ("sec-fetch-site", "cross-site"),
];

async fn start(db: &TempDb) -> TestServer {
    let (w, r) = (db.dir.path().join("write"), db.dir.path().join("read"));
    std::fs::write(&w, "write-s3cret\n").expect("write");
    std::fs::write(&r, "read-s3cret\n").expect("write");
    let args = GuardArgs {
        token_file: Some(w),
        query_token_file: Some(r),
        ..GuardArgs::default()
    };
    let guard = args.guard("127.0.0.1:0").expect("guard");
    TestServer::start_with(&db.path(), |s| s.guard = Arc::new(guard)).await
}

fn status(answer: &Answer, expected: u16, what: &str) {
    assert_eq!(answer.status, expected, "{what}: {}", answer.body);
}

/// The ids in the snapshot list, read with the query token.
async fn listed(server: &TestServer) -> Vec<String> {
    let a = send(server, Method::GET, SNAPSHOTS, &[READ], "").await;
    status(&a, 200, "list");
    let list = a.body["result"].as_array().cloned().expect("a list");
    list.iter()
        .map(|m| m["id"].as_str().expect("id").to_owned())
        .collect()
}

#[tokio::test]
async fn snapshots_need_the_right_token_and_refuse_other_sites() {
    let db = TempDb::new();
    let server = start(&db).await;
    let body = String::from_utf8(save_body(&query_for("web"), &big_answer(3), None)).expect("utf8");

    // Saving: a write.
    let a = send(
        &server,
        Method::POST,
        SNAPSHOTS,
        &[("content-type", JSON)],
        &body,
    )
    .await;
    status(&a, 401, "no token");
    let a = send(
        &server,
        Method::POST,
        SNAPSHOTS,
        &[("content-type", JSON), READ],
        &body,
    )
    .await;
    status(&a, 401, "the query token does not save");
    let plain = [("content-type", "text/plain"), WRITE];
    let a = send(&server, Method::POST, SNAPSHOTS, &plain, &body).await;
    status(&a, 403, "a body type any site may send");
    let evil = [&EVIL[..], &[("content-type", JSON), WRITE]].concat();
    let a = send(&server, Method::POST, SNAPSHOTS, &evil, &body).await;
    status(&a, 403, "cross-site, even with the token");
    assert!(
        a.description().contains("cross-site request refused"),
        "{}",
        a.body
    );
    assert_eq!(listed(&server).await, Vec::<String>::new(), "nothing saved");
    let a = send(
        &server,
        Method::POST,
        SNAPSHOTS,
        &[("content-type", JSON), WRITE],
        &body,
    )
    .await;
    status(&a, 200, "saved");
    let id = a.body["result"]["id"].as_str().expect("id").to_owned();

    // Listing and reading: queries.
    status(
        &send(&server, Method::GET, SNAPSHOTS, &[], "").await,
        401,
        "list without a token",
    );
    assert_eq!(listed(&server).await, vec![id.clone()]);
    let one = format!("{SNAPSHOTS}/{id}");
    status(
        &send(&server, Method::GET, &one, &[], "").await,
        401,
        "read without a token",
    );
    let a = send(&server, Method::GET, &one, &[READ], "").await;
    status(&a, 200, "read with the query token");
    assert_eq!(a.body["OPT_STATUS"], "SUCCESS");

    // Deleting: a write.
    status(
        &send(&server, Method::DELETE, &one, &[READ], "").await,
        401,
        "delete, query token",
    );
    let evil = [&EVIL[..], &[WRITE]].concat();
    status(
        &send(&server, Method::DELETE, &one, &evil, "").await,
        403,
        "cross-site delete",
    );
    assert_eq!(listed(&server).await, vec![id.clone()], "still there");
    status(
        &send(&server, Method::DELETE, &one, &[WRITE], "").await,
        200,
        "delete",
    );
    assert_eq!(listed(&server).await, Vec::<String>::new());
    server.stop().await;
}
