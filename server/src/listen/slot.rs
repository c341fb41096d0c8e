//! What an open connection holds until it closes: its place among `--max-connections` and
//! among its address's `--max-connections-per-ip` ([`Slot`]), given back when dropped. Taken
//! by the accept loop (`accept`), held by the connection's wrapper (`watch`).

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::OwnedSemaphorePermit;

/// A connection's places among `--max-connections` and its address's share; both are given
/// back when it is dropped (when the connection closes).
pub(super) struct Slot {
    pub(super) _conn: OwnedSemaphorePermit,
    pub(super) _peer: PeerSlot,
}

/// Connections open per client address.
#[derive(Debug, Default)]
pub(super) struct Peers(pub(super) Mutex<HashMap<IpAddr, usize>>);

/// One connection counted for its address.
pub(super) struct PeerSlot {
    peers: Arc<Peers>,
    ip: IpAddr,
}

impl Peers {
    /// A place for one more connection from `ip`, unless it holds `max` already.
    pub(super) fn take(self: &Arc<Peers>, ip: IpAddr, max: usize) -> Option<PeerSlot> {
        let mut open = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let count = open.entry(ip).or_insert(0);
        if *count >= max {
            return None;
        }
        *count += 1;
        Some(PeerSlot {
            peers: self.clone(),
            ip,
        })
    }
}

impl Drop for PeerSlot {
    fn drop(&mut self) {
        let mut open = self.peers.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Entry::Occupied(mut count) = open.entry(self.ip) {
            *count.get_mut() -= 1;
            // Gone addresses leave no entry behind: the map holds only open connections.
            if *count.get() == 0 {
                count.remove();
            }
        }
    }
}
