//! Reading the querier's answers within bounds. ProfileTracing answers are relayed: a small
//! one (up to [`PREFETCH`]) whole, a bigger one streamed to the client as it arrives, never
//! more than the limit. SQL API answers are parsed, so they are read whole, within the limit.
//!
//! When an answer turns out too big before the client heard anything (its `Content-Length`
//! says so, or it crosses the limit within the first [`PREFETCH`] bytes) the client gets a 502
//! envelope naming the limit; past that point the status is sent, so the transfer is cut and
//! the reason logged. Without `--allow-debug`, a failure's `debug` member (where a querier puts
//! its SQL and errors, asked or not) is answered null.

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use futures_util::stream::{self, StreamExt};

use super::Upstream;
use crate::error::Error;

/// How much of an answer is read before the client's answer starts.
pub const PREFETCH: usize = 1 << 20;

/// Why an answer could not be read.
pub(crate) enum ReadError {
    /// More than the limit.
    TooBig,
    /// The transfer failed (timeout, connection lost).
    Failed(reqwest::Error),
}

impl Upstream {
    /// What a failed exchange with the querier means, naming the option that bounds it.
    pub(crate) fn describe(&self, e: &reqwest::Error) -> String {
        let o = &self.options;
        if e.is_connect() && e.is_timeout() {
            format!(
                "no connection within {} (--upstream-connect-timeout)",
                humantime::format_duration(o.connect_timeout)
            )
        } else if e.is_timeout() {
            format!(
                "it sent nothing for {} (--upstream-read-timeout)",
                humantime::format_duration(o.read_timeout)
            )
        } else {
            e.to_string()
        }
    }

    /// The 502 for an answer over the limit.
    pub(crate) fn too_big(&self) -> String {
        format!(
            "the upstream querier's answer is larger than {} bytes (--upstream-max-bytes): ask \
             for a shorter time range or a narrower filter, or raise the limit",
            self.options.max_bytes
        )
    }

    /// A redirect is an error: a querier does not redirect, and following one would send the
    /// query (and its organisation) wherever the answer points.
    pub(crate) fn redirected(&self, url: &str, answer: &reqwest::Response) -> Option<String> {
        answer.status().is_redirection().then(|| {
            let to = answer
                .headers()
                .get(header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .unwrap_or("nowhere");
            format!(
                "upstream querier {url} answered HTTP {} (a redirect to {to}); Embers follows no \
                 redirects: give --upstream the querier's own address",
                answer.status().as_u16()
            )
        })
    }

    /// The whole answer, at most the limit.
    pub(crate) async fn read_bounded(
        &self,
        answer: &mut reqwest::Response,
    ) -> Result<Vec<u8>, ReadError> {
        let limit = self.options.max_bytes;
        if answer.content_length().is_some_and(|n| n > limit) {
            return Err(ReadError::TooBig);
        }
        let mut body = Vec::new();
        while let Some(chunk) = answer.chunk().await.map_err(ReadError::Failed)? {
            if (body.len() + chunk.len()) as u64 > limit {
                return Err(ReadError::TooBig);
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// Relays a ProfileTracing answer to the client (status, content type and body).
    pub(crate) async fn relay(
        &self,
        url: &str,
        mut answer: reqwest::Response,
        allow_debug: bool,
    ) -> Result<Response, Error> {
        let limit = self.options.max_bytes;
        let status =
            StatusCode::from_u16(answer.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
        let content_type = answer.headers().get(header::CONTENT_TYPE).cloned();
        let length = answer.content_length();
        if length.is_some_and(|n| n > limit) {
            return Err(super::gateway(self.too_big()));
        }
        let mut head = Vec::new();
        let whole = loop {
            if head.len() > PREFETCH {
                break false;
            }
            match answer.chunk().await {
                Ok(Some(chunk)) if (head.len() + chunk.len()) as u64 > limit => {
                    return Err(super::gateway(self.too_big()));
                }
                Ok(Some(chunk)) => head.extend_from_slice(&chunk),
                Ok(None) => break true,
                Err(e) => {
                    let detail = format!("reading the answer failed: {}", self.describe(&e));
                    return Err(Error::upstream(url, detail));
                }
            }
        };
        let mut length = length;
        let body = if whole {
            if !allow_debug && !status.is_success() {
                head = without_debug(head);
                length = Some(head.len() as u64);
            }
            Body::from(head)
        } else {
            Body::from_stream(self.rest_of(url, Bytes::from(head), answer))
        };
        let mut response = Response::new(body);
        *response.status_mut() = status;
        let headers = response.headers_mut();
        if let Some(ct) = content_type {
            headers.insert(header::CONTENT_TYPE, ct);
        }
        if let Some(n) = length {
            headers.insert(header::CONTENT_LENGTH, HeaderValue::from(n));
        }
        Ok(response)
    }

    /// `head` and then the rest of `answer` as it arrives, cut at the limit.
    fn rest_of(
        &self,
        url: &str,
        head: Bytes,
        answer: reqwest::Response,
    ) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
        let (limit, too_big, url) = (self.options.max_bytes, self.too_big(), url.to_owned());
        let read_timeout = self.options.read_timeout;
        let seen = head.len() as u64;
        let rest = stream::try_unfold((answer, seen), move |(mut answer, seen)| {
            let (too_big, url) = (too_big.clone(), url.clone());
            async move {
                match answer.chunk().await {
                    Ok(Some(chunk)) if seen + chunk.len() as u64 > limit => {
                        tracing::error!(%url, "relayed answer cut: {too_big}");
                        Err(std::io::Error::other(too_big))
                    }
                    Ok(Some(chunk)) => {
                        let seen = seen + chunk.len() as u64;
                        Ok(Some((chunk, (answer, seen))))
                    }
                    Ok(None) => Ok(None),
                    Err(e) => {
                        let why = if e.is_timeout() {
                            format!("silent for {}", humantime::format_duration(read_timeout))
                        } else {
                            e.to_string()
                        };
                        tracing::error!(%url, "relayed answer cut: the querier failed: {why}");
                        Err(std::io::Error::other(why))
                    }
                }
            }
        });
        stream::once(async move { Ok(head) }).chain(rest)
    }
}

/// A failure envelope with its `debug` member null (any other body as it is). Failures are
/// small and read whole, so this never touches a streamed answer.
fn without_debug(body: Vec<u8>) -> Vec<u8> {
    let Ok(mut envelope) =
        serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(&body)
    else {
        return body;
    };
    match envelope.get_mut("debug") {
        Some(debug) if !debug.is_null() => *debug = serde_json::Value::Null,
        _ => return body,
    }
    serde_json::to_vec(&envelope).unwrap_or(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_loses_its_debug_member_only() {
        let failed = br#"{"OPT_STATUS":"FAIL","DESCRIPTION":"x","result":null,"debug":{"querier_debug":[{"sql":"SELECT secret"}]}}"#;
        let out = String::from_utf8(without_debug(failed.to_vec())).unwrap();
        assert!(!out.contains("secret"), "{out}");
        assert!(out.contains(r#""DESCRIPTION":"x""#), "{out}");
        for kept in [&b"not json"[..], br#"{"debug":null}"#, b"[1]"] {
            assert_eq!(without_debug(kept.to_vec()), kept);
        }
    }
}
