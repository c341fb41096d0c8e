//! Time inside a range (issue 37, docs/design/lines-and-time.md): millisecond bounds that narrow
//! a second range, and the two answers built from the stored event times — the sub-second
//! heatmap ([`heatmap`]) and the samples in time order ([`samples`]).
//!
//! | endpoint | body | `result` |
//! |---|---|---|
//! | `POST /v1/profile/ProfileTracing` | its body plus [`MsBounds`] | the tree, of the window only |
//! | `POST /v1/profile/heatmap` | [`FineRequest`] (with `slots_per_second`) | [`heatmap::HeatmapAnswer`] |
//! | `POST /v1/profile/samples` | [`FineRequest`] | [`samples::SamplesAnswer`] |
//!
//! `time_start_ms` is inclusive and `time_end_ms` exclusive (Unix milliseconds), both inside
//! the request's seconds `[time_start, time_end + 1)`; either may be left out (then the range's
//! own edge). Data stored without event times (a producer that times only to the second, or
//! older than the service's `--fine-retention`) is answered at second resolution, and the answer
//! says so (`resolution: "s"`) — never silently.

pub mod heatmap;
pub mod samples;

use serde::{Deserialize, Serialize};

use crate::contract::body::{Members, RequestError, TracingRequest};
use crate::contract::request::ProfileRequest;

/// Whether an answer's times are to the millisecond or only to the second.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Resolution {
    /// Every sample read kept its event times.
    #[serde(rename = "ms")]
    Ms,
    /// None did: the data is known to the second only.
    #[serde(rename = "s")]
    S,
}

/// The request members that narrow a second range to milliseconds (Unix ms; start inclusive,
/// end exclusive). What the viewer adds to a ProfileTracing, heatmap or samples body.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MsBounds {
    /// First millisecond (inclusive); the range's first second when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_start_ms: Option<i64>,
    /// End millisecond (exclusive); the end of the range's last second when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_end_ms: Option<i64>,
}

/// A ProfileTracing request with millisecond bounds and heatmap slots: the body of
/// `POST /v1/profile/heatmap` and `/samples` (and of ProfileTracing, whose reader takes the
/// bounds too).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FineRequest {
    /// The samples, as for ProfileTracing.
    #[serde(flatten)]
    pub request: ProfileRequest,
    /// The millisecond window.
    #[serde(flatten)]
    pub bounds: MsBounds,
    /// Heatmap rows per second (1 to [`MAX_SLOTS_PER_SECOND`], default
    /// [`DEFAULT_SLOTS_PER_SECOND`]); ignored by `/samples`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 1000))]
    pub slots_per_second: Option<u32>,
}

/// Heatmap slots per second when the request names none.
pub const DEFAULT_SLOTS_PER_SECOND: u32 = 50;
/// Most heatmap slots per second (one per millisecond).
pub const MAX_SLOTS_PER_SECOND: u32 = 1000;
/// Most heatmap cells (seconds × slots) in one answer: one hour at the default 50 slots.
pub const MAX_HEATMAP_CELLS: u64 = 3600 * DEFAULT_SLOTS_PER_SECOND as u64;
/// Most samples `/samples` answers; past it the request is refused (400) with the numbers.
pub const MAX_SAMPLES: usize = 100_000;

/// A checked millisecond window, `[start_ms, end_ms)` in Unix milliseconds, never empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MsWindow {
    /// First millisecond, inclusive.
    pub start_ms: i64,
    /// End, exclusive.
    pub end_ms: i64,
}

impl MsWindow {
    /// The whole of the inclusive second range `[time_start, time_end]`.
    pub fn seconds(time_start: i64, time_end: i64) -> MsWindow {
        MsWindow {
            start_ms: time_start.saturating_mul(1000),
            end_ms: time_end.saturating_add(1).saturating_mul(1000),
        }
    }

