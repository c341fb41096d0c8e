//! Raw requests with any method and headers, and their answers.

use reqwest::header::HeaderMap;
use reqwest::Method;
use serde_json::Value;

use super::TestServer;

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
