//! What a connection's requests tell its socket, and the bound on a request's body.
//!
//! [`track`] (the HTTP middleware; [`super::grpc`] has the same for gRPC calls) marks the
//! connection busy from a request's start until its answer's body is finished or dropped, when
//! no header or idle deadline applies, and gives the request's body `--body-read-timeout` from
//! the end of its headers to arrive ([`Timed`]). A body that misses it fails; the handler
//! reading it gets an error, and the answer is replaced with 408 Request Timeout and the
//! connection closed, freeing its slot.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{ConnectInfo, Request};
use axum::http::{header, HeaderValue, StatusCode, Version};
use axum::middleware::Next;
use axum::response::Response;
use embers_model::contract::envelope::FAIL;
use futures_util::task::AtomicWaker;
use http_body::Frame;
use serde_json::Value;
use tokio::time::Sleep;

use super::Conn;

/// The error a [`Timed`] body fails with.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within --body-read-timeout ({0:?})")]
pub struct BodyTimedOut(pub Duration);

/// What the requests of one connection tell its socket.
#[derive(Debug, Default)]
pub struct Activity {
    /// Requests being answered now (more than one only with HTTP/2).
    pub(super) in_flight: AtomicUsize,
    /// Counts the times the connection became idle, so the socket notices each.
    pub(super) idle_epoch: AtomicU64,
    /// The socket's reader, woken when the connection becomes idle so its deadline is armed.
    pub(super) reader: AtomicWaker,
}

/// Marks a connection busy while it lives.
pub(super) struct Busy(Arc<Activity>);

impl Busy {
    pub(super) fn new(activity: Arc<Activity>) -> Busy {
        activity.in_flight.fetch_add(1, Ordering::AcqRel);
        Busy(activity)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle_epoch.fetch_add(1, Ordering::AcqRel);
            self.0.reader.wake();
        }
    }
}

/// The middleware: the connection is busy from the request's start to its answer's end (or
/// to the request being dropped, when the client went away), and the request's body has
/// `--body-read-timeout` to arrive. Requests not served through [`super::serve`] (tests
/// calling the router) pass untouched.
pub async fn track(request: Request, next: Next) -> Response {
    let Some(ConnectInfo(conn)) = request.extensions().get::<ConnectInfo<Conn>>() else {
        return next.run(request).await;
    };
    let busy = Busy::new(conn.activity.clone());
    let limit = conn.body_read_timeout;
    let http1 = request.version() < Version::HTTP_2;
    let (parts, body) = request.into_parts();
    let (body, expired) = Timed::new(body, limit);
    let response = next.run(Request::from_parts(parts, Body::new(body))).await;
    let response = match limit.filter(|_| expired.load(Ordering::Acquire)) {
        Some(limit) => too_slow(limit, http1),
        None => response,
    };
    response.map(|inner| {
        Body::new(Tracked {
            inner,
            _busy: Some(busy),
        })
    })
}

/// 408 for a body that missed its deadline; over HTTP/1 the connection closes after it, as
/// the rest of the body is never read.
fn too_slow(limit: Duration, http1: bool) -> Response {
    tracing::debug!("a request body missed --body-read-timeout");
    let description = BodyTimedOut(limit).to_string();
    let mut response = crate::error::envelope(
        StatusCode::REQUEST_TIMEOUT,
        FAIL,
        &description,
        Value::Null,
        Value::Null,
    );
    if http1 {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// An answer's body that keeps its connection busy until it is finished or dropped.
pub struct Tracked<B> {
    pub(super) inner: B,
    /// `None` for a call not served through the bounded listeners.
    pub(super) _busy: Option<Busy>,
}

impl<B: HttpBody<Data = Bytes> + Unpin> HttpBody for Tracked<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// A request's body with a deadline for its arrival, counted from its creation (the end of
/// the request's headers). The deadline is only looked at while the body is awaited: a
/// handler that has not asked for the body yet is not failed by it.
pub(super) struct Timed<B> {
    inner: B,
    limit: Duration,
    /// `None`: no bound, or the body has ended.
    deadline: Option<Pin<Box<Sleep>>>,
    expired: Arc<AtomicBool>,
}

impl<B> Timed<B> {
    /// `inner` bounded by `limit` from now; the flag is set if it misses it.
    pub(super) fn new(inner: B, limit: Option<Duration>) -> (Timed<B>, Arc<AtomicBool>) {
        let expired = Arc::new(AtomicBool::new(false));
        let timed = Timed {
            inner,
            limit: limit.unwrap_or_default(),
            deadline: limit.map(|l| Box::pin(tokio::time::sleep(l))),
            expired: expired.clone(),
        };
        (timed, expired)
    }
}

impl<B> HttpBody for Timed<B>
where
    B: HttpBody<Data = Bytes> + Unpin,
    B::Error: Into<axum::BoxError>,
{
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::BoxError>>> {
        let this = &mut *self;
        if this.expired.load(Ordering::Acquire) {
            return Poll::Ready(Some(Err(BodyTimedOut(this.limit).into())));
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => {
                if frame.is_none() || this.inner.is_end_stream() {
                    this.deadline = None;
                }
                Poll::Ready(frame.map(|f| f.map_err(Into::into)))
            }
            Poll::Pending => {
                let passed = match this.deadline.as_mut() {
                    Some(sleep) => sleep.as_mut().poll(cx).is_ready(),
                    None => false,
                };
                if !passed {
                    return Poll::Pending;
                }
                this.deadline = None;
                this.expired.store(true, Ordering::Release);
                Poll::Ready(Some(Err(BodyTimedOut(this.limit).into())))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_body_that_does_not_arrive_fails_at_its_deadline_and_says_so() {
        let never = futures_util::stream::pending::<Result<Bytes, std::io::Error>>();
        let (body, expired) =
            Timed::new(Body::from_stream(never), Some(Duration::from_millis(300)));
        let started = tokio::time::Instant::now();
        let read = axum::body::to_bytes(Body::new(body), usize::MAX).await;
        let e = read.expect_err("cut");
        assert!(e.to_string().contains("--body-read-timeout"), "{e}");
        assert!(expired.load(Ordering::Acquire));
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(300), "{took:?}");
        assert!(took < Duration::from_secs(3), "{took:?}");
    }

    #[tokio::test]
    async fn a_body_that_arrives_in_time_is_untouched_and_unbounded_ones_wait() {
        let (body, expired) = Timed::new(Body::from("abc"), Some(Duration::from_secs(3)));
        let read = axum::body::to_bytes(Body::new(body), usize::MAX).await;
        assert_eq!(read.expect("whole").as_ref(), b"abc");
        assert!(!expired.load(Ordering::Acquire));
        let never = futures_util::stream::pending::<Result<Bytes, std::io::Error>>();
        let (body, _) = Timed::new(Body::from_stream(never), None);
        let read = axum::body::to_bytes(Body::new(body), usize::MAX);
        let waited = tokio::time::timeout(Duration::from_millis(500), read).await;
        assert!(waited.is_err(), "no bound: still waiting");
    }
}
