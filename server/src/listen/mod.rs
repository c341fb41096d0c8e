//! Serving connections so that slow or idle clients cannot hold the service:
//!
//! - at most `--max-connections` are served at once (more wait, not accepted, in the listen
//!   backlog until one closes), and at most `--max-connections-per-ip` from one client
//!   address (more are accepted and closed at once) — [`accept`];
//! - a connection has `--header-read-timeout` to send each request's headers and may wait
//!   `--idle-timeout` between requests; then it is closed — [`watch::Watched`];
//! - a request's body has `--body-read-timeout` from the end of its headers to arrive; then
//!   the request fails with 408 and the connection closes — [`track`];
//! - a write of an answer may make no progress for `--write-timeout`; then the connection
//!   closes — [`watch::Watched`].
//!
//! The header and idle bounds sit in the connection's I/O: while no request of the
//! connection is being answered, a read that waits past the deadline fails, and hyper closes
//! the connection. Whether a request is being answered is counted by a middleware that holds a
//! mark until the answer's body is finished ([`track::track`]), so a long query or a big
//! answer is never cut. Both HTTP/1 and HTTP/2 (prior knowledge) connections are bounded
//! alike, and the OTLP gRPC listener is bounded by the same ([`grpc`]).

pub mod accept;
pub mod grpc;
pub mod options;
mod slot;
pub mod track;
mod watch;

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::IncomingStream;
use axum::Router;
use tokio::net::TcpListener;

pub use accept::Limited;
pub use options::{default_per_ip, ConnArgs, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_IDLE_TIMEOUT};
pub use options::{DEFAULT_BODY_READ_TIMEOUT, DEFAULT_MAX_CONNECTIONS, DEFAULT_WRITE_TIMEOUT};
use track::Activity;
pub use watch::Watched;

/// The bounds on connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnLimits {
    /// Time to send a request's headers: from the connection's start for its first request,
    /// from the request's first byte for later ones. `None`: no bound.
    pub header_read_timeout: Option<Duration>,
    /// Time for a request's body to arrive, from the end of its headers. `None`: no bound.
    pub body_read_timeout: Option<Duration>,
    /// Time a connection may wait for its next request while none is being answered. `None`:
    /// no bound.
    pub idle_timeout: Option<Duration>,
    /// Time a write may make no progress. `None`: no bound.
    pub write_timeout: Option<Duration>,
    /// Connections served at once (at least 1).
    pub max_connections: usize,
    /// Connections served at once from one client IP address (at least 1).
    pub max_connections_per_ip: usize,
}

impl Default for ConnLimits {
    fn default() -> Self {
        let max_connections = DEFAULT_MAX_CONNECTIONS as usize;
        ConnLimits {
            header_read_timeout: Some(DEFAULT_HEADER_READ_TIMEOUT),
            body_read_timeout: Some(DEFAULT_BODY_READ_TIMEOUT),
            idle_timeout: Some(DEFAULT_IDLE_TIMEOUT),
            write_timeout: Some(DEFAULT_WRITE_TIMEOUT),
            max_connections,
            max_connections_per_ip: default_per_ip(max_connections),
        }
    }
}

/// Serve `router` on `listener` within `limits` until `shutdown` resolves, then wait for the
/// open connections to finish (idle ones close at once).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let service = router
        .layer(axum::middleware::from_fn(track::track))
        .into_make_service_with_connect_info::<Conn>();
    axum::serve(Limited::new(listener, limits), service)
        .with_graceful_shutdown(shutdown)
        .await
}

impl axum::serve::Listener for Limited {
    type Io = Watched;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Watched, SocketAddr) {
        self.next().await
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Limited::local_addr(self)
    }
}

/// What each request learns of its connection (axum's `ConnectInfo`; tonic's connect info
/// on the gRPC listener): the activity the bounds watch, and the body's time limit.
#[derive(Clone, Debug)]
pub struct Conn {
    activity: Arc<Activity>,
    body_read_timeout: Option<Duration>,
}

impl Conn {
    fn of(io: &Watched) -> Conn {
        Conn {
            activity: io.activity(),
            body_read_timeout: io.limits().body_read_timeout,
        }
    }
}

impl Connected<IncomingStream<'_, Limited>> for Conn {
    fn connect_info(stream: IncomingStream<'_, Limited>) -> Self {
        Conn::of(stream.io())
    }
}
