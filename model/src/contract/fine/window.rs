//! Millisecond bounds and the window they make inside a request's seconds (the types the
//! ProfileTracing body reader shares with the heatmap and samples; see [`super`]).

use serde::{Deserialize, Serialize};

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
    pub fn narrow(bounds: MsBounds, time_start: i64, time_end: i64) -> Result<MsWindow, String> {
        let whole = MsWindow::seconds(time_start, time_end);
        let start_ms = bounds.time_start_ms.unwrap_or(whole.start_ms);
        let end_ms = bounds.time_end_ms.unwrap_or(whole.end_ms);
        for (name, ms) in [("time_start_ms", start_ms), ("time_end_ms", end_ms)] {
            if ms < whole.start_ms || ms > whole.end_ms {
                return Err(format!(
                    "{name} ({ms}) is outside the range's seconds [{}, {}) ms \
                     (time_start {time_start} to time_end {time_end} inclusive)",
                    whole.start_ms, whole.end_ms
                ));
            }
        }
        if start_ms >= end_ms {
            return Err(format!(
                "time_start_ms ({start_ms}) must be before time_end_ms ({end_ms}); \
                 the window is [time_start_ms, time_end_ms)"
            ));
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
    /// Whether the body named either bound.
    pub fn is_set(&self) -> bool {
        self.time_start_ms.is_some() || self.time_end_ms.is_some()
    }
}
