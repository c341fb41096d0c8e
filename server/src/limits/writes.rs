//! The write gate: what writes may hold at once. Ingest requests reserve their body's bytes
//! before it is read (its `Content-Length`, or the whole `--max-ingest-bytes` when it does not
//! announce one) against `--max-ingest-in-flight-bytes`; snapshot saves and deletes (of
//! snapshots and of processes) take one of a few turns. A request that finds no room is
//! answered 503 with `Retry-After` at once ([`Error::busy`], as a busy query gate is): waiting
//! would hold its connection and, for a body, the memory the gate exists to bound.
//!
//! The bodies are read through the extractors [`IngestBytes`] and [`SaveBytes`] (their
//! `FromRequest` is in `http::bodies`, beside the state it reads), which hold the reservation
//! for as long as the handler keeps what they give.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::{header, HeaderMap};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::Error;

/// Default of `--max-concurrent-saves`.
pub const DEFAULT_MAX_CONCURRENT_SAVES: u32 = 2;
/// Default of `--max-concurrent-deletes`.
pub const DEFAULT_MAX_CONCURRENT_DELETES: u32 = 2;
/// Default of `--max-snapshots`.
pub const DEFAULT_MAX_SNAPSHOTS: u32 = 1000;
/// Default of `--max-snapshot-total-bytes` (4 GiB: 64 of the largest snapshots).
pub const DEFAULT_MAX_SNAPSHOT_TOTAL_BYTES: u64 = 4 << 30;
/// `--max-ingest-in-flight-bytes` is this many times `--max-ingest-bytes` unless given.
pub const IN_FLIGHT_BODIES: u64 = 4;

/// What writes may hold at once, and what the snapshots may add up to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteCaps {
    /// Ingest body bytes being read or processed at once.
    pub max_ingest_in_flight_bytes: u64,
    /// Snapshot saves at once.
    pub max_concurrent_saves: usize,
    /// Deletes (of snapshots and of processes) at once.
    pub max_concurrent_deletes: usize,
    /// Snapshots kept.
    pub max_snapshots: usize,
    /// Bytes of every snapshot's answer together.
    pub max_snapshot_total_bytes: u64,
    /// Age past which the maintenance loop removes a snapshot; `None` keeps them.
    pub snapshot_ttl: Option<Duration>,
}

impl WriteCaps {
    /// The defaults for an ingest body limit of `max_ingest_bytes`.
    pub fn for_ingest_limit(max_ingest_bytes: usize) -> WriteCaps {
        WriteCaps {
            max_ingest_in_flight_bytes: (max_ingest_bytes as u64).saturating_mul(IN_FLIGHT_BODIES),
            max_concurrent_saves: DEFAULT_MAX_CONCURRENT_SAVES as usize,
            max_concurrent_deletes: DEFAULT_MAX_CONCURRENT_DELETES as usize,
            max_snapshots: DEFAULT_MAX_SNAPSHOTS as usize,
            max_snapshot_total_bytes: DEFAULT_MAX_SNAPSHOT_TOTAL_BYTES,
            snapshot_ttl: None,
        }
    }
}

impl Default for WriteCaps {
    fn default() -> Self {
        WriteCaps::for_ingest_limit(crate::limits::sizes::DEFAULT_INGEST_LIMIT)
    }
}

/// The gate. Shared by every request (in `AppState`).
#[derive(Debug)]
pub struct WriteGate {
    caps: WriteCaps,
    in_flight: Arc<AtomicU64>,
    saves: Arc<Semaphore>,
    deletes: Arc<Semaphore>,
    /// Held while a save checks the snapshot caps and inserts, so two saves cannot both fit
    /// the last place.
    snapshot_quota: std::sync::Mutex<()>,
}

/// Bytes reserved by one ingest request, given back when dropped.
#[derive(Debug)]
pub struct InFlight {
    counter: Arc<AtomicU64>,
    bytes: u64,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.counter.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

/// A turn of a save or delete, given back when dropped.
pub type Turn = OwnedSemaphorePermit;

impl WriteGate {
    /// A gate enforcing `caps` (a zero concurrency still lets one write run at a time).
    pub fn new(caps: WriteCaps) -> WriteGate {
        WriteGate {
            caps,
            in_flight: Arc::new(AtomicU64::new(0)),
            saves: Arc::new(Semaphore::new(caps.max_concurrent_saves.max(1))),
            deletes: Arc::new(Semaphore::new(caps.max_concurrent_deletes.max(1))),
            snapshot_quota: std::sync::Mutex::new(()),
        }
    }

    /// The limits.
    pub fn caps(&self) -> &WriteCaps {
        &self.caps
    }

    /// Ingest bytes reserved now.
    pub fn in_flight(&self) -> u64 {
        self.in_flight.load(Ordering::Acquire)
    }

