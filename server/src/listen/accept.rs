//! Accepting connections within the caps: at most `--max-connections` are open at once (more
//! wait, not accepted, in the listen backlog until one closes), and at most
//! `--max-connections-per-ip` from one client address — a connection over that share is
//! accepted and closed at once, so it neither holds a slot nor sits in the backlog in front
//! of other clients.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::slot::{Peers, Slot};
use super::watch::Watched;
use super::ConnLimits;

/// How often reaching a cap is logged at most (once a minute, not per client).
const LOG_EVERY: Duration = Duration::from_secs(60);

/// A listener that accepts only while fewer than `max_connections` are open, closes those
/// over their address's share, and wraps each connection in the bounds.
pub struct Limited {
    listener: TcpListener,
    slots: Arc<Semaphore>,
    peers: Arc<Peers>,
    limits: ConnLimits,
    /// When reaching `--max-connections` was last logged.
    logged_full: Option<Instant>,
    /// When refusing a connection over `--max-connections-per-ip` was last logged.
    logged_share: Option<Instant>,
}

/// Whether to log now, given when it was last done; notes that it is.
fn log_now(last: &mut Option<Instant>) -> bool {
    if last.is_some_and(|t| t.elapsed() < LOG_EVERY) {
        return false;
    }
    *last = Some(Instant::now());
    true
}

impl Limited {
    /// `listener` within `limits`.
    pub fn new(listener: TcpListener, limits: ConnLimits) -> Limited {
        Limited {
            listener,
            slots: Arc::new(Semaphore::new(limits.max_connections.max(1))),
            peers: Arc::default(),
            limits,
            logged_full: None,
            logged_share: None,
        }
    }

    /// The bounds its connections are served within.
    pub fn limits(&self) -> ConnLimits {
        self.limits
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The next connection within the caps.
    pub async fn next(&mut self) -> (Watched, SocketAddr) {
        loop {
            let permit = self.slot().await;
            let (stream, addr) = self.accept_one().await;
            // An IPv4 client on a dual-stack socket is one address, however it is written.
            let ip = addr.ip().to_canonical();
            let share = self.limits.max_connections_per_ip.max(1);
            if let Some(peer) = self.peers.take(ip, share) {
                let slot = Slot {
                    _conn: permit,
                    _peer: peer,
                };
                return (Watched::new(stream, slot, self.limits), addr);
            }
            if log_now(&mut self.logged_share) {
                tracing::warn!(
                    %ip,
                    max = share,
                    "a client is at its share of connections (--max-connections-per-ip): \
                     its further connections are closed at once"
                );
            }
            // Dropping both closes the connection and gives the slot back.
            drop((stream, permit));
        }
    }

    /// A slot for one more connection, waiting while all are taken.
    async fn slot(&mut self) -> OwnedSemaphorePermit {
        if let Ok(permit) = self.slots.clone().try_acquire_owned() {
            return permit;
        }
        if log_now(&mut self.logged_full) {
            tracing::warn!(
                max = self.limits.max_connections,
                "at the connection limit (--max-connections): new connections wait in the \
                 listen backlog until one closes"
            );
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

/// A listener within the default bounds.
impl From<TcpListener> for Limited {
    fn from(listener: TcpListener) -> Limited {
        Limited::new(listener, ConnLimits::default())
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    #[test]
    fn an_address_holds_at_most_its_share_and_gets_places_back() {
        let peers = Arc::new(Peers::default());
        let a: IpAddr = [127, 0, 0, 1].into();
        let b: IpAddr = [127, 0, 0, 2].into();
        let first = peers.take(a, 2).expect("first");
        let second = peers.take(a, 2).expect("second");
        assert!(peers.take(a, 2).is_none(), "over the share");
        let other = peers.take(b, 2).expect("another address");
        drop(first);
        let third = peers.take(a, 2).expect("a place given back");
        drop((second, third, other));
        assert!(
            peers.0.lock().expect("lock").is_empty(),
            "no entries for closed connections"
        );
    }
}
