//! `embers-server import --to URL`: the batches a file is read into (by the same code as a local
//! import, so the same formats and the same errors) are sent to a running service through its
//! ingest API, `POST /v1/profile/ingest` with JSON batches, as the collector sends its own.
//!
//! A file's batches go in requests of at most [`REQUEST_BYTES`] (a big file is several
//! requests, each its own transaction on the service; progress is printed on standard error).
//! The service's write token (`serve --token-file`) comes from `--token-file` or `EMBERS_TOKEN`.
//! Failures name the URL and what went wrong: nothing listening, a refused token (401/403), a
//! request over the service's `--max-ingest-bytes` (413), the service's own message otherwise.

use std::path::Path;
use std::time::Duration;

use embers_model::contract::ingest::BatchInput;
use serde_json::Value;

use crate::store::{Batch, InsertStats};

mod inputs;
use inputs::{cut, detail_bytes, inputs_of};

/// The environment variable holding the write token, when `--token-file` is not given.
pub const TOKEN_VAR: &str = "EMBERS_TOKEN";

/// The most JSON one request carries: well below `serve`'s default `--max-ingest-bytes`
/// (64 MiB), and small enough that progress shows on a big file.
pub const REQUEST_BYTES: usize = 8 * 1024 * 1024;

/// Files larger than this print their progress.
const PROGRESS_FROM: usize = 2 * REQUEST_BYTES;

/// A connection to a running service's ingest API.
pub struct Remote {
    url: String,
    token: Option<String>,
    client: reqwest::Client,
    runtime: tokio::runtime::Runtime,
}

impl Remote {
    /// A client for the service at `base` (`http://host:port`), with the token in `token_file`
    /// or else `$EMBERS_TOKEN`.
    pub fn new(base: &str, token_file: Option<&Path>) -> Result<Remote, String> {
        let base = base.trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(format!(
                "--to {base}: expected the service's http:// or https:// URL"
            ));
        }
        let token = match token_file {
            Some(path) => Some(read_token(path)?),
            None => std::env::var(TOKEN_VAR)
                .ok()
                .map(|t| t.trim().to_owned())
                .filter(|t| !t.is_empty()),
        };
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(300))
            .build()
            .map_err(|e| format!("cannot make an HTTP client: {e}"))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the async runtime: {e}"))?;
        Ok(Remote {
            url: format!("{base}/v1/profile/ingest"),
            token,
            client,
            runtime,
        })
    }

    /// Send the batches of the file `label`; what the service stored.
    pub fn send(&self, label: &str, batches: &[Batch]) -> Result<InsertStats, String> {
        let bodies = request_bodies(batches, REQUEST_BYTES)?;
        let total: usize = bodies.iter().map(Vec::len).sum();
        let mut stats = InsertStats::default();
        let mut sent = 0;
        for (i, body) in bodies.into_iter().enumerate() {
            let len = body.len();
            let got = self.runtime.block_on(self.post(body)).map_err(|e| {
                if i == 0 {
                    e
                } else {
                    format!("{e} (the first {i} requests, {sent} bytes, were stored)")
                }
            })?;
            stats.samples += got.samples;
            stats.new_stacks += got.new_stacks;
            sent += len;
            if total >= PROGRESS_FROM {
                eprintln!(
                    "{label}: sent {} of {} MB",
                    sent / 1_000_000,
                    total / 1_000_000
                );
            }
        }
        Ok(stats)
    }

    /// One request; what it stored.
    async fn post(&self, body: Vec<u8>) -> Result<InsertStats, String> {
        let mut request = self
            .client
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        let url = &self.url;
        let response = request.send().await.map_err(|e| unreachable(url, &e))?;
        let status = response.status();
        let text = response
            .text()
            .await
            .map_err(|e| format!("{url}: {status}, and its answer could not be read: {e}"))?;
        let answer: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if !status.is_success() {
            return Err(refused(url, status, &answer, &text));
        }
        let count = |name: &str| answer["result"][name].as_u64();
        match (count("samples"), count("new_stacks")) {
            (Some(samples), Some(new_stacks)) => Ok(InsertStats {
                samples,
                new_stacks,
            }),
            _ => Err(format!(
                "{url}: answered {status} without an ingest result: is this an Embers service? \
                 ({})",
                excerpt(&text)
            )),
        }
    }
}

/// The message for a request that got no answer.
fn unreachable(url: &str, e: &reqwest::Error) -> String {
    // The innermost cause says what happened ("Connection refused"); the outer ones only
    // which layer saw it.
    let mut why = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        why = cause.to_string();
        source = cause.source();
    }
    if e.is_connect() {
        format!("cannot connect to {url}: {why} (is `embers-server serve` running there?)")
    } else if e.is_timeout() {
        format!("{url}: no answer in time ({why})")
    } else {
        format!("{url}: the request failed: {why}")
    }
}

