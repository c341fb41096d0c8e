//! A chunk's clock: its ticks as Unix time, cut into buckets of seconds when asked.

/// A chunk's time: its ticks as Unix seconds, cut into buckets when asked.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    pub start_nanos: i64,
    pub start_ticks: i64,
    pub ticks_per_second: i64,
    /// Seconds per bucket; `None` puts every event in one (bucket 0).
    pub bucket: Option<i64>,
}

impl Clock {
    /// An event's time at `ticks` in Unix nanoseconds.
    pub fn unix_nanos(&self, ticks: i64) -> i64 {
        let since = i128::from(ticks) - i128::from(self.start_ticks);
        let nanos = i128::from(self.start_nanos)
            + since * 1_000_000_000 / i128::from(self.ticks_per_second.max(1));
        i64::try_from(nanos).unwrap_or(0)
    }

    /// The bucket of an event at `ticks`: the Unix second its bucket starts at.
    pub fn bucket(&self, ticks: i64) -> i64 {
        let Some(size) = self.bucket.filter(|&s| s > 0) else {
            return 0;
        };
        let seconds = self.unix_nanos(ticks).div_euclid(1_000_000_000);
        seconds - seconds.rem_euclid(size)
    }
}
