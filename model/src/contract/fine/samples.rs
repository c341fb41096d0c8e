//! `POST /v1/profile/samples`: the samples of a millisecond window in time order, each with its
//! thread and stack (stacks listed once, root first, referenced by index) — what a stack chart
//! draws. One builder for both stores, so they answer alike.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{parse_fine_body, FineQuery, Resolution, MAX_SAMPLES};
use crate::contract::body::RequestError;

/// The answer's columns, in row order.
pub const SAMPLE_COLUMNS: [&str; 4] = ["time_ms", "thread", "stack", "value"];

/// One sample: Unix milliseconds (the second's start at `"s"` resolution), thread id (`null`
/// when unknown), index into `stacks`, value in the profile's unit. (Its OpenAPI schema is
/// written by hand in [`crate::contract::schema`]: an array, not an object.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SampleRow(pub i64, pub Option<u32>, pub u32, pub u64);

/// The samples in time order.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SamplesAnswer {
    /// [`SAMPLE_COLUMNS`].
    pub columns: Vec<String>,
    /// The samples, by time (then thread, stack text, value).
    pub values: Vec<SampleRow>,
    /// Each distinct stack once, root first.
    pub stacks: Vec<Vec<String>>,
    /// `"ms"` when every row is one timed event; `"s"` when some rows are whole stored rows of
    /// data without event times (time = the second's start, thread `null`).
    pub resolution: Resolution,
}

/// A samples request the service accepted.
pub type SamplesQuery = FineQuery;

/// Reads a samples body.
pub fn parse_samples_body(body: &[u8]) -> Result<SamplesQuery, RequestError> {
    parse_fine_body(body)
}

/// Why the samples could not be answered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the window holds more than {MAX_SAMPLES} samples (at most {MAX_SAMPLES} per answer, \
     about {per_second} per second over {seconds} s); narrow time_start_ms/time_end_ms"
)]
pub struct TooManySamples {
    /// Seconds in the window.
    pub seconds: i64,
    /// Samples per second seen before stopping, roughly.
    pub per_second: usize,
}

/// Collects samples in any order and answers them sorted.
#[derive(Debug, Default)]
pub struct SamplesBuilder {
    index: HashMap<String, u32>,
    stacks: Vec<Vec<String>>,
    rows: Vec<SampleRow>,
    untimed: bool,
}

impl SamplesBuilder {
    /// An empty answer.
    pub fn new() -> SamplesBuilder {
        SamplesBuilder::default()
    }

    /// The index of `stack` (`;`-joined, root first), added when new.
    pub fn stack(&mut self, stack: &str) -> u32 {
        if let Some(&i) = self.index.get(stack) {
            return i;
        }
        let i = self.stacks.len() as u32;
        self.stacks
            .push(stack.split(';').map(str::to_owned).collect());
        self.index.insert(stack.to_owned(), i);
        i
    }

    /// One timed event; refused past [`MAX_SAMPLES`].
    pub fn event(
        &mut self,
        time_ms: i64,
        tid: u32,
        stack: u32,
        weight: u64,
    ) -> Result<(), TooManySamples> {
        self.push(SampleRow(time_ms, Some(tid), stack, weight))
    }

    /// One stored row without event times, at its second's start.
    pub fn untimed(&mut self, second: i64, stack: u32, value: u64) -> Result<(), TooManySamples> {
        self.untimed = true;
        self.push(SampleRow(second.saturating_mul(1000), None, stack, value))
    }

    fn push(&mut self, row: SampleRow) -> Result<(), TooManySamples> {
        if self.rows.len() >= MAX_SAMPLES {
            let seconds = self.seconds().max(1);
            return Err(TooManySamples {
                seconds,
                per_second: self.rows.len() / seconds as usize,
            });
        }
        self.rows.push(row);
        Ok(())
    }

    /// Seconds between the first and last sample read so far.
    fn seconds(&self) -> i64 {
        let times = self.rows.iter().map(|r| r.0.div_euclid(1000));
        match (times.clone().min(), times.max()) {
            (Some(a), Some(b)) => b - a + 1,
            _ => 0,
        }
    }

    /// The answer, rows in time order, stacks numbered in order of first use (so every store
    /// answers the same samples identically).
    pub fn finish(mut self) -> SamplesAnswer {
        // By time, thread, then stack text and value: an order that does not depend on the
        // order a store returned the rows in.
        let stacks_now = &self.stacks;
        self.rows.sort_unstable_by(|a, b| {
            (a.0, a.1, &stacks_now[a.2 as usize], a.3).cmp(&(
                b.0,
                b.1,
                &stacks_now[b.2 as usize],
                b.3,
            ))
        });
        let mut renumber = vec![u32::MAX; self.stacks.len()];
        let mut stacks = Vec::with_capacity(self.stacks.len());
        let mut old = std::mem::take(&mut self.stacks);
        for row in &mut self.rows {
            let slot = &mut renumber[row.2 as usize];
            if *slot == u32::MAX {
                *slot = stacks.len() as u32;
                stacks.push(std::mem::take(&mut old[row.2 as usize]));
            }
            row.2 = *slot;
        }
        SamplesAnswer {
            columns: SAMPLE_COLUMNS.iter().map(|c| (*c).to_owned()).collect(),
            values: self.rows,
            stacks,
            resolution: if self.untimed {
                Resolution::S
            } else {
                Resolution::Ms
            },
        }
    }
}