/// The message for an answer that is not a success.
fn refused(url: &str, status: reqwest::StatusCode, answer: &Value, text: &str) -> String {
    let said = answer["DESCRIPTION"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| excerpt(text));
    let hint = match status.as_u16() {
        401 | 403 => format!(
            " (give the service's write token, serve's --token-file, with --token-file FILE \
             or {TOKEN_VAR})"
        ),
        413 => format!(
            " (a request of this import is at most {} MiB: the service's --max-ingest-bytes \
             is lower)",
            REQUEST_BYTES >> 20
        ),
        _ => String::new(),
    };
    format!("{url}: {status}: {said}{hint}")
}

/// The start of an answer's text, for a message.
fn excerpt(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

fn read_token(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the token file {}: {e}", path.display()))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(format!("{}: the token is empty", path.display()));
    }
    Ok(token.to_owned())
}

/// The JSON bodies (`{"batches": [...]}`) carrying `batches`, each at most about `limit`
/// bytes: a batch becomes one input per second its samples are at, and an input too big for
/// one request is cut between lines.
fn request_bodies(batches: &[Batch], limit: usize) -> Result<Vec<Vec<u8>>, String> {
    let mut bodies = Vec::new();
    let mut current: Vec<BatchInput> = Vec::new();
    let mut size = 0;
    let encode = |inputs: &[BatchInput]| {
        serde_json::to_vec(&serde_json::json!({ "batches": inputs }))
            .map_err(|e| format!("cannot encode the batches: {e}"))
    };
    for input in batches.iter().flat_map(inputs_of) {
        for piece in cut(input, limit) {
            let piece_size =
                piece.folded.len() + piece.details.iter().map(detail_bytes).sum::<usize>() + 256;
            if !current.is_empty() && size + piece_size > limit {
                bodies.push(encode(&current)?);
                current.clear();
                size = 0;
            }
            size += piece_size;
            current.push(piece);
        }
    }
    if !current.is_empty() {
        bodies.push(encode(&current)?);
    }
    Ok(bodies)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{BatchMeta, Sample, Tags};

    fn batch(samples: &[(i64, &str, u64)]) -> Batch {
        Batch {
            meta: BatchMeta {
                app_service: "myapp".into(),
                language: "eBPF".into(),
                event_type: "on-cpu".into(),
                unit: "microseconds".into(),
                tags: Tags::new().with("host", "node-a").expect("tag"),
            },
            samples: samples
                .iter()
                .map(|&(time, stack, value)| Sample {
                    time,
                    stack: stack.into(),
                    value,
                    detail: None,
                })
                .collect(),
        }
    }

    #[test]
    fn big_inputs_are_cut_between_lines_into_bodies_under_the_limit() {
        let samples: Vec<(i64, String, u64)> =
            (0..100).map(|i| (7, format!("main;f{i:03}"), i)).collect();
        let refs: Vec<(i64, &str, u64)> = samples
            .iter()
            .map(|(t, s, v)| (*t, s.as_str(), *v))
            .collect();
        let bodies = request_bodies(&[batch(&refs)], 600).expect("bodies");
        assert!(bodies.len() > 1, "{}", bodies.len());
        let mut lines = Vec::new();
        for body in &bodies {
            assert!(body.len() < 600 + 512, "{}", body.len());
            let v: Value = serde_json::from_slice(body).expect("json");
            for input in v["batches"].as_array().expect("batches") {
                assert_eq!(input["time"], 7);
                lines.extend(
                    input["folded"]
                        .as_str()
                        .expect("folded")
                        .lines()
                        .map(str::to_owned),
                );
            }
        }
        assert_eq!(lines.len(), 100);
        assert_eq!(lines[99], "main;f099 99");
    }

    #[test]
    fn refusals_name_the_url_the_status_and_what_to_do() {
        let answer = serde_json::json!({"DESCRIPTION": "missing or wrong token"});
        let m = refused(
            "http://h/v1/profile/ingest",
            reqwest::StatusCode::UNAUTHORIZED,
            &answer,
            "",
        );
        assert!(
            m.starts_with("http://h/v1/profile/ingest: 401 Unauthorized: missing"),
            "{m}"
        );
        assert!(m.contains("--token-file") && m.contains(TOKEN_VAR), "{m}");
        let m = refused(
            "u",
            reqwest::StatusCode::PAYLOAD_TOO_LARGE,
            &Value::Null,
            "too big",
        );
        assert!(
            m.contains("413") && m.contains("too big") && m.contains("--max-ingest-bytes"),
            "{m}"
        );
        assert!(Remote::new("localhost:8080", None).is_err());
    }
}
