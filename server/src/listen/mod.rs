//! Serving connections so that slow or idle clients cannot hold the service: at most
//! `--max-connections` are served at once (more wait, not accepted, in the listen backlog until
//! one closes), a connection has `--header-read-timeout` to send each request's headers and may
//! wait `--idle-timeout` between requests; then it is closed.
//!
//! The bounds sit in the connection's I/O ([`watch::Watched`]): while no request of the
//! connection is being answered, a read that waits past the deadline fails, and hyper closes
//! the connection. Whether a request is being answered is counted by a middleware that holds a
//! mark until the answer's body is finished ([`watch::track`]), so a long query or a big answer
//! is never cut. Both HTTP/1 and HTTP/2 (prior knowledge) connections are bounded alike.

pub mod options;
mod watch;

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::IncomingStream;
use axum::Router;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub use options::DEFAULT_MAX_CONNECTIONS;
pub use options::{ConnArgs, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_IDLE_TIMEOUT};
use watch::{Activity, Watched};

/// How often waiting for a connection slot is logged at most.
const LOG_EVERY: Duration = Duration::from_secs(60);

/// The bounds on connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnLimits {
    /// Time to send a request's headers: from the connection's start for its first request,
    /// from the request's first byte for later ones. `None`: no bound.
    pub header_read_timeout: Option<Duration>,
    /// Time a connection may wait for its next request while none is being answered. `None`:
    /// no bound.
    pub idle_timeout: Option<Duration>,
    /// Connections served at once (at least 1).
    pub max_connections: usize,
}

impl Default for ConnLimits {
    fn default() -> Self {
        ConnLimits {
            header_read_timeout: Some(DEFAULT_HEADER_READ_TIMEOUT),
            idle_timeout: Some(DEFAULT_IDLE_TIMEOUT),
            max_connections: DEFAULT_MAX_CONNECTIONS as usize,
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
        .layer(axum::middleware::from_fn(watch::track))
        .into_make_service_with_connect_info::<Conn>();
    axum::serve(Limited::new(listener, limits), service)
        .with_graceful_shutdown(shutdown)
        .await
}

/// A listener that accepts only while fewer than `max_connections` are open and wraps each
/// connection in the bounds.
pub struct Limited {
    listener: TcpListener,
    slots: Arc<Semaphore>,
    limits: ConnLimits,
    /// When waiting for a slot was last logged (once a minute at most, not per client).
    logged: Option<std::time::Instant>,
}

impl Limited {
    /// `listener` within `limits`.
    pub fn new(listener: TcpListener, limits: ConnLimits) -> Limited {
        Limited {
            listener,
            slots: Arc::new(Semaphore::new(limits.max_connections.max(1))),
            limits,
            logged: None,
        }
    }

    /// A slot for one more connection, waiting while all are taken.
    async fn slot(&mut self) -> OwnedSemaphorePermit {
        if let Ok(permit) = self.slots.clone().try_acquire_owned() {
            return permit;
        }
        if self.logged.is_none_or(|t| t.elapsed() >= LOG_EVERY) {
            tracing::warn!(
                max = self.limits.max_connections,
                "at the connection limit (--max-connections): new connections wait in the \
                 listen backlog until one closes"
            );
            self.logged = Some(std::time::Instant::now());
        }
        match self.slots.clone().acquire_owned().await {
            Ok(permit) => permit,
            // The semaphore is never closed.
            Err(_) => std::future::pending().await,
        }
    }

    async fn accept_one(&mut self) -> (TcpStream, SocketAddr) {
        loop {
            match self.listener.accept().await {
                Ok(accepted) => return accepted,
                // The peer gave up before we took it: nothing to wait for.
                Err(e) if is_connection_error(&e) => continue,
                // Out of file descriptors and the like: wait rather than spin (as axum does).
                Err(e) => {
                    tracing::error!("accept failed: {e}; retrying in 1 s");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    }
}

fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

impl axum::serve::Listener for Limited {
    type Io = Watched;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Watched, SocketAddr) {
        let permit = self.slot().await;
        let (stream, addr) = self.accept_one().await;
        (Watched::new(stream, permit, self.limits), addr)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }
}

/// What each request learns of its connection (axum's `ConnectInfo`): the activity the
/// bounds watch.
#[derive(Clone, Debug)]
pub struct Conn(Arc<Activity>);

impl Connected<IncomingStream<'_, Limited>> for Conn {
    fn connect_info(stream: IncomingStream<'_, Limited>) -> Self {
        Conn(stream.io().activity())
    }
}
