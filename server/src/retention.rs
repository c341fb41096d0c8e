//! Retention and deletion, as the service runs them, on either store: `--retention` (default
//! 72 h, DeepFlow's default; 0 keeps everything) drives a background task that removes expired
//! samples (on SQLite in small batches, [`crate::store::retention`], then gives the space back;
//! on ClickHouse by dropping expired hour partitions and a mutation for the straddling hour); `--synchronous` chooses
//! what an acknowledged ingest survives; `embers-server delete --app-service NAME` and
//! `DELETE /v1/profile/processes/{app_service}` remove one process's data. The same loop removes
//! snapshots older than `--snapshot-ttl` when it is set.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use crate::store::retention::Removed;
use crate::store::{Store, StoreError, Synchronous};
use crate::store_args::{open_store, ClickHouseArgs};

/// Default of `--retention`.
pub const DEFAULT_RETENTION: &str = "72h";
/// Default of `--fine-retention`.
pub const DEFAULT_FINE_RETENTION: &str = "24h";
/// Samples (and rollup rows per level) removed per transaction: a few milliseconds of writer
/// time, so an ingest waits at most that long behind retention.
pub const BATCH: usize = 2000;
/// Free pages given back per step of incremental vacuum (4 MiB with 4 KiB pages).
const RECLAIM_PAGES: u32 = 1024;
/// Time between two maintenance rounds (retention, rollup compaction).
pub const EVERY: Duration = Duration::from_secs(60);

/// Storage options of `serve`.
#[derive(Debug, Clone, Args)]
pub struct StorageArgs {
    /// Keep samples this long (by their sample time), e.g. 72h, 7d, 30m; 0 keeps everything.
    /// Expired samples are removed in the background every minute.
    #[arg(long, default_value = DEFAULT_RETENTION, value_parser = humantime::parse_duration)]
    pub retention: Duration,
    /// Keep samples' millisecond event times (the heatmap, the samples, millisecond windows)
    /// this long, by sample time; older samples answer at second resolution. 0 keeps them as
    /// long as their samples.
    #[arg(long, default_value = DEFAULT_FINE_RETENTION, value_parser = humantime::parse_duration)]
    pub fine_retention: Duration,
    /// `normal`: an acknowledged ingest survives the process being killed; `full`: also power
    /// loss (every commit is synced to disk; slower ingest).
    #[arg(long, value_enum, default_value_t = Synchronous::Normal)]
    pub synchronous: Synchronous,
}

impl StorageArgs {
    /// The retention, `None` when everything is kept.
    pub fn retention(&self) -> Option<Duration> {
        Some(self.retention).filter(|r| !r.is_zero())
    }

    /// The fine retention, `None` when event times go only with their samples.
    pub fn fine_retention(&self) -> Option<Duration> {
        Some(self.fine_retention).filter(|r| !r.is_zero())
    }
}

/// Options of `delete`.
#[derive(Debug, Clone, Args)]
pub struct DeleteArgs {
    /// SQLite database file [default: as for serve].
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// The process whose samples (every language and event type) are deleted.
    #[arg(long)]
    pub app_service: String,
    /// The ClickHouse store, instead of --db.
    #[command(flatten)]
    pub clickhouse: ClickHouseArgs,
}

/// The first sample time that is kept: `retention` before now, in Unix seconds.
pub fn cutoff(retention: Duration) -> i64 {
    let now = crate::store::ingest::now_micros() / 1_000_000;
    now.saturating_sub(i64::try_from(retention.as_secs()).unwrap_or(i64::MAX))
}

/// One full pass: remove everything older than `retention`, batch by batch (each on a
/// blocking thread, so the runtime is never held), then give the freed space back.
pub async fn pass(store: &Arc<Store>, retention: Duration) -> Result<Removed, StoreError> {
    pass_before(store, cutoff(retention)).await
}

/// [`pass`] with the cutoff given: remove every sample with `time < before`.
pub async fn pass_before(store: &Arc<Store>, before: i64) -> Result<Removed, StoreError> {
    let mut total = Removed::default();
    loop {
        let s = store.clone();
        let removed = blocking(move || s.expire_step(before, BATCH)).await?;
        total.samples += removed.samples;
        total.rollup_rows += removed.rollup_rows;
        if removed == Removed::default() {
            break;
        }
    }
    if total != Removed::default() {
        reclaim(store).await?;
    }
    Ok(total)
}

/// One pass of the fine retention: drop the event times of samples older than
/// `fine_retention`, batch by batch; how many rows of times went.
pub async fn fine_pass(store: &Arc<Store>, fine_retention: Duration) -> Result<u64, StoreError> {
    let before = cutoff(fine_retention);
    let mut total = 0;
    loop {
        let s = store.clone();
        let n = blocking(move || s.expire_fine_step(before, BATCH)).await?;
        total += n;
        if n == 0 {
            return Ok(total);
        }
    }
}

