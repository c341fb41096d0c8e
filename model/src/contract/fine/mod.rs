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
pub mod window;

pub use window::{MsBounds, MsWindow};

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
