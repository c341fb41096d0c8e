//! `--demo-live`: the demo goes on. A service left running shows "the last hour" as it is now,
//! not as it was when the demo was generated: every complete minute since then is generated
//! (the same fleet, the wave going on, api-gateway still regressed) and ingested like any batch.

use std::sync::Arc;
use std::time::Duration;

use super::{generate_minutes, WINDOW_S};
use crate::store::{Store, StoreError};

/// How often the feeder looks at the clock; a minute is added once it is complete.
const TICK: Duration = Duration::from_secs(10);

/// Where the demo stands: the start of its first minute and the next minute to add.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Feeder {
    start: i64,
    next_minute: i64,
}

impl Feeder {
    /// A feeder continuing the six hours [`super::generate`] wrote for `now`.
    pub fn after_window(now: i64) -> Feeder {
        Feeder {
            start: now - WINDOW_S + 1,
            next_minute: WINDOW_S / 60,
        }
    }

    /// Adds every minute completed by `now` (at most six hours of them, after a long sleep);
    /// returns how many samples were added.
    pub fn catch_up(&mut self, store: &Store, now: i64) -> Result<u64, StoreError> {
        // Minute m covers start + 60 m ..= start + 60 m + 59.
        let complete = (now - self.start + 1).div_euclid(60);
        if complete <= self.next_minute {
            return Ok(0);
        }
        let first = self.next_minute.max(complete - WINDOW_S / 60);
        let stats = store.insert(&generate_minutes(self.start, first..complete))?;
        self.next_minute = complete;
        Ok(stats.samples)
    }
}

/// Keeps adding minutes until the process ends; a failed insert is logged and retried.
pub async fn run(store: Arc<Store>, mut feeder: Feeder) {
    loop {
        tokio::time::sleep(TICK).await;
        let s = store.clone();
        let mut f = feeder.clone();
        let step = crate::blocking::run("live demo feeder", move || {
            let now = crate::store::ingest::now_micros() / 1_000_000;
            f.catch_up(&s, now).map(|n| (f, n))
        })
        .await;
        match step {
            Ok(Ok((f, n))) => {
                if n > 0 {
                    tracing::debug!(samples = n, "live demo: added the last minute");
                }
                feeder = f;
            }
            Ok(Err(e)) => tracing::warn!(error = %e, "live demo: could not add samples"),
            Err(failed) => tracing::warn!("{failed}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::{generate, REGRESSION_FUNCTION, REGRESSION_SERVICE};

    const NOW: i64 = 1_700_021_600;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("demo.db")).unwrap();
        (dir, store)
    }

    #[test]
    fn complete_minutes_are_added_once_and_continue_the_pattern() {
        let (_dir, store) = store();
        store.insert(&generate(NOW)).unwrap();
        let before = store.sample_count().unwrap();
        let mut feeder = Feeder::after_window(NOW);
        assert_eq!(feeder.catch_up(&store, NOW + 59).unwrap(), 0, "incomplete");
        let added = feeder.catch_up(&store, NOW + 180).unwrap();
        assert!(added > 100, "three minutes of a fleet: {added}");
        assert_eq!(store.sample_count().unwrap(), before + added);
        assert_eq!(
            feeder.catch_up(&store, NOW + 180).unwrap(),
            0,
            "nothing twice"
        );

        let batches = generate_minutes(NOW - WINDOW_S + 1, WINDOW_S / 60..WINDOW_S / 60 + 3);
        let samples = batches
            .iter()
            .flat_map(|b| b.samples.iter().map(move |s| (b, s)));
        let (mut hot, mut gateway) = (0u64, 0u64);
        for (b, s) in samples {
            assert!(s.time > NOW && s.time <= NOW + 180, "{}", s.time);
            if b.meta.app_service == REGRESSION_SERVICE && b.meta.event_type == "on-cpu" {
                gateway += s.value;
                if s.stack.contains(REGRESSION_FUNCTION) {
                    hot += s.value;
                }
            }
        }
        assert!(
            hot * 10 > gateway * 4,
            "still regressed: {hot} of {gateway}"
        );
    }

    #[test]
    fn a_long_sleep_adds_at_most_six_hours() {
        let (_dir, store) = store();
        let mut feeder = Feeder::after_window(NOW);
        let day = 24 * 3600;
        let added = feeder.catch_up(&store, NOW + day).unwrap();
        let end = (WINDOW_S + day) / 60;
        assert_eq!(feeder.next_minute, end);
        let six_hours = generate_minutes(NOW - WINDOW_S + 1, end - WINDOW_S / 60..end);
        let expected: usize = six_hours.iter().map(|b| b.samples.len()).sum();
        assert_eq!(added, expected as u64);
        assert_eq!(store.sample_count().unwrap(), added);
    }
}