/// The fine retention, now and then every `every`, for as long as the runtime runs (beside
/// [`maintain`]).
pub async fn maintain_fine(store: Arc<Store>, fine_retention: Duration, every: Duration) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        match fine_pass(&store, fine_retention).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(rows = n, "fine retention removed expired event times"),
            Err(e) => tracing::warn!("fine retention pass failed: {e}"),
        }
    }
}

/// Give free pages back, a step at a time (SQLite; ClickHouse frees dropped and rewritten parts
/// itself).
pub async fn reclaim(store: &Arc<Store>) -> Result<(), StoreError> {
    let Store::Sqlite(sqlite) = &**store else {
        return Ok(());
    };
    if !sqlite.reclaims_space()? {
        return Ok(());
    }
    loop {
        let s = store.clone();
        if blocking(move || s.sqlite()?.reclaim(RECLAIM_PAGES)).await? == 0 {
            return Ok(());
        }
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    crate::blocking::run("retention", f)
        .await
        .map_err(|failed| StoreError::Invalid(failed.to_string()))?
}

/// The service's maintenance, now and then every `every`, for as long as the runtime runs: a
/// retention pass (when `retention` is set), then merging what is settled of the function
/// rollup ([`Store::compact`]).
pub async fn run(store: Arc<Store>, retention: Option<Duration>, every: Duration) {
    maintain(store, retention, None, every).await
}

/// [`run`], also removing snapshots older than `snapshot_ttl` (`--snapshot-ttl`) each round.
pub async fn maintain(
    store: Arc<Store>,
    retention: Option<Duration>,
    snapshot_ttl: Option<Duration>,
    every: Duration,
) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        if let Some(retention) = retention {
            match pass(&store, retention).await {
                Ok(r) if r != Removed::default() => tracing::info!(
                    samples = r.samples,
                    rollup_rows = r.rollup_rows,
                    "retention removed expired data"
                ),
                Ok(_) => {}
                Err(e) => tracing::warn!("retention pass failed: {e}"),
            }
        }
        let now = crate::store::ingest::now_micros() / 1_000_000;
        if let Some(ttl) = snapshot_ttl {
            let s = store.clone();
            match blocking(move || expire_snapshots(&s, ttl, now)).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(snapshots = n, "removed snapshots past --snapshot-ttl"),
                Err(e) => tracing::warn!("removing expired snapshots failed: {e}"),
            }
        }
        let s = store.clone();
        match blocking(move || s.compact(now)).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(partitions = n, "merged settled function rollup partitions"),
            Err(e) => tracing::warn!("compacting the function rollup failed: {e}"),
        }
    }
}

/// Removes the snapshots saved more than `ttl` before `now` (Unix seconds); how many.
pub fn expire_snapshots(store: &Store, ttl: Duration, now: i64) -> Result<usize, StoreError> {
    let before = now.saturating_sub(i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX));
    let mut removed = 0;
    for old in store.snapshots()?.iter().filter(|s| s.saved_at < before) {
        if store.delete_snapshot(&old.id)?.is_some() {
            removed += 1;
        }
    }
    Ok(removed)
}

/// `embers-server delete`, on the store the options choose (the SQLite file `--db`, default as
/// for serve, or ClickHouse).
pub fn delete(args: &DeleteArgs) -> Result<(), String> {
    let store = open_store(args.db.as_deref(), &args.clickhouse, Synchronous::Normal)?;
    let removed = store
        .delete_app(&args.app_service, BATCH)
        .map_err(|e| format!("delete: {e}"))?;
    println!(
        "deleted {} samples and {} rollup rows of app_service '{}' from {}",
        removed.samples,
        removed.rollup_rows,
        args.app_service,
        store.describe()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        storage: StorageArgs,
    }

    #[test]
    fn retention_defaults_to_72_hours_and_zero_keeps_everything() {
        let cli = Cli::parse_from(["x"]);
        assert_eq!(
            cli.storage.retention(),
            Some(Duration::from_secs(72 * 3600))
        );
        assert_eq!(cli.storage.synchronous, Synchronous::Normal);
        let cli = Cli::parse_from(["x", "--retention", "0", "--synchronous", "full"]);
        assert_eq!(cli.storage.retention(), None);
        assert_eq!(cli.storage.synchronous, Synchronous::Full);
        let cli = Cli::parse_from(["x", "--retention", "7d"]);
        assert_eq!(
            cli.storage.retention(),
            Some(Duration::from_secs(7 * 86400))
        );
        assert!(Cli::try_parse_from(["x", "--retention", "forever"]).is_err());
        let cli = Cli::parse_from(["x"]);
        assert_eq!(
            cli.storage.fine_retention(),
            Some(Duration::from_secs(24 * 3600))
        );
        let cli = Cli::parse_from(["x", "--fine-retention", "0"]);
        assert_eq!(cli.storage.fine_retention(), None);
    }
}
