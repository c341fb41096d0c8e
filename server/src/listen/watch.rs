//! One connection's socket and its deadlines: [`Watched`] fails a read that waits past the
//! deadline of the phase the connection is in, and a write that makes no progress for
//! `--write-timeout`; [`super::track`] marks it busy while one of its requests is being
//! answered (until the answer's body ends), when no read deadline applies (the body's own,
//! `--body-read-timeout`, is kept by the request's body).
//!
//! | phase | read deadline |
//! |---|---|
//! | fresh: accepted, first request not yet read | accept + header timeout |
//! | idle: its last answer finished, nothing read since | that moment + idle timeout |
//! | head: a byte of the next request came | that byte + header timeout |
//! | busy: a request is being answered | none (body timeout, query limits) |

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

use super::slot::Slot;
use super::track::Activity;
use super::ConnLimits;

/// Where a connection is between requests (see the module's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Fresh(Instant),
    Idle(Instant),
    Head(Instant),
    Busy,
}

/// A connection's socket, its slots (among `--max-connections` and its address's share) and
/// its deadlines.
pub struct Watched {
    io: TcpStream,
    activity: Arc<Activity>,
    limits: ConnLimits,
    /// Given back when the connection closes.
    _slot: Slot,
    phase: Phase,
    seen_epoch: u64,
    timer: Pin<Box<Sleep>>,
    armed: Option<Instant>,
    /// Since when writes have made no progress (`None`: the last one did).
    stalled: Option<Instant>,
    write_timer: Pin<Box<Sleep>>,
}

impl Watched {
    /// A connection accepted now.
    pub(super) fn new(io: TcpStream, slot: Slot, limits: ConnLimits) -> Watched {
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
            stalled: None,
            write_timer: Box::pin(tokio::time::sleep_until(now)),
        }
    }

    /// What its requests report to.
    pub fn activity(&self) -> Arc<Activity> {
        self.activity.clone()
    }

    /// The bounds it is served within.
    pub fn limits(&self) -> ConnLimits {
        self.limits
    }

    /// The socket.
    pub fn tcp(&self) -> &TcpStream {
        &self.io
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

    /// A write's outcome within `--write-timeout`: a pending write starts (or continues) a
    /// stall, which fails once it lasts the timeout; any finished write ends it.
    fn within_write_timeout<T>(
        &mut self,
        polled: Poll<io::Result<T>>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<T>> {
        if polled.is_ready() {
            self.stalled = None;
            return polled;
        }
        let Some(limit) = self.limits.write_timeout else {
            return Poll::Pending;
        };
        if self.stalled.is_none() {
            let now = Instant::now();
            self.stalled = Some(now);
            self.write_timer.as_mut().reset(now + limit);
        }
        if self.write_timer.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        tracing::debug!("closing a connection at its --write-timeout");
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "connection closed at its --write-timeout: the client read nothing",
        )))
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
        let polled = Pin::new(&mut self.io).poll_write(cx, buf);
        self.within_write_timeout(polled, cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.within_write_timeout(polled, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.io).poll_shutdown(cx);
        self.within_write_timeout(polled, cx)
    }
}
