//! The write gate's options (flattened into `serve`), each with its documented default.

use std::time::Duration;

use clap::Args;

use super::writes::{
    WriteCaps, DEFAULT_MAX_CONCURRENT_DELETES, DEFAULT_MAX_CONCURRENT_SAVES, DEFAULT_MAX_SNAPSHOTS,
    DEFAULT_MAX_SNAPSHOT_TOTAL_BYTES, IN_FLIGHT_BODIES,
};

/// What writes may hold at once, and what snapshots may add up to.
#[derive(Debug, Clone, Args)]
pub struct WriteArgs {
    /// Ingest body bytes received or being stored at once, over every ingest route; a request
    /// whose body would pass it is answered 503 with Retry-After [default: 4 ×
    /// --max-ingest-bytes].
    #[arg(long, value_name = "BYTES")]
    pub max_ingest_in_flight_bytes: Option<u64>,
    /// Snapshot saves at once; more are answered 503 with Retry-After.
    #[arg(long, default_value_t = DEFAULT_MAX_CONCURRENT_SAVES, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrent_saves: u32,
    /// Deletes (of snapshots and of processes) at once; more are answered 503 with Retry-After.
    #[arg(long, default_value_t = DEFAULT_MAX_CONCURRENT_DELETES, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrent_deletes: u32,
    /// Snapshots kept; a save past it is answered 409 until some are deleted.
    #[arg(long, default_value_t = DEFAULT_MAX_SNAPSHOTS)]
    pub max_snapshots: u32,
    /// Bytes of every snapshot's answer together (default 4 GiB); a save that would pass it is
    /// answered 409.
    #[arg(long, default_value_t = DEFAULT_MAX_SNAPSHOT_TOTAL_BYTES, value_name = "BYTES")]
    pub max_snapshot_total_bytes: u64,
    /// Remove snapshots older than this (e.g. 30d), checked every minute; 0 keeps them
    /// (the default).
    #[arg(long, default_value = "0", value_parser = humantime::parse_duration)]
    pub snapshot_ttl: Duration,
}

impl WriteArgs {
    /// The caps, for an ingest body limit of `max_ingest_bytes`.
    pub fn caps(&self, max_ingest_bytes: usize) -> Result<WriteCaps, String> {
        let in_flight = self
            .max_ingest_in_flight_bytes
            .unwrap_or_else(|| (max_ingest_bytes as u64).saturating_mul(IN_FLIGHT_BODIES));
        // Smaller, one body of the largest size could never be received.
        if in_flight < max_ingest_bytes as u64 {
            return Err(format!(
                "--max-ingest-in-flight-bytes ({in_flight}) must be at least --max-ingest-bytes \
                 ({max_ingest_bytes})"
            ));
        }
        Ok(WriteCaps {
            max_ingest_in_flight_bytes: in_flight,
            max_concurrent_saves: self.max_concurrent_saves as usize,
            max_concurrent_deletes: self.max_concurrent_deletes as usize,
            max_snapshots: self.max_snapshots as usize,
            max_snapshot_total_bytes: self.max_snapshot_total_bytes,
            snapshot_ttl: Some(self.snapshot_ttl).filter(|t| !t.is_zero()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        writes: WriteArgs,
    }

    #[test]
    fn defaults_are_the_documented_ones() {
        let caps = Cli::parse_from(["x"])
            .writes
            .caps(crate::limits::sizes::DEFAULT_INGEST_LIMIT);
        assert_eq!(caps, Ok(WriteCaps::default()));
        assert_eq!(WriteCaps::default().max_ingest_in_flight_bytes, 256 << 20);
        assert_eq!(WriteCaps::default().snapshot_ttl, None);
    }

    #[test]
    fn options_set_every_cap() {
        let cli = Cli::parse_from([
            "x",
            "--max-ingest-in-flight-bytes",
            "300",
            "--max-concurrent-saves",
            "3",
            "--max-concurrent-deletes",
            "5",
            "--max-snapshots",
            "7",
            "--max-snapshot-total-bytes",
            "11",
            "--snapshot-ttl",
            "30d",
        ]);
        let caps = cli.writes.caps(100).expect("caps");
        assert_eq!(caps.max_ingest_in_flight_bytes, 300);
        assert_eq!(caps.max_concurrent_saves, 3);
        assert_eq!(caps.max_concurrent_deletes, 5);
        assert_eq!(caps.max_snapshots, 7);
        assert_eq!(caps.max_snapshot_total_bytes, 11);
        assert_eq!(caps.snapshot_ttl, Some(Duration::from_secs(30 * 86400)));
        let e = cli.writes.caps(301).expect_err("below one body");
        assert!(e.contains("--max-ingest-bytes"), "{e}");
        assert!(Cli::try_parse_from(["x", "--max-concurrent-saves", "0"]).is_err());
    }
}
