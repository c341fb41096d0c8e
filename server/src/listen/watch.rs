//! One connection's bounds: [`Watched`] wraps its socket and fails a read that waits past the
//! deadline of the phase the connection is in; [`track`] marks it busy while one of its
//! requests is being answered (until the answer's body ends), when no deadline applies.
//!
//! | phase | deadline |
//! |---|---|
//! | fresh: accepted, first request not yet read | accept + header timeout |
//! | idle: its last answer finished, nothing read since | that moment + idle timeout |
//! | head: a byte of the next request came | that byte + header timeout |
//! | busy: a request is being answered | none (the query limits bound it) |

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{ConnectInfo, Request};
use axum::middleware::Next;
use axum::response::Response;
use futures_util::task::AtomicWaker;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::{Instant, Sleep};

use super::{Conn, ConnLimits};

/// What the requests of one connection tell its socket.
#[derive(Debug, Default)]
pub struct Activity {
    /// Requests being answered now (more than one only with HTTP/2).
    in_flight: AtomicUsize,
    /// Counts the times the connection became idle, so the socket notices each.
    idle_epoch: AtomicU64,
    /// The socket's reader, woken when the connection becomes idle so its deadline is armed.
    reader: AtomicWaker,
}

/// Marks a connection busy while it lives.
struct Busy(Arc<Activity>);

impl Busy {
    fn new(activity: Arc<Activity>) -> Busy {
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
/// to the request being dropped, when the client went away). Requests not served through
/// [`super::serve`] (tests calling the router) pass untouched.
pub async fn track(request: Request, next: Next) -> Response {
    let Some(ConnectInfo(Conn(activity))) = request.extensions().get::<ConnectInfo<Conn>>() else {
        return next.run(request).await;
    };
    let busy = Busy::new(activity.clone());
    let response = next.run(request).await;
    response.map(|inner| Body::new(Tracked { inner, _busy: busy }))
}

/// An answer's body that keeps its connection busy until it is finished or dropped.
struct Tracked {
    inner: Body,
    _busy: Busy,
}

impl HttpBody for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Where a connection is between requests (see the module's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Fresh(Instant),
    Idle(Instant),
    Head(Instant),
    Busy,
}

/// A connection's socket, its slot among `--max-connections` and its deadlines.
pub struct Watched {
    io: TcpStream,
    activity: Arc<Activity>,
    limits: ConnLimits,
    /// Given back when the connection closes.
    _slot: OwnedSemaphorePermit,
    phase: Phase,
    seen_epoch: u64,
    timer: Pin<Box<Sleep>>,
    armed: Option<Instant>,
}

impl Watched {
    /// A connection accepted now.
    pub fn new(io: TcpStream, slot: OwnedSemaphorePermit, limits: ConnLimits) -> Watched {
        let now = Instant::now();
        Watched {
            io,
            activity: Arc::default(),
            limits,
            _slot: slot,
            phase: Phase::Fresh(now),
            seen_epoch: 0,
            timer: Box::pin(tokio::time::sleep_until(now)),
            armed: None,
        }
    }

    /// What its requests report to.
    pub fn activity(&self) -> Arc<Activity> {
        self.activity.clone()
    }

    /// Move to the phase the requests and a read (`got_bytes`) put the connection in.
    fn update(&mut self, got_bytes: bool) {
        let now = Instant::now();
        if self.activity.in_flight.load(Ordering::Acquire) > 0 {
            self.phase = Phase::Busy;
            return;
        }
        let epoch = self.activity.idle_epoch.load(Ordering::Acquire);
        if epoch != self.seen_epoch || self.phase == Phase::Busy {
            self.seen_epoch = epoch;
            self.phase = Phase::Idle(now);
        }
        if got_bytes && matches!(self.phase, Phase::Idle(_)) {
            self.phase = Phase::Head(now);
        }
    }

    /// When the connection is to be closed, and which bound that is.
    fn deadline(&self) -> Option<(Instant, &'static str)> {
        let (since, limit, name) = match self.phase {
            Phase::Fresh(t) | Phase::Head(t) => {
                (t, self.limits.header_read_timeout, "--header-read-timeout")
            }
            Phase::Idle(t) => (t, self.limits.idle_timeout, "--idle-timeout"),
            Phase::Busy => return None,
        };
        limit.map(|limit| (since + limit, name))
    }

    /// Whether `deadline` has passed; otherwise the timer wakes this task when it does.
    fn expired(&mut self, deadline: Instant, cx: &mut Context<'_>) -> bool {
        if self.armed != Some(deadline) {
            self.timer.as_mut().reset(deadline);
            self.armed = Some(deadline);
        }
        self.timer.as_mut().poll(cx).is_ready()
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        this.activity.reader.register(cx.waker());
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.io).poll_read(cx, buf);
        this.update(matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before);
        if polled.is_ready() {
            return polled;
        }
        match this.deadline() {
            Some((deadline, bound)) if this.expired(deadline, cx) => {
                tracing::debug!("closing a connection at its {bound}");
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("connection closed at its {bound}"),
                )))
            }
            _ => Poll::Pending,
        }
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}
