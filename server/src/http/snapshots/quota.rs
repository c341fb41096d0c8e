//! What the snapshots may add up to: at most `--max-snapshots` of them and
//! `--max-snapshot-total-bytes` of answers together (a save past either is a 409 naming the
//! option: it succeeds again once some are deleted). With `--snapshot-ttl`, none older than
//! that: the maintenance loop removes them ([`crate::retention::expire_snapshots`]).

use crate::error::Error;
use crate::limits::writes::WriteCaps;
use crate::store::Store;

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