    /// `bounds` inside the second range, checked: each bound within the range, start before end.
    pub fn narrow(
        bounds: MsBounds,
        time_start: i64,
        time_end: i64,
    ) -> Result<MsWindow, RequestError> {
        let whole = MsWindow::seconds(time_start, time_end);
        let start_ms = bounds.time_start_ms.unwrap_or(whole.start_ms);
        let end_ms = bounds.time_end_ms.unwrap_or(whole.end_ms);
        for (name, ms) in [("time_start_ms", start_ms), ("time_end_ms", end_ms)] {
            if ms < whole.start_ms || ms > whole.end_ms {
                return Err(RequestError(format!(
                    "{name} ({ms}) is outside the range's seconds [{}, {}) ms \
                     (time_start {time_start} to time_end {time_end} inclusive)",
                    whole.start_ms, whole.end_ms
                )));
            }
        }
        if start_ms >= end_ms {
            return Err(RequestError(format!(
                "time_start_ms ({start_ms}) must be before time_end_ms ({end_ms}); \
                 the window is [time_start_ms, time_end_ms)"
            )));
        }
        Ok(MsWindow { start_ms, end_ms })
    }

    /// The first second the window touches.
    pub fn first_second(&self) -> i64 {
        self.start_ms.div_euclid(1000)
    }

    /// The last second the window touches.
    pub fn last_second(&self) -> i64 {
        (self.end_ms - 1).div_euclid(1000)
    }

    /// Whether the window is whole seconds (then no stored row needs splitting).
    pub fn is_whole_seconds(&self) -> bool {
        self.start_ms.rem_euclid(1000) == 0 && self.end_ms.rem_euclid(1000) == 0
    }

    /// Whether the event at `offset_ms` into `second` falls inside.
    pub fn contains(&self, second: i64, offset_ms: u16) -> bool {
        let t = second
            .saturating_mul(1000)
            .saturating_add(i64::from(offset_ms));
        self.start_ms <= t && t < self.end_ms
    }

    /// Whether every millisecond of `second` falls inside.
    pub fn covers_second(&self, second: i64) -> bool {
        let start = second.saturating_mul(1000);
        self.start_ms <= start && start + 1000 <= self.end_ms
    }
}

impl MsBounds {
    /// Reads `time_start_ms` / `time_end_ms` from a body.
    pub fn read(m: &Members) -> Result<MsBounds, RequestError> {
        Ok(MsBounds {
            time_start_ms: m.int("time_start_ms", "Unix milliseconds, inclusive")?,
            time_end_ms: m.int("time_end_ms", "Unix milliseconds, exclusive")?,
        })
    }

    /// Whether the body named either bound.
    pub fn is_set(&self) -> bool {
        self.time_start_ms.is_some() || self.time_end_ms.is_some()
    }
}

/// A heatmap or samples body the service accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FineQuery {
    /// The ProfileTracing part (its `window` is always set here).
    pub tracing: TracingRequest,
    /// The millisecond window (the whole range when the body named no bounds).
    pub window: MsWindow,
    /// Heatmap rows per second.
    pub slots_per_second: u32,
}

/// Reads a heatmap or samples body: a ProfileTracing body, `time_start_ms` / `time_end_ms`,
/// `slots_per_second`.
pub fn parse_fine_body(body: &[u8]) -> Result<FineQuery, RequestError> {
    let tracing = crate::contract::body::parse_tracing_body(body)?;
    let m = Members::parse(body)?;
    let slots = m.int("slots_per_second", "heatmap rows per second, 1 to 1000")?;
    let slots_per_second = match slots {
        None => DEFAULT_SLOTS_PER_SECOND,
        Some(k) if (1..=i64::from(MAX_SLOTS_PER_SECOND)).contains(&k) => k as u32,
        Some(k) => {
            return Err(RequestError(format!(
                "slots_per_second must be 1 to {MAX_SLOTS_PER_SECOND}, got {k}"
            )))
        }
    };
    let r = &tracing.request;
    let window = tracing
        .window
        .unwrap_or_else(|| MsWindow::seconds(r.time_start, r.time_end));
    Ok(FineQuery {
        tracing,
        window,
        slots_per_second,
    })
}

#[cfg(test)]
mod tests;
