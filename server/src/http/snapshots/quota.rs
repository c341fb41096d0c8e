//! What the snapshots may add up to: at most `--max-snapshots` of them and
//! `--max-snapshot-total-bytes` of answers together (a save past either is a 409 naming the
//! option: it succeeds again once some are deleted), and, with `--snapshot-ttl`, none older
//! than that (removed by the maintenance loop, [`crate::retention::maintain`]).

use std::time::Duration;

use crate::limits::writes::WriteCaps;
use crate::store::{Store, StoreError};
use crate::Error;

/// Whether a snapshot of `adding` bytes fits beside those stored. Call it with the quota held
/// ([`crate::limits::writes::WriteGate::with_snapshot_quota`]) up to the insert.
pub fn check(store: &Store, caps: &WriteCaps, adding: u64) -> Result<(), Error> {
    let stored = store.snapshots().map_err(Error::from_store)?;
    if stored.len() >= caps.max_snapshots {
        return Err(Error::conflict(format!(
            "the service keeps at most {} snapshots (--max-snapshots) and holds {}: delete some \
             (DELETE /v1/profile/snapshots/{{id}}) or raise the limit",
            caps.max_snapshots,
            stored.len()
        )));
    }
    let total = stored
        .iter()
        .fold(0u64, |sum, s| sum.saturating_add(s.size));
    if total.saturating_add(adding) > caps.max_snapshot_total_bytes {
        return Err(Error::conflict(format!(
            "this snapshot's {adding} bytes would take the snapshots past {} bytes together \
             (--max-snapshot-total-bytes; {total} are stored): delete some or raise the limit",
            caps.max_snapshot_total_bytes
        )));
    }
    Ok(())
}

/// Removes the snapshots saved more than `ttl` before `now` (Unix seconds); how many.
pub fn expire(store: &Store, ttl: Duration, now: i64) -> Result<usize, StoreError> {
    let before = now.saturating_sub(i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX));
    let mut removed = 0;
    for old in store.snapshots()?.iter().filter(|s| s.saved_at < before) {
        if store.delete_snapshot(&old.id)?.is_some() {
            removed += 1;
        }
    }
    Ok(removed)
}