    /// Reserve `bytes` of ingest body, or 503 when that would pass the limit.
    pub fn reserve_ingest(&self, bytes: u64) -> Result<InFlight, Error> {
        let cap = self.caps.max_ingest_in_flight_bytes;
        let reserved = self
            .in_flight
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
                now.checked_add(bytes).filter(|total| *total <= cap)
            });
        match reserved {
            Ok(_) => Ok(InFlight {
                counter: self.in_flight.clone(),
                bytes,
            }),
            Err(now) => Err(Error::busy(format!(
                "too much ingest in progress: {now} bytes are being received or stored and this \
                 request's {bytes} would pass the limit of {cap} (--max-ingest-in-flight-bytes); \
                 retry shortly"
            ))),
        }
    }

    /// A turn to save a snapshot, or 503.
    pub fn save_turn(&self) -> Result<Turn, Error> {
        turn(
            &self.saves,
            self.caps.max_concurrent_saves,
            "snapshot saves",
            "--max-concurrent-saves",
        )
    }

    /// A turn to delete (a snapshot or a process), or 503.
    pub fn delete_turn(&self) -> Result<Turn, Error> {
        turn(
            &self.deletes,
            self.caps.max_concurrent_deletes,
            "deletes",
            "--max-concurrent-deletes",
        )
    }

    /// Run `f` (blocking: a snapshot's cap check and insert) with the snapshot caps to itself.
    pub fn with_snapshot_quota<T>(&self, f: impl FnOnce(&WriteCaps) -> T) -> T {
        let _held = self
            .snapshot_quota
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        f(&self.caps)
    }
}

fn turn(turns: &Arc<Semaphore>, max: usize, what: &str, option: &str) -> Result<Turn, Error> {
    turns.clone().try_acquire_owned().map_err(|_| {
        Error::busy(format!(
            "too many {what} at once: {} running, the limit ({option}); retry shortly",
            max.max(1)
        ))
    })
}

/// Why a gated body was not read.
#[derive(Debug)]
pub enum Refused {
    /// The gate had no room (503 with `Retry-After`).
    Busy(Error),
    /// Reading the body failed (too large, or cut).
    Body(BytesRejection),
}

/// An ingest body read under a reservation of its bytes; keep the [`InFlight`] until the write
/// is done.
pub struct IngestBytes(pub Result<(InFlight, Bytes), Refused>);

/// A snapshot save's body read in a save turn; keep the [`Turn`] until the save is done.
pub struct SaveBytes(pub Result<(Turn, Bytes), Refused>);

/// The bytes a body will take: its announced length, at most `limit` (a longer one is refused
/// by the body limit), or `limit` when it announces none (chunked).
pub fn announced(headers: &HeaderMap, limit: u64) -> u64 {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(limit, |n| n.min(limit))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderValue, StatusCode};

    fn gate(in_flight: u64) -> WriteGate {
        WriteGate::new(WriteCaps {
            max_ingest_in_flight_bytes: in_flight,
            max_concurrent_saves: 1,
            max_concurrent_deletes: 1,
            ..WriteCaps::default()
        })
    }

    #[test]
    fn ingest_bytes_are_reserved_and_given_back() {
        let gate = gate(100);
        let a = gate.reserve_ingest(60).expect("room");
        let e = gate.reserve_ingest(41).expect_err("full");
        assert_eq!(e.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(
            e.description().contains("--max-ingest-in-flight-bytes"),
            "{e}"
        );
        let b = gate.reserve_ingest(40).expect("exactly full");
        assert_eq!(gate.in_flight(), 100);
        drop(a);
        drop(b);
        assert_eq!(gate.in_flight(), 0);
        assert!(gate.reserve_ingest(100).is_ok());
    }

    #[test]
    fn turns_are_bounded_and_given_back() {
        let gate = gate(1);
        let save = gate.save_turn().expect("turn");
        assert!(gate
            .save_turn()
            .expect_err("busy")
            .description()
            .contains("--max-concurrent-saves"));
        let delete = gate.delete_turn().expect("its own turns");
        assert!(gate
            .delete_turn()
            .expect_err("busy")
            .description()
            .contains("--max-concurrent-deletes"));
        drop((save, delete));
        assert!(gate.save_turn().is_ok() && gate.delete_turn().is_ok());
    }

    #[test]
    fn a_body_reserves_its_length_or_the_limit() {
        let mut h = HeaderMap::new();
        assert_eq!(announced(&h, 64), 64);
        h.insert(header::CONTENT_LENGTH, HeaderValue::from_static("10"));
        assert_eq!(announced(&h, 64), 10);
        h.insert(header::CONTENT_LENGTH, HeaderValue::from_static("1000"));
        assert_eq!(announced(&h, 64), 64);
    }
}
