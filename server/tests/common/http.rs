//! Raw requests with any method and headers, and their answers; stub HTTP peers on loopback.

use reqwest::header::HeaderMap;
use reqwest::Method;
use serde_json::Value;

use std::sync::Arc;

use embers_server::http::upstream::{Upstream, UpstreamOptions};

use super::{TempDb, TestServer};

/// An answer: status, headers and the envelope (or `Value::String` of a non-JSON body).
pub struct Answer {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Answer {
    pub fn description(&self) -> &str {
        self.body["DESCRIPTION"].as_str().unwrap_or("")
    }

    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

pub async fn send(
    server: &TestServer,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut request = server
        .client
        .request(method, format!("{}{path}", server.base))
        .body(body.to_owned());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.expect("body");
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Answer {
        status,
        headers,
        body,
    }
}

/// Serves `router` (a stub peer, e.g. a querier) on a free loopback port; returns its base URL.
pub async fn serve_stub(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    base
}

/// An Embers server over a fresh database that proxies ProfileTracing to the querier at `base`.
pub async fn proxying(base: &str, options: UpstreamOptions) -> (TempDb, TestServer) {
    let db = TempDb::new();
    let up = Arc::new(Upstream::with_options(base, options).expect("upstream"));
    let server = TestServer::start_with(&db.path(), |s| s.upstream = Some(up)).await;
    (db, server)
}
